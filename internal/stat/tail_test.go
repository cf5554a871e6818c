package stat

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/aclements/go-moremath/stats"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tail test's calibration: synthetic repetitions whose requests are
// strongly correlated within a repetition (a per-repetition slowdown and
// stalls that delay a run of consecutive requests at once), so that a
// request-level test that treats requests as independent is fooled and a
// test that permutes repetitions is not.

// repModel draws one repetition's request latencies (ms), quantised to
// 0.1 ms as an HDR histogram at 3 digits would bucket them.
type repModel struct {
	requests int
	// spread is the sd of the log of a per-repetition factor that scales
	// every request of the repetition: the within-repetition correlation.
	spread float64
	// stallEvery is the mean number of requests between stalls (0: none);
	// a stall adds stall ms to stallRun consecutive requests.
	stallEvery, stallRun int
	stall                float64
}

func (m repModel) draw(r *rand.Rand, scale float64) []Bar {
	factor := math.Exp(m.spread * r.NormFloat64())
	counts := map[float64]int64{}
	stalled := 0
	for range m.requests {
		v := 50 * factor * math.Exp(0.3*r.NormFloat64())
		if m.stallEvery > 0 && stalled == 0 && r.IntN(m.stallEvery) == 0 {
			stalled = m.stallRun
		}
		if stalled > 0 {
			v += m.stall
			stalled--
		}
		counts[math.Round(10*v*scale)/10]++
	}
	bars := make([]Bar, 0, len(counts))
	for v, c := range counts {
		bars = append(bars, Bar{Value: v, Count: c})
	}
	return bars
}

func (m repModel) side(r *rand.Rand, k int, scale float64) [][]Bar {
	out := make([][]Bar, k)
	for i := range out {
		out[i] = m.draw(r, scale)
	}
	return out
}

// correlated has a strong per-repetition factor and rare stalls that hit
// 20 requests at once, on both sides alike.
var correlated = repModel{requests: 500, spread: 0.15, stallEvery: 400, stallRun: 20, stall: 250}

// naiveP is the request-level test a tail gate must not be: the candidate's
// requests beyond the baseline's pooled quantile as Binomial(N, 1−q),
// treating every request as independent.
func naiveP(g TailGate, d TailDecision) float64 {
	var n, beyond int
	for _, r := range g.Candidate {
		for _, b := range r {
			n += int(b.Count)
			if b.Value > d.Threshold {
				beyond += int(b.Count)
			}
		}
	}
	dist := stats.BinomialDist{N: n, P: 1 - g.Quantile}
	if beyond == 0 {
		return 1
	}
	return 1 - dist.CDF(float64(beyond-1))
}

func TestTailCalibAA(t *testing.T) {
	trials := 400
	if raceEnabled { // the race detector slows every split several fold
		trials = 250
	}
	r := rand.New(rand.NewPCG(19, 1))
	regressions, naive := 0, 0
	for range trials {
		g := TailGate{Baseline: correlated.side(r, 6, 1), Candidate: correlated.side(r, 6, 1), Quantile: 0.99, Relative: true}
		_, _, d := DecideWithTails(nil, nil, []TailGate{g}, calibAlpha)
		require.Len(t, d, 1)
		require.True(t, d[0].Exact, "6+6 repetitions are enumerated")
		require.Equal(t, 924, d[0].Splits, "C(12, 6)")
		if d[0].Outcome == Regression {
			regressions++
		}
		if naiveP(g, d[0]) < calibAlpha {
			naive++
		}
	}
	rate, naiveRate := float64(regressions)/float64(trials), float64(naive)/float64(trials)
	se := math.Sqrt(calibAlpha * (1 - calibAlpha) / float64(trials))
	t.Logf("A/A, correlated repetitions: tail test %.3f, request-level binomial %.3f (alpha %.2f)", rate, naiveRate, calibAlpha)
	assert.LessOrEqual(t, rate, calibAlpha+2*se, "the tail test's false-regression rate on A/A")
	assert.Greater(t, naiveRate, 4*calibAlpha, "the request-level binomial test on the same data should be fooled by the correlation")
}

