package stat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The calibration of the quality gates: seeded synthetic suites, no
// simulator. Each item is answered once by each side; the draws are paired
// as they are in an eval run. Rates are bounded as in calib_test.go: the
// nominal rate plus 3 binomial standard errors. For pass/fail suites the
// exact rate of the rule is also computed, by summing the multinomial
// probabilities of every (losses, gains) the rule calls a regression, so
// the simulated rates are checked against the rule and not only against
// alpha.

// pairedModel is a pass/fail suite: each item independently passes on
// both sides, only in the baseline (P10), only in the candidate (P01), or
// on neither.
type pairedModel struct {
	name     string
	p10, p01 float64
	p11      float64
}

// draw fills b and c with one suite of the model.
func (m pairedModel) draw(r *rand.Rand, b, c []float64) {
	for i := range b {
		u := r.Float64()
		switch {
		case u < m.p11:
			b[i], c[i] = 1, 1
		case u < m.p11+m.p10:
			b[i], c[i] = 1, 0
		case u < m.p11+m.p10+m.p01:
			b[i], c[i] = 0, 1
		default:
			b[i], c[i] = 0, 0
		}
	}
}

// exactPassRateRegression is the exact probability that a PassRate gate
// alone at level calls a suite of n items of m a regression: the sum of
// the multinomial probability of every losses L and gains G that the rule
// calls one, McNemar(L, G) < level and the whole one-sided interval beyond
// the tolerance, Hi < −tol, with Hi the upper bound of PairedDifference(n,
// L, G) at confidence 1 − 2·level, as the gate computes it.
func exactPassRateRegression(m pairedModel, n int, tol, level float64) float64 {
	lp10, lp01, lrest := math.Log(m.p10), math.Log(m.p01), math.Log1p(-m.p10-m.p01)
	lgn, _ := math.Lgamma(float64(n + 1))
	total := 0.0
	for l := 0; l <= n; l++ {
		for g := 0; l+g <= n; g++ {
			est, _, hi := PairedDifference(n, l, g, 1-2*level)
			if !(est < -tol) {
				break // Hi >= the estimate, which only moves up with g
			}
			if !(hi < -tol) || McNemar(l, g) >= level {
				continue
			}
			a, _ := math.Lgamma(float64(l + 1))
			b, _ := math.Lgamma(float64(g + 1))
			c, _ := math.Lgamma(float64(n - l - g + 1))
			lpmf := lgn - a - b - c + float64(l)*lp10 + float64(g)*lp01
			if r := float64(n - l - g); r > 0 {
				lpmf += r * lrest
			}
			total += math.Exp(lpmf)
		}
	}
	return total
}

// outcomeRates runs draws suites of m through one PassRate gate at level
// and returns the share of each outcome.
func outcomeRates(r *rand.Rand, m pairedModel, n, draws int, tol, level float64) map[Outcome]float64 {
	b, c := make([]float64, n), make([]float64, n)
	counts := map[Outcome]int{}
	for range draws {
		m.draw(r, b, c)
		_, ds := DecideAll(nil, []PairedGate{{Kind: PassRate, Baseline: b, Candidate: c, Tolerance: tol}}, level)
		counts[ds[0].Outcome]++
	}
	rates := map[Outcome]float64{}
	for _, o := range []Outcome{Regression, Pass, Inconclusive} {
		rates[o] = share(counts[o], draws)
	}
	return rates
}

