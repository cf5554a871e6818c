package bench

import (
	"context"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/ab"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/session"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/simstack"
	"github.com/perfgate/perfgate/internal/stat"
)

// The A/B drift benchmarks: the figures of docs/gating.md's "A/B" section.
// Each seeded run starts two in-process simulators whose step time drifts by
// abDrift a minute from one shared epoch (heat, a noisy neighbour: the same
// for both), and measures:
//
//   - BenchmarkABDriftAA: a baseline measured at the start (as if promoted
//     then), an A/A perfgate ab of two identical stacks (its default
//     rounds, 8..16), and
//     perfgate gate's comparison of a fresh measurement at the end with that
//     baseline. It reports how often the A/A passed (target: >= 95%), and
//     how often the gate against the stale baseline called a regression.
//   - BenchmarkABDriftDetect: perfgate ab of a 1.3x slower candidate. It
//     reports how often the regression was found at the first look, 8
//     rounds (target: >= 95%), and at all.
//
// A run takes 10 to 30 s; 100 runs (the default; PERFGATE_AB_RUNS changes
// it) take half an hour or more, so CI never runs these:
//
//	go test -run '^$' -bench ABDrift -benchtime 1x -timeout 3h ./bench/

// abDrift is the simulators' drift, a fraction of step time a minute: a run
// of about 15 s sees its step time grow by a third.
const abDrift = 1.5

// abArmYAML is one arm's config: a process stack (started in-process by
// simstack) at addr, quick warm-ups, perfgate ab's default rounds
// (ab.rounds, 8..16), its default mode and re-warm, and four gates.
const abArmYAML = `
target: {base_url: "http://%s", model: auto}
stack:
  kind: process
  process: {command: [perfgate, sim, --addr, %q]}
  log: %s
warmup: {window: 100ms, windows: 2, tolerance: 0.3, max: 20s}
telemetry: {metrics: off, gpu: off}
seed: %d
gates: {ttft.p99: off, e2e.p99: off, goodput: off, cold_start: off, tpot.p99: off,
        ttft.p95: +10%%, tpot.p90: +10%%, output_throughput: -5%%, error_rate: +1 points}
scenarios:
  - name: chat
    synth: {requests: 32, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: closed, concurrency: 4}
`

// abPair is one seeded run's two arms: configs, scenarios and the starter
// of their simulators, which drift from one epoch.
type abPair struct {
	base, cand     *config.Config
	baseSc, candSc []run.Scenario
	starter        *simstack.Starter
}

// newABPair builds the arms of run seed: the candidate's simulator slowed by
// slowdown, both drifting from now.
func newABPair(b *testing.B, seed int, slowdown float64) *abPair {
	b.Helper()
	dir := b.TempDir()
	epoch := time.Now()
	addrs := [2]string{freeAddr(b), freeAddr(b)}
	p := &abPair{}
	p.starter = simstack.New(func(addr string) sim.Config {
		c := sim.DefaultConfig()
		c.StepBase, c.PerPrefillToken = time.Millisecond, 20*time.Microsecond
		c.Jitter = 0.05
		c.Drift, c.DriftEpoch = abDrift, epoch
		c.Seed = int64(2 * seed)
		if addr == addrs[1] {
			c.Slowdown = slowdown
			c.Seed++
		}
		return c
	})
	for i, addr := range addrs {
		yaml := fmt.Sprintf(abArmYAML, addr, addr, filepath.Join(dir, fmt.Sprintf("stack%d.log", i)), seed)
		cfg, sc := writeConfig(b, filepath.Join(dir, fmt.Sprintf("arm%d.yaml", i)), yaml)
		if i == 0 {
			p.base, p.baseSc = cfg, sc
		} else {
			p.cand, p.candSc = cfg, sc
		}
	}
	return p
}

// ab runs perfgate ab of the pair.
func (p *abPair) ab(b *testing.B) *compare.Verdict {
	b.Helper()
	out, err := ab.Run(context.Background(), p.base, p.cand, p.baseSc, p.candSc, ab.Options{
		Session: session.Options{StartStack: p.starter.Start}})
	if err != nil {
		b.Fatalf("ab: %v", err)
	}
	return out.Verdict
}

