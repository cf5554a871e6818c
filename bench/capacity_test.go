package bench

import (
	"context"
	"fmt"
	"math"
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
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/session"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/simstack"
	"github.com/perfgate/perfgate/internal/stat"
)

// The capacity benchmarks: the figures of docs/capacity.md and of
// docs/gating.md's "Capacity gates" section. An in-process simulator with
// 1 ms steps serves a synthetic workload (64 prompt and 16 output tokens) at
// Poisson arrivals, and the SLO is {tpot.p99: 6ms, ttft.p99: 25ms}.
//
//   - BenchmarkCapacityTruth: the brute-force truth alone, for the simulator
//     and for one 1.3x slower: a coarse sweep of plain scenarios at fixed
//     rates to find the knee, then a fine one around it, 12 repetitions a
//     rate (PERFGATE_CAPACITY_TRUTH_REPS changes it).
//     The truth is the load where the median over repetitions of the SLO
//     margin (the larger of tpot.p99/6ms and ttft.p99/25ms) crosses 1,
//     interpolated in log margin against log load. Each sweep takes a few
//     minutes.
//   - BenchmarkCapacitySearch: the truth, then PERFGATE_CAPACITY_RUNS
//     (default 10) seeded searches: how often the headline capacity (the
//     highest load that held) and the median capacity sample are within 10%
//     of the truth (target 100%), and the probes a search made (the budget
//     is 8).
//   - BenchmarkCapacityRegression: for each run, a baseline search, an A/A
//     search on another simulator seed and a search of a 1.3x slower
//     simulator, the three with the run's config seed (as a pull request
//     keeps it: repetition r replays the same requests on every side),
//     gated capacity: -5%: how often the A/A passed (target >= 90%) and the
//     slowdown was a regression (target 100%), as the gate tests the
//     samples (pairs under PERFGATE_CAPACITY_ARRIVALS=fresh, two samples
//     under one schedule) and, from the same searches, unpaired and paired
//     whatever the arrivals. With
//     PERFGATE_CAPACITY_RESULTS set to a directory the searches are kept
//     there (base-1.json, aa-1.json, slow-1.json, ...) and read back by a
//     later run in seconds. Run them on an idle
//     machine: the simulator's steps are real sleeps, and a loaded machine
//     lowers its capacity.
//
// A search takes 20 to 30 s, so CI never runs these:
//
//	go test -run '^$' -bench Capacity -benchtime 1x -timeout 2h ./bench/

// capacityEstimate is roughly where the simulator below breaks the SLO: the
// truth's coarse sweep spans 0.4x to 3x of it. TPOT p99 is a noisy 2-3 ms
// at low loads on a 2-core machine, so the SLO sits at 6 ms, near
// saturation, where latency climbs steeply with load.
const capacityEstimate = 170.0

// capacitySlowdown is the slower candidate's step-time factor.
const capacitySlowdown = 1.3

// capacitySLO is the search's SLO, in milliseconds: the truth sweep judges
// its repetitions by the same limits. PERFGATE_CAPACITY_TPOT (a statistic
// and a limit, "p90 4ms") replaces the TPOT objective, to measure what a
// steadier statistic does to the gate.
var capacitySLO = map[string]float64{"tpot.p99": 6, "ttft.p99": 25}

// capacitySLOYAML is the search's SLO as the config writes it (see
// capacityTPOT).
var capacitySLOYAML = "{tpot.p99: 6ms, ttft.p99: 25ms}"

// capacityHolds is the search's holds rule: every, or PERFGATE_CAPACITY_HOLDS
// (bound), to measure what the rule does to the samples.
var capacityHolds = "every"

