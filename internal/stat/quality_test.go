package stat

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// passFail returns n paired pass/fail items: losses that passed only in the
// baseline, gains that passed only in the candidate, bothFail that failed
// on both sides, and the rest passing on both.
func passFail(n, losses, gains, bothFail int) (baseline, candidate []float64) {
	baseline, candidate = make([]float64, n), make([]float64, n)
	for i := range n {
		switch {
		case i < losses:
			baseline[i] = 1
		case i < losses+gains:
			candidate[i] = 1
		case i < losses+gains+bothFail:
		default:
			baseline[i], candidate[i] = 1, 1
		}
	}
	return baseline, candidate
}

// agreement returns n agreement values of which the first differ are 0.
func agreement(n, differ int) []float64 {
	a := constant(n, 1)
	for i := range differ {
		a[i] = 0
	}
	return a
}

// scores is 20 baseline scores, and shifted returns them moved by shift
// plus a per-item wobble of wobble·(i%3 − 1).
var scores = []float64{0.9, 0.8, 0.7, 0.95, 0.6, 0.85, 0.9, 0.75, 0.8, 1, 0.9, 0.8, 0.7, 0.95, 0.6, 0.85, 0.9, 0.75, 0.8, 1}

func shifted(shift, wobble float64) []float64 {
	out := make([]float64, len(scores))
	for i, s := range scores {
		out[i] = s + shift + wobble*float64(i%3-1)
	}
	return out
}

func pairedGate(kind PairedKind, b, c []float64, tol float64) PairedGate {
	return PairedGate{Kind: kind, Baseline: b, Candidate: c, Tolerance: tol}
}

