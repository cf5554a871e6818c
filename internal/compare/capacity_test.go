package compare

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// capacitySearchSpec is the search of every capacity result of these tests:
// a narrow range, so that samples can be censored at both ends.
var capacitySearchSpec = result.CapacitySearch{Metric: "request_rate", SLO: map[string]float64{"tpot.p99": 3},
	Min: 140, Max: 160, Start: 150, Resolution: 0.05, Rule: "every", Repetitions: 6, Budget: 8}

// sample is a capacity sample for capacityResult: its load (req/s) and its
// censoring ("" for a crossing).
type sample struct {
	load     float64
	censored string
}

// at is a crossing at load.
func at(loads ...float64) []sample {
	out := make([]sample, len(loads))
	for i, l := range loads {
		out[i] = sample{load: l}
	}
	return out
}

// bounds marks every sample censored in direction dir.
func bounds(dir string, s []sample) []sample {
	out := make([]sample, len(s))
	for i, x := range s {
		out[i] = sample{load: x.load, censored: dir}
	}
	return out
}

// capacityResult builds a result of one capacity scenario with the given
// samples (output throughput 16 tokens a request), gated capacity: -5% and
// capacity_tokens: -5% as the candidate recorded them.
func capacityResult(outcome string, samples []sample) *result.Result {
	c := &result.Capacity{Search: capacitySearchSpec, Outcome: outcome, Holds: samples[0].load}
	s := result.ScenarioResult{Name: "chat-capacity", WorkloadHash: "sha256:w", Load: result.Load{Type: "poisson"},
		Capacity: c, Gates: []result.Gate{{Metric: "capacity", Tolerance: "-5%"}, {Metric: "capacity_tokens", Tolerance: "-5%"}}}
	for i, x := range samples {
		c.Samples = append(c.Samples, result.CapacitySample{Repetition: i + 1, Load: x.load, RequestRate: x.load,
			OutputThroughput: 16 * x.load, Censored: x.censored})
		s.Repetitions = append(s.Repetitions, result.Repetition{Index: i + 1, TPOT: result.Stats{P99: 2.9},
			RequestThroughput: c.Holds, OutputThroughput: 16 * c.Holds, TokensFrom: "usage"})
	}
	return &result.Result{Schema: result.Schema, Identity: result.Identity{Server: result.Server{Engine: "sim"}},
		Scenarios: []result.ScenarioResult{s}}
}

// capacityGates compares cand with base and returns the outcome and reason
// of the capacity and capacity_tokens gates, which must agree.
func capacityGates(t *testing.T, base, cand *result.Result) (stat.Outcome, string) {
	t.Helper()
	v, err := Compare([]*result.Result{base}, cand, Options{})
	require.NoError(t, err)
	require.Len(t, v.Scenarios, 1)
	gates := map[string]Gate{}
	for _, g := range v.Scenarios[0].Gates {
		gates[g.Metric] = g
	}
	require.Contains(t, gates, "capacity")
	require.Contains(t, gates, "capacity_tokens")
	c, tok := gates["capacity"], gates["capacity_tokens"]
	assert.Equal(t, c.Outcome, tok.Outcome, "capacity_tokens is censored as capacity is: %s / %s", c.Reason, tok.Reason)
	assert.Equal(t, c.Outcome, v.Outcome, "the verdict is the gates'")
	return c.Outcome, c.Reason
}

var (
	near150 = at(149, 150, 151, 150.5, 149.5, 150.2)
	near130 = at(129, 130, 131, 130.5, 129.5, 130.2)
)

