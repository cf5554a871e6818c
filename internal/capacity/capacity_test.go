package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

const limitMS = 3 // the fake's tpot.p99 SLO

// spec is a request_rate search from 10 to 640 req/s at 5%, every rule,
// reps repetitions, with the default budget.
func spec(reps int) Spec {
	return Spec{Metric: metricRate, SLO: []Objective{{Metric: "ttft.p99", LimitMS: 25}, {Metric: "tpot.p99", LimitMS: limitMS}},
		Min: 10, Max: 640, Start: 80, Resolution: 0.05, Rule: ruleEvery, Confidence: 0.95,
		Repetitions: reps, Budget: WorstCase(10, 640, 80, 0.05, false), MaxErrorRate: 0.1}
}

// rep is repetition index at load with the given tpot.p99 margin: a
// repetition of 16 requests whose achieved rate is the load (times 10 for
// users), with a histogram and a cost.
func rep(s Spec, index int, load, margin float64) result.Repetition {
	rate := load
	if s.Metric == metricUsers {
		rate = 10 * load
	}
	r := result.Repetition{Index: index, Sent: 16, Completed: 16, RequestThroughput: rate, OutputThroughput: 16 * rate,
		TTFT:       result.Stats{P99: 1},
		TPOT:       result.Stats{P99: limitMS * margin},
		Histograms: map[string][]byte{"tpot": {1, 2, 3}},
		Cost:       &result.Cost{USDPerMOutput: 100 / load},
	}
	if s.Metric == metricRate {
		r.Schedule = &result.ScheduleStats{OfferedRate: load, ScheduledRate: load, AchievedRate: load, Achieved: true}
	}
	return r
}

// fake is a probe whose repetition r has the margin margin(load, r), and
// which remembers the loads probed.
type fake struct {
	s      Spec
	margin func(load float64, r int) float64
	edit   func(load float64, r *result.Repetition) // optional
	warmup func(load float64, w *result.Warmup)     // optional
	loads  []float64
}

func (f *fake) probe(_ context.Context, load float64, phase string) ([]result.Repetition, *result.Warmup, error) {
	if phase != PhaseBracket && phase != PhaseBisect && phase != PhaseClose {
		return nil, nil, fmt.Errorf("phase %q", phase)
	}
	f.loads = append(f.loads, load)
	var reps []result.Repetition
	for r := 1; r <= f.s.Repetitions; r++ {
		x := rep(f.s, r, load, f.margin(load, r))
		if f.edit != nil {
			f.edit(load, &x)
		}
		reps = append(reps, x)
	}
	w := &result.Warmup{Method: "windows", Steady: true}
	if f.warmup != nil {
		f.warmup(load, w)
	}
	return reps, w, nil
}

// powerLaw is margin (load/c)^k: log margin is linear in log load, so the
// samples' interpolation finds c exactly.
func powerLaw(c func(r int) float64, k float64) func(float64, int) float64 {
	return func(load float64, r int) float64 { return math.Pow(load/c(r), k) }
}