func TestDecidePaired(t *testing.T) {
	type counts struct{ losses, gains, need int }
	cases := []struct {
		name     string
		gate     PairedGate
		outcome  Outcome
		reason   string
		warnings []string
		p        float64 // NaN: not checked
		change   [3]float64
		counts   counts
	}{
		{
			// 20 of 100 items lost: p = 2^-20; Agresti–Min: (-20/102 ±
			// 1.645·sqrt(21 − 400/102)/102) = (-26.3, -12.9) points, the
			// whole interval beyond -5 points. The suite is too small for
			// a 5-point drop (NeedItems), but this drop it detected: no
			// warning.
			name:    "pass rate: 20 items lost",
			gate:    passRateGate(100, 20, 0, 5, 0.05),
			outcome: Regression, reason: "significant (p=9.5e-07) and -20.0 points is beyond -5 points, as is the whole 90% interval (up to -12.9 points)",
			p: math.Ldexp(1, -20),
			change: [3]float64{-0.2, -20.0/102 - 1.6448536269514722*math.Sqrt(21-400.0/102)/102,
				-20.0/102 + 1.6448536269514722*math.Sqrt(21-400.0/102)/102},
			counts: counts{20, 0, 493},
		},
		{
			// 24 lost, 2 gained of 200: Agresti–Min's upper bound is
			// -22/202 + 1.645·sqrt(27 − 484/202)/202 = -6.9 points, beyond
			// -5. NeedItems: ψ = 26/200, Connor's n = 320 > 200, but no
			// warning on a regression.
			name:    "pass rate: 24 lost, 2 gained of 200",
			gate:    passRateGate(200, 24, 2, 20, 0.05),
			outcome: Regression, reason: "significant (p=5.2e-06) and -11.0 points is beyond -5 points, as is the whole 90% interval (up to -6.9 points)",
			p: McNemar(24, 2), change: [3]float64{-0.11, math.NaN(), -22.0/202 + 1.6448536269514722*math.Sqrt(27-484.0/202)/202},
			counts: counts{24, 2, 320},
		},
		{
			// 16 lost, 2 gained of 200: significant, and the estimate (-7
			// points) is beyond -5, but the upper bound -14/202 +
			// 1.645·sqrt(19 − 196/202)/202 = -3.5 points is within it: a
			// drop of 5 points or less is not ruled out.
			name:    "pass rate: significant, beyond the tolerance, but the interval reaches within it",
			gate:    passRateGate(200, 16, 2, 20, 0.05),
			outcome: Inconclusive, reason: "significant (p=0.00066) and -7.0 points is beyond -5 points, but the 90% interval reaches -3.5 points, within it",
			warnings: []string{"the suite's 200 items cannot reliably detect a drop of 5 points: about 221 items would (80% power at level 0.05)"},
			p:        McNemar(16, 2), change: [3]float64{-0.07, math.NaN(), -14.0/202 + 1.6448536269514722*math.Sqrt(19-196.0/202)/202},
			counts: counts{16, 2, 221},
		},
		{
			// No discordant item: the interval is ±1.645/102, inside 2 points;
			// but the floor ψ >= δ still asks for more items.
			name:    "pass rate: identical",
			gate:    passRateGate(100, 0, 0, 5, 0.02),
			outcome: Pass, reason: "the 90% interval rules out worse than -2 points",
			warnings: []string{"the suite's 100 items cannot reliably detect a drop of 2 points: about 308 items would (80% power at level 0.05)"},
			p:        1, change: [3]float64{0, -1.6448536269514722 / 102, 1.6448536269514722 / 102},
			counts: counts{0, 0, 308},
		},
		{
			name:    "pass rate: 400 items, small noise",
			gate:    passRateGate(400, 10, 8, 20, 0.05),
			outcome: Pass, reason: "the 90% interval rules out worse than -5 points",
			p: McNemar(10, 8), change: [3]float64{-0.005, math.NaN(), math.NaN()},
			counts: counts{10, 8, 0},
		},
		{
			name:    "pass rate: tolerance 0, a drop that is not significant",
			gate:    passRateGate(100, 3, 0, 5, 0),
			outcome: Inconclusive, reason: "-3.0 points is beyond 0 points but not significant (p=0.12), and the 90% interval reaches -6.1 points",
			warnings: []string{"the suite's 100 items cannot reliably detect a drop of 1 point: about 1853 items would (80% power at level 0.05)"},
			p:        0.125, change: [3]float64{-0.03, math.NaN(), math.NaN()},
			counts: counts{3, 0, 1853},
		},
		{
			name:    "pass rate: significant but within the tolerance",
			gate:    passRateGate(200, 12, 4, 20, 0.05),
			outcome: Inconclusive, reason: "significant (p=0.038) but -4.0 points is within -5 points, and the 90% interval reaches -7.3 points",
			p: McNemar(12, 4), change: [3]float64{-0.04, math.NaN(), math.NaN()},
			counts: counts{12, 4, 0},
		},
		{
			name:    "pass rate: interval too wide",
			gate:    passRateGate(60, 3, 2, 5, 0.05),
			outcome: Inconclusive, reason: "the 90% interval reaches -8.1 points, beyond -5 points",
			warnings: []string{"the suite's 60 items cannot reliably detect a drop of 5 points: about 204 items would (80% power at level 0.05)"},
			p:        McNemar(3, 2), change: [3]float64{-1.0 / 60, math.NaN(), math.NaN()},
			counts: counts{3, 2, 204},
		},
		{
			// 4 items all lost: p = 1/16 >= 0.05, and 5 items would do.
			name:    "pass rate: too few items",
			gate:    passRateGate(4, 4, 0, 0, 0.05),
			outcome: Inconclusive, reason: "too few items: need >= 5",
			warnings: []string{
				"need >= 5 items to detect a regression at level 0.05",
				"the suite's 4 items cannot reliably detect a drop of 5 points: about 2471 items would (80% power at level 0.05)",
			},
			p: 1.0 / 16, change: [3]float64{-1, -1, math.NaN()},
			counts: counts{4, 0, 2471},
		},
		{
			name:    "pass rate: identical but too few to test",
			gate:    pairedGate(PassRate, constant(3, 1), constant(3, 1), 0.5),
			outcome: Inconclusive, reason: "too few items: need >= 5",
			warnings: []string{
				"need >= 5 items to detect a regression at level 0.05",
				"the suite's 3 items cannot reliably detect a drop of 50 points: about 11 items would (80% power at level 0.05)",
			},
			p: 1, change: [3]float64{0, math.NaN(), math.NaN()},
			counts: counts{0, 0, 11},
		},
		{
			// Every score falls by 0.09 to 0.13: W+ = 0, p = 2^-20; the mean
			// difference is -0.11 + 0.02·(mean of i%3 − 1 over 0..19 =
			// -0.05), its deviations -0.019 (7 items), 0.001 (7) and 0.021
			// (6), sum of squares 0.00518: the t interval's upper bound
			// -0.111 + t(0.95, 19)·sqrt(0.00518/19/20) = -10.5 points.
			name:    "mean score: every item worse",
			gate:    pairedGate(MeanScore, scores, shifted(-0.11, 0.02), 0.05),
			outcome: Regression, reason: "significant (p=9.5e-07) and -11.1 points is beyond -5 points, as is the whole 90% interval (up to -10.5 points)",
			p: math.Ldexp(1, -20), change: [3]float64{-0.111, math.NaN(), -0.111 + TQuantile(0.95, 19)*math.Sqrt(0.00518/19/20)},
			counts: counts{20, 0, 122},
		},
		{
			// Every score falls, by 0.01 (6 items), 0.06 (7) or 0.11 (7):
			// W+ = 0, p = 2^-20, and the mean -0.0625 is beyond -5 points;
			// but the deviations 0.0525, 0.0025 and -0.0475 (sum of squares
			// 0.032375) put the upper bound at -0.0625 + t(0.95,
			// 19)·sqrt(0.032375/19/20) = -4.7 points, within the tolerance.
			name:    "mean score: significant, beyond the tolerance, but the interval reaches within it",
			gate:    pairedGate(MeanScore, scores, shifted(-0.06, 0.05), 0.05),
			outcome: Inconclusive, reason: "significant (p=9.5e-07) and -6.3 points is beyond -5 points, but the 90% interval reaches -4.7 points, within it",
			warnings: []string{"the suite's 20 items cannot reliably detect a drop of 5 points: about 122 items would (80% power at level 0.05)"},
			p:        math.Ldexp(1, -20),
			change: [3]float64{-0.0625, -0.0625 - TQuantile(0.95, 19)*math.Sqrt(0.032375/19/20),
				-0.0625 + TQuantile(0.95, 19)*math.Sqrt(0.032375/19/20)},
			counts: counts{20, 0, 122},
		},
		{
			name:    "mean score: identical",
			gate:    pairedGate(MeanScore, scores, scores, 0.05),
			outcome: Pass, reason: "the 90% interval rules out worse than -5 points",
			warnings: []string{"the suite's 20 items cannot reliably detect a drop of 5 points: about 122 items would (80% power at level 0.05)"},
			p:        1, change: [3]float64{0, 0, 0},
			counts: counts{0, 0, 122},
		},
		{
			name:    "mean score: identical, tolerance 0",
			gate:    pairedGate(MeanScore, scores, scores, 0),
			outcome: Pass, reason: "the 90% interval rules out any drop",
			warnings: []string{"the suite's 20 items cannot reliably detect a drop of 1 point: about 617 items would (80% power at level 0.05)"},
			p:        1, change: [3]float64{0, 0, 0},
			counts: counts{0, 0, 617},
		},
		{
			name:    "mean score: small wobble",
			gate:    pairedGate(MeanScore, scores, shifted(0, 0.02), 0.05),
			outcome: Pass, reason: "the 90% interval rules out worse than -5 points",
			warnings: []string{"the suite's 20 items cannot reliably detect a drop of 5 points: about 122 items would (80% power at level 0.05)"},
			p:        0.5, change: [3]float64{-0.001, math.NaN(), math.NaN()},
			counts: counts{7, 6, 122},
		},
		{
			name:    "mean score: too few items",
			gate:    pairedGate(MeanScore, scores[:3], shifted(0, 0.02)[:3], 0.05),
			outcome: Inconclusive, reason: "too few items: need >= 5",
			warnings: []string{
				"need >= 5 items to detect a regression at level 0.05",
				"the suite's 3 items cannot reliably detect a drop of 5 points: about 122 items would (80% power at level 0.05)",
			},
			p: 0.75, change: [3]float64{0, math.NaN(), math.NaN()},
			counts: counts{1, 1, 122},
		},
		{
			// Tolerance 0: P(X <= 199), X ~ Bin(200, 1) is 0.
			name:    "agreement: one output differs, tolerance 0",
			gate:    pairedGate(Agreement, nil, agreement(200, 1), 0),
			outcome: Regression, reason: "significant (p=0): 1 of 200 outputs differ: -0.5 points is beyond 0 points",
			p: 0, change: [3]float64{-0.005, math.NaN(), math.NaN()},
			counts: counts{1, 0, 0},
		},
		{
			name:    "agreement: identical",
			gate:    pairedGate(Agreement, nil, agreement(200, 0), 0),
			outcome: Pass, reason: "every output is identical to the baseline's",
			p: 1, change: [3]float64{0, math.NaN(), 0},
		},
		{
			// Identical outputs pass even where no regression could be shown.
			name:    "agreement: identical, few items",
			gate:    pairedGate(Agreement, nil, agreement(3, 0), 0.5),
			outcome: Pass, reason: "every output is identical to the baseline's",
			warnings: []string{"need >= 5 items to detect a regression at level 0.05"},
			p:        1, change: [3]float64{0, math.NaN(), 0},
		},
		{
			// 197/200: the Wilson 90% lower bound 0.9568 is above 0.95.
			name:    "agreement: 3 of 200 differ, 5 points allowed",
			gate:    pairedGate(Agreement, nil, agreement(200, 3), 0.05),
			outcome: Pass, reason: "the 90% interval rules out worse than -5 points",
			p: BinomialAtMost(197, 200, 0.95), change: [3]float64{-0.015, math.NaN(), math.NaN()},
			counts: counts{3, 0, 0},
		},
		{
			name:    "agreement: 10 of 200 differ, 2 points allowed",
			gate:    pairedGate(Agreement, nil, agreement(200, 10), 0.02),
			outcome: Regression, reason: "significant (p=0.0075): 10 of 200 outputs differ: -5.0 points is beyond -2 points",
			p: BinomialAtMost(190, 200, 0.98), change: [3]float64{-0.05, math.NaN(), math.NaN()},
			counts: counts{10, 0, 0},
		},
		{
			name:    "agreement: 6 of 200 differ, 2 points allowed",
			gate:    pairedGate(Agreement, nil, agreement(200, 6), 0.02),
			outcome: Inconclusive, reason: "6 of 200 outputs differ: -3.0 points is beyond -2 points but not significant (p=0.21), and the 90% interval reaches -5.7 points",
			p: BinomialAtMost(194, 200, 0.98), change: [3]float64{-0.03, math.NaN(), math.NaN()},
			counts: counts{6, 0, 0},
		},
		{
			// 0.5^3 = 0.125: even 3 differing outputs of 3 could not be shown.
			name:    "agreement: too few items for the tolerance",
			gate:    pairedGate(Agreement, nil, agreement(3, 1), 0.5),
			outcome: Inconclusive, reason: "too few items: need >= 5",
			warnings: []string{"need >= 5 items to detect a regression at level 0.05"},
			p:        0.875, change: [3]float64{-1.0 / 3, math.NaN(), math.NaN()},
			counts: counts{1, 0, 0},
		},
		{
			// The simulator at --error-rate 0.1 against a clean baseline:
			// 26 of 200 items failed in the candidate only, p = 2^-26. The
			// change is the rise of the error rate, minus the pass-rate
			// interval of the same counts.
			name:    "error rate: 26 of 200 items failed in the candidate",
			gate:    failRateGate(200, 26, 0, 0, 0.05),
			outcome: Regression, reason: "significant (p=1.5e-08) and +13.0 points is beyond +5 points, as is the whole 90% interval (from +8.9 points)",
			p: math.Ldexp(1, -26), change: [3]float64{0.13, -passRateHi(200, 26, 0), -passRateLo(200, 26, 0)},
			counts: counts{26, 0, 320},
		},
		{
			name:    "error rate: none on either side",
			gate:    failRateGate(200, 0, 0, 0, 0.05),
			outcome: Pass, reason: "no item failed on one side only",
			p: 1, change: [3]float64{0, -passRateHi(200, 0, 0), -passRateLo(200, 0, 0)},
			counts: counts{0, 0, 0},
		},
		{
			// As Agreement's with no output differing: no item failed on
			// one side only is no rise, though the interval (as a pass
			// rate's) cannot rule out 0.8 points.
			name:    "error rate: none on either side, tolerance 0",
			gate:    failRateGate(200, 0, 0, 0, 0),
			outcome: Pass, reason: "no item failed on one side only",
			warnings: []string{"the suite's 200 items cannot reliably detect a rise of 1 point: about 617 items would (80% power at level 0.05)"},
			p:        1, change: [3]float64{0, math.NaN(), math.NaN()},
			counts: counts{0, 0, 617},
		},
		{
			name:    "error rate: 20 fewer failures, tolerance 0",
			gate:    failRateGate(200, 0, 20, 0, 0),
			outcome: Pass, reason: "no item failed that the baseline answered (20 answered that it failed)",
			warnings: []string{"the suite's 200 items cannot reliably detect a rise of 1 point: about 6181 items would (80% power at level 0.05)"},
			p:        1, change: [3]float64{-0.1, math.NaN(), math.NaN()},
			counts: counts{0, 20, 6181},
		},
		{
			// 3 failed in each side, 2 more in the candidate: well inside.
			name:    "error rate: 2 more of 200, failures on both sides",
			gate:    failRateGate(200, 2, 0, 3, 0.05),
			outcome: Pass, reason: "the 90% interval rules out worse than +5 points",
			p: 0.25, change: [3]float64{0.01, math.NaN(), math.NaN()},
			counts: counts{2, 0, 0},
		},
		{
			name:    "error rate: significant, beyond the tolerance, but the interval reaches within it",
			gate:    failRateGate(200, 14, 0, 0, 0.05),
			outcome: Inconclusive, reason: "significant (p=6.1e-05) and +7.0 points is beyond +5 points, but the 90% interval reaches +3.9 points, within it",
			p: math.Ldexp(1, -14), change: [3]float64{0.07, math.NaN(), math.NaN()},
			counts: counts{14, 0, 0},
		},
		{
			// Fewer failures than the baseline's is better, never a loss.
			name:    "error rate: the baseline failed 10 the candidate answered",
			gate:    failRateGate(200, 0, 10, 0, 0.05),
			outcome: Pass, reason: "no item failed that the baseline answered (10 answered that it failed)",
			p: 1, change: [3]float64{-0.05, math.NaN(), math.NaN()},
			counts: counts{0, 10, 0},
		},
		{
			// The default +2 points regresses within the default
			// max_error_rate (5%): 10 of 200 failed in the candidate.
			name:    "error rate: 10 of 200, the most max_error_rate lets through, at +2 points",
			gate:    failRateGate(200, 10, 0, 0, 0.02),
			outcome: Regression, reason: "significant (p=0.00098) and +5.0 points is beyond +2 points, as is the whole 90% interval (from +2.3 points)",
			p: math.Ldexp(1, -10), change: [3]float64{0.05, math.NaN(), math.NaN()},
			counts: counts{10, 0, 771},
		},
		{
			// A broken server answering nothing: every item failed.
			name:    "error rate: every item failed",
			gate:    failRateGate(50, 50, 0, 0, 0.05),
			outcome: Regression, reason: "significant (p=8.9e-16) and +100.0 points is beyond +5 points, as is the whole 90% interval (from +90.7 points)",
			p: math.Ldexp(1, -50), change: [3]float64{1, math.NaN(), 1},
			counts: counts{50, 0, 2471},
		},
		{
			name:    "agreement: a tolerance of 100 points accepts anything",
			gate:    pairedGate(Agreement, nil, agreement(3, 3), 1),
			outcome: Pass, reason: "the 90% interval rules out worse than -100 points",
			p: 1, change: [3]float64{-1, -1, math.NaN()},
			counts: counts{3, 0, 0},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds, pds := DecideAll(nil, []PairedGate{c.gate}, 0.05)
			require.Empty(t, ds)
			require.Len(t, pds, 1)
			d := pds[0]
			assert.Equal(t, c.outcome, d.Outcome)
			assert.Equal(t, c.reason, d.Reason)
			assert.Equal(t, c.warnings, d.Warnings)
			assert.Equal(t, 0.05, d.Level)
			assert.Equal(t, len(c.gate.Candidate), d.N)
			assert.Equal(t, d.P, d.PAdjusted, "a family of one")
			if !math.IsNaN(c.p) {
				assert.InDelta(t, c.p, d.P, 1e-12)
			}
			for i, want := range c.change {
				got := [3]float64{d.Change.Estimate, d.Change.Lo, d.Change.Hi}[i]
				if !math.IsNaN(want) {
					assert.InDelta(t, want, got, 1e-12, "Change[%d]", i)
				}
			}
			assert.LessOrEqual(t, d.Change.Lo, d.Change.Estimate)
			assert.LessOrEqual(t, d.Change.Estimate, d.Change.Hi)
			assert.Equal(t, c.counts, counts{d.Losses, d.Gains, d.NeedItems})
			switch {
			case d.Outcome != Regression || c.gate.Kind == Agreement:
			case c.gate.Kind == FailRate:
				assert.Greater(t, d.Change.Lo, c.gate.Tolerance, "a regression's whole interval is beyond the tolerance")
			default:
				assert.Less(t, d.Change.Hi, -c.gate.Tolerance, "a regression's whole interval is beyond the tolerance")
			}
			for _, pr := range []Proportion{d.Baseline, d.Candidate} {
				assert.True(t, 0 <= pr.Lo && pr.Lo <= pr.Mean && pr.Mean <= pr.Hi && pr.Hi <= 1, "%+v", pr)
			}
			switch c.gate.Kind {
			case Agreement:
				assert.Equal(t, Proportion{1, 1, 1}, d.Baseline)
				assert.InDelta(t, 1+d.Change.Estimate, d.Candidate.Mean, 1e-15)
			case PassRate, MeanScore, FailRate:
				assert.InDelta(t, d.Candidate.Mean-d.Baseline.Mean, d.Change.Estimate, 1e-12)
			}
		})
	}
}