func TestTailCalibBoundary(t *testing.T) {
	// At the tolerance boundary the candidate is the baseline scaled by
	// 1+tolerance: the test may call that a regression at most alpha of
	// the time, with a relative tolerance and with an absolute one.
	trials := 300
	if raceEnabled {
		trials = 150
	}
	se := math.Sqrt(calibAlpha * (1 - calibAlpha) / float64(trials))
	r := rand.New(rand.NewPCG(19, 2))
	regressions := 0
	for range trials {
		g := TailGate{Baseline: correlated.side(r, 6, 1), Candidate: correlated.side(r, 6, 1.15), Quantile: 0.99,
			Relative: true, Tolerance: 0.15}
		_, _, d := DecideWithTails(nil, nil, []TailGate{g}, calibAlpha)
		if d[0].Outcome == Regression {
			regressions++
		}
	}
	rate := float64(regressions) / float64(trials)
	t.Logf("at the boundary ×1.15 with tolerance +15%%: regression rate %.3f", rate)
	assert.LessOrEqual(t, rate, calibAlpha+2*se, "false regressions at the relative boundary")

	regressions = 0
	shifted := correlated
	for range trials {
		base := shifted.side(r, 6, 1)
		cand := shifted.side(r, 6, 1)
		for _, rep := range cand {
			for i := range rep {
				rep[i].Value += 20
			}
		}
		g := TailGate{Baseline: base, Candidate: cand, Quantile: 0.99, Tolerance: 20}
		_, _, d := DecideWithTails(nil, nil, []TailGate{g}, calibAlpha)
		if d[0].Outcome == Regression {
			regressions++
		}
	}
	rate = float64(regressions) / float64(trials)
	t.Logf("at the boundary +20 ms with tolerance +20 ms: regression rate %.3f", rate)
	assert.LessOrEqual(t, rate, calibAlpha+2*se, "false regressions at the absolute boundary")
}

func TestTailPowerOnStalls(t *testing.T) {
	// The candidate stalls (250 ms on a run of 5 requests) about every
	// 150 requests, the baseline never: a stall-like shift that moves about
	// 3% of requests far into the tail, a few stalls a repetition. The
	// per-repetition p99 moves too, but it is one value a repetition and
	// the tail test sees every stalled request.
	// (Stalls rarer than a repetition: TestTailPowerPartialStalls.)
	const trials = 100
	r := rand.New(rand.NewPCG(19, 3))
	base := repModel{requests: 500, spread: 0.05}
	cand := repModel{requests: 500, spread: 0.05, stallEvery: 100, stallRun: 5, stall: 250}
	caught, passes, perRep := 0, 0, 0
	for range trials {
		g := TailGate{Baseline: base.side(r, 6, 1), Candidate: cand.side(r, 6, 1), Quantile: 0.99, Relative: true, Tolerance: 0.15}
		p99 := Gate{Baseline: repQuantiles(g.Baseline, 0.99), Candidate: repQuantiles(g.Candidate, 0.99), Relative: true, Tolerance: 0.15}
		d, _, td := DecideWithTails([]Gate{p99}, nil, []TailGate{g}, calibAlpha)
		switch td[0].Outcome {
		case Regression:
			caught++
		case Pass:
			passes++
		}
		if d[0].Outcome == Regression {
			perRep++
		}
	}
	t.Logf("stalls: the tail test caught %d of %d and passed %d; the per-repetition p99 gate in the same family caught %d", caught, trials, passes, perRep)
	assert.GreaterOrEqual(t, caught, 90, "stalls caught as regressions")
	assert.Zero(t, passes, "a stalling candidate passed")
}