// search runs s against f and checks what every search must satisfy: the
// budget, loads within [Min, Max], Holds a probe that held and Breaks one
// that broke, At the capacity point, the scenario's repetitions whole and
// the probes' without histograms, one sample per repetition.
func search(t *testing.T, s Spec, f *fake) *result.Capacity {
	t.Helper()
	f.s = s
	var lines []string
	c, reps, err := Search(context.Background(), s, f.probe, func(format string, args ...any) {
		lines = append(lines, fmt.Sprintf(format, args...))
	})
	require.NoError(t, err)
	require.NotNil(t, c)
	searched, closing := len(c.Probes), 0
	for i, p := range c.Probes {
		if p.Phase == PhaseClose {
			closing++
			assert.GreaterOrEqual(t, i, len(c.Probes)-closingCount(c), "closing probes come last")
			searched--
		}
	}
	assert.LessOrEqual(t, closing, MaxClosing, "at most MaxClosing closing probes")
	assert.LessOrEqual(t, searched, s.Budget, "probes = %d, want at most the budget %d", searched, s.Budget)
	assert.Len(t, lines, len(c.Probes), "one log line per probe")
	assert.Equal(t, s.Result(), c.Search)
	for i, p := range c.Probes {
		assert.GreaterOrEqual(t, p.Load, s.Min, "probe %d load", i)
		assert.LessOrEqual(t, p.Load, s.Max, "probe %d load", i)
		if s.Integer {
			assert.Equal(t, math.Round(p.Load), p.Load, "probe %d load %v is not a whole number of users", i, p.Load)
		}
		for _, r := range p.Repetitions {
			assert.Nil(t, r.Histograms, "probe %d rep %d keeps its histograms", i, r.Index)
		}
		if c.Holds > 0 && p.Load > c.Holds && p.Held && c.Outcome != result.CapacityClientLimited {
			// Only a non-monotone search may hold above Holds, and only
			// at or above Breaks.
			assert.GreaterOrEqual(t, p.Load, c.Breaks, "probe %d held at %v above Holds %v", i, p.Load, c.Holds)
		}
	}
	if c.Holds > 0 {
		assert.True(t, hasProbe(c, c.Holds, true), "Holds %v is no probe that held", c.Holds)
	}
	if c.Breaks > 0 {
		assert.True(t, hasProbe(c, c.Breaks, false), "Breaks %v is no probe that broke", c.Breaks)
		assert.Less(t, c.Holds, c.Breaks)
	}
	require.True(t, c.At >= 0 && c.At < len(c.Probes), "At = %d of %d probes", c.At, len(c.Probes))
	require.Len(t, reps, len(c.Probes[c.At].Repetitions))
	for i, r := range reps {
		assert.NotNil(t, r.Histograms, "the capacity point's repetition %d lost its histograms", i+1)
	}
	assert.Len(t, c.Samples, s.Repetitions)
	for i, smp := range c.Samples {
		assert.Equal(t, i+1, smp.Repetition)
		assert.True(t, smp.Load >= s.Min && smp.Load <= s.Max, "sample %d load %v outside [%v, %v]", i+1, smp.Load, s.Min, s.Max)
	}
	return c
}

func hasProbe(c *result.Capacity, load float64, held bool) bool {
	for _, p := range c.Probes {
		if p.Load == load && p.Held == held {
			return true
		}
	}
	return false
}

func TestSearchFindsAKnownBoundary(t *testing.T) {
	s := spec(3)
	c := search(t, s, &fake{margin: powerLaw(func(int) float64 { return 148 }, 1)})
	assert.Equal(t, result.CapacityBracketed, c.Outcome)
	assert.True(t, c.Holds <= 148 && 148 < c.Breaks, "[%v, %v) does not contain 148", c.Holds, c.Breaks)
	assert.LessOrEqual(t, c.Breaks/c.Holds, 1+s.Resolution)
	assert.Equal(t, c.Holds, c.Probes[c.At].Load)
	for _, smp := range c.Samples {
		assert.InEpsilon(t, 148, smp.Load, 1e-9, "sample %d", smp.Repetition)
		assert.InEpsilon(t, 148, smp.RequestRate, 1e-9, "an open loop's sample rate is the crossing load")
		assert.Empty(t, smp.Censored)
		assert.Less(t, 16*c.Holds, smp.OutputThroughput)
		assert.Less(t, smp.OutputThroughput, 16*c.Breaks)
	}
	// The capacity point's medians.
	assert.Equal(t, c.Holds, c.RequestRate)
	assert.Equal(t, 16*c.Holds, c.OutputThroughput)
	require.NotNil(t, c.CostPerMTok)
	assert.InEpsilon(t, 100/c.Holds, *c.CostPerMTok, 1e-12)
	assert.Equal(t, PhaseBracket, c.Probes[0].Phase)
	assert.Equal(t, PhaseBisect, c.Probes[len(c.Probes)-1].Phase)
}

