package stat

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func scaled(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

func TestDecide(t *testing.T) {
	base8 := []float64{100, 102, 98, 101, 99, 103, 97, 100}
	near8 := []float64{100.5, 101.5, 98.5, 100, 99.5, 102, 98, 101}
	small := []float64{10, 11, 12, 13, 14}
	cases := []struct {
		name      string
		gate      Gate
		outcome   Outcome
		reason    string   // the exact Reason
		warnings  []string // the exact Warnings
		worse     float64  // NaN: not checked
		estimate  float64  // the Hodges-Lehmann estimate
		pEpsilon  float64
		wantP     float64
		checkBase bool
	}{
		{
			name:    "latency +30%, relative 10%",
			gate:    Gate{Baseline: base8, Candidate: scaled(base8, 1.3), Relative: true, Tolerance: 0.1},
			outcome: Regression, reason: "significant (p=7.8e-05) and +30.0% is beyond +10%",
			worse: 0.3, estimate: 30, wantP: 1.0 / 12870,
		},
		{
			name:    "throughput -30%, relative 10%",
			gate:    Gate{Baseline: base8, Candidate: scaled(base8, 0.7), HigherIsBetter: true, Relative: true, Tolerance: 0.1},
			outcome: Regression, reason: "significant (p=7.8e-05) and -30.0% is beyond -10%",
			worse: 0.3, estimate: -30, wantP: 1.0 / 12870,
		},
		{
			name:    "latency unchanged, relative 10%",
			gate:    Gate{Baseline: base8, Candidate: near8, Relative: true, Tolerance: 0.1},
			outcome: Pass, reason: "the 90% interval rules out worse than +10%",
			worse: 0, estimate: 0,
		},
		{
			name:    "throughput unchanged, relative 10%",
			gate:    Gate{Baseline: base8, Candidate: near8, HigherIsBetter: true, Relative: true, Tolerance: 0.1},
			outcome: Pass, reason: "the 90% interval rules out worse than -10%",
			worse: 0, estimate: 0,
		},
		{
			name:    "throughput +30% is no regression",
			gate:    Gate{Baseline: base8, Candidate: scaled(base8, 1.3), HigherIsBetter: true, Relative: true},
			outcome: Pass, reason: "the 90% interval rules out any worsening",
			worse: -0.3, estimate: 30, wantP: 1,
		},
		{
			name:    "latency -50%, tolerance 0",
			gate:    Gate{Baseline: base8, Candidate: scaled(base8, 0.5), Relative: true},
			outcome: Pass, reason: "the 90% interval rules out any worsening",
			worse: -0.5, estimate: -50, wantP: 1,
		},
		{
			name:    "latency +20 units, absolute 5",
			gate:    Gate{Baseline: small, Candidate: []float64{30, 31, 32, 33, 34}, Tolerance: 5},
			outcome: Regression, reason: "significant (p=0.004) and +20 is beyond +5",
			worse: 20, estimate: 20, wantP: 1.0 / 252,
		},
		{
			name:    "throughput -20 units, absolute 5",
			gate:    Gate{Baseline: []float64{30, 31, 32, 33, 34}, Candidate: small, HigherIsBetter: true, Tolerance: 5},
			outcome: Regression, reason: "significant (p=0.004) and -20 is beyond -5",
			worse: 20, estimate: -20, wantP: 1.0 / 252,
		},
		{
			name:    "latency unchanged, absolute 5",
			gate:    Gate{Baseline: small, Candidate: []float64{10.5, 10.5, 12.5, 12.5, 14}, Tolerance: 5},
			outcome: Pass, reason: "the 90% interval rules out worse than +5",
			worse: 0, estimate: 0,
		},
		{
			name:    "noisy: the interval reaches past the tolerance",
			gate:    Gate{Baseline: []float64{80, 120, 95, 105, 100}, Candidate: []float64{85, 125, 90, 110, 115}, Relative: true, Tolerance: 0.1},
			outcome: Inconclusive, reason: "the 90% interval reaches +25.0%, beyond +10%",
			worse: 0.05, estimate: 5,
		},
		{
			name:    "significant but within the tolerance, interval too wide",
			gate:    Gate{Baseline: []float64{100, 101, 102, 103, 104}, Candidate: []float64{106, 107, 108, 109, 118}, Relative: true, Tolerance: 0.1},
			outcome: Inconclusive, reason: "significant (p=0.004) but +5.9% is within +10%, and the 90% interval reaches +13.7%",
			worse: 6.0 / 102, estimate: 6, wantP: 1.0 / 252,
		},
		{
			name:    "beyond the tolerance but not significant",
			gate:    Gate{Baseline: []float64{100, 101, 102, 103, 104}, Candidate: []float64{90, 125, 130, 135, 140}, Relative: true, Tolerance: 0.1},
			outcome: Inconclusive, reason: "+27.5% is beyond +10% but not significant (p=0.075), and the 90% interval reaches +35.3%",
			// U = 5 (90 is below every baseline value): p = 19/252. The
			// differences are -14..-10, 21..40: the 13th is 28, the 21st 36.
			worse: 28.0 / 102, estimate: 28, wantP: 19.0 / 252,
		},
		{
			name:    "zero baseline median, relative",
			gate:    Gate{Baseline: []float64{0, 0, 0, 1, -1}, Candidate: []float64{5, 6, 7, 8, 9}, Relative: true, Tolerance: 0.1},
			outcome: Inconclusive, reason: "baseline median is 0: a relative tolerance cannot be applied",
			warnings: []string{"baseline median is 0: a relative tolerance cannot be applied; use an absolute one"},
			worse:    math.NaN(), estimate: 7, wantP: 1.0 / 252,
		},
		{
			name:    "zero baseline median, absolute",
			gate:    Gate{Baseline: []float64{0, 0, 0, 1, -1}, Candidate: []float64{5, 6, 7, 8, 9}, Tolerance: 1},
			outcome: Regression, reason: "significant (p=0.004) and +7 is beyond +1",
			worse: 7, estimate: 7, wantP: 1.0 / 252,
		},
		{
			name:    "2 a side, obvious regression",
			gate:    Gate{Baseline: []float64{100, 101}, Candidate: []float64{200, 201}, Relative: true, Tolerance: 0.1},
			outcome: Inconclusive, reason: "too few samples: need >= 4 a side",
			warnings: []string{
				"need >= 4 samples a side to detect a regression at level 0.05",
				"need >= 3 samples a side for a 90% interval",
			},
			worse: 100 / 100.5, estimate: 100, wantP: 1.0 / 6,
		},
		{
			name:    "2 a side, identical",
			gate:    Gate{Baseline: []float64{100, 101}, Candidate: []float64{100, 101}, Relative: true, Tolerance: 0.1},
			outcome: Inconclusive, reason: "too few samples: need >= 4 a side",
			warnings: []string{
				"need >= 4 samples a side to detect a regression at level 0.05",
				"need >= 3 samples a side for a 90% interval",
			},
			worse: 0, estimate: 0,
		},
		{
			// MinP(3, 3) = 1/20 is not below 0.05: the interval exists, but no
			// regression however large could be shown.
			name:    "3 a side: an interval but no significance possible",
			gate:    Gate{Baseline: []float64{100, 101, 102}, Candidate: []float64{200, 201, 202}, Relative: true, Tolerance: 0.1},
			outcome: Inconclusive, reason: "too few samples: need >= 4 a side",
			warnings: []string{"need >= 4 samples a side to detect a regression at level 0.05"},
			worse:    100 / 101.0, estimate: 100, wantP: 1.0 / 20,
		},
		{
			// The same 3 a side would pass on the interval alone (it rules
			// out more than +10%), but a pass where no regression could
			// have been detected would be no test at all.
			name:    "3 a side, unchanged: no pass without detectability",
			gate:    Gate{Baseline: []float64{100, 101, 102}, Candidate: []float64{100.5, 101, 101.5}, Relative: true, Tolerance: 0.1},
			outcome: Inconclusive, reason: "too few samples: need >= 4 a side",
			warnings: []string{"need >= 4 samples a side to detect a regression at level 0.05"},
			worse:    0, estimate: 0,
		},
		{
			name:    "constant metric",
			gate:    Gate{Baseline: constant(5, 5), Candidate: constant(5, 5), Relative: true},
			outcome: Pass, reason: "the 90% interval rules out any worsening",
			worse: 0, estimate: 0, wantP: 1,
		},
		{
			name:    "constant metric that grew",
			gate:    Gate{Baseline: constant(5, 5), Candidate: constant(5, 6), Relative: true, Tolerance: 0.1},
			outcome: Regression, reason: "significant (p=0.004) and +20.0% is beyond +10%",
			worse: 0.2, estimate: 1, wantP: 1.0 / 252,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := Decide([]Gate{c.gate}, 0.05)
			require.Len(t, ds, 1)
			d := ds[0]
			assert.Equal(t, c.outcome, d.Outcome)
			assert.Equal(t, c.reason, d.Reason)
			assert.Equal(t, c.warnings, d.Warnings)
			assert.Equal(t, 0.05, d.Level)
			assert.Equal(t, d.P, d.PAdjusted, "a family of one")
			if c.wantP != 0 {
				assert.InDelta(t, c.wantP, d.P, 1e-12)
			}
			if math.IsNaN(c.worse) {
				assert.True(t, math.IsNaN(d.Worse))
			} else {
				assert.InDelta(t, c.worse, d.Worse, 1e-9)
			}
			assert.InDelta(t, c.estimate, d.Shift.Estimate, 1e-9)
			assert.Equal(t, SortedMedian(sortedCopy(c.gate.Baseline)), d.BaselineMedian)
			assert.Equal(t, SortedMedian(sortedCopy(c.gate.Candidate)), d.CandidateMedian)
			if d.BaselineMedian != 0 {
				m := math.Abs(d.BaselineMedian)
				assert.InDelta(t, d.Shift.Estimate/m, d.Change.Estimate, 1e-12)
				assert.Equal(t, d.Shift.Lo/m, d.Change.Lo)
				assert.Equal(t, d.Shift.Hi/m, d.Change.Hi)
			} else {
				assert.True(t, math.IsNaN(d.Change.Estimate))
			}
			if d.Shift.OK {
				// Each bound alone is one-sided 1 − level: the interval is at
				// 1 − 2·level or more.
				assert.GreaterOrEqual(t, d.Shift.Confidence, 0.9-1e-12)
			}
		})
	}
}

