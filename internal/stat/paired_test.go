package stat

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aclements/go-moremath/stats"
	"github.com/stretchr/testify/assert"
)

// logBinomAtMost is the reference for BinomialAtMost: every term in log
// space, summed with log-sum-exp, in no clever order.
func logBinomAtMost(k, n int, p float64) float64 {
	lp, lq := math.Log(p), math.Log1p(-p)
	top := math.Inf(-1)
	terms := make([]float64, 0, k+1)
	for j := 0; j <= k; j++ {
		l := logBinomPMF(j, n, lp, lq)
		terms = append(terms, l)
		top = max(top, l)
	}
	s := 0.0
	for _, l := range terms {
		s += math.Exp(l - top)
	}
	return math.Exp(top + math.Log(s))
}

func TestBinomialAtMost(t *testing.T) {
	cases := []struct {
		k, n int
		p    float64
		want float64
	}{
		{0, 3, 0.5, 0.125},
		{1, 3, 0.5, 0.5},
		{2, 3, 0.5, 0.875},
		{3, 3, 0.5, 1},
		// 0.7^4 + 4·0.3·0.7^3 = 0.2401 + 0.4116.
		{1, 4, 0.3, 0.6517},
		// 0.1^2 + 2·0.9·0.1 = 0.19.
		{0, 2, 0.9, 0.01},
		{1, 2, 0.9, 0.19},
		{-1, 5, 0.5, 0},
		{5, 5, 0.5, 1},
		{7, 5, 0.5, 1},
		{0, 0, 0.5, 1},
		{2, 5, 0, 1},
		{2, 5, 1, 0},
		{5, 5, 1, 1},
		// C(20,10)/2^20 = 184756/1048576, and the sum to 9 is half of the rest.
		{9, 20, 0.5, (1 - 184756.0/1048576) / 2},
		{10, 20, 0.5, (1 + 184756.0/1048576) / 2},
	}
	for _, c := range cases {
		assert.InDelta(t, c.want, BinomialAtMost(c.k, c.n, c.p), 1e-14, "BinomialAtMost(%d, %d, %g)", c.k, c.n, c.p)
	}
	for _, bad := range [][2]float64{{5, -0.1}, {5, 1.1}, {5, math.NaN()}, {-1, 0.5}} {
		assert.True(t, math.IsNaN(BinomialAtMost(1, int(bad[0]), bad[1])), "n %g p %g", bad[0], bad[1])
	}
}

// TestBinomialAtMostSmall: against the plain sum of exact probabilities,
// for every k of small n.
func TestBinomialAtMostSmall(t *testing.T) {
	for _, p := range []float64{0.01, 0.1, 0.3, 0.5, 0.77, 0.98} {
		for n := 1; n <= 60; n++ {
			sum := 0.0
			for k := 0; k <= n; k++ {
				sum += stats.BinomialDist{N: n, P: p}.PMF(float64(k))
				got := BinomialAtMost(k, n, p)
				assert.InDelta(t, sum, got, 1e-12, "BinomialAtMost(%d, %d, %g)", k, n, p)
				if sum < 1e-3 {
					assert.InEpsilon(t, sum, got, 1e-10, "BinomialAtMost(%d, %d, %g): relative", k, n, p)
				}
			}
		}
	}
}

// TestBinomialAtMostLarge: n up to 100000, tails that underflow a naive
// product, against the log-sum-exp reference.
func TestBinomialAtMostLarge(t *testing.T) {
	for _, c := range []struct {
		n int
		p float64
	}{{1000, 0.5}, {100000, 0.5}, {100000, 0.02}, {100000, 0.9}, {54321, 0.37}} {
		mean, sd := float64(c.n)*c.p, math.Sqrt(float64(c.n)*c.p*(1-c.p))
		for _, z := range []float64{-30, -8, -3, -1, -0.1, 0, 0.4, 2, 6} {
			k := int(mean + z*sd)
			if k < 0 || k >= c.n {
				continue
			}
			want := logBinomAtMost(k, c.n, c.p)
			got := BinomialAtMost(k, c.n, c.p)
			if want < 0.5 {
				assert.InEpsilon(t, want, got, 1e-8, "BinomialAtMost(%d, %d, %g)", k, c.n, c.p)
			} else {
				assert.InDelta(t, want, got, 1e-9, "BinomialAtMost(%d, %d, %g)", k, c.n, c.p)
			}
		}
	}
}