// A capacity gate decides on crossings as any gate does, and withholds an
// outcome that the bounds it was tested on could reverse: control is the
// same values with no censoring, which the test decides as controlWant.
func TestCapacityGateWithholdsBounds(t *testing.T) {
	const (
		bracketed = result.CapacityBracketed
		belowMin  = result.CapacityBelowMin
		aboveMax  = result.CapacityAboveMax
	)
	above, below := result.CensoredAbove, result.CensoredBelow
	tests := []struct {
		name                 string
		baseOutcome, outcome string
		base, cand           []sample
		controlWant, want    stat.Outcome
		reasonHas, reasonNot []string
	}{
		{name: "crossings, same capacity", baseOutcome: bracketed, outcome: bracketed, base: near150, cand: near150,
			controlWant: stat.Pass, want: stat.Pass, reasonNot: []string{"withheld", "capacity.m"}},
		{name: "crossings, 13% lower", baseOutcome: bracketed, outcome: bracketed, base: near150, cand: near130,
			controlWant: stat.Regression, want: stat.Regression, reasonNot: []string{"withheld"}},
		{name: "both held at max: no pass on lower bounds", baseOutcome: aboveMax, outcome: aboveMax,
			base: bounds(above, at(160, 160, 160, 160, 160, 160)), cand: bounds(above, at(160, 160, 160, 160, 160, 160)),
			controlWant: stat.Pass, want: stat.Inconclusive,
			reasonHas: []string{"pass withheld", "6 of the baseline's 6 samples are lower bounds", "widen capacity.max",
				"the baseline's SLOs held at capacity.max, 160 req/s", "the candidate's SLOs held at capacity.max"}},
		{name: "candidate upper bounds: no pass", baseOutcome: bracketed, outcome: bracketed, base: near150,
			cand:        append(at(149, 150, 151, 150.5), bounds(below, at(148, 148))...),
			controlWant: stat.Pass, want: stat.Inconclusive,
			reasonHas: []string{"pass withheld", "2 of the candidate's 6 samples are upper bounds", "down to 148 req/s", "widen capacity.min"},
			reasonNot: []string{"baseline's"}},
		{name: "candidate broke at min: a regression stands", baseOutcome: bracketed, outcome: belowMin, base: near150,
			cand:        bounds(below, at(140, 140, 140, 140, 140, 140)),
			controlWant: stat.Regression, want: stat.Regression,
			reasonHas: []string{"the candidate's SLOs broke at capacity.min, 140 req/s: its capacity is below it"},
			reasonNot: []string{"withheld"}},
		{name: "candidate lower bounds: no regression", baseOutcome: bracketed, outcome: bracketed, base: near150,
			cand:        append(at(129, 130, 131, 130.5), bounds(above, at(131, 130))...),
			controlWant: stat.Regression, want: stat.Inconclusive,
			reasonHas: []string{"regression withheld", "2 of the candidate's 6 samples are lower bounds", "up to 130 req/s", "held even at the closing probes"}},
		{name: "candidate below min under holds: bound: no pass on crossings", baseOutcome: bracketed, outcome: belowMin, base: near150,
			cand:        at(149, 150, 151, 150.5, 150, 151),
			controlWant: stat.Pass, want: stat.Inconclusive,
			reasonHas: []string{"pass withheld", "the candidate's search ended below_min"}},
		{name: "baseline upper bounds: no regression", baseOutcome: bracketed, outcome: bracketed,
			base: append(at(149, 150, 151, 150.5), bounds(below, at(149.5, 150.2))...), cand: near130,
			controlWant: stat.Regression, want: stat.Inconclusive,
			reasonHas: []string{"regression withheld", "2 of the baseline's 6 samples are upper bounds", "widen capacity.min"}},
		{name: "baseline lower bounds: a regression stands", baseOutcome: bracketed, outcome: bracketed,
			base: append(at(149, 150, 151, 150.5), bounds(above, at(149.5, 150.2))...), cand: near130,
			controlWant: stat.Regression, want: stat.Regression, reasonNot: []string{"withheld"}},
	}
	// Unpaired (results that recorded no seed) and paired (fresh arrivals of
	// the same seed on both sides): the bounds withhold the same outcomes
	// either way.
	for _, seed := range []*int64{nil, new(int64(42))} {
		for _, tt := range tests {
			name := tt.name + ", unpaired"
			if seed != nil {
				name = tt.name + ", paired"
			}
			t.Run(name, func(t *testing.T) {
				control, reason := capacityGates(t, seeded(capacityResult(bracketed, at(loads(tt.base)...)), seed),
					seeded(capacityResult(bracketed, at(loads(tt.cand)...)), seed))
				require.Equal(t, tt.controlWant, control, "the uncensored control: %s", reason)

				got, reason := capacityGates(t, seeded(capacityResult(tt.baseOutcome, tt.base), seed), seeded(capacityResult(tt.outcome, tt.cand), seed))
				assert.Equal(t, tt.want, got, "capacity gate = %s (%s), want %s", got, reason, tt.want)
				for _, s := range tt.reasonHas {
					assert.Contains(t, reason, s)
				}
				for _, s := range tt.reasonNot {
					assert.NotContains(t, reason, s)
				}
				if seed != nil {
					assert.True(t, strings.HasSuffix(reason, "; paired by repetition (fresh arrivals of the same seed 42)"), reason)
				} else {
					assert.True(t, strings.HasSuffix(reason, "; unpaired: neither side recorded its seed (results from before perfgate recorded it)"), reason)
				}
			})
		}
	}
}