// Over boundaries across (and beyond) the range, a search never needs more
// than WorstCase probes, and its interval contains the boundary.
func TestSearchWithinWorstCaseAndContainsTheBoundary(t *testing.T) {
	for _, integer := range []bool{false, true} {
		s := spec(1)
		if integer {
			s.Metric, s.Integer, s.Min, s.Max, s.Start = metricUsers, true, 1, 64, 8
		}
		s.Budget = WorstCase(s.Min, s.Max, s.Start, s.Resolution, s.Integer)
		for c := s.Min / 3; c < s.Max*3; c *= 1.013 {
			f := &fake{margin: powerLaw(func(int) float64 { return c }, 1)}
			f.s = s
			got, _, err := Search(context.Background(), s, f.probe, nil)
			require.NoError(t, err)
			switch {
			case c <= s.Min:
				assert.Equal(t, result.CapacityBelowMin, got.Outcome, "boundary %v", c)
			case c > s.Max:
				assert.Equal(t, result.CapacityAboveMax, got.Outcome, "boundary %v", c)
			default:
				assert.Equal(t, result.CapacityBracketed, got.Outcome, "boundary %v (integer %v)", c, integer)
				assert.True(t, got.Holds < c && c <= got.Breaks, "boundary %v not in [%v, %v)", c, got.Holds, got.Breaks)
			}
		}
	}
}

func TestWorstCase(t *testing.T) {
	for _, tc := range []struct {
		min, max, res float64
		integer       bool
		want          int
	}{
		{10, 640, 0.05, false, 8}, // the design's figures: 4 + 4
		// The design's formula says 5 + 4 = 9; the clamped brackets from
		// 5.66 (to 0.5 or to 64) are only 1.41x wide, so 5 + 3.
		{0.5, 64, 0.05, false, 8},
		{10, 640, 0.01, false, 4 + 7},
		{1, 2, 0.05, true, 2}, // start 1 holds, 2
		{0, 10, 0.05, false, 0},
		{10, 10, 0.05, false, 0},
		{1, 10, 0, false, 0},
	} {
		assert.Equal(t, tc.want, WorstCase(tc.min, tc.max, 0, tc.res, tc.integer), "WorstCase(%v, %v, default start, %v, %v)", tc.min, tc.max, tc.res, tc.integer)
	}
	// A start at one end pays for it: from 10, the bracket may double 6
	// times to 640 (7 probes) before bisecting.
	assert.Equal(t, 7+4, WorstCase(10, 640, 10, 0.05, false), "WorstCase from a start at min")
	assert.Zero(t, WorstCase(10, 640, 700, 0.05, false), "a start outside the range")
	// The formula bounds real loads over many ranges.
	for _, r := range []float64{2, 3, 10, 64, 100, 1e4} {
		for _, res := range []float64{0.01, 0.05, 0.2, 1} {
			formula := int(math.Ceil(math.Log2(math.Sqrt(r)))) + 1 + int(math.Ceil(math.Log2(math.Ln2/math.Log1p(res))))
			assert.LessOrEqual(t, WorstCase(1, r, 0, res, false), max(formula, 1), "range %v at %v", r, res)
		}
	}
}

// Each repetition's own capacity: the every rule stops at the lowest, and
// the samples find each exactly.
func TestSearchPerRepetitionSamples(t *testing.T) {
	caps := []float64{120, 148, 170, 133}
	s := spec(len(caps))
	c := search(t, s, &fake{margin: powerLaw(func(r int) float64 { return caps[r-1] }, 2)})
	assert.True(t, c.Holds <= 120 && 120 < c.Breaks, "every: [%v, %v) does not contain the lowest capacity 120", c.Holds, c.Breaks)
	for i, smp := range c.Samples {
		if smp.Censored == "" {
			assert.InEpsilon(t, caps[i], smp.Load, 1e-9, "sample %d", i+1)
		} else {
			// Above: it held at every probe, so its capacity is above.
			assert.Equal(t, result.CensoredAbove, smp.Censored)
			assert.Less(t, smp.Load, caps[i])
		}
	}
}