func TestMcNemar(t *testing.T) {
	cases := []struct {
		losses, gains int
		want          float64
	}{
		{3, 0, 0.125},
		{0, 0, 1},
		{0, 3, 1},
		{1, 0, 0.5},
		{1, 1, 0.75},     // P(X >= 1), X ~ Bin(2, 1/2)
		{5, 1, 7.0 / 64}, // (1 + 6)/64
		{10, 10, 0.5 + 184756.0/2097152},
		{20, 0, math.Ldexp(1, -20)},
		{1000, 0, math.Ldexp(1, -1000)},
	}
	for _, c := range cases {
		assert.InDelta(t, c.want, McNemar(c.losses, c.gains), 1e-14, "McNemar(%d, %d)", c.losses, c.gains)
		if c.want < 0.01 {
			assert.InEpsilon(t, c.want, McNemar(c.losses, c.gains), 1e-9, "McNemar(%d, %d)", c.losses, c.gains)
		}
	}
	assert.Equal(t, 0.0, McNemar(100000, 0), "2^-100000 underflows to 0")
	assert.True(t, math.IsNaN(McNemar(-1, 2)))
	assert.True(t, math.IsNaN(McNemar(2, -1)))
	// Large and balanced: the p-value of 50500 losses against 49500 gains
	// is the normal tail at z = (1000 − 1)/sqrt(100000) ≈ 3.16, to about
	// 1% (the rest is skewness of the continuity-corrected normal).
	got := McNemar(50500, 49500)
	assert.InEpsilon(t, logBinomAtMost(49500, 100000, 0.5), got, 1e-8)
	assert.InEpsilon(t, stats.StdNormal.CDF(-999/math.Sqrt(100000)), got, 0.01)
}

func TestWilson(t *testing.T) {
	z2 := 1.959963984540054 * 1.959963984540054
	cases := []struct {
		name       string
		k, n       int
		confidence float64
		lo, hi     float64
		delta      float64
	}{
		{"9 of 10", 9, 10, 0.95, 0.5958, 0.9821, 1e-4},
		// k = 0: (0, z²/(n+z²)); k = n: (n/(n+z²), 1).
		{"0 of 10", 0, 10, 0.95, 0, z2 / (10 + z2), 1e-12},
		{"10 of 10", 10, 10, 0.95, 10 / (10 + z2), 1, 1e-12},
		// Symmetric about 1/2 at k = n/2: center 1/2, half-width
		// z/(1+z²/n)·sqrt(1/(4n) + z²/(4n²)).
		{"5 of 10", 5, 10, 0.95,
			0.5 - 1.959963984540054/(1+z2/10)*math.Sqrt(0.025+z2/400),
			0.5 + 1.959963984540054/(1+z2/10)*math.Sqrt(0.025+z2/400), 1e-12},
		{"no trials", 0, 0, 0.95, 0, 1, 0},
		{"confidence 1", 3, 10, 1, 0, 1, 0},
		{"confidence NaN", 3, 10, math.NaN(), 0, 1, 0},
		{"confidence 0", 3, 10, 0, 0.3, 0.3, 1e-15},
		{"k above n", 12, 10, 0.95, 10 / (10 + z2), 1, 1e-12},
		{"k below 0", -1, 10, 0.95, 0, z2 / (10 + z2), 1e-12},
	}
	for _, c := range cases {
		lo, hi := Wilson(c.k, c.n, c.confidence)
		assert.InDelta(t, c.lo, lo, c.delta, "%s: Wilson(%d, %d, %g) lo", c.name, c.k, c.n, c.confidence)
		assert.InDelta(t, c.hi, hi, c.delta, "%s: Wilson(%d, %d, %g) hi", c.name, c.k, c.n, c.confidence)
	}
	// Inside [0, 1], around the proportion, narrower with more trials.
	for n := 1; n <= 200; n += 7 {
		for k := 0; k <= n; k++ {
			lo, hi := Wilson(k, n, 0.9)
			ph := float64(k) / float64(n)
			assert.True(t, 0 <= lo && lo <= ph && ph <= hi && hi <= 1, "Wilson(%d, %d, 0.9) = %g, %g", k, n, lo, hi)
		}
	}
}