// TestDecideFamily: Holm across the family. A gate that is a regression on
// its own is not one among four equally strong gates (4 × 7/252 > 0.05), and
// the detectability warning counts the family.
func TestDecideFamily(t *testing.T) {
	g := Gate{Baseline: []float64{1, 2, 3, 4, 5}, Candidate: []float64{3.5, 4.5, 6, 7, 8}}
	alone := Decide([]Gate{g}, 0.05)[0]
	assert.Equal(t, Regression, alone.Outcome)
	assert.InDelta(t, 7.0/252, alone.P, 1e-12) // U = 3: P(U <= 3) = 7/252

	four := Decide([]Gate{g, g, g, g}, 0.05)
	require.Len(t, four, 4)
	for _, d := range four {
		assert.Equal(t, Inconclusive, d.Outcome)
		assert.InDelta(t, 7.0/252, d.P, 1e-12)
		assert.InDelta(t, 4*7.0/252, d.PAdjusted, 1e-12)
		assert.Empty(t, d.Warnings, "1/252 × 4 < 0.05: detectable")
		assert.Equal(t, "+3 is beyond +0 but not significant (p=0.11), and the 90% interval reaches +5", d.Reason)
	}

	// A strong regression among noise survives Holm, and the order is kept.
	strong := Gate{Baseline: seq(100, 8), Candidate: seq(200, 8), Relative: true, Tolerance: 0.1}
	same := Gate{Baseline: seq(100, 8), Candidate: seq(100.25, 8), Relative: true, Tolerance: 0.1}
	ds := Decide([]Gate{same, strong, same}, 0.05)
	assert.Equal(t, []Outcome{Pass, Regression, Pass}, []Outcome{ds[0].Outcome, ds[1].Outcome, ds[2].Outcome})
	assert.InDelta(t, 3.0/12870, ds[1].PAdjusted, 1e-12)

	// 4 a side among 8 gates: 8/70 >= 0.05, no regression is possible.
	g4 := Gate{Baseline: seq(1, 4), Candidate: seq(11, 4)}
	eight := Decide([]Gate{g4, g4, g4, g4, g4, g4, g4, g4}, 0.05)
	for _, d := range eight {
		assert.Equal(t, Inconclusive, d.Outcome)
		assert.Equal(t, []string{"need >= 5 samples a side to detect a regression at level 0.00625 (alpha 0.05 over 8 gates)"}, d.Warnings)
	}

	// An untestable gate still counts in the family: the others' p-values
	// are adjusted over 2.
	ds = Decide([]Gate{g, {Baseline: seq(1, 5)}}, 0.05)
	assert.InDelta(t, 2*7.0/252, ds[0].PAdjusted, 1e-12)
	assert.True(t, math.IsNaN(ds[1].PAdjusted))

	assert.Empty(t, Decide(nil, 0.05))
}