// TestCalibPassRate: 200 items, pass rate 0.9 on both sides, 85% of the
// items concordant (7.5% pass only in the baseline, 7.5% only in the
// candidate). McNemar's exact test is valid, so the false-regression rate
// is at most alpha, exactly as well as in the draws; a drop to 0.6 is a
// regression in nearly every draw (exact 0.9999986).
//
// A true drop of 2 points within a 5-point tolerance: with 15% of the
// items discordant the estimate's standard error is sqrt(0.15/200) = 2.7
// points, so the estimate alone passes -5 points in about one suite in
// nine (11.4% exactly, under the former rule: significant and the estimate
// beyond the tolerance). The rule asks for the whole one-sided 95%
// interval beyond the tolerance (Agresti–Min's upper bound below -5
// points), which takes an estimate below about -9.4 points, 2.7 standard
// errors below the true -2: exact 0.245%, 13 of the 4000 draws (0.325%).
// The test bounds both by 1%, and checks the draws against the exact rate.
func TestCalibPassRate(t *testing.T) {
	t.Parallel()
	const n, draws = 200, 4000
	aa := pairedModel{"A/A, 0.9, 85% concordant", 0.075, 0.075, 0.825}
	drop2 := pairedModel{"0.9 → 0.88, 85% concordant", 0.085, 0.065, 0.815}
	drop30 := pairedModel{"0.9 → 0.6", 0.35, 0.05, 0.55}
	r := rand.New(rand.NewPCG(200, 9))
	tb := &table{}
	tb.row("%-28s %5s %10s %10s %8s %8s", "model", "tol", "regression", "exact", "pass", "incon")
	bound := calibAlpha + margin(calibAlpha, draws)
	for _, c := range []struct {
		m   pairedModel
		tol float64
	}{{aa, 0}, {aa, 0.05}, {drop2, 0.05}, {drop30, 0.05}} {
		rates := outcomeRates(r, c.m, n, draws, c.tol, calibAlpha)
		exact := exactPassRateRegression(c.m, n, c.tol, calibAlpha)
		tb.row("%-28s %5g %10.4f %10.4f %8.4f %8.4f", c.m.name, c.tol, rates[Regression], exact, rates[Pass], rates[Inconclusive])
		assert.InDelta(t, exact, rates[Regression], margin(max(exact, 1e-3), draws)+1e-9,
			"%s, tolerance %g: the draws' regression rate against the rule's exact rate", c.m.name, c.tol)
		switch c.m {
		case aa:
			assert.LessOrEqual(t, exact, calibAlpha, "A/A, tolerance %g: exact false-regression rate", c.tol)
			assert.LessOrEqual(t, rates[Regression], bound, "A/A, tolerance %g: false-regression rate", c.tol)
		case drop30:
			assert.Greater(t, exact, 0.99, "a drop to 0.6: exact power")
			assert.Greater(t, rates[Regression], 0.99, "a drop to 0.6: power")
		case drop2:
			assert.InDelta(t, 0.00245, exact, 0.00001, "a 2-point drop within 5 points: exact regression rate")
			assert.LessOrEqual(t, exact, 0.01, "a 2-point drop within 5 points: exact regression rate")
			assert.LessOrEqual(t, rates[Regression], 0.01, "a 2-point drop within 5 points: regression rate")
		}
	}
	tb.log(t, fmt.Sprintf("pass rate, %d items, alpha %g, %d draws (exact: the rule's regression probability, summed over every (losses, gains))", n, calibAlpha, draws))
}

// TestCalibPassRateFamily: four independent A/A pass-rate gates decided as
// one family: Holm keeps the chance of any false regression at or below
// alpha.
func TestCalibPassRateFamily(t *testing.T) {
	t.Parallel()
	const n, draws, gates = 200, 2000, 4
	aa := pairedModel{"A/A", 0.075, 0.075, 0.825}
	r := rand.New(rand.NewPCG(4, 200))
	family := make([]PairedGate, gates)
	for i := range family {
		family[i] = PairedGate{Kind: PassRate, Baseline: make([]float64, n), Candidate: make([]float64, n)}
	}
	anyReg := 0
	for range draws {
		for _, g := range family {
			aa.draw(r, g.Baseline, g.Candidate)
		}
		_, ds := DecideAll(nil, family, calibAlpha)
		for _, d := range ds {
			if d.Outcome == Regression {
				anyReg++
				break
			}
		}
	}
	fwer := share(anyReg, draws)
	t.Logf("%d A/A pass-rate gates, %d items each, %d draws: FWER %.4f", gates, n, draws, fwer)
	assert.LessOrEqual(t, fwer, calibAlpha+margin(calibAlpha, draws))
}

