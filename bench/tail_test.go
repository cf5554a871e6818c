package bench

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/stat"
)

// The tail benchmarks: the figures of docs/gating.md's "The tail test"
// section. An in-process simulator serves Poisson arrivals (50 req/s by
// default) for 6 s a repetition, the default gates (ttft.p95 +10%,
// ttft.p99 +15%, tpot.p99 and e2e.p99 +10%, throughput, goodput, error
// rate) and compare.tail p99, so ttft.p99, tpot.p99 and e2e.p99 each have
// a tail gate in the family.
//
// BenchmarkTail measures pools of groups of 6 repetitions, each pool in one
// run: G clean groups (PERFGATE_TAIL_GROUPS, default 15), and S groups
// (PERFGATE_TAIL_STALL_GROUPS, default 10) of each stalling simulator
// (tailKnobs). Each group is one result of 6 repetitions. Then:
//
//   - A/A: every pair of clean groups, G·(G−1)/2 pairs (105 for G = 15):
//     how often a tail gate, a per-repetition gate and the whole verdict
//     called a false regression (target <= alpha, 5%), and how often they
//     passed;
//   - stalls: every clean group against every stalling group, G·S pairs
//     (150): how often a tail gate caught the stalls as a regression
//     (target >= 90%), and how often the per-repetition p99 gates did.
//
// The pairs share groups, so they are not independent: the rates are
// unbiased, their spread is that of the independent groups, wider than the
// pair count suggests. Measuring a pool in one run keeps the benchmark to
// about (G + 2·S)·6 repetitions of 6 s (about 22 minutes) where
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
	// tailPassed: every tail gate passed; verdictPassed: the verdict
	// passed (under on_inconclusive: fail an inconclusive verdict fails
	// the pull request too, so an A/A should mostly pass).
	tailPassed, verdictPassed int
	// outcomes counts each gate's outcomes over the pairs.
	outcomes map[string]map[stat.Outcome]int
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
	if c.outcomes == nil {
		c.outcomes = map[string]map[stat.Outcome]int{}
	}
	for _, s := range v.Scenarios {
		for _, g := range s.Gates {
			if c.outcomes[g.Metric] == nil {
				c.outcomes[g.Metric] = map[stat.Outcome]int{}
			}
			c.outcomes[g.Metric][g.Outcome]++
		}
	}
	tails := map[string]bool{}
	tail, perRep, allPassed := false, false, true
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
				allPassed = allPassed && g.Outcome == stat.Pass
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
	if allPassed && len(tails) > 0 {
		c.tailPassed++
	}
	switch v.Outcome {
	case stat.Regression:
		c.verdictRegressed++
	case stat.Pass:
		c.verdictPassed++
	}
}

func (c tailCounts) report(b *testing.B, what string) {
	b.Helper()
	share := func(n int) float64 { return float64(n) / float64(max(1, c.pairs)) }
	// Printed rather than logged: a benchmark's log is cut after a few lines.
	fmt.Printf("%s: %d pairs; a tail gate regressed in %d (%.1f%%), a per-repetition p99 gate in %d (%.1f%%), the verdict in %d (%.1f%%); every tail gate passed in %d (%.1f%%), the verdict passed in %d (%.1f%%); tail gates tested %d, not gated %d\n",
		what, c.pairs, c.tailRegressed, 100*share(c.tailRegressed), c.perRepRegressed, 100*share(c.perRepRegressed),
		c.verdictRegressed, 100*share(c.verdictRegressed), c.tailPassed, 100*share(c.tailPassed),
		c.verdictPassed, 100*share(c.verdictPassed), c.tailGates, c.tailNotGated)
	for _, m := range slices.Sorted(maps.Keys(c.outcomes)) {
		o := c.outcomes[m]
		fmt.Printf("  %-18s regression %3d  inconclusive %3d  pass %3d\n", m, o[stat.Regression], o[stat.Inconclusive], o[stat.Pass])
	}
	b.ReportMetric(share(c.tailRegressed), "tail-regressed/pair")
	b.ReportMetric(share(c.perRepRegressed), "p99-regressed/pair")
	b.ReportMetric(share(c.verdictRegressed), "verdict-regressed/pair")
}

// tailStall is one stalling simulator of the benchmark: a stall of Stall
// added to one step every Every of engine time.
type tailStall struct{ every, stall time.Duration }

