#!/usr/bin/env bash
# demo.sh: run examples/perfgate-stack.yaml, in which perfgate starts its own
# simulator as the stack, warms it up, measures and stops it. Used by
# `make demo`; needs only a built bin/perfgate.
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p demo-out
# The example's stack command is `perfgate sim ...`: put this build first.
PATH="$PWD/bin:$PATH" perfgate run -c examples/perfgate-stack.yaml \
  -o demo-out/result.json --records demo-out/records.jsonl