// TestFailRateSmallSuitesAA: an A/A of the examples' suites (20 to 32
// items) with no failure passes the default error-rate gate at the levels a
// run tests it at, though the Agresti–Min bound of the rise at 0 of 20 is
// 8.9 points at level 0.025; and the default +2 points regresses within the
// default max_error_rate (5%) at a level a family of six gates gives.
func TestFailRateSmallSuitesAA(t *testing.T) {
	for _, n := range []int{20, 32} {
		for _, level := range []float64{0.05, 0.025, 0.05 / 6} {
			_, pds := DecideAll(nil, []PairedGate{failRateGate(n, 0, 0, 0, 0.02)}, level)
			assert.Equal(t, Pass, pds[0].Outcome, "%d items at level %g: %s", n, level, pds[0].Reason)
			assert.Equal(t, "no item failed on one side only", pds[0].Reason)
		}
	}
	// 22 of 500 (4.4%) failed in the candidate only.
	_, pds := DecideAll(nil, []PairedGate{failRateGate(500, 22, 0, 0, 0.02)}, 0.05/6)
	assert.Equal(t, Regression, pds[0].Outcome, pds[0].Reason)
	// One more failure than the baseline's is a loss: no free pass.
	_, pds = DecideAll(nil, []PairedGate{failRateGate(32, 1, 0, 0, 0.02)}, 0.025)
	assert.Equal(t, Inconclusive, pds[0].Outcome, pds[0].Reason)
}