// seeded makes r's scenarios draw arrivals of their own for each
// repetition (load.arrivals: fresh) with the seed given (nil: none
// recorded, as before perfgate recorded it): the samples of two results
// seeded alike are pairs. It returns r.
func seeded(r *result.Result, seed *int64) *result.Result {
	for i := range r.Scenarios {
		r.Scenarios[i].Seed = seed
		r.Scenarios[i].Load.Arrivals = "fresh"
	}
	return r
}

// sameArrivals makes r's scenarios replay one schedule in every repetition
// (load.arrivals: same, the default) and returns r.
func sameArrivals(r *result.Result) *result.Result {
	for i := range r.Scenarios {
		r.Scenarios[i].Load.Arrivals = ""
	}
	return r
}

// loads are the samples' loads.
func loads(s []sample) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = x.load
	}
	return out
}

// A latency gate of a capacity scenario is not touched by withholdBounds,
// and a capacity gate's reason names a client-limited side.
func TestWithholdBoundsOnlyCapacity(t *testing.T) {
	base := capacityResult(result.CapacityBracketed, near150).Scenarios[0]
	cand := capacityResult(result.CapacityClientLimited, bounds(result.CensoredAbove, near150)).Scenarios[0]

	g := Gate{Metric: "tpot.p99", Outcome: stat.Pass, Reason: "fine"}
	withholdBounds(&g, &base, &cand)
	assert.Equal(t, Gate{Metric: "tpot.p99", Outcome: stat.Pass, Reason: "fine"}, g, "withholdBounds(tpot.p99 gate)")

	g = Gate{Metric: "capacity", Outcome: stat.Regression, Reason: "significant"}
	withholdBounds(&g, &base, &cand)
	assert.Equal(t, stat.Inconclusive, g.Outcome, g.Reason)
	assert.Contains(t, g.Reason, "(the test alone: significant)")
	assert.Contains(t, g.Reason, "the candidate's search stopped at 149 req/s because perfgate could not send faster (client_limited)")
}

// Two capacity searches that differ, or a capacity scenario against one at
// a fixed load, are not compared.
func TestCapacitySearchMismatch(t *testing.T) {
	base := capacityResult(result.CapacityBracketed, near150)
	wider := capacityResult(result.CapacityBracketed, near150)
	wider.Scenarios[0].Capacity.Search.Max = 320
	_, err := Compare([]*result.Result{base}, wider, Options{})
	var mm *MismatchError
	require.True(t, errors.As(err, &mm), "Compare(max 160, max 320) = %v, want a *MismatchError", err)
	require.Len(t, mm.Differences, 1)
	assert.Equal(t, "capacity search", mm.Differences[0].Field)
	assert.Contains(t, mm.Differences[0].Baseline, `"max":160`)
	assert.Contains(t, mm.Differences[0].Candidate, `"max":320`)

	fixed := capacityResult(result.CapacityBracketed, near150)
	fixed.Scenarios[0].Capacity = nil
	diffs := ScenarioMismatches(&fixed.Scenarios[0], &base.Scenarios[0])
	require.Len(t, diffs, 1)
	assert.Equal(t, "scenario chat-capacity: capacity search: (none) → "+jsonString(capacitySearchSpec), diffs[0].String())

	same := capacityResult(result.CapacityBracketed, near130)
	assert.Empty(t, ScenarioMismatches(&base.Scenarios[0], &same.Scenarios[0]), "the same search with other samples")
}