func TestPairedDifference(t *testing.T) {
	// By hand, 20 items, 5 losses, 1 gain: the estimate is (1 − 5)/20 =
	// -0.2. Agresti–Min: b* = 5.5, c* = 1.5, n* = 22; the adjusted
	// difference is -4/22 = -0.181818; its variance ((5.5+1.5) − 16/22)/22²
	// = 6.272727/484 = 0.0129602, sd 0.1138428; × 1.959964 = 0.2231278:
	// (-0.4049459, 0.0413096).
	est, lo, hi := PairedDifference(20, 5, 1, 0.95)
	assert.InDelta(t, -0.2, est, 1e-15)
	assert.InDelta(t, -0.4049459, lo, 1e-7)
	assert.InDelta(t, 0.0413096, hi, 1e-7)

	// No discordant items: the adjusted interval still has width,
	// ±z·sqrt(1)/(n+2).
	est, lo, hi = PairedDifference(98, 0, 0, 0.9)
	assert.Equal(t, 0.0, est)
	assert.InDelta(t, -1.6448536269514722/100, lo, 1e-12)
	assert.InDelta(t, 1.6448536269514722/100, hi, 1e-12)

	// Every item lost: clipped at -1, and the interval holds the estimate
	// (from 100 items on the adjustment's shrinkage puts its lower bound
	// above -1 before the widening).
	for _, n := range []int{1, 5, 100, 100000} {
		est, lo, hi = PairedDifference(n, n, 0, 0.9)
		assert.Equal(t, -1.0, est)
		assert.Equal(t, -1.0, lo)
		assert.Greater(t, hi, -1.0)
		if n > 1 {
			assert.Less(t, hi, 0.0)
		}
	}
	// Symmetric in losses and gains.
	e1, l1, h1 := PairedDifference(50, 7, 2, 0.9)
	e2, l2, h2 := PairedDifference(50, 2, 7, 0.9)
	assert.InDelta(t, -e1, e2, 1e-15)
	assert.InDelta(t, -l1, h2, 1e-15)
	assert.InDelta(t, -h1, l2, 1e-15)

	// No items, and invalid counts.
	est, lo, hi = PairedDifference(0, 0, 0, 0.95)
	assert.Equal(t, [3]float64{0, -1, 1}, [3]float64{est, lo, hi})
	for _, c := range [][3]int{{10, 6, 5}, {-1, 0, 0}, {10, -1, 0}, {10, 0, -1}} {
		est, lo, hi = PairedDifference(c[0], c[1], c[2], 0.95)
		assert.True(t, math.IsNaN(est) && math.IsNaN(lo) && math.IsNaN(hi), "%v", c)
	}
	est, lo, hi = PairedDifference(10, 3, 1, 1)
	assert.Equal(t, [3]float64{-0.2, -1, 1}, [3]float64{est, lo, hi})
	est, lo, hi = PairedDifference(10, 3, 1, 0)
	assert.Equal(t, [3]float64{-0.2, -0.2, -0.2}, [3]float64{est, lo, hi})
}