// failRateGate is a FailRate gate on n items: newly failed only in the
// candidate, recovered only in the baseline, bothFailed on both sides.
func failRateGate(n, newly, recovered, bothFailed int, tol float64) PairedGate {
	b, c := passFail(n, newly, recovered, bothFailed)
	for i := range b {
		b[i], c[i] = 1-b[i], 1-c[i]
	}
	return pairedGate(FailRate, b, c, tol)
}

// passRateLo and passRateHi are the 90% Agresti–Min bounds of a pass-rate
// difference.
func passRateLo(n, losses, gains int) float64 {
	_, lo, _ := PairedDifference(n, losses, gains, 0.9)
	return lo
}

func passRateHi(n, losses, gains int) float64 {
	_, _, hi := PairedDifference(n, losses, gains, 0.9)
	return hi
}

// passRateGate is a PassRate gate on passFail(n, losses, gains, bothFail).
func passRateGate(n, losses, gains, bothFail int, tol float64) PairedGate {
	b, c := passFail(n, losses, gains, bothFail)
	return pairedGate(PassRate, b, c, tol)
}

// TestDecideAllFamily: Holm spans latency and quality gates. A pass-rate
// drop that is a regression alone (p = 1/64, and the 90% interval's upper
// bound, -6/102 + 1.645·sqrt(7 − 36/102)/102 = -1.7 points, beyond the
// 1-point tolerance) is not one among four latency gates (5 × 1/64 > 0.05),
// and the latency gates count the quality gates in their family.
func TestDecideAllFamily(t *testing.T) {
	q := passRateGate(100, 6, 0, 5, 0.01)
	_, alone := DecideAll(nil, []PairedGate{q}, 0.05)
	assert.Equal(t, Regression, alone[0].Outcome)
	assert.InDelta(t, 1.0/64, alone[0].PAdjusted, 1e-15)

	flat := Gate{Baseline: seq(100, 8), Candidate: seq(100.25, 8), Relative: true, Tolerance: 0.1}
	lat := []Gate{flat, flat, flat, flat}
	ds, pds := DecideAll(lat, []PairedGate{q}, 0.05)
	require.Len(t, ds, 4)
	require.Len(t, pds, 1)
	assert.Equal(t, Inconclusive, pds[0].Outcome)
	assert.InDelta(t, 5.0/64, pds[0].PAdjusted, 1e-15)
	assert.Equal(t, "-6.0 points is beyond -1 point but not significant (p=0.078), and the 90% interval reaches -10.0 points", pds[0].Reason)
	for _, d := range ds {
		assert.Equal(t, Pass, d.Outcome)
	}
	// The latency decisions are Decide's, but with the Holm adjustment over
	// 5 gates.
	alone4 := Decide(lat, 0.05)
	for i := range ds {
		assert.Equal(t, alone4[i].P, ds[i].P)
		assert.GreaterOrEqual(t, ds[i].PAdjusted, alone4[i].PAdjusted)
	}

	// A latency gate's "could not detect" rule counts the quality gates:
	// 5 a side reach 1/252 < 0.05/9, but 4 a side (1/70) do not.
	g4 := Gate{Baseline: seq(1, 4), Candidate: seq(11, 4)}
	qs := make([]PairedGate, 8)
	for i := range qs {
		qs[i] = pairedGate(Agreement, nil, agreement(50, 0), 0)
	}
	ds, pds = DecideAll([]Gate{g4}, qs, 0.05)
	assert.Equal(t, Inconclusive, ds[0].Outcome)
	assert.Equal(t, []string{"need >= 5 samples a side to detect a regression at level 0.00556 (alpha 0.05 over 9 gates)"}, ds[0].Warnings)
	for _, d := range pds {
		assert.Equal(t, Pass, d.Outcome)
	}
	// And a quality gate's counts the latency gates.
	_, pds = DecideAll([]Gate{flat, flat, flat, flat, flat, flat, flat}, []PairedGate{passRateGate(7, 7, 0, 0, 0.05)}, 0.05)
	assert.Equal(t, "too few items: need >= 8", pds[0].Reason)
	assert.Equal(t, "need >= 8 items to detect a regression at level 0.00625 (alpha 0.05 over 8 gates)", pds[0].Warnings[0])

	// A strong quality regression survives among many latency gates, and
	// an untestable quality gate still counts in the family.
	strong := passRateGate(200, 60, 0, 10, 0.05)
	bad := pairedGate(MeanScore, []float64{1}, []float64{1, 0}, 0.05)
	_, pds = DecideAll(lat, []PairedGate{bad, strong}, 0.05)
	assert.Equal(t, Inconclusive, pds[0].Outcome)
	assert.Equal(t, Regression, pds[1].Outcome)
	assert.InDelta(t, 6*math.Ldexp(1, -60), pds[1].PAdjusted, 1e-30)

	ds, pds = DecideAll(nil, nil, 0.05)
	assert.NotNil(t, ds)
	assert.NotNil(t, pds)
	assert.Empty(t, ds)
	assert.Empty(t, pds)
}

