#!/usr/bin/env bash
# demo.sh: start perfgate's simulator, run examples/perfgate.yaml against it,
# stop the simulator. Used by `make demo`; needs only a built bin/perfgate.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=./bin/perfgate
addr=${PERFGATE_DEMO_ADDR:-127.0.0.1:8000}
out=${PERFGATE_DEMO_OUT:-demo-out}
mkdir -p "$out"

"$bin" sim --addr "$addr" --truth "$out/truth.jsonl" 2>"$out/sim.log" &
sim=$!
trap 'kill $sim 2>/dev/null; wait $sim 2>/dev/null || true' EXIT

# Wait (at most 10 s) for the simulator to answer /health.
for _ in $(seq 100); do
  if curl -fsS "http://$addr/health" >/dev/null 2>&1; then break; fi
  kill -0 $sim 2>/dev/null || { cat "$out/sim.log" >&2; exit 3; }
  sleep 0.1
done

"$bin" run -c examples/perfgate.yaml --target "http://$addr" \
  -o "$out/result.json" --records "$out/records.jsonl"
