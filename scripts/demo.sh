#!/usr/bin/env bash
# demo.sh: the pipeline against the simulator, with no GPU. perfgate starts
# its own simulator as the stack (examples/perfgate-stack.yaml), warms it up,
# measures and stops it; the result is promoted to a baseline; then
# `perfgate gate` runs the chat-c16 scenario again and compares it with that
# baseline (an A/A comparison: it should pass), writing the report file, the
# HTML report and the markdown of the PR comment. Used by `make demo`; needs
# only a built bin/perfgate.
set -euo pipefail
cd "$(dirname "$0")/.."

rm -rf demo-out
mkdir -p demo-out
# The example's stack command is `perfgate sim ...`: put this build first.
export PATH="$PWD/bin:$PATH"
perfgate run -c examples/perfgate-stack.yaml \
  -o demo-out/result.json --records demo-out/records.jsonl
perfgate baseline promote demo-out/result.json --dir demo-out/baselines --commit demo
perfgate baseline history --dir demo-out/baselines --metric ttft.p99
perfgate gate -c examples/perfgate-stack.yaml --baselines demo-out/baselines \
  --scenario chat-c16 -o demo-out/gate-result.json \
  --report demo-out/perfgate-report.json --html demo-out/report.html
# The pull request comment the action would post, rendered from the report file.
perfgate report --format markdown demo-out/perfgate-report.json > demo-out/comment.md
echo "wrote demo-out/perfgate-report.json, demo-out/report.html and demo-out/comment.md"