// TestDecidePairedUntestable: inputs that cannot be decided are
// inconclusive with a warning, never a pass, never a panic.
func TestDecidePairedUntestable(t *testing.T) {
	nan := math.NaN()
	ok01 := []float64{1, 0, 1, 1, 1, 1}
	cases := []struct {
		name    string
		gate    PairedGate
		level   float64
		reason  string
		warning string
	}{
		{"no items", PairedGate{Kind: PassRate}, 0.05, "no items", "the candidate has no items: the gate cannot be decided"},
		{"no agreement items", PairedGate{Kind: Agreement, Candidate: []float64{}}, 0.05, "no items", "the candidate has no items: the gate cannot be decided"},
		{"mismatched", PairedGate{Kind: PassRate, Baseline: ok01[:5], Candidate: ok01}, 0.05, "mismatched items",
			"the baseline has 5 items and the candidate 6: items must be paired: the gate cannot be decided"},
		{"mismatched scores", PairedGate{Kind: MeanScore, Baseline: ok01, Candidate: ok01[:2]}, 0.05, "mismatched items",
			"the baseline has 6 items and the candidate 2: items must be paired: the gate cannot be decided"},
		{"pass of 0.5", PairedGate{Kind: PassRate, Baseline: []float64{1, 0.5}, Candidate: []float64{1, 1}}, 0.05,
			"a baseline value is not 0 or 1", "a baseline pass is not 0 or 1: the gate cannot be decided"},
		{"NaN pass", PairedGate{Kind: PassRate, Baseline: []float64{1, 1}, Candidate: []float64{1, nan}}, 0.05,
			"a candidate value is not 0 or 1", "a candidate pass is not 0 or 1: the gate cannot be decided"},
		{"agreement of 2", PairedGate{Kind: Agreement, Candidate: []float64{1, 2}}, 0.05,
			"a candidate value is not 0 or 1", "an agreement value (1: identical output) is not 0 or 1: the gate cannot be decided"},
		{"score above 1", PairedGate{Kind: MeanScore, Baseline: []float64{1.5, 0}, Candidate: []float64{1, 1}}, 0.05,
			"a baseline score is not in [0, 1]", "a baseline score is NaN or outside [0, 1]: the gate cannot be decided"},
		{"NaN score", PairedGate{Kind: MeanScore, Baseline: []float64{1, 0}, Candidate: []float64{nan, 1}}, 0.05,
			"a candidate score is not in [0, 1]", "a candidate score is NaN or outside [0, 1]: the gate cannot be decided"},
		{"negative score", PairedGate{Kind: MeanScore, Baseline: []float64{1, 0}, Candidate: []float64{-0.1, 1}}, 0.05,
			"a candidate score is not in [0, 1]", "a candidate score is NaN or outside [0, 1]: the gate cannot be decided"},
		{"negative tolerance", PairedGate{Kind: PassRate, Baseline: ok01, Candidate: ok01, Tolerance: -0.01}, 0.05,
			"invalid tolerance", "tolerance -0.01 is not a number of points >= 0: the gate cannot be decided"},
		{"NaN tolerance", PairedGate{Kind: Agreement, Candidate: ok01, Tolerance: nan}, 0.05,
			"invalid tolerance", "tolerance NaN is not a number of points >= 0: the gate cannot be decided"},
		{"infinite tolerance", PairedGate{Kind: MeanScore, Baseline: ok01, Candidate: ok01, Tolerance: math.Inf(1)}, 0.05,
			"invalid tolerance", "tolerance +Inf is not a number of points >= 0: the gate cannot be decided"},
		{"unknown kind", PairedGate{Kind: 7, Baseline: ok01, Candidate: ok01}, 0.05,
			"unknown kind", "PairedKind(7) is not a kind of quality gate: the gate cannot be decided"},
		{"level 0", PairedGate{Kind: PassRate, Baseline: ok01, Candidate: ok01}, 0, "invalid level", "level 0 is not in (0, 0.5): no gate can be decided"},
		{"level 0.5", PairedGate{Kind: Agreement, Candidate: ok01}, 0.5, "invalid level", "level 0.5 is not in (0, 0.5): no gate can be decided"},
		{"level NaN", PairedGate{Kind: MeanScore, Baseline: ok01, Candidate: ok01}, nan, "invalid level", "level NaN is not in (0, 0.5): no gate can be decided"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var pds []PairedDecision
			require.NotPanics(t, func() { _, pds = DecideAll(nil, []PairedGate{c.gate}, c.level) })
			require.Len(t, pds, 1)
			d := pds[0]
			assert.Equal(t, Inconclusive, d.Outcome)
			assert.Equal(t, c.reason, d.Reason)
			assert.Equal(t, []string{c.warning}, d.Warnings)
			assert.True(t, math.IsNaN(d.P))
			assert.True(t, math.IsNaN(d.PAdjusted))
			assert.True(t, math.IsNaN(d.Change.Estimate))
		})
	}
}

