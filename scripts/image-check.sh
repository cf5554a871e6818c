#!/usr/bin/env bash
# image-check.sh: build and run ./Dockerfile's image where the golang base
# image cannot be pulled (no registry access), with Debian's buildah (no
# daemon; vfs storage; chroot isolation; as root).
#
#   scripts/image-check.sh          the final stage, from a local static build
#   scripts/image-check.sh --full   also the whole Dockerfile, on a stand-in
#                                   for golang:1.26-bookworm (needs debootstrap
#                                   and deb.debian.org, and the Go module proxy)
#
# Default: the final stage exactly as the Dockerfile writes it (labels, COPY
# layout, /tmp's mode, ENV PATH, ENTRYPOINT), with the binary built here with
# the build stage's flags (CGO_ENABLED=0, -trimpath, -s -w, version stamp).
# The Containerfile is generated from the Dockerfile: everything after the
# `# --- final stage ---` marker, with `COPY --from=build SRC DST` turned into
# `COPY SRC DST` from a context laid out like the build stage's filesystem
# (SRC paths kept), so the two cannot drift. The CA bundle in that context is
# this machine's, which may hold local CAs the real image does not.
#
# --full: a stand-in golang:1.26-bookworm (Debian bookworm minbase from
# debootstrap, this machine's Go toolchain at /usr/local/go, GOPATH /go, and
# this machine's CA bundle so that `go mod download` gets through a local
# TLS-intercepting proxy) is tagged locally, and the real Dockerfile is built
# on it with --pull-never: both stages, every instruction.
#
# Each image is then run: `perfgate version` and `perfgate action --help`.
# Not checked here: the real golang image, pulling, the Docker socket, GPUs.
set -euo pipefail
cd "$(dirname "$0")/.."

full=false
case "${1:-}" in
  --full) full=true ;;
  "") ;;
  *) echo "usage: $0 [--full]" >&2; exit 2 ;;
esac

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
TAG=perfgate:check
FULLTAG=perfgate:check-full
GOLANG=docker.io/library/golang:1.26-bookworm
B=(buildah --storage-driver vfs)

command -v buildah >/dev/null || { echo "image-check: buildah is not installed (apt-get install buildah)" >&2; exit 2; }
grep -q '^# --- final stage ---$' Dockerfile || { echo "image-check: Dockerfile has no '# --- final stage ---' marker" >&2; exit 2; }
# The flags below must be the build stage's; fail if the Dockerfile changed them.
# shellcheck disable=SC2016 # ${VERSION} is the Dockerfile's, matched literally
for want in 'CGO_ENABLED=0 go build -trimpath' \
  '-ldflags "-s -w -X github.com/perfgate/perfgate/internal/version.Version=${VERSION}"'; do
  if ! grep -qF -- "$want" Dockerfile; then
    echo "image-check: the Dockerfile's build stage no longer has: $want" >&2
    echo "image-check: its go build flags differ from this script's; update both" >&2
    exit 2
  fi