// TestPairedDifferenceCoverage: the Agresti–Min interval covers the true
// difference close to its nominal 90% on paired draws, where it is meant to
// (Agresti and Min 2005 report coverage near nominal from n = 20 on).
func TestPairedDifferenceCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const draws = 4000
	for _, c := range []struct {
		n             int
		p10, p01, p11 float64
	}{{30, 0.1, 0.05, 0.7}, {200, 0.085, 0.065, 0.815}, {100, 0.3, 0.02, 0.5}} {
		truth := c.p01 - c.p10
		covered := 0
		for range draws {
			losses, gains := 0, 0
			for range c.n {
				u := r.Float64()
				switch {
				case u < c.p10:
					losses++
				case u < c.p10+c.p01:
					gains++
				}
			}
			_, lo, hi := PairedDifference(c.n, losses, gains, 0.9)
			if lo <= truth && truth <= hi {
				covered++
			}
		}
		cov := share(covered, draws)
		t.Logf("n=%d p10=%g p01=%g: coverage %.4f", c.n, c.p10, c.p01, cov)
		assert.InDelta(t, 0.9, cov, 0.03, "n=%d: coverage of the 90%% interval", c.n)
	}
}

// bruteWilcoxon is P(W+ <= observed) by enumerating every assignment of
// signs to the nonzero |d|, with midranks: the definition.
func bruteWilcoxon(diffs []float64) float64 {
	var abs []float64
	var pos []bool
	for _, d := range diffs {
		if d != 0 {
			abs = append(abs, math.Abs(d))
			pos = append(pos, d > 0)
		}
	}
	n := len(abs)
	if n == 0 {
		return 1
	}
	rank := make([]float64, n)
	for i := range abs {
		below, equal := 0, 0
		for j := range abs {
			switch {
			case abs[j] < abs[i]:
				below++
			case abs[j] == abs[i]:
				equal++
			}
		}
		rank[i] = float64(below) + float64(equal+1)/2
	}
	observed := 0.0
	for i := range abs {
		if pos[i] {
			observed += rank[i]
		}
	}
	atMost := 0
	for mask := 0; mask < 1<<n; mask++ {
		w := 0.0
		for i := range n {
			if mask>>i&1 == 1 {
				w += rank[i]
			}
		}
		if w <= observed+1e-9 {
			atMost++
		}
	}
	return float64(atMost) / float64(int(1)<<n)
}

func TestWilcoxonSignedRank(t *testing.T) {
	cases := []struct {
		name  string
		diffs []float64
		want  float64
	}{
		{"all worse", []float64{-1, -2, -3}, 1.0 / 8},
		// Ranks 1, 2, 3, W+ = 1: the sign sets with W+ <= 1 are {} and {1}.
		{"one better", []float64{1, -2, -3}, 2.0 / 8},
		{"all better", []float64{1, 2, 3}, 1},
		// |d| = 1, 1, 2: midranks 1.5, 1.5, 3, W+ = 1.5; the subset sums are
		// 0, 1.5, 1.5, 3, 3, 4.5, 4.5, 6, three of them <= 1.5.
		{"ties", []float64{-1, 1, -2}, 3.0 / 8},
		{"zeros dropped", []float64{0, 0, -1}, 0.5},
		{"all zero", []float64{0, 0, 0}, 1},
		{"none", nil, 1},
		{"ten worse", constant(10, -0.5), math.Ldexp(1, -10)},
	}
	for _, c := range cases {
		assert.InDelta(t, c.want, WilcoxonSignedRank(c.diffs), 1e-15, "%s: WilcoxonSignedRank(%v)", c.name, c.diffs)
	}
	assert.True(t, math.IsNaN(WilcoxonSignedRank([]float64{1, math.NaN()})))
}

// TestWilcoxonSignedRankExact: the exact path against the enumeration of
// every sign assignment, with and without ties and zeros.
func TestWilcoxonSignedRankExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := 1 + r.IntN(12)
		levels := 2 + r.IntN(5) // few distinct magnitudes: ties, and zeros
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(r.IntN(2*levels+1)-levels) / 4
			if trial%3 == 0 {
				d[i] = r.NormFloat64() - 0.3 // no ties
			}
		}
		assert.InDelta(t, bruteWilcoxon(d), WilcoxonSignedRank(d), 1e-12, "diffs %v", d)
	}
}