// TestDecideUntestable: inputs that cannot be decided are inconclusive with
// a warning, never a pass, and never a panic.
func TestDecideUntestable(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := seq(1, 6)
	cases := []struct {
		name    string
		gate    Gate
		level   float64
		reason  string
		warning string
	}{
		{"empty baseline", Gate{Candidate: ok}, 0.05, "no baseline samples", "the baseline has no samples: the gate cannot be decided"},
		{"empty candidate", Gate{Baseline: ok, Candidate: []float64{}}, 0.05, "no candidate samples", "the candidate has no samples: the gate cannot be decided"},
		{"both empty", Gate{}, 0.05, "no samples", "neither side has samples: the gate cannot be decided"},
		{"NaN baseline", Gate{Baseline: []float64{1, nan, 3}, Candidate: ok}, 0.05, "a baseline value is not finite", "the baseline holds a NaN or infinite value: the gate cannot be decided"},
		{"Inf candidate", Gate{Baseline: ok, Candidate: []float64{1, 2, inf}}, 0.05, "a candidate value is not finite", "the candidate holds a NaN or infinite value: the gate cannot be decided"},
		{"negative tolerance", Gate{Baseline: ok, Candidate: ok, Tolerance: -0.1}, 0.05, "invalid tolerance", "tolerance -0.1 is not a magnitude >= 0: the gate cannot be decided"},
		{"NaN tolerance", Gate{Baseline: ok, Candidate: ok, Tolerance: nan}, 0.05, "invalid tolerance", "tolerance NaN is not a magnitude >= 0: the gate cannot be decided"},
		{"level 0", Gate{Baseline: ok, Candidate: ok}, 0, "invalid level", "level 0 is not in (0, 0.5): no gate can be decided"},
		{"level 0.5", Gate{Baseline: ok, Candidate: ok}, 0.5, "invalid level", "level 0.5 is not in (0, 0.5): no gate can be decided"},
		{"level NaN", Gate{Baseline: ok, Candidate: ok}, nan, "invalid level", "level NaN is not in (0, 0.5): no gate can be decided"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ds []Decision
			require.NotPanics(t, func() { ds = Decide([]Gate{c.gate}, c.level) })
			require.Len(t, ds, 1)
			d := ds[0]
			assert.Equal(t, Inconclusive, d.Outcome)
			assert.Equal(t, c.reason, d.Reason)
			assert.Equal(t, []string{c.warning}, d.Warnings)
			assert.True(t, math.IsNaN(d.P))
			assert.True(t, math.IsNaN(d.PAdjusted))
			assert.False(t, d.Shift.OK)
		})
	}
}