// TestCalibSimulatorCoupling mirrors the simulator's eval: item i has a
// difficulty u_i ~ U(0, 1), and a side with accuracy a passes it iff u_i <
// a, so the two sides' results are as concordant as their accuracies
// allow. Baseline 0.9 against candidate 0.88, tolerance 5 points: the
// candidate only loses items (those with 0.88 <= u < 0.9), so the losses
// are Binomial(200, 0.02) with no gains, and a regression needs 17 of them:
// Agresti–Min's upper bound, -L/202 + 1.645·sqrt(L + 1 − L²/202)/202, is
// -4.7 points at 16 losses and -5.1 at 17. That happens with probability
// P(Bin(200, 0.02) >= 17) = 7.5e-7, and in none of the draws (under the
// former rule, the estimate beyond the tolerance, 11 losses sufficed:
// 0.25%). Against 0.6 the losses are Binomial(200, 0.3): a regression every
// time. A/A (the same accuracy): identical results, a pass every time.
func TestCalibSimulatorCoupling(t *testing.T) {
	t.Parallel()
	const n, draws, tol = 200, 4000, 0.05
	minLosses := lossesToRegress(t, n, tol, calibAlpha)
	assert.Equal(t, 17, minLosses, "losses (no gains) the rule needs for a regression")
	r := rand.New(rand.NewPCG(88, 90))
	b, c := make([]float64, n), make([]float64, n)
	tb := &table{}
	tb.row("%-10s %10s %10s %8s %8s", "candidate", "regression", "exact", "pass", "incon")
	for _, acc := range []float64{0.9, 0.88, 0.6} {
		counts := map[Outcome]int{}
		for range draws {
			for i := range b {
				u := r.Float64()
				b[i], c[i] = 0, 0
				if u < 0.9 {
					b[i] = 1
				}
				if u < acc {
					c[i] = 1
				}
			}
			_, ds := DecideAll(nil, []PairedGate{{Kind: PassRate, Baseline: b, Candidate: c, Tolerance: tol}}, calibAlpha)
			counts[ds[0].Outcome]++
		}
		reg := share(counts[Regression], draws)
		exact := 1 - BinomialAtMost(minLosses-1, n, 0.9-acc) // minLosses or more
		tb.row("%-10g %10.4f %10.2g %8.4f %8.4f", acc, reg, exact, share(counts[Pass], draws), share(counts[Inconclusive], draws))
		switch acc {
		case 0.9:
			assert.Equal(t, draws, counts[Pass], "A/A: every draw passes")
		case 0.88:
			assert.InDelta(t, 7.48e-7, exact, 0.01e-7, "2 points within 5: exact regression rate")
			assert.Zero(t, counts[Regression], "2 points within 5: never a regression in the draws")
		case 0.6:
			assert.Greater(t, exact, 1-1e-12)
			assert.Equal(t, draws, counts[Regression], "a drop to 0.6: every draw a regression")
		}
	}
	tb.log(t, fmt.Sprintf("simulator coupling (pass iff u < accuracy), baseline 0.9, %d items, tolerance %g, alpha %g, %d draws", n, tol, calibAlpha, draws))
}

// lossesToRegress is the fewest losses, with no gains, that a PassRate
// gate alone at level calls a regression on n items: McNemar(L, 0) < level
// and PairedDifference's upper bound at confidence 1 − 2·level below −tol.
// It checks that the rule holds for every L from there on and for none
// before, so that the rule's regressions are exactly L >= it; n+1 when no L
// is one.
func lossesToRegress(t *testing.T, n int, tol, level float64) int {
	first := n + 1
	for l := 0; l <= n; l++ {
		_, _, hi := PairedDifference(n, l, 0, 1-2*level)
		reg := McNemar(l, 0) < level && hi < -tol
		if reg && first > n {
			first = l
		}
		require.Equal(t, l >= first, reg, "%d losses of %d, tolerance %g: the rule is not monotone in the losses", l, n, tol)
	}
	return first
}

// TestCalibMeanScore: A/A score suites (each item's score on each side is
// the item's difficulty plus its own noise, on a grid of 0.25 so that ties
// and zero differences are common) are false regressions at most alpha of
// the time, through the exact Wilcoxon distribution (40 items) and the
// normal one (200 items); a drop of 10 points is found.
func TestCalibMeanScore(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(40, 200))
	tb := &table{}
	tb.row("%-6s %-6s %10s %8s %8s", "items", "shift", "regression", "pass", "incon")
	for _, c := range []struct {
		n, draws int
		shift    float64
	}{{40, 1000, 0}, {200, 2000, 0}, {200, 500, -0.1}} {
		b, cand := make([]float64, c.n), make([]float64, c.n)
		counts := map[Outcome]int{}
		for range c.draws {
			for i := range b {
				item := r.Float64()
				b[i] = grid(item + 0.2*r.NormFloat64())
				cand[i] = grid(item + c.shift + 0.2*r.NormFloat64())
			}
			_, ds := DecideAll(nil, []PairedGate{{Kind: MeanScore, Baseline: b, Candidate: cand, Tolerance: 0.02}}, calibAlpha)
			counts[ds[0].Outcome]++
		}
		reg := share(counts[Regression], c.draws)
		tb.row("%-6d %-6g %10.4f %8.4f %8.4f", c.n, c.shift, reg, share(counts[Pass], c.draws), share(counts[Inconclusive], c.draws))
		if c.shift == 0 {
			assert.LessOrEqual(t, reg, calibAlpha+margin(calibAlpha, c.draws), "%d items A/A: false-regression rate", c.n)
		} else {
			assert.Greater(t, reg, 0.95, "%d items, -10 points: power", c.n)
		}
	}
	tb.log(t, fmt.Sprintf("mean score, tolerance 2 points, alpha %g", calibAlpha))
}

// grid clips x to [0, 1] and rounds it to a multiple of 0.25.
func grid(x float64) float64 { return math.Round(4*min(1, max(0, x))) / 4 }
