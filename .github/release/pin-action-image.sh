#!/usr/bin/env bash
# pin-action-image.sh ACTION_YML IMAGE: make the action run a released image.
#
#   .github/release/pin-action-image.sh action.yml \
#     ghcr.io/perfgate/perfgate:v1.2.3@sha256:<64 hex digits>
#
# Replaces action.yml's one `  image: Dockerfile` line with
# `  image: docker://IMAGE`, and changes nothing else: the inputs, outputs and
# args stay as they are, so the released action takes the same inputs as the
# one that builds the Dockerfile. The release workflow (.github/workflows/
# release.yml) commits the result on top of the tagged commit; main keeps
# `image: Dockerfile`. IMAGE must be perfgate's, by tag and digest (the tag for
# people, the digest so that the pinned commit always runs the same bytes).
set -euo pipefail

die() { echo "pin-action-image: $*" >&2; exit 2; }

[ $# -eq 2 ] || die "usage: $0 ACTION_YML ghcr.io/perfgate/perfgate:vX.Y.Z@sha256:DIGEST"
file=$1 image=$2
re='^ghcr\.io/perfgate/perfgate:v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?@sha256:[0-9a-f]{64}$'
[[ $image =~ $re ]] || die "image '$image' is not ghcr.io/perfgate/perfgate:vX.Y.Z@sha256:<64 hex digits>"
[ -f "$file" ] || die "$file: no such file"
n=$(grep -c '^  image: Dockerfile$' "$file" || true)
[ "$n" = 1 ] || die "$file: want exactly one line '  image: Dockerfile' (under runs:), found $n"

tmp=$(mktemp "$file.XXXXXX")
trap 'rm -f "$tmp"' EXIT
sed "s|^  image: Dockerfile\$|  image: docker://$image|" "$file" >"$tmp"
[ "$(grep -cxF "  image: docker://$image" "$tmp")" = 1 ] || die "$file: the image line was not replaced"
[ "$(diff "$file" "$tmp" | grep -c '^[<>]')" = 2 ] || die "$file: more than the image line changed"
cat "$tmp" >"$file"
