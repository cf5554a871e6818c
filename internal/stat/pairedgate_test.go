package stat

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capacityLike are six capacity samples with a large per-repetition
// component (each repetition's requests, shared by both sides, move it by
// up to ±20%), and a candidate that differs from the baseline within each
// repetition by at most 1%.
var (
	capacityBase = []float64{150, 180, 128, 165, 141, 196}
	capacityNear = []float64{151.5, 178.2, 128.6, 164.2, 141, 197.9}
)

// TestDecidePairedGate: a gate marked Paired is tested pair by pair inside
// DecideAll (the signed-rank test, the Walsh-average interval), counting
// pairs in its reasons; the others stay two-sample tests.
func TestDecidePairedGate(t *testing.T) {
	cases := []struct {
		name    string
		gate    Gate
		outcome Outcome
		reason  string
		p       float64 // NaN: not checked
	}{
		{
			name:    "a shared per-repetition component: paired passes",
			gate:    Gate{Baseline: capacityBase, Candidate: capacityNear, HigherIsBetter: true, Relative: true, Tolerance: 0.05, Paired: true},
			outcome: Pass, reason: "the 90% interval rules out worse than -5%", p: math.NaN(),
		},
		{
			name:    "the same samples unpaired: the spread hides the pairs",
			gate:    Gate{Baseline: capacityBase, Candidate: capacityNear, HigherIsBetter: true, Relative: true, Tolerance: 0.05},
			outcome: Inconclusive, p: math.NaN(),
		},
		{
			name:    "1.3x slower, paired: every pair worse",
			gate:    Gate{Baseline: capacityBase, Candidate: scaled(capacityBase, 1/1.3), HigherIsBetter: true, Relative: true, Tolerance: 0.05, Paired: true},
			outcome: Regression, reason: "significant (p=0.016) and -23.1% is beyond -5%", p: 1.0 / 64,
		},
		{
			name:    "4 pairs cannot reach 0.05",
			gate:    Gate{Baseline: capacityBase[:4], Candidate: capacityNear[:4], HigherIsBetter: true, Relative: true, Tolerance: 0.05, Paired: true},
			outcome: Inconclusive, reason: "too few pairs: need >= 5", p: math.NaN(),
		},
		{
			name:    "unequal sides cannot be paired",
			gate:    Gate{Baseline: capacityBase, Candidate: capacityNear[:5], HigherIsBetter: true, Relative: true, Tolerance: 0.05, Paired: true},
			outcome: Inconclusive, reason: "unequal pairs", p: math.NaN(),
		},
		{
			name:    "a zero value has no ratio",
			gate:    Gate{Baseline: capacityBase, Candidate: append([]float64{0}, capacityNear[1:]...), HigherIsBetter: true, Relative: true, Tolerance: 0.05, Paired: true},
			outcome: Inconclusive, reason: "a relative tolerance needs positive values", p: math.NaN(),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide([]Gate{c.gate}, 0.05)[0]
			assert.Equal(t, c.outcome, d.Outcome, d.Reason)
			if c.reason != "" {
				assert.Equal(t, c.reason, d.Reason)
			}
			if !math.IsNaN(c.p) {
				assert.InDelta(t, c.p, d.P, 1e-15)
			}
			assert.Equal(t, c.gate.Paired, d.Paired)
		})
	}
}

// TestDecidePairedGateIsRounds: a Paired gate is decided exactly as
// DecideRounds decides it; only the words differ (pairs, not rounds).
func TestDecidePairedGateIsRounds(t *testing.T) {
	for _, cand := range [][]float64{capacityNear, scaled(capacityBase, 0.9), scaled(capacityBase, 0.6), capacityNear[:4]} {
		n := len(cand)
		g := Gate{Baseline: capacityBase[:n], Candidate: cand, HigherIsBetter: true, Relative: true, Tolerance: 0.05}
		r, _ := DecideRounds([]Gate{g}, nil, 0.05)
		g.Paired = true
		p := Decide([]Gate{g}, 0.05)[0]
		assert.Equal(t, r[0].Outcome, p.Outcome, "candidate %v", cand)
		assert.Equal(t, r[0].Shift, p.Shift)
		assert.Equal(t, r[0].Change, p.Change)
		assert.Equal(t, r[0].P, p.P)
		assert.True(t, r[0].Paired)
		assert.True(t, p.Paired)
		if n == 4 {
			assert.Equal(t, "too few rounds: need >= 5", r[0].Reason)
			assert.Equal(t, "too few pairs: need >= 5", p.Reason)
			assert.Contains(t, p.Warnings, "need >= 5 pairs to detect a regression at level 0.05")
		}
	}
}

// TestDecidePairedFamily: a paired gate and two-sample gates are one Holm
// family, m counting them all in the paired gate's detectability.
func TestDecidePairedFamily(t *testing.T) {
	base8 := []float64{100, 102, 98, 101, 99, 103, 97, 100}
	gates := []Gate{
		{Baseline: capacityBase, Candidate: scaled(capacityBase, 0.7), HigherIsBetter: true, Relative: true, Tolerance: 0.05, Paired: true},
		{Baseline: base8, Candidate: scaled(base8, 1.3), Relative: true, Tolerance: 0.1},
	}
	ds := Decide(gates, 0.05)
	require.Len(t, ds, 2)
	adjusted := Holm([]float64{ds[0].P, ds[1].P})
	assert.Equal(t, adjusted[0], ds[0].PAdjusted)
	assert.Equal(t, adjusted[1], ds[1].PAdjusted)
	assert.InDelta(t, 1.0/64, ds[0].P, 1e-15, "the signed-rank test's")
	assert.InDelta(t, 1.0/12870, ds[1].P, 1e-15, "the U test's")
	assert.Equal(t, Regression, ds[0].Outcome, ds[0].Reason)
	assert.Equal(t, Regression, ds[1].Outcome, ds[1].Reason)
	assert.True(t, ds[0].Paired)
	assert.False(t, ds[1].Paired)

	// Six pairs detect with up to three gates (3/64 < 0.05), not four.
	four := append(slices.Clone(gates[:1]), Gate{}, Gate{}, Gate{})
	d := Decide(four, 0.05)[0]
	assert.Equal(t, Inconclusive, d.Outcome)
	assert.Equal(t, "too few pairs: need >= 7", d.Reason)
	assert.Contains(t, d.Warnings, "need >= 7 pairs to detect a regression at level 0.0125 (alpha 0.05 over 4 gates)")
	three := four[:3]
	assert.Equal(t, Regression, Decide(three, 0.05)[0].Outcome)
}
