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
# corpus lists the files of a target's corpus (none yet is no files).
corpus() { ls "$1/testdata/fuzz/$2" 2>/dev/null | sort || true; }
log=$(mktemp "${TMPDIR:-/tmp}/fuzz-smoke.XXXXXX")
trap 'rm -f "$log"' EXIT
while read -r dir target; do
  echo "fuzz $target ($dir, $fuzztime)"
  before=$(corpus "$dir" "$target")
  if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 10s -parallel 2 "./$dir" >"$log" 2>&1; then
    continue
  fi
  # Go's fuzz coordinator (go1.26; fixed in go1.27, golang/go#75804) can
  # report its own -fuzztime deadline as a failure, "context deadline
  # exceeded", when a worker is mid-call as time runs out on a busy
  # machine. That is no finding: a finding always writes its input to the
  # corpus. Only a failure with a new corpus file, or any other failure,
  # fails the smoke test.
  if [ "$(corpus "$dir" "$target")" = "$before" ] && grep -q '^    context deadline exceeded$' "$log" &&
    ! grep -q 'Failing input written to' "$log"; then
    echo "fuzz-smoke: $target: Go's fuzztime deadline race (golang/go#75804), no failing input: not a finding" >&2
    continue
  fi
  cat "$log"
  echo "fuzz-smoke: $target failed; a crasher, if any, is under $dir/testdata/fuzz/$target" >&2
  exit 1
done <<<"$targets"