func TestTailPassesWithinTolerance(t *testing.T) {
	// A candidate like the baseline, with a +15% tolerance: scaled back by
	// 1.15 it has far fewer requests beyond the baseline's p99, and the
	// mirror test says so in nearly every trial.
	const trials = 50
	r := rand.New(rand.NewPCG(19, 4))
	m := repModel{requests: 500, spread: 0.02}
	passes := 0
	for range trials {
		g := TailGate{Baseline: m.side(r, 6, 1), Candidate: m.side(r, 6, 1), Quantile: 0.99, Relative: true, Tolerance: 0.15}
		_, _, d := DecideWithTails(nil, nil, []TailGate{g}, calibAlpha)
		if d[0].Outcome == Pass {
			passes++
			assert.Contains(t, d[0].Reason, "significantly fewer than 1%")
		}
	}
	assert.GreaterOrEqual(t, passes, 45, "A/A within a 15%% tolerance passes")
}

// repQuantiles is each repetition's q-quantile (the smallest value with at
// least ⌈q·n⌉ of its n requests at or below it), as the per-repetition gate
// sees it.
func repQuantiles(reps [][]Bar, q float64) []float64 {
	out := make([]float64, len(reps))
	for i, r := range reps {
		s := slices.Clone(r)
		slices.SortFunc(s, func(a, b Bar) int { return cmp.Compare(a.Value, b.Value) })
		var n, run int64
		for _, b := range s {
			n += b.Count
		}
		rank := int64(math.Ceil(q * float64(n)))
		for _, b := range s {
			if run += b.Count; run >= rank {
				out[i] = b.Value
				break
			}
		}
	}
	return out
}

// uniform is a repetition with one request at each of 1..n ms, and extra
// requests at value.
func uniform(n int, extra int64, value float64) []Bar {
	bars := make([]Bar, 0, n+1)
	for v := 1; v <= n; v++ {
		bars = append(bars, Bar{Value: float64(v), Count: 1})
	}
	if extra > 0 {
		bars = append(bars, Bar{Value: value, Count: extra})
	}
	return bars
}

func TestTailEvidence(t *testing.T) {
	// The baseline pools 4×100 requests at 1..100 ms: its p99 is the 396th
	// of 400, 99 ms, and each repetition has 1 request (1%) beyond it. The
	// candidate has 10 more requests at 500 ms in each repetition: 11 of
	// 110 beyond 99 ms, 10%.
	base := [][]Bar{uniform(100, 0, 0), uniform(100, 0, 0), uniform(100, 0, 0), uniform(100, 0, 0)}
	cand := [][]Bar{uniform(100, 10, 500), uniform(100, 10, 500), uniform(100, 10, 500), uniform(100, 10, 500)}
	g := TailGate{Baseline: base, Candidate: cand, Quantile: 0.99}
	_, _, ds := DecideWithTails(nil, nil, []TailGate{g}, 0.05)
	d := ds[0]
	assert.Equal(t, 99.0, d.Threshold, "Threshold")
	assert.InDelta(t, 0.01, d.Expected, 1e-12, "Expected")
	assert.InDelta(t, 0.1, d.Share, 1e-12, "Share")
	assert.InDelta(t, 0.1, d.AdjustedShare, 1e-12, "AdjustedShare with tolerance 0")
	assert.Equal(t, []float64{0.01, 0.01, 0.01, 0.01}, d.BaselineShares, "BaselineShares")
	assert.InDeltaSlice(t, []float64{0.1, 0.1, 0.1, 0.1}, d.CandidateShares, 1e-12, "CandidateShares")
	assert.Equal(t, 70, d.Splits, "C(8, 4)")
	assert.True(t, d.Exact)
	// Any other split has m >= 1 stalled repetitions in its
	// pseudo-baseline: 400+10m requests, of which the ⌈0.99·(400+10m)⌉th
	// (406th, 416th, 426th, 436th for m = 1..4) is past the 400 at or
	// below 100 ms, so its threshold is 500 ms and its pseudo-candidate's
	// share beyond it 0, below the observed 10%. p = 1/70, below 0.05.
	assert.InDelta(t, 1.0/70, d.P, 1e-12, "P")
	assert.Equal(t, Regression, d.Outcome, d.Reason)
	assert.Contains(t, d.Reason, "10.0% of the candidate's requests beyond the baseline's p99, expected 1%")

	// A tolerance of 500 ms moves every candidate request to 0 ms or
	// below: none beyond 99 ms, a share of 0. Any other split puts 4−m >= 1
	// baseline repetitions in its pseudo-candidate and m adjusted candidate
	// ones (110 requests at 0 ms or below) in its pseudo-baseline, whose
	// threshold is then 99, 98 or 96 ms (m = 1, 2, 3: the 406th of 410,
	// 416th of 420, 426th of 430) or 0 ms (m = 4: the 436th of 440), so
	// each of those baseline repetitions has 1, 2, 4 or 100 requests
	// beyond it: a share above 0. PLower = 1/70.
	g.Tolerance = 500
	_, _, ds = DecideWithTails(nil, nil, []TailGate{g}, 0.05)
	assert.Zero(t, ds[0].AdjustedShare, "AdjustedShare after -500 ms")
	assert.InDelta(t, 1.0/70, ds[0].PLower, 1e-12, "PLower")
	assert.InDelta(t, 0.1, ds[0].Share, 1e-12, "Share stays as measured")
	assert.Equal(t, Pass, ds[0].Outcome, ds[0].Reason)

	// ×11 relative tolerance: the same.
	g.Tolerance, g.Relative = 10, true
	_, _, ds = DecideWithTails(nil, nil, []TailGate{g}, 0.05)
	assert.Equal(t, Pass, ds[0].Outcome, ds[0].Reason)
	assert.Contains(t, ds[0].Reason, "beyond the baseline's p99 ×11")
}

