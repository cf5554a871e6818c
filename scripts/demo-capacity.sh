#!/usr/bin/env bash
# demo-capacity.sh: load sweeps and a capacity gate, in a few minutes and with
# no GPU (`make demo-capacity`; needs only a built bin/perfgate).
#
#  1. The main branch: `perfgate run -c examples/capacity.yaml` starts the
#     simulator as a process stack and measures two scenarios: chat, swept
#     over four Poisson rates (the latency curve), and chat-capacity, a
#     capacity search for the highest rate at which TPOT and TTFT p99 hold
#     (brackets, then bisects to 5%, five repetitions a probe).
#  2. Its result is promoted to the baseline (demo-out/capacity/baselines/).
#  3. A pull request that makes the engine 30% slower
#     (examples/capacity-slower.yaml): `perfgate gate` measures both again;
#     the slower engine's capacity is lower, so the capacity gate (-5%) must
#     find a regression and exit 1. The sweep's points are drawn on the
#     report's curves, not gated.
#
# It writes demo-out/capacity-comment.md (the pull request comment) and
# demo-out/capacity-report.html. Any other outcome fails it with exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."

begin=$SECONDS
step() { printf '\n=== demo-capacity %s  [%ds]\n' "$*" $((SECONDS - begin)) >&2; }
fail() {
  echo "demo-capacity: FAILED: $*" >&2
  exit 1
}

out=demo-out/capacity
rm -rf "$out" demo-out/capacity-comment.md demo-out/capacity-report.html
mkdir -p "$out"
# The configs' stack command is `perfgate sim ...`: put this build first.
export PATH="$PWD/bin:$PATH"

# The pull request must differ from the main branch's config by the
# slowdown alone (comments and layout aside), or the demo would not show
# what it says it shows.
yaml() { sed -e 's/[[:space:]]*#.*$//' "$1" | tr -d ' \n'; }
[ "$(yaml examples/capacity.yaml)" = "$(yaml examples/capacity-slower.yaml | sed 's/,--slowdown,"1.3"//')" ] ||
  fail "examples/capacity-slower.yaml differs from examples/capacity.yaml by more than --slowdown 1.3"

step "1/3 the main branch: perfgate run -c examples/capacity.yaml (a sweep of 4 rates, then a capacity search)"
perfgate run -c examples/capacity.yaml -o "$out/main.json"

step "2/3 promote its result to the baseline"
perfgate baseline promote "$out/main.json" --baselines "$out/baselines" --commit main

step "3/3 a pull request that makes the engine 30% slower: the capacity gate must fail (exit 1)"
code=0
# --fail-on regression: exit 1 means a regression, not an inconclusive gate.
perfgate gate -c examples/capacity-slower.yaml --baselines "$out/baselines" -o "$out/pr.json" \
  --report "$out/perfgate-report.json" --html demo-out/capacity-report.html --fail-on regression || code=$?
case $code in
1) ;;
0) fail "the gate passed an engine 30% slower: its capacity gate should have found a regression" ;;
*) fail "perfgate gate exited $code, want 1 (a regression)" ;;
esac
# The regression must be the capacity's: nothing else is gated.
perfgate report --format text "$out/perfgate-report.json" >"$out/verdict.txt"
grep -Eq '^[[:space:]]+capacity \(req/s\).*REGRESSION' "$out/verdict.txt" ||
  fail "the gate exited 1, but not on the capacity gate (see $out/verdict.txt)"
# The pull request comment the action would post, rendered from the report file.
perfgate report --format markdown "$out/perfgate-report.json" >demo-out/capacity-comment.md

step "done: the 30% slower engine's capacity failed its gate (exit 1), as it should"
echo "wrote demo-out/capacity-comment.md (the pull request comment) and demo-out/capacity-report.html (open it in a browser)" >&2