// A capacity scenario spends its whole share of alpha at its one look, where
// a scenario at one load with as many repetitions spends a part of it.
func TestSequentialCapacityOneLook(t *testing.T) {
	base := capacityResult(result.CapacityBracketed, near150)
	cand := capacityResult(result.CapacityBracketed, near150)
	seq := &Sequential{Options: Options{Alpha: 0.05}, Min: 6, Max: 18, Share: 0.025}
	_, level, err := seq.Look(base, &cand.Scenarios[0])
	require.NoError(t, err)
	assert.InDelta(t, 0.025, level, 1e-12, "Look(capacity scenario) level")

	fresh := &Sequential{Options: Options{Alpha: 0.05}, Min: 6, Max: 18, Share: 0.025}
	v, err := fresh.Final([]*result.Result{base}, cand, false)
	require.NoError(t, err)
	assert.InDelta(t, 0.025, v.Scenarios[0].Level, 1e-12, "Final(capacity scenario) level")

	plain := fakeResult("chat", 1, 2, 3, 4, 5, 6)
	_, level, err = (&Sequential{Options: Options{Alpha: 0.05}, Min: 6, Max: 18, Share: 0.025}).Look(plain, &plain.Scenarios[0])
	require.NoError(t, err)
	assert.Less(t, level, 0.02, "a scenario at one load at 6 of 18 repetitions spends a part of its share")
}

// An A/A calibration of one result compares the first half of its capacity
// samples with the second, not the samples with themselves.
func TestHalvesSplitCapacitySamples(t *testing.T) {
	r := capacityResult(result.CapacityBracketed, at(140, 141, 142, 150, 151, 152))
	a, b := halves(r)
	sa, sb := a.Scenarios[0], b.Scenarios[0]
	va, err := sa.Values("capacity")
	require.NoError(t, err)
	vb, err := sb.Values("capacity")
	require.NoError(t, err)
	assert.Equal(t, []float64{140, 141, 142}, va)
	assert.Equal(t, []float64{150, 151, 152}, vb)
	assert.Len(t, r.Scenarios[0].Capacity.Samples, 6, "the result itself is untouched")
}

// The capacity samples of six repetitions whose requests move a
// repetition's capacity by up to ±20%: each side's samples spread far
// more than the 5% tolerance, and the candidate's are within 1% of the
// baseline's repetition by repetition.
var (
	spread    = at(150, 180, 128, 165, 141, 196)
	spreadA   = at(151.5, 178.2, 128.6, 164.2, 141, 197.9)
	spreadLow = at(115, 138, 98, 127, 108, 151)
)