// closingCount is how many of c's probes are closing probes.
func closingCount(c *result.Capacity) int {
	n := 0
	for _, p := range c.Probes {
		if p.Phase == PhaseClose {
			n++
		}
	}
	return n
}

// The holds rule breaks a probe on its worst repetition, so a search whose
// first probe breaks on one repetition alone never probes above it: the
// others held at every load of the bracket and bisection. The closing probe,
// at twice the highest load, makes their samples crossings too, without
// moving the interval.
func TestSearchClosingProbe(t *testing.T) {
	caps := []float64{70, 150, 158, 140, 155} // repetition 1 breaks at the start, 80
	s := spec(len(caps))
	c := search(t, s, &fake{margin: powerLaw(func(r int) float64 { return caps[r-1] }, 2)})
	require.Equal(t, result.CapacityBracketed, c.Outcome)
	assert.True(t, c.Holds <= 70 && 70 < c.Breaks && c.Breaks <= 80, "[%v, %v) should bracket the lowest capacity, 70", c.Holds, c.Breaks)
	last := c.Probes[len(c.Probes)-1]
	assert.Equal(t, PhaseClose, last.Phase)
	assert.Equal(t, 160.0, last.Load, "twice the highest load probed (80)")
	for i, smp := range c.Samples {
		assert.Empty(t, smp.Censored, "sample %d is a bound: %+v", i+1, smp)
		assert.InEpsilon(t, caps[i], smp.Load, 1e-9, "sample %d", i+1)
	}

	// A repetition that holds at twice the top gets a second closing
	// probe, at four times; one that holds there too stays a bound.
	caps = []float64{70, 150, 300, 500, 155}
	c = search(t, s, &fake{margin: powerLaw(func(r int) float64 { return caps[r-1] }, 2)})
	var closing []float64
	for _, p := range c.Probes {
		if p.Phase == PhaseClose {
			closing = append(closing, p.Load)
		}
	}
	assert.Equal(t, []float64{160, 320}, closing, "closing probes double from the top, 80")
	assert.InEpsilon(t, 300, c.Samples[2].Load, 1e-9, "repetition 3 crosses at 300, between the closing probes")
	assert.Equal(t, result.CensoredAbove, c.Samples[3].Censored, "repetition 4 held at 320: a lower bound")
	assert.Equal(t, 320.0, c.Samples[3].Load)

	// No closing probe when every repetition broke somewhere, or at max.
	s.Max = 80
	c = search(t, s, &fake{margin: powerLaw(func(r int) float64 { return caps[r-1] }, 2)})
	for _, p := range c.Probes {
		assert.NotEqual(t, PhaseClose, p.Phase, "a closing probe above max")
	}
}

