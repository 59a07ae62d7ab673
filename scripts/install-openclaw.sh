#!/usr/bin/env bash
# Installs an OpenClaw gateway (and the pinned Node it runs on) from the npm registry into a
# per-version cache outside the checkout, then prints the `openclaw` executable's path on stdout
# (progress goes to stderr). Idempotent: when both versions are already there it installs
# nothing. Exports nothing: the caller decides what to do with the path, e.g.
#   export REHEARSE_OPENCLAW="$(scripts/install-openclaw.sh)"
# Usage: scripts/install-openclaw.sh [VERSION]   (default: the pinned one, scripts/pins.env)
# Each version gets its own dir, CACHE/openclaw-VERSION, which is where `rehearse run` looks for
# the versions a scenario's `[target] versions` names (see docs/openclaw.md).
# About 840 MB installed. Cache root: $REHEARSE_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/rehearse.
# `rehearse gateway install openclaw [VERSION]` does the same from the binary alone.
set -euo pipefail

[ "$#" -le 1 ] || { echo "usage: install-openclaw.sh [VERSION]" >&2; exit 2; }
NAME=install-openclaw
EXAMPLE_VERSION=2026.9.2
# The pinned versions (the binary embeds the same file), the version check, NODE_PKG, CACHE.
VERSION="${1:-}"
# shellcheck source=pins.env
. "$(dirname "$0")/pins.env"
VERSION="${VERSION:-$OPENCLAW_VERSION}"
# shellcheck source=npm-gateway.sh
. "$(dirname "$0")/npm-gateway.sh"
OPENCLAW_VERSION="$VERSION"
DIR="$CACHE/openclaw-$OPENCLAW_VERSION"
BIN="$DIR/node_modules/.bin/openclaw"

pinned_present() {
    [ -x "$1/node_modules/.bin/openclaw" ] &&
        [ "$(installed_version "$1" openclaw)" = "$OPENCLAW_VERSION" ] &&
        [ "$(installed_version "$1" "$NODE_PKG")" = "$NODE_VERSION" ]
}

if pinned_present "$DIR"; then
    echo "install-openclaw: openclaw $OPENCLAW_VERSION and $NODE_PKG $NODE_VERSION already in $DIR" >&2
    printf '%s\n' "$BIN"
    exit 0
fi

stage "openclaw-$OPENCLAW_VERSION"

echo "install-openclaw: installing $NODE_PKG@$NODE_VERSION into $STAGE" >&2
npm install --prefix "$STAGE" --no-audit --no-fund --loglevel=error "$NODE_PKG@$NODE_VERSION" >&2

# OpenClaw's preinstall checks the node on PATH (it needs >= 24.16): put the pinned one first.
PATH="$STAGE/node_modules/$NODE_PKG/bin:$PATH"
export PATH
echo "install-openclaw: installing openclaw@$OPENCLAW_VERSION with node $(node --version)" >&2
npm install --prefix "$STAGE" --no-audit --no-fund --loglevel=error \
    "openclaw@$OPENCLAW_VERSION" "$NODE_PKG@$NODE_VERSION" >&2

pinned_present "$STAGE" || {
    echo "install-openclaw: npm finished but the pinned versions are not in $STAGE" >&2
    exit 1
}
finish "$DIR"
printf '%s\n' "$BIN"