func TestTailLargeCounts(t *testing.T) {
	// TestTailEvidence's repetitions with every count multiplied by 2^36:
	// the pooled shares are the same fractions, so the same p = 1/70, but
	// comparing beyond·total cross products needs about 2^89, past any
	// 64-bit integer.
	scale := func(reps [][]Bar) [][]Bar {
		out := make([][]Bar, len(reps))
		for i, r := range reps {
			for _, b := range r {
				out[i] = append(out[i], Bar{Value: b.Value, Count: b.Count << 36})
			}
		}
		return out
	}
	base := [][]Bar{uniform(100, 0, 0), uniform(100, 0, 0), uniform(100, 0, 0), uniform(100, 0, 0)}
	cand := [][]Bar{uniform(100, 10, 500), uniform(100, 10, 500), uniform(100, 10, 500), uniform(100, 10, 500)}
	g := TailGate{Baseline: scale(base), Candidate: scale(cand), Quantile: 0.99}
	_, _, ds := DecideWithTails(nil, nil, []TailGate{g}, 0.05)
	d := ds[0]
	assert.Equal(t, 99.0, d.Threshold, "Threshold")
	assert.InDelta(t, 0.1, d.AdjustedShare, 1e-12, "AdjustedShare")
	assert.InDelta(t, 1.0/70, d.P, 1e-12, "P")
	assert.InDelta(t, 1.0, d.PLower, 1e-12, "PLower: every split's share is at most the observed one")
	assert.Equal(t, Regression, d.Outcome, d.Reason)
}

