#!/usr/bin/env bash
# demo.sh: what perfgate is for, in about a minute and with no GPU (`make
# demo`; needs only a built bin/perfgate).
#
#  1. The main branch: `perfgate run` starts the simulator as a process stack
#     (examples/demo.yaml), waits until it is ready (the cold start), warms
#     it up to steady state, measures six repetitions and stops it.
#  2. Its result is promoted to the baseline (demo-out/baselines/).
#  3. An A/A gate: `perfgate gate` runs the same config again and compares
#     it with the baseline. Nothing changed, so it must pass: exit 0.
#  4. A pull request that makes the engine 30% slower
#     (examples/demo-slower.yaml): `perfgate gate` must find the regression,
#     exit 1, and write the pull request's comment (demo-out/comment.md) and
#     the HTML report (demo-out/report.html).
#
# Any other outcome fails the demo with exit 1, so `make demo` checks the
# pipeline end to end as well as showing it.
set -euo pipefail
cd "$(dirname "$0")/.."

begin=$SECONDS
step() { printf '\n=== demo %s  [%ds]\n' "$*" $((SECONDS - begin)) >&2; }
fail() {
  echo "demo: FAILED: $*" >&2
  exit 1
}

rm -rf demo-out
mkdir -p demo-out
# The configs' stack command is `perfgate sim ...`: put this build first.
export PATH="$PWD/bin:$PATH"

# The pull request must differ from the main branch's config by the
# slowdown alone (comments and layout aside), or the demo would not show
# what it says it shows.
yaml() { sed -e 's/[[:space:]]*#.*$//' "$1" | tr -d ' \n'; }
[ "$(yaml examples/demo.yaml)" = "$(yaml examples/demo-slower.yaml | sed 's/,--slowdown,"1.3"//')" ] ||
  fail "examples/demo-slower.yaml differs from examples/demo.yaml by more than --slowdown 1.3"

step "1/4 the main branch: perfgate run -c examples/demo.yaml"
perfgate run -c examples/demo.yaml -o demo-out/main.json --records demo-out/records.jsonl

step "2/4 promote its result to the baseline"
perfgate baseline promote demo-out/main.json --baselines demo-out/baselines --commit main

step "3/4 A/A: perfgate gate with nothing changed, which must pass (exit 0)"
code=0
perfgate gate -c examples/demo.yaml --baselines demo-out/baselines -o demo-out/aa.json || code=$?
[ "$code" -eq 0 ] ||
  fail "the A/A gate exited $code, want 0: with nothing changed it found a regression or could not decide (is the machine busy with other work?)"

step "4/4 a pull request that makes the engine 30% slower: perfgate gate must fail (exit 1)"
code=0
# --fail-on regression: exit 1 means a regression, not an inconclusive gate.
perfgate gate -c examples/demo-slower.yaml --baselines demo-out/baselines -o demo-out/pr.json \
  --report demo-out/perfgate-report.json --html demo-out/report.html --fail-on regression || code=$?
case $code in
1) ;;
0) fail "the gate passed an engine 30% slower: it should have found a regression" ;;
*) fail "perfgate gate exited $code, want 1 (a regression)" ;;
esac
# The pull request comment the action would post, rendered from the report file.
perfgate report --format markdown demo-out/perfgate-report.json >demo-out/comment.md

step "done: the A/A gate passed (exit 0) and the 30% slowdown failed its gate (exit 1), as they should"
echo "wrote demo-out/comment.md (the pull request comment) and demo-out/report.html (open it in a browser)" >&2