// capacityTPOT applies PERFGATE_CAPACITY_TPOT to capacitySLO and returns the
// YAML of the search's SLO.
func capacityTPOT(b *testing.B) string {
	b.Helper()
	v := os.Getenv("PERFGATE_CAPACITY_TPOT")
	if h := os.Getenv("PERFGATE_CAPACITY_HOLDS"); h != "" {
		capacityHolds = h
	}
	if v == "" {
		return "{tpot.p99: 6ms, ttft.p99: 25ms}"
	}
	stat, limit, ok := strings.Cut(v, " ")
	d, err := time.ParseDuration(limit)
	if !ok || err != nil || d <= 0 {
		b.Fatalf("PERFGATE_CAPACITY_TPOT=%q: want a statistic and a limit, e.g. \"p90 4ms\"", v)
	}
	delete(capacitySLO, "tpot.p99")
	capacitySLO["tpot."+stat] = float64(d) / float64(time.Millisecond)
	return fmt.Sprintf("{tpot.%s: %s, ttft.p99: 25ms}", stat, limit)
}

// capacitySim is the simulator of every capacity benchmark: 1 ms steps, 200
// µs a running sequence, 20 µs a prompt token, 5% jitter; slowdown
// multiplies its step time.
func capacitySim(seed int64, slowdown float64) sim.Config {
	c := sim.DefaultConfig()
	c.StepBase, c.PerSeq, c.PerPrefillToken = time.Millisecond, 200*time.Microsecond, 20*time.Microsecond
	c.Jitter = 0.05
	c.Seed = seed
	c.Slowdown = slowdown
	return c
}

// capacityHeader is the config's top: a process stack (started in-process
// by simstack) at an address, short warm-ups, and the repetitions and seed
// given; the scenarios follow.
const capacityHeader = `
target: {base_url: "http://%s", model: auto}
stack:
  kind: process
  process: {command: [perfgate, sim, --addr, %q]}
  log: %s
warmup: {window: 200ms, windows: 2, tolerance: 0.3, max: 20s}
telemetry: {metrics: off, gpu: off}
repetitions: %d
seed: %d
scenarios:
`

// capacityScenario is the capacity search of the benchmarks and of
// examples/capacity.yaml.
const capacityScenario = `
  - name: chat-capacity
    synth: {requests: 64, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: poisson}
    requests: 64
    duration: 5s
    capacity:
      slo: {tpot.p99: 6ms, ttft.p99: 25ms}
      min: 10
      max: 640
      resolution: 0.05
      holds: every
      repetitions: 5
    gates: {capacity: -5%}
`

// truthScenario is one point of the truth sweep: the search's workload at
// one fixed rate.
const truthScenario = `
  - name: truth-%02d
    synth: {requests: 64, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: poisson, rate: %g}
    requests: 64
    duration: 5s
`

// envCount is a positive count from the environment, def when unset.
func envCount(b *testing.B, name string, def int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a count >= 1", name, v)
	}
	return n
}

// writeConfig writes yaml to path, parses it as perfgate run would, and
// prepares its scenarios.
func writeConfig(b *testing.B, path, yaml string) (*config.Config, []run.Scenario) {
	b.Helper()
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Parse([]byte(yaml), path)
	if err != nil {
		b.Fatalf("config %s: %v", path, err)
	}
	sc, err := run.Prepare(cfg, nil)
	if err != nil {
		b.Fatalf("prepare %s: %v", path, err)
	}
	return cfg, sc
}

// measureCapacityConfig runs the config made of capacityHeader and the
// scenarios against a simulator configured by simCfg, as perfgate run
// would, and returns the config (for its gates) and the result.
func measureCapacityConfig(b *testing.B, simCfg sim.Config, reps, seed int, scenarios string) (*config.Config, *result.Result) {
	b.Helper()
	dir := b.TempDir()
	addr := freeAddr(b)
	yaml := fmt.Sprintf(capacityHeader, addr, addr, filepath.Join(dir, "stack.log"), reps, seed) + scenarios
	cfg, sc := writeConfig(b, filepath.Join(dir, "perfgate.yaml"), yaml)
	starter := simstack.New(func(string) sim.Config { return simCfg })
	res, err := session.Run(context.Background(), cfg, sc, session.Options{StartStack: starter.Start})
	if err != nil {
		b.Fatalf("run: %v", err)
	}
	return cfg, res
}

// truthPoint is one rate of the truth sweep and its median SLO margin.
type truthPoint struct {
	rate, margin float64
}