// tailKnobs are the benchmark's knobs: the Poisson rate
// (PERFGATE_TAIL_RATE, default 50), and the stalling simulators
// (PERFGATE_TAIL_STALLS, default "250ms/3s,250ms/10s": the case,
// where every repetition sees a stall, and stalls rarer than a
// repetition, where only some do).
func tailKnobs(b *testing.B) (rate float64, stalls []tailStall) {
	b.Helper()
	rate = 50
	if v := os.Getenv("PERFGATE_TAIL_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 {
			b.Fatalf("PERFGATE_TAIL_RATE=%q: want a rate > 0", v)
		}
		rate = r
	}
	spec := cmp.Or(os.Getenv("PERFGATE_TAIL_STALLS"), "250ms/3s,250ms/10s")
	for _, one := range strings.Split(spec, ",") {
		stall, every, ok := strings.Cut(strings.TrimSpace(one), "/")
		st, err1 := time.ParseDuration(stall)
		ev, err2 := time.ParseDuration(every)
		if !ok || err1 != nil || err2 != nil || st <= 0 || ev <= 0 {
			b.Fatalf("PERFGATE_TAIL_STALLS=%q: want STALL/EVERY durations, comma-separated (250ms/3s)", spec)
		}
		stalls = append(stalls, tailStall{every: ev, stall: st})
	}
	return rate, stalls
}

// tailPool measures groups results of 6 repetitions in one run of 6·groups
// repetitions on a simulator of seed seed, stalling when stall > 0. With
// PERFGATE_TAIL_POOLS set to a directory, the run's result is kept there
// (pool-<name>.json) and read back by a later benchmark instead of
// measured again, so that a change to the test is judged on the very
// repetitions the last one was.
func tailPool(b *testing.B, name string, groups int, seed int64, rate float64, every, stall time.Duration) (*compare.Options, []*result.Result) {
	b.Helper()
	c := sim.DefaultConfig()
	c.Seed = seed
	if stall > 0 {
		c.StallEvery, c.Stall = every, stall
	}
	scenario := strings.Replace(tailScenario, "rate: 50", "rate: "+strconv.FormatFloat(rate, 'g', -1, 64), 1)
	var cfg *config.Config
	var res *result.Result
	kept := ""
	if dir := os.Getenv("PERFGATE_TAIL_POOLS"); dir != "" {
		kept = filepath.Join(dir, "pool-"+name+".json")
	}
	if r, err := result.Read(kept); kept != "" && err == nil && len(r.Scenarios) == 1 && len(r.Scenarios[0].Repetitions) >= 6*groups {
		b.Logf("pool %s: read back from %s", name, kept)
		cfg, _ = writeConfig(b, filepath.Join(b.TempDir(), "perfgate.yaml"),
			fmt.Sprintf(capacityHeader, "127.0.0.1:1", "127.0.0.1:1", "stack.log", 6*groups, 1)+scenario)
		res = r
	} else {
		cfg, res = measureCapacityConfig(b, c, 6*groups, 1, scenario)
		if kept != "" {
			if err := result.Write(kept, res); err != nil {
				b.Fatalf("keep pool %s: %v", name, err)
			}
		}
	}
	o := &compare.Options{Alpha: cfg.Compare.Alpha, Gates: gate.GatesFrom(cfg), Tail: cmp.Or(os.Getenv("PERFGATE_TAIL_SETTING"), "p99")}
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
	groups := envCount(b, "PERFGATE_TAIL_GROUPS", 15)
	stallGroups := envCount(b, "PERFGATE_TAIL_STALL_GROUPS", 10)
	rate, stalls := tailKnobs(b)
	for range b.N {
		o, clean := tailPool(b, fmt.Sprintf("clean-%g", rate), groups, 1, rate, 0, 0)
		var aa tailCounts
		for i := range clean {
			for j := i + 1; j < len(clean); j++ {
				aa.add(b, clean[i], clean[j], o)
			}
		}
		aa.report(b, fmt.Sprintf("A/A, Poisson %g req/s, %d groups", rate, groups))
		for k, st := range stalls {
			_, stalling := tailPool(b, fmt.Sprintf("stall-%v-%v-%g", st.stall, st.every, rate), stallGroups, int64(2+k), rate, st.every, st.stall)
			var c tailCounts
			for i := range clean {
				for j := range stalling {
					c.add(b, clean[i], stalling[j], o)
				}
			}
			c.report(b, fmt.Sprintf("stalls of %v every %v, Poisson %g req/s, %d clean × %d stalling groups", st.stall, st.every, rate, groups, stallGroups))
		}
	}
}