// TestWilcoxonNormal: just past 50 nonzero differences the normal
// approximation takes over; there it agrees with the exact distribution
// (still computable) to within 0.005 over the whole range, ties included.
func TestWilcoxonNormal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	worst := 0.0
	for _, n := range []int{50, 51, 55, 60} {
		for trial := range 20 {
			d := make([]float64, n)
			shift := 0.8 * r.NormFloat64()
			for i := range d {
				d[i] = r.NormFloat64() + shift
				if trial%2 == 0 {
					d[i] = math.Round(2*d[i]) / 2 // ties
					if d[i] == 0 {
						d[i] = 0.5
					}
				}
			}
			ranks2, w2 := signedRanks(d)
			exact, normal := wilcoxonExact(ranks2, w2), wilcoxonNormal(ranks2, w2)
			worst = max(worst, math.Abs(exact-normal))
			assert.InDelta(t, exact, normal, 0.005, "n=%d trial %d: exact %g normal %g", n, trial, exact, normal)
			if n > wilcoxonExactLimit {
				assert.Equal(t, normal, WilcoxonSignedRank(d))
			} else {
				assert.Equal(t, exact, WilcoxonSignedRank(d))
			}
		}
	}
	t.Logf("largest |exact − normal| near n = 50: %.5f", worst)
}

func TestWilcoxonAllWorse(t *testing.T) {
	for _, n := range []int{1, 2, 10, 49, 50, 51, 60, 200, 5000} {
		want, got := WilcoxonSignedRank(constant(n, -0.25)), wilcoxonAllWorse(n)
		assert.InDelta(t, want, got, 1e-300, "n=%d", n)
		if want != 0 {
			assert.InEpsilon(t, want, got, 1e-12, "n=%d", n)
		}
	}
	assert.Equal(t, 1.0, wilcoxonAllWorse(0))
}

func TestMeanDifference(t *testing.T) {
	inf := math.Inf(1)
	// By hand: {1, 2, 3, 4}: mean 2.5, s = sqrt(5/3) = 1.2909944, se =
	// 0.6454972; t(3) at 0.975 = 3.1824463: ± 2.0542603.
	cases := []struct {
		name        string
		diffs       []float64
		confidence  float64
		est, lo, hi float64
		delta       float64
	}{
		{"by hand", []float64{1, 2, 3, 4}, 0.95, 2.5, 0.4457397, 4.5542603, 1e-6},
		// 0..9: mean 4.5, s = sqrt(82.5/9) = 3.0276504, se = 0.9574271;
		// t(9) at 0.95 = 1.8331129: ± 1.7550720.
		{"ten", seq(0, 10), 0.9, 4.5, 2.7449280, 6.2550720, 1e-6},
		{"all equal", []float64{0.1, 0.1, 0.1}, 0.9, 0.1, 0.1, 0.1, 0},
		{"one", []float64{-0.3}, 0.9, -0.3, -inf, inf, 0},
		{"confidence 1", []float64{1, 3}, 1, 2, -inf, inf, 0},
		{"confidence 0", []float64{1, 3}, 0, 2, 2, 2, 0},
	}
	for _, c := range cases {
		est, lo, hi := MeanDifference(c.diffs, c.confidence)
		assert.InDelta(t, c.est, est, 1e-12, c.name)
		if math.IsInf(c.lo, 0) {
			assert.Equal(t, c.lo, lo, c.name)
			assert.Equal(t, c.hi, hi, c.name)
			continue
		}
		assert.InDelta(t, c.lo, lo, c.delta, c.name)
		assert.InDelta(t, c.hi, hi, c.delta, c.name)
	}
	est, lo, hi := MeanDifference(nil, 0.9)
	assert.True(t, math.IsNaN(est))
	assert.Equal(t, [2]float64{-inf, inf}, [2]float64{lo, hi})
	est, lo, hi = MeanDifference([]float64{1, math.NaN()}, 0.9)
	assert.True(t, math.IsNaN(est) && math.IsNaN(lo) && math.IsNaN(hi))
}