// TestDecideNeverPanics runs Decide over awkward inputs: every outcome is
// one of the three, and no empty or non-finite gate passes.
func TestDecideNeverPanics(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	samples := [][]float64{
		nil, {}, {0}, {nan}, {inf, -inf}, {1, 1, 1}, {-5, -4, -3}, {1e308, -1e308, 1e308},
		{0, 0, 0, 0, 0, 0}, seq(1, 30), constant(60, 3), {5e-324, 0, -5e-324},
	}
	levels := []float64{-1, 0, 1e-300, 0.001, 0.05, 0.49, 0.5, 1, nan, inf}
	tolerances := []float64{0, 0.1, 1e300, inf, -1, nan}
	for _, b := range samples {
		for _, c := range samples {
			for _, level := range levels {
				for _, tol := range tolerances {
					var gates []Gate
					for _, hib := range []bool{false, true} {
						for _, rel := range []bool{false, true} {
							gates = append(gates, Gate{Baseline: b, Candidate: c, HigherIsBetter: hib, Relative: rel, Tolerance: tol})
						}
					}
					var ds []Decision
					require.NotPanics(t, func() { ds = Decide(gates, level) }, "b %v c %v level %g tol %g", b, c, level, tol)
					require.Len(t, ds, len(gates))
					for i, d := range ds {
						require.Contains(t, []Outcome{Regression, Pass, Inconclusive}, d.Outcome)
						require.NotEmpty(t, d.Reason)
						require.False(t, strings.Contains(d.Reason, "\n"))
						bad := len(b) == 0 || len(c) == 0 || hasNonFinite(b) || hasNonFinite(c)
						if bad {
							require.Equal(t, Inconclusive, d.Outcome, "gate %d b %v c %v", i, b, c)
							require.NotEmpty(t, d.Warnings)
						}
					}
				}
			}
		}
	}
}

func hasNonFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return true
		}
	}
	return false
}