// measure runs the base arm's config alone for six repetitions, as perfgate
// run (a baseline) or perfgate gate's measurement would.
func (p *abPair) measure(b *testing.B) *result.Result {
	b.Helper()
	cfg := *p.base
	cfg.Repetitions = config.Repetitions{Min: 6, Max: 6}
	res, err := session.Run(context.Background(), &cfg, p.baseSc, session.Options{StartStack: p.starter.Start})
	if err != nil {
		b.Fatalf("run: %v", err)
	}
	return res
}

// freeAddr is a loopback address whose port was free a moment ago.
func freeAddr(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// BenchmarkABDriftAA: A/A passes under drift, a stale baseline does not.
func BenchmarkABDriftAA(b *testing.B) {
	runs := envCount(b, "PERFGATE_AB_RUNS", 100)
	for b.Loop() {
		var abPass, gateRegression, rounds int
		var drifts []float64
		for i := range runs {
			p := newABPair(b, i+1, 1)
			baseline := p.measure(b)
			v := p.ab(b)
			later := p.measure(b)
			gv, err := compare.Compare([]*result.Result{baseline}, later,
				compare.Options{Alpha: p.cand.Compare.Alpha, Gates: gate.GatesFrom(p.cand)})
			if err != nil {
				b.Fatalf("gate's comparison: %v", err)
			}
			if v.Outcome == stat.Pass {
				abPass++
			}
			if gv.Outcome == stat.Regression {
				gateRegression++
			}
			rounds += v.AB.Rounds
			d := tpotDrift(v)
			drifts = append(drifts, d)
			b.Logf("run %d: ab %s after %d rounds (base arm's TPOT p90 drifted %+.1f%%: %s); gate against the baseline of the start: %s (%s)",
				i+1, v.Outcome, v.AB.Rounds, 100*d, gateChanges(v), gv.Outcome, gateChanges(gv))
		}
		b.ReportMetric(100*float64(abPass)/float64(runs), "ab-aa-pass-%")
		b.ReportMetric(100*float64(gateRegression)/float64(runs), "gate-regression-%")
		b.ReportMetric(float64(rounds)/float64(runs), "rounds/run")
		b.ReportMetric(100*stat.SortedMedian(slices.Sorted(slices.Values(drifts))), "median-drift-%")
	}
}

// foundBy reports whether a gate of v was decided a regression with at most
// n rounds: a gate decided at a look keeps the evidence of that look.
func foundBy(v *compare.Verdict, n int) bool {
	for _, sc := range v.Scenarios {
		for _, g := range sc.Gates {
			if g.Outcome == stat.Regression && g.Candidate.N <= n {
				return true
			}
		}
	}
	return false
}

// tpotDrift is the base arm's drift of TPOT p90 across the rounds of v.
func tpotDrift(v *compare.Verdict) float64 {
	for _, g := range v.Scenarios[0].Gates {
		if g.Metric == "tpot.p90" {
			return float64(g.Drift)
		}
	}
	return math.NaN()
}

// gateChanges lists each gate's estimated change in v, and the interval
// of those not passed: "ttft.p95 +31.0% regression, tpot.p90 +2.0%
// [-3.1%, +11.2%] inconclusive, ...".
func gateChanges(v *compare.Verdict) string {
	var out []string
	for _, g := range v.Scenarios[0].Gates {
		if !g.Change.Estimate.Finite() {
			continue
		}
		iv := ""
		if g.Outcome != stat.Pass {
			iv = fmt.Sprintf(" [%+.1f%%, %+.1f%%]", 100*float64(g.Change.Lo), 100*float64(g.Change.Hi))
		}
		out = append(out, fmt.Sprintf("%s %+.1f%%%s %s", g.Metric, 100*float64(g.Change.Estimate), iv, g.Outcome))
	}
	return strings.Join(out, ", ")
}

// BenchmarkABDriftDetect: a 1.3x slower candidate is found within 8 rounds.
func BenchmarkABDriftDetect(b *testing.B) {
	runs := envCount(b, "PERFGATE_AB_RUNS", 100)
	for b.Loop() {
		var within8, found int
		for i := range runs {
			p := newABPair(b, i+1, 1.3)
			v := p.ab(b)
			if v.Outcome == stat.Regression {
				found++
				if foundBy(v, 8) {
					within8++
				}
			}
			b.Logf("run %d: ab %s after %d rounds (%s)", i+1, v.Outcome, v.AB.Rounds, gateChanges(v))
		}
		b.ReportMetric(100*float64(within8)/float64(runs), "found-within-8-rounds-%")
		b.ReportMetric(100*float64(found)/float64(runs), "found-%")
	}
}