// A capacity gate tests its samples as pairs when both sides drew fresh
// arrivals for each repetition with the same seed and hold as many samples
// of the same repetitions, and the pairs can reach the family's level;
// otherwise unpaired, and the reason says why.
func TestCapacityPairing(t *testing.T) {
	s42, s43 := new(int64(42)), new(int64(43))
	tests := []struct {
		name       string
		base, cand *result.Result
		paired     bool
		want       stat.Outcome
		note       string // the reason's end
	}{
		{name: "the same seed: pairs pass what the spread hides",
			base: seeded(capacityResult(result.CapacityBracketed, spread), s42), cand: seeded(capacityResult(result.CapacityBracketed, spreadA), s42),
			paired: true, want: stat.Pass, note: "; paired by repetition (fresh arrivals of the same seed 42)"},
		{name: "the same samples, other seeds: unpaired, inconclusive",
			base: seeded(capacityResult(result.CapacityBracketed, spread), s42), cand: seeded(capacityResult(result.CapacityBracketed, spreadA), s43),
			want: stat.Inconclusive, note: "; unpaired: the seeds differ (42 and 43), so repetition r drew other arrivals on each side"},
		{name: "the same seed, 23% lower: a regression",
			base: seeded(capacityResult(result.CapacityBracketed, spread), s42), cand: seeded(capacityResult(result.CapacityBracketed, spreadLow), s42),
			paired: true, want: stat.Regression, note: "; paired by repetition (fresh arrivals of the same seed 42)"},
		{name: "the same seed, one schedule for every repetition: unpaired",
			base: sameArrivals(seeded(capacityResult(result.CapacityBracketed, spread), s42)), cand: sameArrivals(seeded(capacityResult(result.CapacityBracketed, spreadA), s42)),
			want: stat.Inconclusive, note: "; unpaired: every repetition replayed one arrival schedule (load.arrivals: same), so sample r shares nothing with the other side's sample r that the other samples do not"},
		{name: "a baseline from before seeds",
			base: seeded(capacityResult(result.CapacityBracketed, spread), nil), cand: seeded(capacityResult(result.CapacityBracketed, spreadA), s42),
			want: stat.Inconclusive, note: "; unpaired: the baseline recorded no seed (a result from before perfgate recorded it)"},
		{name: "a candidate without a seed",
			base: seeded(capacityResult(result.CapacityBracketed, spread), s42), cand: seeded(capacityResult(result.CapacityBracketed, spreadA), nil),
			want: stat.Inconclusive, note: "; unpaired: the candidate recorded no seed"},
		{name: "as many samples of other repetitions",
			base: seeded(capacityResult(result.CapacityBracketed, spread), s42),
			cand: renumbered(seeded(capacityResult(result.CapacityBracketed, spreadA), s42), 7),
			want: stat.Inconclusive,
			note: "; unpaired: the two sides' samples are of different repetitions"},
		{name: "5 pairs cannot decide two gates at 0.05: unpaired",
			base: seeded(capacityResult(result.CapacityBracketed, spread[:5]), s42), cand: seeded(capacityResult(result.CapacityBracketed, spreadLow[:5]), s42),
			want: stat.Regression, note: "; unpaired: 5 pairs (the same seed 42) cannot decide at level 0.05 over 2 gates, and pairing needs >= 6 (capacity.repetitions)"},
		{name: "5 pairs decide one gate at 0.05",
			base:   onlyCapacity(seeded(capacityResult(result.CapacityBracketed, spread[:5]), s42)),
			cand:   onlyCapacity(seeded(capacityResult(result.CapacityBracketed, spreadA[:5]), s42)),
			paired: true, want: stat.Pass, note: "; paired by repetition (fresh arrivals of the same seed 42)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Compare([]*result.Result{tt.base}, tt.cand, Options{})
			require.NoError(t, err)
			require.NotEmpty(t, v.Scenarios[0].Gates)
			for _, g := range v.Scenarios[0].Gates {
				assert.Equal(t, tt.want, g.Outcome, "%s: %s", g.Metric, g.Reason)
				assert.Equal(t, tt.paired, g.Paired, g.Metric)
				assert.True(t, strings.HasSuffix(g.Reason, tt.note), "%s: %s", g.Metric, g.Reason)
				assert.Equal(t, strings.Count(g.Reason, "paired"), 1, "one note: %s", g.Reason)
			}
		})
	}
}

// renumbered gives r's capacity samples the repetitions from, from+1, ...
func renumbered(r *result.Result, from int) *result.Result {
	for i := range r.Scenarios[0].Capacity.Samples {
		r.Scenarios[0].Capacity.Samples[i].Repetition = from + i
	}
	return r
}

// onlyCapacity makes r's scenario gated capacity: -5% alone, as its
// candidate recorded it.
func onlyCapacity(r *result.Result) *result.Result {
	r.Scenarios[0].Gates = []result.Gate{{Metric: "capacity", Tolerance: "-5%"}}
	return r
}