// capacityTruth measures the brute-force truth of a simulator slowed by
// slowdown, in two sweeps of plain scenarios at fixed rates: a coarse one
// (estimate × 0.4 × 1.15^i up to 3 × estimate, 3 repetitions a rate) finds
// roughly where the median SLO margin crosses 1, whatever this machine's
// speed makes of the simulator; a fine one (0.8 to 1.25 times that, in 3%
// steps, reps repetitions a rate) finds the truth.
func capacityTruth(b *testing.B, slowdown, estimate float64, reps int) (float64, []truthPoint) {
	b.Helper()
	var coarse []float64
	for r := 0.4 * estimate; r <= 3*estimate; r *= 1.15 {
		coarse = append(coarse, math.Round(r*10)/10)
	}
	rough, points := truthSweep(b, slowdown, coarse, 3)
	if rough == 0 {
		b.Fatalf("slowdown %g: the median SLO margin does not cross 1 between %g and %g req/s: %v (move capacityEstimate)",
			slowdown, coarse[0], coarse[len(coarse)-1], curve(points))
	}
	var fine []float64
	for r := 0.8 * rough; r <= 1.25*rough; r *= 1.03 {
		fine = append(fine, math.Round(r*10)/10)
	}
	truth, points := truthSweep(b, slowdown, fine, reps)
	if truth == 0 {
		b.Fatalf("slowdown %g: the fine sweep around %.1f req/s does not cross 1: %v", slowdown, rough, curve(points))
	}
	return truth, points
}

// truthSweep measures each rate for reps repetitions and returns where the
// median SLO margin crosses 1 (0 when it does not) and every rate's margin.
func truthSweep(b *testing.B, slowdown float64, rates []float64, reps int) (float64, []truthPoint) {
	b.Helper()
	var scenarios strings.Builder
	for i, r := range rates {
		fmt.Fprintf(&scenarios, truthScenario, i, r)
	}
	_, res := measureCapacityConfig(b, capacitySim(1, slowdown), reps, 1, scenarios.String())
	points := make([]truthPoint, len(res.Scenarios))
	for i := range res.Scenarios {
		points[i] = truthPoint{rate: rates[i], margin: medianMargin(b, &res.Scenarios[i])}
	}
	truth, _ := crossing(points)
	return truth, points
}

// medianMargin is the median over a scenario's repetitions of the SLO
// margin: the largest of its SLO statistics over their limits. A
// repetition that completed nothing has an infinite margin.
func medianMargin(b *testing.B, s *result.ScenarioResult) float64 {
	b.Helper()
	margins := make([]float64, 0, len(s.Repetitions))
	for i := range s.Repetitions {
		r := &s.Repetitions[i]
		m := 0.0
		for name, limit := range capacitySLO {
			v, err := r.Value(name)
			if err != nil {
				b.Fatalf("scenario %s repetition %d: %v", s.Name, r.Index, err)
			}
			m = max(m, v/limit)
		}
		if r.Completed == 0 {
			m = math.Inf(1)
		}
		margins = append(margins, m)
	}
	slices.Sort(margins)
	return stat.SortedMedian(margins)
}

// crossing is the first load where the margin goes from at most 1 to over
// 1, interpolated linearly in log margin against log load; false when it
// does not cross within the points.
func crossing(points []truthPoint) (float64, bool) {
	for i := 1; i < len(points); i++ {
		a, c := points[i-1], points[i]
		if a.margin > 1 || c.margin <= 1 {
			continue
		}
		if math.IsInf(c.margin, 1) || a.margin <= 0 {
			return math.Sqrt(a.rate * c.rate), true
		}
		t := math.Log(1/a.margin) / math.Log(c.margin/a.margin)
		t = min(1, max(0, t))
		return a.rate * math.Pow(c.rate/a.rate, t), true
	}
	return 0, false
}

// curve is "97.3:0.81 100.2:0.93 ..." for a log line.
func curve(points []truthPoint) string {
	parts := make([]string, len(points))
	for i, p := range points {
		parts[i] = fmt.Sprintf("%g:%.2f", p.rate, p.margin)
	}
	return strings.Join(parts, " ")
}