// Under the bound rule the probe holds while the one-sided t bound on the
// mean log margin is within 1: with margins (x/c_r), the boundary is
// exp(mean ln c − t·sd(ln c)/√n), above the every rule's min c.
func TestSearchBoundRule(t *testing.T) {
	caps := []float64{120, 148, 170, 133, 155}
	s := spec(len(caps))
	s.Rule = ruleBound
	var logs []float64
	for _, c := range caps {
		logs = append(logs, math.Log(c))
	}
	mean, sd := meanSD(logs)
	const t4 = 2.131847 // Student t, 4 degrees of freedom, 0.95
	want := math.Exp(mean - t4*sd/math.Sqrt(5))
	c := search(t, s, &fake{margin: powerLaw(func(r int) float64 { return caps[r-1] }, 1)})
	assert.Equal(t, result.CapacityBracketed, c.Outcome)
	assert.True(t, c.Holds <= want && want < c.Breaks, "bound: [%v, %v) does not contain %v", c.Holds, c.Breaks, want)
	assert.Greater(t, want, 120.0)

	every := spec(len(caps))
	ce := search(t, every, &fake{margin: powerLaw(func(r int) float64 { return caps[r-1] }, 1)})
	assert.Less(t, ce.Holds, c.Holds, "every is more conservative than bound")
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

func TestJudge(t *testing.T) {
	s := spec(3)
	reps := []result.Repetition{rep(s, 1, 100, 0.25), rep(s, 2, 100, 0.5), rep(s, 3, 100, 1)}
	held, margin, broken := Judge(s, 0, reps)
	assert.True(t, held, "every: the largest margin is 1")
	assert.Equal(t, 0, broken)
	assert.InEpsilon(t, 1, margin["tpot.p99"], 1e-12)
	assert.InEpsilon(t, 1.0/25, margin["ttft.p99"], 1e-12)

	// bound at 0.95 over ln of (0.75, 1.5, 3) ms: mean ln 1.5, sd ln 2.
	s.Rule = ruleBound
	held, margin, _ = Judge(s, 0, reps)
	const t2 = 2.919986 // Student t, 2 degrees of freedom, 0.95
	want := math.Exp(math.Log(1.5)+t2*math.Ln2/math.Sqrt(3)) / limitMS
	assert.False(t, held)
	assert.InEpsilon(t, want, margin["tpot.p99"], 1e-6)

	// A broken repetition breaks the probe, and its latencies are left out.
	s.Rule = ruleEvery
	bad := rep(s, 3, 100, 5)
	bad.Completed, bad.Failed, bad.ErrorRate = 8, 8, 0.5
	held, margin, broken = Judge(s, 0, []result.Repetition{reps[0], reps[1], bad})
	assert.False(t, held)
	assert.Equal(t, 1, broken)
	assert.InEpsilon(t, 0.5, margin["tpot.p99"], 1e-12)
	none := rep(s, 1, 100, 0.1)
	none.Completed, none.Failed, none.ErrorRate = 0, 0, 0
	held, margin, broken = Judge(s, 0, []result.Repetition{none})
	assert.False(t, held, "a repetition that completed nothing")
	assert.Equal(t, 1, broken)
	assert.Empty(t, margin)
}

func TestSearchAboveMax(t *testing.T) {
	s := spec(2)
	c := search(t, s, &fake{margin: func(float64, int) float64 { return 0.5 }})
	assert.Equal(t, result.CapacityAboveMax, c.Outcome)
	assert.Equal(t, s.Max, c.Holds)
	assert.Zero(t, c.Breaks)
	assert.Equal(t, s.Max, c.Probes[c.At].Load)
	for _, smp := range c.Samples {
		assert.Equal(t, result.CensoredAbove, smp.Censored)
		assert.Equal(t, s.Max, smp.Load)
	}
}

func TestSearchBelowMin(t *testing.T) {
	s := spec(2)
	c := search(t, s, &fake{margin: func(float64, int) float64 { return 2 }})
	assert.Equal(t, result.CapacityBelowMin, c.Outcome)
	assert.Zero(t, c.Holds)
	assert.Equal(t, s.Min, c.Breaks)
	assert.Equal(t, s.Min, c.Probes[c.At].Load)
	for _, smp := range c.Samples {
		assert.Equal(t, result.CensoredBelow, smp.Censored)
		assert.Equal(t, s.Min, smp.Load)
	}
}

func TestSearchClientLimited(t *testing.T) {
	behind := func(load float64, r *result.Repetition) {
		if load >= 200 {
			r.Schedule.Achieved, r.Schedule.AchievedRate = false, 190
		}
	}
	s := spec(2)
	c := search(t, s, &fake{margin: powerLaw(func(int) float64 { return 300 }, 1), edit: behind})
	assert.Equal(t, result.CapacityClientLimited, c.Outcome)
	assert.Equal(t, 160.0, c.Holds, "80 and 160 held; 320 fell behind")
	assert.Zero(t, c.Breaks)
	last := c.Probes[len(c.Probes)-1]
	assert.Equal(t, 320.0, last.Load)
	assert.False(t, last.Held)
	require.NotEmpty(t, c.Warnings)
	assert.Contains(t, c.Warnings[0], "perfgate fell behind")
	for _, smp := range c.Samples {
		// 320 was never offered as scheduled: no sample crosses or holds there.
		assert.Equal(t, result.CensoredAbove, smp.Censored, "sample %d", smp.Repetition)
		assert.Equal(t, 160.0, smp.Load, "sample %d: a bound at the highest load the client kept up with", smp.Repetition)
	}

	// A search that never broke and ran out of budget makes no closing
	// probe: there is no bracket to close.
	s.Budget = 2
	c = search(t, s, &fake{margin: powerLaw(func(int) float64 { return 300 }, 1)})
	assert.Equal(t, result.CapacityBudget, c.Outcome)
	assert.Len(t, c.Probes, 2, "80 and 160, nothing beyond the budget")
	s.Budget = WorstCase(10, 640, 80, 0.05, false)

	// With a max_in_flight cap, falling behind is the server's doing: the
	// search goes on and finds the boundary.
	s.Capped = true
	c = search(t, s, &fake{margin: powerLaw(func(int) float64 { return 300 }, 1), edit: behind})
	assert.Equal(t, result.CapacityBracketed, c.Outcome)
	assert.True(t, c.Holds <= 300 && 300 < c.Breaks)
}

func TestSearchBudget(t *testing.T) {
	s := spec(2)
	s.Budget = 3
	c := search(t, s, &fake{margin: powerLaw(func(int) float64 { return 148 }, 1)})
	assert.Equal(t, result.CapacityBudget, c.Outcome)
	assert.Len(t, c.Probes, 3)
	assert.True(t, c.Holds <= 148 && 148 < c.Breaks, "[%v, %v)", c.Holds, c.Breaks)
	assert.Greater(t, c.Breaks/c.Holds, 1+s.Resolution)
}

func TestSearchIntegerUsers(t *testing.T) {
	s := spec(2)
	s.Metric, s.Integer, s.Min, s.Max, s.Start = metricUsers, true, 1, 64, 8
	s.Budget = WorstCase(1, 64, 0, 0.05, true)
	c := search(t, s, &fake{margin: powerLaw(func(int) float64 { return 13.5 }, 1)})
	assert.Equal(t, result.CapacityBracketed, c.Outcome)
	assert.Equal(t, 13.0, c.Holds)
	assert.Equal(t, 14.0, c.Breaks)
	for _, smp := range c.Samples {
		assert.InEpsilon(t, 13.5, smp.Load, 1e-9)
		// The achieved rate (10 per user) at the same t.
		assert.InEpsilon(t, 135, smp.RequestRate, 1e-9)
	}
	assert.Equal(t, 130.0, c.RequestRate, "a closed loop's capacity rate is the achieved rate at Holds")
}

// A repetition that fails past max_error_rate breaks its probe: here the
// errors, not the latency, set the capacity.
func TestSearchBrokenRepetition(t *testing.T) {
	s := spec(3)
	f := &fake{margin: powerLaw(func(int) float64 { return 500 }, 1), edit: func(load float64, r *result.Repetition) {
		if load >= 120 && r.Index == 2 {
			r.Completed, r.Failed, r.ErrorRate = 4, 12, 0.75
		}
	}}
	c := search(t, s, f)
	assert.Equal(t, result.CapacityBracketed, c.Outcome)
	assert.True(t, c.Holds < 120 && 120 <= c.Breaks, "[%v, %v)", c.Holds, c.Breaks)
	for _, p := range c.Probes {
		if p.Load >= 120 {
			assert.Equal(t, 1, p.Broken, "probe at %v", p.Load)
			assert.False(t, p.Held)
		} else {
			assert.Zero(t, p.Broken)
		}
	}
	// Repetition 2 broke (margin +Inf) at b: its crossing is the geometric
	// midpoint; the others held everywhere below 500.
	smp := c.Samples[1]
	assert.Empty(t, smp.Censored)
	assert.InEpsilon(t, math.Sqrt(c.Holds*c.Breaks), smp.Load, 1e-9)
}

// A repetition that holds again above a load where it broke is flagged,
// and its capacity taken at its first crossing.
func TestSearchNonMonotone(t *testing.T) {
	s := spec(2)
	margin := func(load float64, r int) float64 {
		if r == 1 {
			return load / 100
		}
		if load > 92 && load < 100 {
			return 1.5 // a dip: repetition 2 breaks here only
		}
		return load / 200
	}
	f := &fake{margin: margin}
	c := search(t, s, f)
	assert.Equal(t, result.CapacityBracketed, c.Outcome)
	require.NotEmpty(t, c.Warnings, "probes %v", f.loads)
	assert.Contains(t, strings.Join(c.Warnings, "\n"), "non-monotone: repetition 2")
	assert.Less(t, c.Samples[1].Load, 100.0, "the first crossing")
}

// A noisy probe (seeded): every margin is the power law times a
// log-normal error; the search still brackets near the boundary.
func TestSearchNoisy(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 42))
		s := spec(5)
		f := &fake{margin: func(load float64, r int) float64 {
			return load / 148 * math.Exp(0.03*rng.NormFloat64())
		}}
		c := search(t, s, f)
		require.Contains(t, []string{result.CapacityBracketed, result.CapacityBudget}, c.Outcome)
		// every at R=5: the largest of five errors of 3% moves the
		// boundary by at most ~15% at these seeds' worst.
		assert.InDelta(t, 1, c.Holds/148, 0.15, "seed %d: holds %v", seed, c.Holds)
		for _, smp := range c.Samples {
			assert.InDelta(t, 1, smp.Load/148, 0.15, "seed %d: sample %d", seed, smp.Repetition)
		}
	}
}