func TestTailHolmFamily(t *testing.T) {
	// With 4+4 repetitions the smallest p is 1/70: alone it can reach 0.05,
	// but in a family of 4 (70·0.05/4 < 1 split) it cannot, and the gate
	// says it needs more repetitions rather than passing or regressing.
	base := [][]Bar{uniform(100, 0, 0), uniform(100, 0, 0), uniform(100, 0, 0), uniform(100, 0, 0)}
	cand := [][]Bar{uniform(100, 10, 500), uniform(100, 10, 500), uniform(100, 10, 500), uniform(100, 10, 500)}
	tail := TailGate{Baseline: base, Candidate: cand, Quantile: 0.99}
	lat := Gate{Baseline: []float64{1, 2, 3, 4}, Candidate: []float64{1, 2, 3, 4}, Relative: true, Tolerance: 0.1}
	ds, _, ts := DecideWithTails([]Gate{lat, lat, lat}, nil, []TailGate{tail}, 0.05)
	require.Len(t, ds, 3)
	d := ts[0]
	assert.InDelta(t, 4.0/70, d.PAdjusted, 1e-12, "PAdjusted: Holm's first step multiplies by the family's size")
	assert.Equal(t, Inconclusive, d.Outcome, d.Reason)
	assert.Contains(t, d.Reason, "too few repetitions: need >= 5 a side")
	assert.True(t, strings.Contains(strings.Join(d.Warnings, "\n"), "over 4 gates"), "warnings %q", d.Warnings)
	for i := range ds {
		assert.Contains(t, strings.Join(ds[i].Warnings, "\n"), "over 4 gates", "the latency gates count the tail gate in m")
	}
}

func TestTailMonteCarlo(t *testing.T) {
	// 11+11 repetitions have C(22, 11) = 705432 splits: the test draws
	// TailExactSplits of them, reproducibly for a seed.
	r := rand.New(rand.NewPCG(19, 5))
	m := repModel{requests: 200, spread: 0.05}
	g := TailGate{Baseline: m.side(r, 11, 1), Candidate: m.side(r, 11, 1.5), Quantile: 0.99, Relative: true, Seed: 7}
	_, _, a := DecideWithTails(nil, nil, []TailGate{g}, 0.05)
	_, _, b := DecideWithTails(nil, nil, []TailGate{g}, 0.05)
	assert.False(t, a[0].Exact, "Exact")
	assert.Equal(t, TailExactSplits, a[0].Splits, "Splits")
	assert.InDelta(t, 1.0/(TailExactSplits+1), a[0].MinP(), 1e-15, "MinP")
	assert.Equal(t, a[0].P, b[0].P, "the same seed gives the same p")
	assert.InDelta(t, 1.0/(TailExactSplits+1), a[0].P, 1e-12, "a 50% slower candidate is the most extreme of every draw")
	assert.Equal(t, Regression, a[0].Outcome, a[0].Reason)
}