func TestTQuantile(t *testing.T) {
	cases := []struct{ p, v, want float64 }{
		{0.975, 1, 12.706205},
		{0.975, 3, 3.182446},
		{0.95, 9, 1.833113},
		{0.975, 199, 1.971957},
		{0.95, 1e6, 1.644855},
	}
	for _, c := range cases {
		assert.InDelta(t, c.want, TQuantile(c.p, c.v), 1e-6, "t quantile %g with %g degrees of freedom", c.p, c.v)
	}
}

func TestItemsToDetect(t *testing.T) {
	cases := []struct {
		name                            string
		drop, discordance, level, power float64
		want                            int
	}{
		// By hand: z_a = 1.6448536, z_b = 0.8416212; (1.6448536·sqrt(0.15) +
		// 0.8416212·sqrt(0.1475))² / 0.05² = (0.6370521 + 0.3232273)² /
		// 0.0025 = 368.85.
		{"Connor", 0.05, 0.15, 0.05, 0.8, 369},
		// ψ = 0 is floored at δ = 0.02: (1.6448536·0.1414214 +
		// 0.8416212·0.14)² / 0.0004 = 307.03; reaching 0.05 at all needs n
		// > log2(20)/0.02 = 216.1.
		{"no discordance", 0.02, 0, 0.05, 0.8, 308},
		{"discordance below the drop", 0.02, 0.01, 0.05, 0.8, 308},
		// δ = 1: Connor says 3 (z_a² = 2.7), but 0.5^3 = 0.125 cannot reach
		// 0.05; 0.5^5 = 0.031 can, 0.5^4 = 0.0625 cannot.
		{"reach", 1, 1, 0.05, 0.8, 5},
		{"discordance above 1", 0.05, 1.5, 0.05, 0.8, ItemsToDetect(0.05, 1, 0.05, 0.8)},
		{"drop 0", 0, 0.1, 0.05, 0.8, 0},
		{"drop above 1", 1.5, 0.1, 0.05, 0.8, 0},
		{"level 0", 0.05, 0.1, 0, 0.8, 0},
		{"power 1", 0.05, 0.1, 0.05, 1, 0},
		{"NaN drop", math.NaN(), 0.1, 0.05, 0.8, 0},
		{"tiny drop", 1e-15, 0.5, 0.05, 0.8, maxItems},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, ItemsToDetect(c.drop, c.discordance, c.level, c.power), c.name)
	}
	// More items for a smaller drop, a stricter level, more power, more
	// discordance.
	base := ItemsToDetect(0.03, 0.2, 0.01, 0.8)
	assert.Greater(t, ItemsToDetect(0.02, 0.2, 0.01, 0.8), base)
	assert.Greater(t, ItemsToDetect(0.03, 0.2, 0.001, 0.8), base)
	assert.Greater(t, ItemsToDetect(0.03, 0.2, 0.01, 0.9), base)
	assert.Greater(t, ItemsToDetect(0.03, 0.3, 0.01, 0.8), base)
}

// TestItemsToDetectPower: with the items ItemsToDetect asks for, McNemar's
// exact test at the level does detect the drop about as often as promised.
func TestItemsToDetectPower(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const draws = 2000
	drop, discordance, level := 0.05, 0.15, 0.05
	n := ItemsToDetect(drop, discordance, level, 0.8)
	p10, p01 := (discordance+drop)/2, (discordance-drop)/2
	detected := 0
	for range draws {
		losses, gains := 0, 0
		for range n {
			u := r.Float64()
			switch {
			case u < p10:
				losses++
			case u < p10+p01:
				gains++
			}
		}
		if McNemar(losses, gains) < level {
			detected++
		}
	}
	power := share(detected, draws)
	t.Logf("%d items, drop %g, discordance %g, level %g: power %.3f", n, drop, discordance, level, power)
	// The exact test is conservative (discrete): a little below 0.8.
	assert.InDelta(t, 0.8, power, 0.06)
}
