#!/usr/bin/env bash
# Installs the pinned LiteLLM proxy (`litellm[proxy]` and prometheus_client, which its /metrics
# needs and the `proxy` extra lacks) into a virtualenv in a per-version cache outside the
# checkout, then prints that venv's `litellm` on stdout (progress goes to stderr). Idempotent:
# does nothing when the pinned version is already there. Exports nothing; the tests find it via
#   export REHEARSE_LITELLM="$(scripts/install-litellm.sh)"
# or in the cache by version. An optional argument installs another version side by side.
# Cache root: $REHEARSE_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/rehearse.
# `rehearse gateway install litellm [VERSION]` does the same from the binary alone.
set -euo pipefail

# The pinned versions (scripts/pins.env; the binary embeds the same file).
# shellcheck source=pins.env
. "$(dirname "$0")/pins.env"
VERSION="${1:-$LITELLM_VERSION}"
PYTHON="${PYTHON:-python3}"
CACHE="${REHEARSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rehearse}"
DIR="$CACHE/litellm-$VERSION"
BIN="$DIR/bin/litellm"

present() {
    [ -x "$1/bin/litellm" ] &&
        [ "$("$1/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm")); import prometheus_client' 2>/dev/null)" = "$VERSION" ]
}

if present "$DIR"; then
    echo "install-litellm: litellm $VERSION already in $DIR" >&2
    printf '%s\n' "$BIN"
    exit 0
fi

command -v "$PYTHON" >/dev/null 2>&1 || {
    echo "install-litellm: $PYTHON not found (install Python 3 first)" >&2
    exit 2
}
mkdir -p "$CACHE"
# Built in its final place (a venv is not relocatable); a half-built one fails `present` above
# and is rebuilt on the next run.
rm -rf "$DIR"
"$PYTHON" -m venv "$DIR" || {
    echo "install-litellm: '$PYTHON -m venv' failed (on Debian: apt-get install python3-venv)" >&2
    rm -rf "$DIR"
    exit 2
}
echo "install-litellm: installing litellm[proxy]==$VERSION into $DIR" >&2
if ! "$DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
    "litellm[proxy]==$VERSION" "prometheus_client==$LITELLM_PROMETHEUS_CLIENT_VERSION" >&2 ||
    ! present "$DIR"; then
    echo "install-litellm: pip did not install litellm[proxy] $VERSION" >&2
    rm -rf "$DIR"
    exit 1
fi
printf '%s\n' "$BIN"