func TestTailUntestable(t *testing.T) {
	ok := [][]Bar{{{Value: 10, Count: 5}}, {{Value: 11, Count: 5}}, {{Value: 12, Count: 5}}}
	tests := []struct {
		name   string
		g      TailGate
		level  float64
		reason string
	}{
		{"no baseline", TailGate{Candidate: ok, Quantile: 0.99}, 0.05, "no baseline repetitions"},
		{"no candidate", TailGate{Baseline: ok, Quantile: 0.99}, 0.05, "no candidate repetitions"},
		{"empty repetition", TailGate{Baseline: ok, Candidate: [][]Bar{{}, {{Value: 1, Count: 1}}}, Quantile: 0.99}, 0.05,
			"a candidate repetition has no requests"},
		{"zero counts", TailGate{Baseline: [][]Bar{{{Value: 1, Count: 0}}}, Candidate: ok, Quantile: 0.99}, 0.05,
			"a baseline repetition has no requests"},
		{"NaN value", TailGate{Baseline: ok, Candidate: [][]Bar{{{Value: math.NaN(), Count: 1}}}, Quantile: 0.99}, 0.05,
			"a candidate value is not a number"},
		{"infinite value", TailGate{Baseline: [][]Bar{{{Value: math.Inf(1), Count: 1}}}, Candidate: ok, Quantile: 0.99}, 0.05,
			"a baseline value is not a number"},
		{"negative count", TailGate{Baseline: [][]Bar{{{Value: 1, Count: -1}}}, Candidate: ok, Quantile: 0.99}, 0.05,
			"a baseline value is not a number"},
		{"overflowing counts", TailGate{Baseline: [][]Bar{{{Value: 1, Count: math.MaxInt64}, {Value: 2, Count: 1}}}, Candidate: ok, Quantile: 0.99}, 0.05,
			"a baseline count overflows"},
		{"overflowing pooled counts", TailGate{Baseline: [][]Bar{{{Value: 1, Count: math.MaxInt64 / 2}}, {{Value: 2, Count: math.MaxInt64 / 2}}},
			Candidate: [][]Bar{{{Value: 3, Count: 2}}}, Quantile: 0.99}, 0.05, "a candidate count overflows"},
		{"quantile 1", TailGate{Baseline: ok, Candidate: ok, Quantile: 1}, 0.05, "invalid quantile"},
		{"quantile NaN", TailGate{Baseline: ok, Candidate: ok, Quantile: math.NaN()}, 0.05, "invalid quantile"},
		{"negative tolerance", TailGate{Baseline: ok, Candidate: ok, Quantile: 0.99, Tolerance: -1}, 0.05, "invalid tolerance"},
		{"NaN tolerance", TailGate{Baseline: ok, Candidate: ok, Quantile: 0.99, Tolerance: math.NaN()}, 0.05, "invalid tolerance"},
		{"bad level", TailGate{Baseline: ok, Candidate: ok, Quantile: 0.99}, 0.5, "invalid level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, ds := DecideWithTails(nil, nil, []TailGate{tt.g}, tt.level)
			d := ds[0]
			assert.Equal(t, Inconclusive, d.Outcome, "Outcome")
			assert.Equal(t, tt.reason, d.Reason, "Reason")
			assert.Len(t, d.Warnings, 1, "Warnings")
			assert.True(t, math.IsNaN(d.P) && math.IsNaN(d.PAdjusted), "P %v, PAdjusted %v, want NaN", d.P, d.PAdjusted)
			assert.True(t, math.IsNaN(d.MinP()), "MinP of an untested gate")
		})
	}
}

func TestTailTiny(t *testing.T) {
	// One repetition a side: two splits, p >= 1/2, never a decision.
	one := [][]Bar{{{Value: 10, Count: 1}}}
	worse := [][]Bar{{{Value: 1000, Count: 1}}}
	_, _, ds := DecideWithTails(nil, nil, []TailGate{{Baseline: one, Candidate: worse, Quantile: 0.99}}, 0.05)
	d := ds[0]
	assert.Equal(t, 2, d.Splits, "Splits")
	assert.Equal(t, 0.5, d.P, "P")
	assert.Equal(t, Inconclusive, d.Outcome, d.Reason)
	assert.Equal(t, "too few repetitions: need >= 4 a side", d.Reason)
	assert.Contains(t, strings.Join(d.Warnings, "\n"), "the baseline has 1 requests", "the little-to-see warning")
	// No tail gates: empty, not nil.
	_, _, none := DecideWithTails(nil, nil, nil, 0.05)
	assert.NotNil(t, none)
	assert.Empty(t, none)
}

func TestForEachSplit(t *testing.T) {
	for _, tt := range []struct{ n, k, want int }{{6, 3, 20}, {5, 0, 1}, {5, 5, 1}, {12, 6, 924}, {3, 4, 0}} {
		seen := map[string]bool{}
		calls := 0
		forEachSplit(tt.n, tt.k, func(in []bool) {
			calls++
			chosen := 0
			key := make([]byte, len(in))
			for i, b := range in {
				key[i] = '0'
				if b {
					chosen++
					key[i] = '1'
				}
			}
			if chosen != tt.k {
				t.Errorf("forEachSplit(%d, %d) chose %d", tt.n, tt.k, chosen)
			}
			seen[string(key)] = true
		})
		assert.Equal(t, tt.want, calls, "forEachSplit(%d, %d) calls", tt.n, tt.k)
		assert.Len(t, seen, tt.want, "forEachSplit(%d, %d) distinct splits", tt.n, tt.k)
	}
}

