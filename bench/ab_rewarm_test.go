package bench

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/ab"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/session"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/simstack"
)

// The A/B re-warm benchmark: the figures of docs/gating.md's "Warm-ups in
// an A/B". An A/A perfgate ab of two in-process simulators (prefix cache
// on, as vLLM's and llama.cpp's are) for 8 rounds, in each mode, with
// ab.rewarm short and full. It reports the A/B's wall time, the share of
// it the warm-ups and their drains took (both arms), the verdict, and the
// share of the prompt tokens of the warm-ups of rounds 2 on that the
// simulators' prefix cache served (the simulators' ground truth): 0 when
// every warm-up is salted apart.
//
//	go test -run '^$' -bench ABRewarm -benchtime 1x -timeout 1h ./bench/
//
// PERFGATE_AB_RUNS sets the seeded runs of each case (default 3).
func BenchmarkABRewarm(b *testing.B) {
	runs := envCount(b, "PERFGATE_AB_RUNS", 3)
	for _, mode := range []string{config.ABCoResident, config.ABSwap} {
		for _, rewarm := range []string{config.RewarmShort, config.RewarmFull} {
			b.Run(mode+"/"+rewarm, func(b *testing.B) {
				for b.Loop() {
					var wall, warm time.Duration
					var cached, prompt, pass int
					for i := range runs {
						r := rewarmRun(b, i+1, mode, rewarm)
						wall += r.wall
						warm += r.warm
						cached += r.cached
						prompt += r.prompt
						if r.outcome == "pass" {
							pass++
						}
						b.Logf("run %d: %s in %.1f s, warm-ups and drains %.1f s (%.0f%%), warm-ups of rounds 2+ served %d of %d prompt tokens from the prefix cache",
							i+1, r.outcome, r.wall.Seconds(), r.warm.Seconds(), 100*r.warm.Seconds()/r.wall.Seconds(), r.cached, r.prompt)
					}
					b.ReportMetric(wall.Seconds()/float64(runs), "s/ab")
					b.ReportMetric(100*warm.Seconds()/wall.Seconds(), "warmup-%")
					b.ReportMetric(100*float64(pass)/float64(runs), "aa-pass-%")
					b.ReportMetric(100*float64(cached)/float64(max(prompt, 1)), "rewarm-cached-%")
				}
			})
		}
	}
}

// rewarmYAML is one arm's config: the default warm-up but for a 1 s window
// (3 windows within 10% to be steady), 8 rounds, four gates.
const rewarmYAML = `
target: {base_url: "http://%s", model: auto}
stack:
  kind: process
  process: {command: [perfgate, sim, --addr, %q]}
  log: %s
warmup: {window: 1s, windows: 3, tolerance: 0.1, max: 60s}
telemetry: {metrics: off, gpu: off}
seed: %d
ab: {mode: %s, rewarm: %s, rounds: 8}
gates: {ttft.p99: off, e2e.p99: off, goodput: off, cold_start: off, tpot.p99: off,
        ttft.p95: +10%%, tpot.p90: +10%%, output_throughput: -5%%, error_rate: +1 points}
scenarios:
  - name: chat
    synth: {requests: 32, input: {type: fixed, value: 256}, output: {type: fixed, value: 16}}
    load: {type: closed, concurrency: 4}
`

// rewarmOutcome is one A/B's figures.
type rewarmOutcome struct {
	outcome        string
	wall, warm     time.Duration
	cached, prompt int // prompt tokens of the warm-ups of rounds 2 on: from the cache, in all
}

// warmupRound reads the round of a warm-up's request id (RUNID-roundR-...).
var warmupRound = regexp.MustCompile(`-round(\d+)-`)

// rewarmRun runs seeded A/A seed in mode with rewarm.
func rewarmRun(b *testing.B, seed int, mode, rewarm string) rewarmOutcome {
	b.Helper()
	dir := b.TempDir()
	var mu sync.Mutex
	var truths []*bytes.Buffer // each start's ground truth
	st := simstack.New(func(addr string) sim.Config {
		c := sim.DefaultConfig()
		c.StepBase, c.PerPrefillToken = time.Millisecond, 20*time.Microsecond
		c.Jitter = 0.05
		c.Seed = int64(seed)
		mu.Lock()
		defer mu.Unlock()
		truths = append(truths, &bytes.Buffer{})
		c.Truth = truths[len(truths)-1]
		return c
	})
	var cfgs [2]*config.Config
	var scs [2][]run.Scenario
	for i := range 2 {
		addr := freeAddr(b)
		yaml := fmt.Sprintf(rewarmYAML, addr, addr, filepath.Join(dir, fmt.Sprintf("stack%d.log", i)), seed, mode, rewarm)
		cfgs[i], scs[i] = writeConfig(b, filepath.Join(dir, fmt.Sprintf("arm%d.yaml", i)), yaml)
	}
	start := time.Now()
	out, err := ab.Run(context.Background(), cfgs[0], cfgs[1], scs[0], scs[1], ab.Options{Session: session.Options{StartStack: st.Start}})
	if err != nil {
		b.Fatalf("ab: %v", err)
	}
	r := rewarmOutcome{outcome: string(out.Verdict.Outcome), wall: time.Since(start)}
	for _, res := range []*result.Result{out.Base, out.Candidate} {
		for _, w := range res.Scenarios[0].Warmups {
			r.warm += w.Warmup.Duration.Dur()
			if w.Warmup.Drain != nil {
				r.warm += w.Warmup.Drain.Dur()
			}
		}
	}
	for _, truth := range truths { // every simulator has stopped: each is whole
		records, err := sim.ReadTruth(truth)
		if err != nil {
			b.Fatalf("truth: %v", err)
		}
		for id, rec := range records {
			m := warmupRound.FindStringSubmatch(id)
			if m == nil {
				continue
			}
			if round, _ := strconv.Atoi(m[1]); round >= 2 {
				r.cached += rec.CachedTokens
				r.prompt += rec.PromptTokens
			}
		}
	}
	return r
}
