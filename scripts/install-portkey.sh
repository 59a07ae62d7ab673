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

[ "$#" -le 1 ] || { echo "usage: install-portkey.sh [VERSION]" >&2; exit 2; }
NAME=install-portkey
EXAMPLE_VERSION=1.15.2
# The pinned versions (the binary embeds the same file), the version check, NODE_PKG, CACHE.
VERSION="${1:-}"
# shellcheck source=pins.env
. "$(dirname "$0")/pins.env"
VERSION="${VERSION:-$PORTKEY_VERSION}"
PINNED_PORTKEY_VERSION="$PORTKEY_VERSION"
# shellcheck source=npm-gateway.sh
. "$(dirname "$0")/npm-gateway.sh"
PORTKEY_VERSION="$VERSION"
PKG=@portkey-ai/gateway
DIR="$CACHE/portkey-$PORTKEY_VERSION"
ENTRY="$DIR/node_modules/$PKG/build/start-server.js"

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

stage "portkey-$PORTKEY_VERSION"
echo "install-portkey: installing $PKG@$PORTKEY_VERSION and $NODE_PKG@$NODE_VERSION into $STAGE" >&2
npm install --prefix "$STAGE" --no-audit --no-fund --loglevel=error \
    "$NODE_PKG@$NODE_VERSION" "$PKG@$PORTKEY_VERSION" ${LOCKED[@]+"${LOCKED[@]}"} >&2

pinned_present "$STAGE" || {
    echo "install-portkey: npm finished but the pinned versions are not in $STAGE" >&2
    exit 1
}
finish "$DIR"
printf '%s\n' "$ENTRY"
