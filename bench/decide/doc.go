// Command decide measures whether perfgate's example configs decide on the
// simulator, at their own settings: for each config (the README's
// perfgate.yaml example, every examples/*.yaml that gates, and the config
// perfgate init writes), how often an A/A pull request passes (perfgate
// gate's exit 0) and how often a candidate made 1.3x slower (perfgate sim
// --slowdown 1.3) is a regression; and how long warm-up takes at Poisson
// 2 req/s over examples/workloads/chat.jsonl.
//
// It does what a team does. For each config it measures -baselines
// baselines as the main branch would (perfgate run, every repetition the
// config's repetitions.max allows, then promoted into a baselines
// directory of its own), and then, for each of -n tries, runs perfgate
// gate twice against baseline (try mod -baselines): once on the simulator
// as it is (A/A) and once on one 1.3x slower, each stopping when its
// sequential looks have decided every gate, as a pull request's gate
// does. Every run is a fresh simulator with a seed of its own. A try's
// A/A passes when gate exits 0; its slowdown is found when the verdict is
// a regression (not an inconclusive gate).
//
// Each config runs as a generated copy: its scenarios, load shapes,
// requests, durations, gates, warm-up and repetitions as they are, against
// a simulator perfgate starts on a port of the bench's own (a config's own
// perfgate sim command keeps its flags, with --seed set per run and
// --truth left out; a config that measures an external server, as the
// README's and examples/perfgate.yaml do, gets perfgate sim at its
// defaults). -cut measures the old quick copies instead (at most
// -requests requests a repetition, 1 s warm-up windows up to 5 s, a
// simulator of 4 ms steps for an external target): figures for a quick
// look, not for the table.
//
// Runs mostly wait on the simulator's clock, so many can be measured at
// once (-parallel); each config's baselines are measured before its tries.
// Capacity configs (examples/capacity*.yaml) are skipped: their capacity
// gate's own benchmark is CapacityRegression (bench/capacity_test.go).
// demo-slower.yaml is demo.yaml's candidate and is not a config of its
// own. Results are kept in -out (default demo-out/decide/, ignored by git)
// and reused by a later invocation.
//
//	go build -o bin/perfgate ./cmd/perfgate
//	go run ./bench/decide -n 40 -parallel 12 -warmup-seeds 20   # the full measurement
//	go run ./bench/decide -n 3 -configs readme,demo -warmup-seeds 0
package main
