#!/bin/sh
# Builds a Kubernetes control plane without nodes (etcd and kube-apiserver,
# pinned in tools/control-plane/*/go.mod) once per machine, into a cache
# directory, and prints that directory: what internal/kube's real API
# server test runs (make test-apiserver). The first build takes minutes
# and about 200 MB; later calls find the binaries and print at once.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${PERFGATE_CONTROL_PLANE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfgate/control-plane-v1.37.2}
mkdir -p "$dir"
if [ ! -x "$dir/etcd" ]; then
	echo "building etcd into $dir" >&2
	go build -C "$root/tools/control-plane/etcd" -o "$dir/etcd" go.etcd.io/etcd/server/v3
fi
if [ ! -x "$dir/kube-apiserver" ]; then
	echo "building kube-apiserver into $dir (minutes, once per machine)" >&2
	go build -C "$root/tools/control-plane/kube-apiserver" -o "$dir/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
fi
echo "$dir"
