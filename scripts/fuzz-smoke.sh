#!/usr/bin/env bash
# Run every fuzz target briefly (make test runs this; CI with it). Each
# target's seed corpus under testdata/fuzz already runs as a plain test in
# `go test`; this also lets the fuzzer mutate for FUZZTIME, so that a parser
# change that panics on a near neighbour of a seed is caught in CI rather
# than by a server. A longer session: FUZZTIME=10m scripts/fuzz-smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-4s}
# Every Fuzz function in the repository, as "package-dir target".
targets=$(grep -rl --include='*_test.go' '^func Fuzz' internal cmd |
  xargs grep -Ho '^func Fuzz[A-Za-z0-9_]*' | sed -E 's#^(.*)/[^/]+_test\.go:func #\1 #' | sort -u)
[ -n "$targets" ] || { echo "fuzz-smoke: no fuzz targets found" >&2; exit 1; }
while read -r dir target; do
  echo "fuzz $target ($dir, $fuzztime)"
  go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 10s -parallel 2 "./$dir" >/tmp/fuzz-smoke.$$.log 2>&1 || {
    cat /tmp/fuzz-smoke.$$.log; rm -f /tmp/fuzz-smoke.$$.log
    echo "fuzz-smoke: $target failed; a crasher, if any, is under $dir/testdata/fuzz/$target" >&2
    exit 1
  }
done <<<"$targets"
rm -f /tmp/fuzz-smoke.$$.log