func TestSearchLogLines(t *testing.T) {
	s := spec(3)
	f := &fake{margin: powerLaw(func(r int) float64 { return 148 + float64(r) }, 1)}
	f.s = s
	var lines []string
	_, _, err := Search(context.Background(), s, f.probe, func(format string, args ...any) {
		lines = append(lines, fmt.Sprintf(format, args...))
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(lines), 3)
	assert.Equal(t, "probe 1/8 (bracket) 80 req/s: holds (tpot.p99 0.54x its SLO); capacity >= 80", lines[0])
	assert.Equal(t, "probe 2/8 (bracket) 160 req/s: breaks (tpot.p99 1.07x its SLO, rep 1); capacity in [80, 160)", lines[1])
	assert.Regexp(t, regexp.MustCompile(`^probe 3/8 \(bisect\) 113 req/s: holds \(tpot\.p99 0\.76x its SLO\); capacity in \[113, 160\)$`), lines[2])
}

func TestSearchErrors(t *testing.T) {
	s := spec(2)
	s.Start = 700
	_, _, err := Search(context.Background(), s, (&fake{}).probe, nil)
	assert.ErrorContains(t, err, "start: want from min (10) to max (640), got 700")

	s = spec(2)
	s.SLO = []Objective{{Metric: "goodput", LimitMS: 1}}
	_, _, err = Search(context.Background(), s, (&fake{}).probe, nil)
	assert.ErrorContains(t, err, `slo: "goodput" is not a latency statistic`)

	// A probe's error aborts the search, wrapped.
	s = spec(2)
	boom := errors.New("stack crashed")
	_, _, err = Search(context.Background(), s, func(context.Context, float64, string) ([]result.Repetition, *result.Warmup, error) {
		return nil, nil, boom
	}, nil)
	assert.ErrorIs(t, err, boom)
	assert.ErrorContains(t, err, "probe at 80 req/s")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = Search(ctx, s, (&fake{s: s, margin: func(float64, int) float64 { return 0.5 }}).probe, nil)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestFmtLoad(t *testing.T) {
	for x, want := range map[float64]string{113.137: "113", 56.57: "56.6", 7.071: "7.07", 0.7071: "0.707", 80: "80", 1280: "1280", 2.5: "2.5"} {
		assert.Equal(t, want, FormatLoad(x), "FormatLoad(%v)", x)
	}
}

// Repetitions the server could not keep up with (the overload detector
// that fails an ordinary run), at least half the probe's as for a
// scenario, break the probe even with every latency in its SLO: a rate the
// server falls behind is over capacity.
func TestSearchOverloadedRepetition(t *testing.T) {
	s := spec(3)
	f := &fake{margin: powerLaw(func(int) float64 { return 500 }, 1), edit: func(load float64, r *result.Repetition) {
		if load >= 120 && r.Index >= 2 {
			r.Overload = &result.Overload{Requests: 200, OfferedRate: load, ServedRate: 110, Overloaded: true}
		} else {
			r.Overload = &result.Overload{Requests: 200, OfferedRate: load, ServedRate: load}
		}
	}}
	c := search(t, s, f)
	assert.Equal(t, result.CapacityBracketed, c.Outcome)
	assert.True(t, c.Holds < 120 && 120 <= c.Breaks, "[%v, %v)", c.Holds, c.Breaks)
	for _, p := range c.Probes {
		assert.Equal(t, p.Load < 120, p.Held, "probe at %v", p.Load)
		assert.Zero(t, p.Broken, "an overloaded repetition is not a broken one: its latencies count")
	}
	smp := c.Samples[1]
	assert.InEpsilon(t, math.Sqrt(c.Holds*c.Breaks), smp.Load, 1e-9, "repetition 2 crosses at the midpoint")

	held, _, _ := Judge(s, 0, []result.Repetition{{Index: 1, Completed: 10, Sent: 10,
		Overload: &result.Overload{Overloaded: true, OfferedRate: 12, ServedRate: 8.6}}})
	assert.False(t, held)
}

// One overloaded repetition of three is noise at the edge of capacity, as
// it is for a scenario: the probe holds by its latencies. The probe's
// warm-up, when it showed the server could not keep up, is one more vote.
func TestSearchOverloadHalfRule(t *testing.T) {
	s := spec(3)
	one := func(load float64, r *result.Repetition) {
		r.Overload = &result.Overload{Requests: 200, OfferedRate: load, ServedRate: load}
		if load >= 120 && r.Index == 2 {
			r.Overload = &result.Overload{Requests: 200, OfferedRate: load, ServedRate: 110, Overloaded: true}
		}
	}
	c := search(t, s, &fake{margin: powerLaw(func(int) float64 { return 500 }, 1), edit: one})
	assert.True(t, c.Holds < 500 && 500 <= c.Breaks, "the probes hold by their latencies (SLO at 500): [%v, %v)", c.Holds, c.Breaks)
	for _, p := range c.Probes {
		assert.Equal(t, p.Load < 500, p.Held, "probe at %v", p.Load)
	}

	// 1 of 3 repetitions and the warm-up: 2 of 4, overloaded.
	c = search(t, s, &fake{margin: powerLaw(func(int) float64 { return 500 }, 1), edit: one,
		warmup: func(load float64, w *result.Warmup) {
			if load >= 120 {
				w.Steady = false
				w.Overload = &result.Overload{Requests: 600, OfferedRate: load, ServedRate: 110, Overloaded: true}
			}
		}})
	assert.True(t, c.Holds < 120 && 120 <= c.Breaks, "[%v, %v)", c.Holds, c.Breaks)
}