// capacityScenarioYAML is capacityScenario with the SLO and holds rule of
// PERFGATE_CAPACITY_TPOT and PERFGATE_CAPACITY_HOLDS, and the arrivals of
// PERFGATE_CAPACITY_ARRIVALS (fresh: each repetition draws its own, the
// same on both sides of a comparison).
func capacityScenarioYAML() string {
	load := "load: {type: poisson}"
	if a := os.Getenv("PERFGATE_CAPACITY_ARRIVALS"); a != "" {
		load = "load: {type: poisson, arrivals: " + a + "}"
	}
	return strings.NewReplacer("{tpot.p99: 6ms, ttft.p99: 25ms}", capacitySLOYAML, "holds: every", "holds: "+capacityHolds,
		"load: {type: poisson}", load).Replace(capacityScenario)
}

// capacitySearch runs the capacity scenario once against a simulator of
// sim seed simSeed slowed by slowdown, and returns its config and result.
func capacitySearch(b *testing.B, seed int, simSeed int64, slowdown float64) (*config.Config, *result.Result) {
	b.Helper()
	cfg, res := measureCapacityConfig(b, capacitySim(simSeed, slowdown), 5, seed, capacityScenarioYAML())
	if len(res.Scenarios) != 1 || res.Scenarios[0].Capacity == nil {
		b.Fatalf("seed %d: the result has no capacity search", seed)
	}
	return cfg, res
}

// sampleMedian is the median of a search's capacity samples.
func sampleMedian(c *result.Capacity) float64 {
	loads := make([]float64, len(c.Samples))
	for i, s := range c.Samples {
		loads[i] = s.RequestRate
	}
	slices.Sort(loads)
	return stat.SortedMedian(loads)
}

// BenchmarkCapacityTruth: the truth of the simulator and of one 1.3x
// slower, and how far the slowdown moves it.
func BenchmarkCapacityTruth(b *testing.B) {
	capacitySLOYAML = capacityTPOT(b)
	reps := envCount(b, "PERFGATE_CAPACITY_TRUTH_REPS", 12)
	for b.Loop() {
		base, bp := capacityTruth(b, 1, capacityEstimate, reps)
		b.Logf("base: truth %.1f req/s; rate:margin %s", base, curve(bp))
		slow, sp := capacityTruth(b, capacitySlowdown, capacityEstimate/capacitySlowdown, reps)
		b.Logf("1.3x slower: truth %.1f req/s; rate:margin %s", slow, curve(sp))
		b.ReportMetric(base, "truth-req/s")
		b.ReportMetric(slow, "slower-truth-req/s")
		b.ReportMetric(100*(slow/base-1), "shift-%")
	}
}

// BenchmarkCapacitySearch: seeded searches against the brute-force truth.
func BenchmarkCapacitySearch(b *testing.B) {
	capacitySLOYAML = capacityTPOT(b)
	runs := envCount(b, "PERFGATE_CAPACITY_RUNS", 10)
	reps := envCount(b, "PERFGATE_CAPACITY_TRUTH_REPS", 12)
	for b.Loop() {
		truth, points := capacityTruth(b, 1, capacityEstimate, reps)
		b.Logf("truth %.1f req/s; rate:margin %s", truth, curve(points))
		var within, sampleWithin, probes, maxProbes int
		var holds float64
		for i := range runs {
			_, res := capacitySearch(b, i+1, int64(i+1), 1)
			c := res.Scenarios[0].Capacity
			med := sampleMedian(c)
			if math.Abs(c.Holds/truth-1) <= 0.10 {
				within++
			}
			if math.Abs(med/truth-1) <= 0.10 {
				sampleWithin++
			}
			probes += len(c.Probes)
			maxProbes = max(maxProbes, len(c.Probes))
			holds += c.Holds
			b.Logf("run %d: %s, holds %.1f breaks %.1f (%+.1f%% of the truth), sample median %.1f (%+.1f%%), %d probes",
				i+1, c.Outcome, c.Holds, c.Breaks, 100*(c.Holds/truth-1), med, 100*(med/truth-1), len(c.Probes))
		}
		b.ReportMetric(100*float64(within)/float64(runs), "within-10%-%")
		b.ReportMetric(100*float64(sampleWithin)/float64(runs), "median-sample-within-10%-%")
		b.ReportMetric(float64(probes)/float64(runs), "probes/search")
		b.ReportMetric(float64(maxProbes), "max-probes/search")
		b.ReportMetric(truth, "truth-req/s")
		b.ReportMetric(holds/float64(runs), "search-req/s")
	}
}

