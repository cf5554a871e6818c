package bench

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/compare/stat"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
)

// The tail benchmarks: the figures of docs/gating.md's "The tail test"
// section. An in-process simulator serves Poisson arrivals (50 req/s by
// default) for 6 s a repetition, the default gates (ttft.p95 +10%,
// ttft.p99 +15%, tpot.p99 and e2e.p99 +10%, throughput, goodput, error
// rate) and compare.tail p99, so ttft.p99, tpot.p99 and e2e.p99 each have
// a tail gate in the family.
//
// BenchmarkTail measures two pools of G groups of 6 repetitions each (G is
// PERFGATE_TAIL_GROUPS, default 16): one run of 6·G repetitions of the
// clean simulator, and one of a simulator whose engine stalls (250 ms
// every 3 s of engine time by default: the case; the knobs are
// PERFGATE_TAIL_STALL_EVERY and PERFGATE_TAIL_STALL). Each group is one
// result of 6 repetitions. Then:
//
//   - A/A: every pair of clean groups, G·(G−1)/2 pairs (120 for G = 16):
//     how often a tail gate, a per-repetition gate and the whole verdict
//     called a false regression (target <= alpha, 5%);
//   - stalls: every clean group against every stalling group, G² pairs
//     (256): how often a tail gate caught the stalls as a regression
//     (target >= 90%), and how often the per-repetition p99 gates did.
//
// The pairs share groups, so they are not independent: the rates are
// unbiased, their spread is that of G independent groups, wider than the
// pair count suggests. Measuring a pool in one run keeps the whole
// benchmark to about 2 × 6·G × 6 s (20 minutes for G = 16) where
// independent pairs would take hours; the repetitions of one run are
// independent draws once it is warm.
//
//	go test -run '^$' -bench Tail -benchtime 1x -timeout 2h ./bench/

// tailScenario is the benchmarks' scenario: open-loop arrivals, so a stall
// delays every request in flight and those that arrive during it.
const tailScenario = `
  - name: chat
    synth: {requests: 400, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: poisson, rate: 50}
    requests: 400
    duration: 6s
`

// tailCounts is what a benchmark counts over its pairs.
type tailCounts struct {
	pairs int
	// tailRegressed: a tail gate regressed; perRepRegressed: a
	// per-repetition latency percentile gate that has a tail gate beside
	// it regressed; verdictRegressed: the verdict is a regression.
	tailRegressed, perRepRegressed, verdictRegressed int
	// tailGates and tailNotGated count the tail gates tested and listed as
	// not gated, to see that the scenario gives them enough requests.
	tailGates, tailNotGated int
}

func (c *tailCounts) add(b *testing.B, base, cand *result.Result, o *compare.Options) {
	b.Helper()
	v, err := compare.Compare([]*result.Result{base}, cand, *o)
	if err != nil {
		b.Fatalf("compare: %v", err)
	}
	c.pairs++
	tails := map[string]bool{}
	tail, perRep := false, false
	for _, s := range v.Scenarios {
		for _, ng := range s.NotGated {
			if strings.HasSuffix(ng.Metric, compare.TailSuffix) {
				c.tailNotGated++
			}
		}
		for _, g := range s.Gates {
			if g.Tail != nil {
				c.tailGates++
				tails[g.Metric[:len(g.Metric)-len(compare.TailSuffix)]] = true
				tail = tail || g.Outcome == stat.Regression
			}
		}
		for _, g := range s.Gates {
			if g.Tail == nil && tails[g.Metric] && g.Outcome == stat.Regression {
				perRep = true
			}
		}
	}
	if tail {
		c.tailRegressed++
	}
	if perRep {
		c.perRepRegressed++
	}
	if v.Outcome == stat.Regression {
		c.verdictRegressed++
	}
}

func (c tailCounts) report(b *testing.B, what string) {
	b.Helper()
	share := func(n int) float64 { return float64(n) / float64(max(1, c.pairs)) }
	b.Logf("%s: %d pairs; a tail gate regressed in %d (%.1f%%), a per-repetition p99 gate in %d (%.1f%%), the verdict in %d (%.1f%%); tail gates tested %d, not gated %d",
		what, c.pairs, c.tailRegressed, 100*share(c.tailRegressed), c.perRepRegressed, 100*share(c.perRepRegressed),
		c.verdictRegressed, 100*share(c.verdictRegressed), c.tailGates, c.tailNotGated)
	b.ReportMetric(share(c.tailRegressed), "tail-regressed/pair")
	b.ReportMetric(share(c.perRepRegressed), "p99-regressed/pair")
	b.ReportMetric(share(c.verdictRegressed), "verdict-regressed/pair")
}

// tailRate, tailStallEvery and tailStall are the benchmarks' knobs.
func tailKnobs(b *testing.B) (rate float64, every, stall time.Duration) {
	b.Helper()
	rate = 50
	every, stall = 3*time.Second, 250*time.Millisecond
	if v := os.Getenv("PERFGATE_TAIL_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 {
			b.Fatalf("PERFGATE_TAIL_RATE=%q: want a rate > 0", v)
		}
		rate = r
	}
	for _, k := range []struct {
		name string
		dst  *time.Duration
	}{{"PERFGATE_TAIL_STALL_EVERY", &every}, {"PERFGATE_TAIL_STALL", &stall}} {
		if v := os.Getenv(k.name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				b.Fatalf("%s=%q: want a duration > 0", k.name, v)
			}
			*k.dst = d
		}
	}
	return rate, every, stall
}

// tailPool measures groups results of 6 repetitions in one run of 6·groups
// repetitions on a simulator of seed seed, stalling when stall > 0.
func tailPool(b *testing.B, groups int, seed int64, rate float64, every, stall time.Duration) (*compare.Options, []*result.Result) {
	b.Helper()
	c := sim.DefaultConfig()
	c.Seed = seed
	c.StallEvery, c.Stall = every, stall
	if stall == 0 {
		c.StallEvery = 0
	}
	scenario := strings.Replace(tailScenario, "rate: 50", "rate: "+strconv.FormatFloat(rate, 'g', -1, 64), 1)
	cfg, res := measureCapacityConfig(b, c, 6*groups, 1, scenario)
	o := &compare.Options{Alpha: cfg.Compare.Alpha, Gates: gate.GatesFrom(cfg), Tail: cfg.Compare.Tail}
	out := make([]*result.Result, groups)
	for g := range groups {
		r := *res
		r.Scenarios = slices.Clone(res.Scenarios)
		sc := &r.Scenarios[0]
		sc.Repetitions = slices.Clone(sc.Repetitions[6*g : 6*g+6])
		for i := range sc.Repetitions {
			sc.Repetitions[i].Index = i + 1
		}
		out[g] = &r
	}
	return o, out
}

func BenchmarkTail(b *testing.B) {
	groups := envCount(b, "PERFGATE_TAIL_GROUPS", 16)
	rate, every, stall := tailKnobs(b)
	for range b.N {
		o, clean := tailPool(b, groups, 1, rate, every, 0)
		_, stalling := tailPool(b, groups, 2, rate, every, stall)
		var aa, st tailCounts
		for i := range clean {
			for j := i + 1; j < len(clean); j++ {
				aa.add(b, clean[i], clean[j], o)
			}
			for j := range stalling {
				st.add(b, clean[i], stalling[j], o)
			}
		}
		aa.report(b, fmt.Sprintf("A/A, Poisson %g req/s", rate))
		st.report(b, fmt.Sprintf("stalls of %v every %v, Poisson %g req/s", stall, every, rate))
	}
}