// partialStalls draws k repetitions of m, each of which independently
// contains one stall with probability prob: a run of a tenth of its
// requests delayed by 250 ms, a stall rarer than a repetition is long.
func partialStalls(r *rand.Rand, m repModel, k int, prob float64) [][]Bar {
	out := make([][]Bar, k)
	for i := range out {
		factor := math.Exp(m.spread * r.NormFloat64())
		run := m.requests / 10
		start := -run // no stall
		if r.Float64() < prob {
			start = r.IntN(m.requests - run + 1)
		}
		counts := map[float64]int64{}
		for n := range m.requests {
			v := 50 * factor * math.Exp(0.3*r.NormFloat64())
			if n >= start && n < start+run {
				v += 250
			}
			counts[math.Round(10*v)/10]++
		}
		for v, c := range counts {
			out[i] = append(out[i], Bar{Value: v, Count: c})
		}
	}
	return out
}

func TestTailPowerPartialStalls(t *testing.T) {
	// Stalls rarer than a repetition: each candidate repetition contains
	// one with probability 0.6, so only some of them show it. The pooled
	// share beyond the threshold weighs the stalled repetitions' requests
	// with the clean ones', and must still catch these at least as often
	// as a U test on the per-repetition p99s at the same level (less 2
	// standard errors of the difference); when every repetition stalls it
	// must catch nearly all.
	trials := 200
	if raceEnabled {
		trials = 80
	}
	m := repModel{requests: 500, spread: 0.05}
	for _, tt := range []struct {
		name     string
		prob     float64
		seed     uint64
		minShare float64 // the least share of trials the tail test must catch (0: compared with U only)
	}{
		{"some repetitions stall", 0.6, 6, 0},
		{"every repetition stalls", 1, 7, 0.95},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(19, tt.seed))
			tail, u := 0, 0
			for range trials {
				g := TailGate{Baseline: m.side(r, 6, 1), Candidate: partialStalls(r, m, 6, tt.prob), Quantile: 0.99,
					Relative: true, Tolerance: 0.15}
				_, _, d := DecideWithTails(nil, nil, []TailGate{g}, calibAlpha)
				if d[0].Outcome == Regression {
					tail++
				}
				cand := repQuantiles(g.Candidate, 0.99)
				for i := range cand {
					cand[i] /= 1.15
				}
				p, err := OneSidedU(repQuantiles(g.Baseline, 0.99), cand, false)
				require.NoError(t, err)
				if p < calibAlpha {
					u++
				}
			}
			pt, pu := float64(tail)/float64(trials), float64(u)/float64(trials)
			// The standard error of the difference of the two rates.
			se := math.Sqrt((pt*(1-pt) + pu*(1-pu)) / float64(trials))
			t.Logf("%s (p=%.1f), %d trials: tail test caught %.3f, U test on per-repetition p99 %.3f (SE of the difference %.3f)",
				tt.name, tt.prob, trials, pt, pu, se)
			assert.GreaterOrEqual(t, pt, pu-2*se, "the tail test's power against the per-repetition U test's")
			assert.GreaterOrEqual(t, pt, tt.minShare, "the tail test's power")
		})
	}
}

func TestCompareFractions(t *testing.T) {
	big := uint64(math.MaxInt64)
	for _, tt := range []struct {
		a, b, c, d uint64
		want       int
	}{
		{1, 100, 2, 200, 0},
		{1, 100, 2, 199, -1},
		{0, 5, 0, 7, 0},
		{big, big, 1, 1, 0},
		// Cross products past 2^64: big·(big−1) against (big−1)·big.
		{big, big - 1, big - 1, big, 1},
		{big - 1, big, big, big - 1, -1},
	} {
		assert.Equal(t, tt.want, compareFractions(tt.a, tt.b, tt.c, tt.d), "compareFractions(%d, %d, %d, %d)", tt.a, tt.b, tt.c, tt.d)
	}
}