// BenchmarkCapacityRegression: the capacity gate passes an A/A and fails a
// 1.3x slowdown.
func BenchmarkCapacityRegression(b *testing.B) {
	capacitySLOYAML = capacityTPOT(b)
	runs := envCount(b, "PERFGATE_CAPACITY_RUNS", 10)
	kept := os.Getenv("PERFGATE_CAPACITY_RESULTS")
	for b.Loop() {
		aaPass, found := make([]int, len(capacityModes)), make([]int, len(capacityModes))
		for i := range runs {
			// One config seed for the run's three searches, as a pull
			// request keeps it; the simulator's own seed differs, so the
			// A/A is two servers that jitter apart.
			seed := int64(3 * (i + 1))
			_, base := keptSearch(b, kept, "base", i+1, seed, 1)
			cfg, aa := keptSearch(b, kept, "aa", i+1, seed+1, 1)
			_, slow := keptSearch(b, kept, "slow", i+1, seed+2, capacitySlowdown)
			o := compare.Options{Alpha: cfg.Compare.Alpha, Gates: gate.GatesFrom(cfg)}
			var line []string
			for k, mode := range capacityModes {
				av, sv := capacityVerdicts(b, o, base, aa, slow, mode)
				if av.Outcome == stat.Pass {
					aaPass[k]++
				}
				if sv.Outcome == stat.Regression {
					found[k]++
				}
				line = append(line, fmt.Sprintf("%s: A/A %s, 1.3x %s", mode, capacityChange(av), capacityChange(sv)))
			}
			b.Logf("run %d: baseline holds %.1f, A/A %.1f, 1.3x %.1f; %s", i+1, base.Scenarios[0].Capacity.Holds,
				aa.Scenarios[0].Capacity.Holds, slow.Scenarios[0].Capacity.Holds, strings.Join(line, "; "))
			b.Logf("run %d samples (req/s, ^ a lower bound, v an upper bound): baseline %s; A/A %s; 1.3x %s; A/A/baseline %s", i+1,
				samplesString(base), samplesString(aa), samplesString(slow), ratiosString(base, aa))
		}
		for k, mode := range capacityModes {
			prefix := ""
			if mode != "gate" {
				prefix = mode + "-"
			}
			b.ReportMetric(100*float64(aaPass[k])/float64(runs), prefix+"aa-pass-%")
			b.ReportMetric(100*float64(found[k])/float64(runs), prefix+"slowdown-regression-%")
		}
	}
}

// capacityModes are the ways BenchmarkCapacityRegression gates each run's
// searches: as the gate does (pairs under fresh arrivals, two samples
// under one schedule), and, from the same results, unpaired and paired
// whatever the arrivals.
var capacityModes = []string{"gate", "unpaired", "paired"}

// keptSearch is capacitySearch of run run's side (base, aa or slow) with
// the config seed of the run. With PERFGATE_CAPACITY_RESULTS set to a
// directory, the result is kept there (base-1.json, aa-1.json, ...) and
// read back by a later benchmark instead of measured again, so that a
// change to the gate is judged on the very searches the last one was.
func keptSearch(b *testing.B, dir, side string, run int, simSeed int64, slowdown float64) (*config.Config, *result.Result) {
	b.Helper()
	path := ""
	if dir != "" {
		path = filepath.Join(dir, fmt.Sprintf("%s-%d.json", side, run))
	}
	if r, err := result.Read(path); path != "" && err == nil && len(r.Scenarios) == 1 && r.Scenarios[0].Capacity != nil {
		b.Logf("%s search of run %d: read back from %s", side, run, path)
		cfg, _ := writeConfig(b, filepath.Join(b.TempDir(), "perfgate.yaml"),
			fmt.Sprintf(capacityHeader, "127.0.0.1:1", "127.0.0.1:1", "stack.log", 5, run)+capacityScenarioYAML())
		return cfg, r
	}
	cfg, r := capacitySearch(b, run, simSeed, slowdown)
	if path != "" {
		if err := result.Write(path, r); err != nil {
			b.Fatalf("keep the %s search of run %d: %v", side, run, err)
		}
	}
	return cfg, r
}

