#!/usr/bin/env bash
# Installs the pinned official OpenAI Python SDK into a virtualenv in a per-version cache outside
# the checkout, then prints that venv's python on stdout (progress goes to stderr). Idempotent:
# does nothing when the pinned version is already there. Exports nothing; the tests find it via
#   export REHEARSE_OPENAI_PYTHON="$(scripts/install-openai-sdk.sh)"
# Cache root: $REHEARSE_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/rehearse.
# `rehearse gateway install openai-sdk` does the same from the binary alone.
set -euo pipefail

# The pinned version (scripts/pins.env; the binary embeds the same file).
# shellcheck source=pins.env
. "$(dirname "$0")/pins.env"
PYTHON="${PYTHON:-python3}"
CACHE="${REHEARSE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rehearse}"
DIR="$CACHE/openai-python-$OPENAI_VERSION"
PY="$DIR/bin/python"

present() {
    [ -x "$1/bin/python" ] &&
        [ "$("$1/bin/python" -c 'import openai; print(openai.__version__)' 2>/dev/null)" = "$OPENAI_VERSION" ]
}

if present "$DIR"; then
    echo "install-openai-sdk: openai $OPENAI_VERSION already in $DIR" >&2
    printf '%s\n' "$PY"
    exit 0
fi

command -v "$PYTHON" >/dev/null 2>&1 || {
    echo "install-openai-sdk: $PYTHON not found (install Python 3 first)" >&2
    exit 2
}
mkdir -p "$CACHE"
# Built in its final place (a venv is not relocatable); a half-built one fails `present` above
# and is rebuilt on the next run.
rm -rf "$DIR"
"$PYTHON" -m venv "$DIR" || {
    echo "install-openai-sdk: '$PYTHON -m venv' failed (on Debian: apt-get install python3-venv)" >&2
    rm -rf "$DIR"
    exit 2
}
echo "install-openai-sdk: installing openai==$OPENAI_VERSION into $DIR" >&2
if ! "$PY" -m pip install --quiet --disable-pip-version-check "openai==$OPENAI_VERSION" >&2 ||
    ! present "$DIR"; then
    echo "install-openai-sdk: pip did not install openai $OPENAI_VERSION" >&2
    rm -rf "$DIR"
    exit 1
fi
printf '%s\n' "$PY"
