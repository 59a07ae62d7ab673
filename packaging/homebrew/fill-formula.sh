#!/usr/bin/env bash
# Prints the Homebrew formula for a release: packaging/homebrew/rehearse.rb.tmpl with the
# version, the download URLs and each archive's SHA-256 taken from the release's checksum file
# (`sha256sum` / `shasum -a 256` lines: HASH  rehearse-VERSION-TARGET.tar.gz).
# Usage: fill-formula.sh VERSION SHA256SUMS BASE_URL HOMEPAGE > rehearse.rb
#   e.g. fill-formula.sh 0.1.0 dist/SHA256SUMS \
#          https://github.com/OWNER/rehearse/releases/download/v0.1.0 https://github.com/OWNER/rehearse
# Exit 2 when an archive of a target the formula names has no checksum (or two), or a
# placeholder is left unfilled.
set -euo pipefail

[ "$#" -eq 4 ] || { echo "usage: fill-formula.sh VERSION SHA256SUMS BASE_URL HOMEPAGE" >&2; exit 2; }
version="$1" sums="$2" base="${3%/}" homepage="$4"
case "$version" in
    '' | v* | *[!0-9A-Za-z.+-]*)
        echo "fill-formula: not a version: '$version' (e.g. 0.1.0, without the v)" >&2
        exit 2
        ;;
esac
[ -r "$sums" ] || { echo "fill-formula: cannot read $sums" >&2; exit 2; }

formula="$(cat "$(dirname "$0")/rehearse.rb.tmpl")"
for target in aarch64-apple-darwin x86_64-apple-darwin aarch64-unknown-linux-gnu x86_64-unknown-linux-gnu; do
    file="rehearse-$version-$target.tar.gz"
    # `sha256sum -b` writes `*NAME`.
    sum="$(awk -v f="$file" '$2 == f || $2 == "*" f { print $1 }' "$sums")"
    if ! [[ "$sum" =~ ^[0-9a-f]{64}$ ]]; then
        echo "fill-formula: $sums has no single SHA-256 for $file" >&2
        exit 2
    fi
    formula="${formula//@SHA256_$target@/$sum}"
done
formula="${formula//@VERSION@/$version}"
formula="${formula//@BASE_URL@/$base}"
formula="${formula//@HOMEPAGE@/$homepage}"
if left="$(grep -o '@[A-Za-z0-9_-]*@' <<<"$formula")"; then
    echo "fill-formula: left unfilled: $left" >&2
    exit 2
fi
printf '%s\n' "$formula"
