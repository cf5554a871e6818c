#!/usr/bin/env bash
# demo-history.sh: a month of nightly records and the alert that a nightly
# raises, in about two minutes and with no GPU (`make demo-history`; needs
# only a built bin/perfgate).
#
#  1. Thirty "nights": each measures the simulator (perfgate run, one small
#     scenario, six repetitions) and records the result in the history
#     (perfgate baseline record --alert). From night 16 the simulator is 15%
#     slower (perfgate sim --slowdown 1.15), as a dependency bump might make
#     it.
#  2. The alert must stay quiet on nights 1 to 17 and fire (exit 1) on night
#     18, the third slow night: the earliest a new level can be told from a
#     one- or two-night spike. It must not fire again after.
#  3. The month becomes a history site: demo-out/history-site/index.html.
#
# Any other outcome fails it with exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."

begin=$SECONDS
step() { printf '\n=== demo-history %s  [%ds]\n' "$*" $((SECONDS - begin)) >&2; }
fail() {
  echo "demo-history: FAILED: $*" >&2
  exit 1
}

out=demo-out/history
rm -rf "$out" demo-out/history-site
mkdir -p "$out"
export PATH="$PWD/bin:$PATH"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 18731)
cat >"$out/perfgate.yaml" <<YAML
# The nightly's config: the simulator at 127.0.0.1:$port, started by the
# demo (stack external), one small scenario, the default gates.
target: {base_url: "http://127.0.0.1:$port"}
warmup: {method: none}
repetitions: 6
cooldown: 0s
seed: 7
scenarios:
  - name: chat
    synth: {requests: 16, input: {type: fixed, value: 32}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 8}
YAML

sim=""
start_sim() {
  [ -n "$sim" ] && kill "$sim" 2>/dev/null && wait "$sim" 2>/dev/null || true
  perfgate sim --addr "127.0.0.1:$port" "$@" >"$out/sim.log" 2>&1 &
  sim=$!
  for _ in $(seq 50); do
    curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  fail "the simulator did not start (see $out/sim.log)"
}
trap '[ -n "$sim" ] && kill "$sim" 2>/dev/null || true' EXIT

step "1/3 thirty nights: the simulator as it is for 15, then 15% slower"
start_sim
raised=()
for night in $(seq 1 30); do
  if [ "$night" -eq 16 ]; then
    start_sim --slowdown 1.15
  fi
  n=$(printf '%02d' "$night")
  perfgate run -c "$out/perfgate.yaml" -o "$out/night$n.json" >"$out/night$n.log" 2>&1 || fail "night $n: perfgate run failed (see $out/night$n.log)"
  code=0
  perfgate baseline record "$out/night$n.json" -c "$out/perfgate.yaml" --baselines "$out/baselines" \
    --commit "night$n" --alert --alert-body "$out/alert$n.md" >"$out/record$n.txt" 2>&1 || code=$?
  case $code in
  0) ;;
  1) raised+=("$night"); echo "night $n: ALERT" >&2; sed -n '/NEW REGRESSION/p' "$out/record$n.txt" >&2 ;;
  *) fail "night $n: perfgate baseline record exited $code (see $out/record$n.txt)" ;;
  esac
done

step "2/3 the alert fired on night 18, the third slow night, and on no other"
[ "${raised[*]:-}" = "18" ] || fail "the alert fired on night(s) '${raised[*]:-none}', want 18 alone"
grep -qF 'from `night16`' "$out/alert18.md" && grep -qF 'the change came in after `night15`' "$out/alert18.md" ||
  fail "the alert does not name the commit range night15..night16 ($out/alert18.md)"

step "3/3 the month as a history site"
perfgate report --history "$out/baselines" -o demo-out/history-site
echo "demo-history: OK in $((SECONDS - begin)) s: the alert fired on night 18 alone; open demo-out/history-site/index.html" >&2