// capacityVerdicts compares the A/A and the slower search with the
// baseline in mode (capacityModes): unpaired forgets the seeds first, so
// that the gate tests the samples as two independent samples (as it tests
// a result from before the seed was recorded); paired marks every side's
// arrivals fresh, so that it pairs them by repetition.
func capacityVerdicts(b *testing.B, o compare.Options, base, aa, slow *result.Result, mode string) (av, sv *compare.Verdict) {
	b.Helper()
	switch mode {
	case "unpaired":
		base, aa, slow = asTested(base, nil, ""), asTested(aa, nil, ""), asTested(slow, nil, "")
	case "paired":
		base, aa, slow = asTested(base, base.Scenarios[0].Seed, config.ArrivalsFresh), asTested(aa, aa.Scenarios[0].Seed, config.ArrivalsFresh),
			asTested(slow, slow.Scenarios[0].Seed, config.ArrivalsFresh)
	}
	av, err := compare.Compare([]*result.Result{base}, aa, o)
	if err != nil {
		b.Fatalf("A/A comparison: %v", err)
	}
	sv, err = compare.Compare([]*result.Result{base}, slow, o)
	if err != nil {
		b.Fatalf("slowdown comparison: %v", err)
	}
	return av, sv
}

// capacityChange is a verdict's capacity gate: "pass, -0.4% [-2.1%,
// +1.6%] paired".
func capacityChange(v *compare.Verdict) string {
	for _, g := range v.Scenarios[0].Gates {
		if g.Metric != "capacity" {
			continue
		}
		how := "unpaired"
		if g.Paired {
			how = "paired"
		}
		return fmt.Sprintf("%s, %+.1f%% [%+.1f%%, %+.1f%%] %s", g.Outcome, 100*float64(g.Change.Estimate),
			100*float64(g.Change.Lo), 100*float64(g.Change.Hi), how)
	}
	return string(v.Outcome) + ", no capacity gate"
}

// asTested is a copy of r whose scenarios recorded seed and arrivals.
func asTested(r *result.Result, seed *int64, arrivals string) *result.Result {
	c := *r
	c.Scenarios = slices.Clone(r.Scenarios)
	for i := range c.Scenarios {
		c.Scenarios[i].Seed = seed
		c.Scenarios[i].Load.Arrivals = arrivals
	}
	return &c
}

// samplesString is a search's capacity samples (achieved req/s) in
// repetition order, a censored one marked: "171.2 168.9^ ...".
func samplesString(r *result.Result) string {
	var parts []string
	for _, x := range r.Scenarios[0].Capacity.Samples {
		mark := ""
		switch x.Censored {
		case result.CensoredAbove:
			mark = "^"
		case result.CensoredBelow:
			mark = "v"
		}
		parts = append(parts, fmt.Sprintf("%.1f%s", x.RequestRate, mark))
	}
	return strings.Join(parts, " ")
}

// ratiosString is the pairs' ratios candidate/baseline as changes, in
// repetition order: "+1.2% -0.4% ...".
func ratiosString(base, cand *result.Result) string {
	bs, cs := base.Scenarios[0].Capacity.Samples, cand.Scenarios[0].Capacity.Samples
	var parts []string
	for i := range min(len(bs), len(cs)) {
		parts = append(parts, fmt.Sprintf("%+.1f%%", 100*(cs[i].RequestRate/bs[i].RequestRate-1)))
	}
	return strings.Join(parts, " ")
}