done
if $full; then
  command -v debootstrap >/dev/null || { echo "image-check: --full needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
  if "${B[@]}" inspect --type image "$GOLANG" >/dev/null 2>&1; then
    echo "image-check: $GOLANG is already in buildah's storage; remove it first (it may be the real one)" >&2
    exit 2
  fi
fi

work=$(mktemp -d)
ctrs=()
cleanup() {
  for c in "${ctrs[@]}"; do "${B[@]}" rm "$c" >/dev/null 2>&1 || true; done
  for t in "$TAG" "$FULLTAG"; do "${B[@]}" rmi "$t" >/dev/null 2>&1 || true; done
  if $full; then "${B[@]}" rmi "$GOLANG" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

failed=0

# check_image TAG: its size, config and files; then perfgate inside it.
check_image() {
  local tag=$1 ctr mnt help layers
  echo "== image $tag"
  "${B[@]}" images --format '{{.Name}}:{{.Tag}} {{.ID}} size {{.Size}}' "$tag"
  "${B[@]}" inspect --type image --format 'entrypoint {{.OCIv1.Config.Entrypoint}} env {{.OCIv1.Config.Env}} user "{{.OCIv1.Config.User}}"{{"\n"}}' "$tag"
  # shellcheck disable=SC2016 # a Go template, not shell
  "${B[@]}" inspect --type image --format '{{range $k, $v := .OCIv1.Config.Labels}}label {{$k}}={{$v}}{{"\n"}}{{end}}' "$tag"
  # What a registry would store: the layers gzip-compressed.
  rm -rf "$work/oci"
  "${B[@]}" push --quiet --compression-format gzip "$tag" "oci:$work/oci:check" >/dev/null
  layers=$(find "$work/oci/blobs" -type f -size +100k -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  echo "compressed layers: $layers bytes"

  ctr=$("${B[@]}" from "$tag")
  ctrs+=("$ctr")
  mnt=$("${B[@]}" mount "$ctr")
  echo "-- files in the image:"
  (cd "$mnt" && find . -mindepth 1 -printf '%M %u:%g %10s %p\n' | sort -k4)
  "${B[@]}" umount "$ctr" >/dev/null
  echo "-- perfgate version:"
  "${B[@]}" run --isolation chroot "$ctr" -- perfgate version
  echo "-- perfgate action --help:"
  help=$("${B[@]}" run --isolation chroot "$ctr" -- perfgate action --help)
  echo "$help"
  # cobra prints the root's help for an unknown subcommand with --help, so
  # look for the subcommand's own usage line.
  if ! grep -q '^  perfgate action' <<<"$help"; then
    echo "image-check: FAILED: 'perfgate action' is not a subcommand of this build (the root help was printed)" >&2
    failed=1
  fi
}

echo "== static build (as the build stage does), version $VERSION"
mkdir -p bin
CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X github.com/perfgate/perfgate/internal/version.Version=${VERSION}" \
  -o bin/perfgate ./cmd/perfgate
if command -v file >/dev/null; then file bin/perfgate; fi
ls -l bin/perfgate

echo "== final stage, from a context laid out as the build stage's filesystem"
ctx=$work/ctx
mkdir -p "$ctx/out/skel/tmp" "$ctx/etc/ssl/certs"
chmod 1777 "$ctx/out/skel/tmp"
cp bin/perfgate "$ctx/out/perfgate"
cp /etc/ssl/certs/ca-certificates.crt "$ctx/etc/ssl/certs/ca-certificates.crt"
awk 'f { print } /^# --- final stage ---$/ { f = 1 }' Dockerfile |
  sed -E 's/^COPY --from=build[[:space:]]+/COPY /' >"$work/Containerfile"
if grep -qE '^[[:space:]]*(COPY|ADD|RUN).*--(from|mount)=' "$work/Containerfile"; then
  echo "image-check: the final stage copies from a stage this script does not emulate:" >&2
  grep -E '^[[:space:]]*(COPY|ADD|RUN).*--(from|mount)=' "$work/Containerfile" >&2
  exit 2
fi
echo "-- generated Containerfile:"
cat "$work/Containerfile"
"${B[@]}" bud --isolation chroot --build-arg VERSION="$VERSION" -f "$work/Containerfile" -t "$TAG" "$ctx"
check_image "$TAG"

if $full; then
  echo "== stand-in $GOLANG: debootstrap bookworm minbase + this machine's Go"
  rootfs=$work/rootfs
  debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  base=$work/golang
  mkdir -p "$base"
  tar -C "$rootfs" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf "$base/rootfs.tar" .
  goroot=$(go env GOROOT)
  tar -C "$(dirname "$goroot")" -cf "$base/go.tar" --transform "s,^$(basename "$goroot"),go," "$(basename "$goroot")"
  cp /etc/ssl/certs/ca-certificates.crt "$base/ca-certificates.crt"
  cat >"$base/Containerfile" <<EOF
FROM scratch
ADD rootfs.tar /
ADD go.tar /usr/local/
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV GOLANG_VERSION=$(go env GOVERSION | sed s/^go//) GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /go
EOF
  "${B[@]}" bud --quiet --isolation chroot -t "$GOLANG" "$base" >/dev/null

  echo "== the whole Dockerfile, on the stand-in"
  "${B[@]}" bud --isolation chroot --pull-never --build-arg VERSION="$VERSION" -f Dockerfile -t "$FULLTAG" .
  check_image "$FULLTAG"
fi

if [ "$failed" != 0 ]; then
  echo "== image-check: FAILED" >&2
  exit 1
fi
echo "== image-check: ok"