// TestDecidePairedNeverPanics runs DecideAll over awkward quality inputs:
// every outcome is one of the three, and no invalid gate passes.
func TestDecidePairedNeverPanics(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	sides := [][]float64{
		nil, {}, {0}, {1}, {nan}, {inf}, {0.5}, {1, 1, 1}, {0, 0, 0}, {0.2, 0.9, 0.4},
		constant(60, 1), constant(60, 0), agreement(60, 7), {-0.5, 2, 1},
	}
	levels := []float64{-1, 0, 1e-300, 0.001, 0.05, 0.49, 0.5, nan}
	tolerances := []float64{0, 0.02, 1, 1e300, inf, -1, nan}
	valid := func(g PairedGate) bool {
		if len(g.Candidate) == 0 || !(g.Tolerance >= 0) || math.IsInf(g.Tolerance, 1) {
			return false
		}
		if g.Kind != Agreement && len(g.Baseline) != len(g.Candidate) {
			return false
		}
		check := func(xs []float64) bool {
			for _, x := range xs {
				if g.Kind == MeanScore && !(x >= 0 && x <= 1) || g.Kind != MeanScore && x != 0 && x != 1 {
					return false
				}
			}
			return true
		}
		return check(g.Candidate) && (g.Kind == Agreement || check(g.Baseline))
	}
	for _, b := range sides {
		for _, c := range sides {
			for _, level := range levels {
				var gates []PairedGate
				for _, tol := range tolerances {
					for _, kind := range []PairedKind{PassRate, MeanScore, Agreement, FailRate, 4} {
						gates = append(gates, PairedGate{Kind: kind, Baseline: b, Candidate: c, Tolerance: tol})
					}
				}
				var pds []PairedDecision
				require.NotPanics(t, func() { _, pds = DecideAll([]Gate{{Baseline: b, Candidate: c}}, gates, level) })
				require.Len(t, pds, len(gates))
				for i, d := range pds {
					g := gates[i]
					require.Contains(t, []Outcome{Regression, Pass, Inconclusive}, d.Outcome)
					require.NotEmpty(t, d.Reason)
					require.False(t, strings.Contains(d.Reason, "\n"))
					if !valid(g) || g.Kind > FailRate || !(level > 0 && level < 0.5) {
						require.Equal(t, Inconclusive, d.Outcome, "gate %+v level %g", g, level)
						require.NotEmpty(t, d.Warnings)
						continue
					}
					require.False(t, math.IsNaN(d.P), "gate %+v level %g", g, level)
					if d.Outcome == Regression {
						require.Less(t, d.PAdjusted, level, "gate %+v level %g", g, level)
						switch g.Kind {
						case Agreement:
						case FailRate:
							require.Greater(t, d.Change.Lo, g.Tolerance, "gate %+v level %g: a regression's whole interval is beyond the tolerance", g, level)
						default:
							require.Less(t, d.Change.Hi, -g.Tolerance, "gate %+v level %g: a regression's whole interval is beyond the tolerance", g, level)
						}
					}
					for _, v := range []float64{d.Baseline.Mean, d.Baseline.Lo, d.Baseline.Hi, d.Candidate.Mean, d.Candidate.Lo, d.Candidate.Hi,
						d.Change.Estimate, d.Change.Lo, d.Change.Hi} {
						require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "gate %+v level %g: %+v", g, level, d)
					}
				}
			}
		}
	}
}

func TestPairedKindString(t *testing.T) {
	assert.Equal(t, "pass rate", PassRate.String())
	assert.Equal(t, "mean score", MeanScore.String())
	assert.Equal(t, "agreement", Agreement.String())
	assert.Equal(t, "error rate", FailRate.String())
	assert.Equal(t, "PairedKind(-1)", PairedKind(-1).String())
}
