package stat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/aclements/go-moremath/stats"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHodgesLehmannEstimate(t *testing.T) {
	cases := []struct {
		name                string
		baseline, candidate []float64
		want                float64
	}{
		// Differences 3,2,1,5,4,3: sorted 1,2,3,3,4,5, median 3.
		{"odd sizes", []float64{1, 2, 3}, []float64{4, 6}, 3},
		// Differences 1,0,4,3,8,7: sorted 0,1,3,4,7,8, median 3.5.
		{"even count", []float64{1, 2}, []float64{2, 5, 9}, 3.5},
		{"one each", []float64{10}, []float64{12}, 2},
		// Differences 0,-4,-5, 1,-3,-4, 9,5,4: sorted -5,-4,-4,-3,0,1,4,5,9,
		// median 0; the difference of the medians is 1 − 4 = -3.
		{"not the difference of medians", []float64{0, 4, 5}, []float64{0, 1, 9}, 0},
		{"identical", []float64{5, 5, 5}, []float64{5, 5}, 0},
		{"negative shift", []float64{10, 11, 12}, []float64{0, 1, 2}, -10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := HodgesLehmann(c.baseline, c.candidate, 0.9)
			assert.InDelta(t, c.want, s.Estimate, 1e-12)
			if s.OK {
				assert.LessOrEqual(t, s.Lo, s.Estimate)
				assert.GreaterOrEqual(t, s.Hi, s.Estimate)
			}
		})
	}
}

func TestHodgesLehmannInterval(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name                string
		baseline, candidate []float64
		confidence          float64
		want                Shift
	}{
		// Differences 10j − i (i, j = 1..5): 5..9, 15..19, 25..29, 35..39,
		// 45..49. Under the null, U for 5 and 5 has counts 1,1,2,3,5,7,... of
		// 252, so P(U <= 4) = 12/252 <= 0.05 < P(U <= 5) = 19/252: k = 5, the
		// 5th smallest (9) and 5th largest (45), coverage 1 − 24/252.
		{"5 a side at 90%", seq(1, 5), []float64{10, 20, 30, 40, 50}, 0.9,
			Shift{Estimate: 27, Lo: 9, Hi: 45, Confidence: 1 - 24.0/252, OK: true}},
		// At 95%: P(U <= 2) = 4/252 <= 0.025 < 7/252: k = 3.
		{"5 a side at 95%", seq(1, 5), []float64{10, 20, 30, 40, 50}, 0.95,
			Shift{Estimate: 27, Lo: 7, Hi: 47, Confidence: 1 - 8.0/252, OK: true}},
		// 3 a side at 90%: P(U = 0) = 1/20 is exactly 0.05, so the widest
		// interval, from the smallest to the largest difference, is the 90%
		// one.
		{"3 a side at 90%", []float64{1, 2, 3}, []float64{10, 20, 30}, 0.9,
			Shift{Estimate: 18, Lo: 7, Hi: 29, Confidence: 0.9, OK: true}},
		{"2 a side at 95%", []float64{1, 2}, []float64{10, 20}, 0.95,
			Shift{Estimate: 13.5, Lo: -inf, Hi: inf, OK: false}},
		{"3 a side at 95%", []float64{1, 2, 3}, []float64{10, 20, 30}, 0.95,
			Shift{Estimate: 18, Lo: -inf, Hi: inf, OK: false}},
		{"confidence 1", seq(1, 5), seq(2, 5), 1,
			Shift{Estimate: 1, Lo: -inf, Hi: inf, OK: false}},
		{"confidence NaN", seq(1, 5), seq(2, 5), math.NaN(),
			Shift{Estimate: 1, Lo: -inf, Hi: inf, OK: false}},
		{"empty candidate", seq(1, 5), nil, 0.9,
			Shift{Estimate: math.NaN(), Lo: -inf, Hi: inf, OK: false}},
		{"NaN value", []float64{1, math.NaN()}, seq(1, 5), 0.9,
			Shift{Estimate: math.NaN(), Lo: -inf, Hi: inf, OK: false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := HodgesLehmann(c.baseline, c.candidate, c.confidence)
			if math.IsNaN(c.want.Estimate) {
				assert.True(t, math.IsNaN(got.Estimate))
				got.Estimate, c.want.Estimate = 0, 0
			}
			assert.InDelta(t, c.want.Confidence, got.Confidence, 1e-12)
			got.Confidence = c.want.Confidence
			assert.Equal(t, c.want, got)
		})
	}
}

// TestHodgesLehmannCoverage: over thousands of seeded draws with a known
// shift, the interval holds the true shift in the share it claims. For
// continuous data the coverage is exactly Shift.Confidence, so the observed
// share must be within 3 binomial standard errors of it on both sides: the
// interval is neither too narrow (the property the gate relies on) nor
// needlessly wide.
func TestHodgesLehmannCoverage(t *testing.T) {
	cases := []struct {
		name       string
		n1, n2     int
		confidence float64
		draw       func(r *rand.Rand) float64
	}{
		{"normal, 8 a side, 90%", 8, 8, 0.9, func(r *rand.Rand) float64 { return r.NormFloat64() }},
		{"lognormal, 6 and 10, 95%", 6, 10, 0.95, func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()) }},
		{"exponential, 15 and 5, 80%", 15, 5, 0.8, func(r *rand.Rand) float64 { return r.ExpFloat64() }},
	}
	const draws = 2000
	const shift = 1.5
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 11))
			x, y := make([]float64, c.n1), make([]float64, c.n2)
			hits, claimed := 0, 0.0
			for range draws {
				for i := range x {
					x[i] = c.draw(r)
				}
				for i := range y {
					y[i] = c.draw(r) + shift
				}
				s := HodgesLehmann(x, y, c.confidence)
				require.True(t, s.OK)
				require.GreaterOrEqual(t, s.Confidence, c.confidence)
				claimed = s.Confidence // the same for every draw: it depends on n1, n2 only
				if s.Lo <= shift && shift <= s.Hi {
					hits++
				}
			}
			share := float64(hits) / draws
			margin := 3 * math.Sqrt(claimed*(1-claimed)/draws)
			t.Logf("coverage %.4f, claimed %.4f (requested %.2f), margin %.4f", share, claimed, c.confidence, margin)
			assert.GreaterOrEqual(t, share, claimed-margin)
			assert.LessOrEqual(t, share, claimed+margin)
		})
	}
}

func TestIntervalSamples(t *testing.T) {
	cases := []struct {
		confidence float64
		want       int
	}{
		{0.9, 3},  // 2/20 = 0.1
		{0.95, 4}, // 2/35 > 0.05 >= 2/70
		{0.99, 5}, // 2/252 <= 0.01 < 2/70
		{0.5, 2},  // 2/6 <= 0.5 < 2/2
		{0, 1},
		{1, searchCap},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, IntervalSamples(c.confidence), "confidence %g", c.confidence)
	}
	assert.Equal(t, searchCap, IntervalSamples(math.NaN()))
	// Consistent with HodgesLehmann: n a side gives an interval, n−1 does not.
	for _, conf := range []float64{0.3, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.9999, 1 - 1e-7} {
		n := IntervalSamples(conf)
		assert.True(t, HodgesLehmann(seq(0, n), seq(0.5, n), conf).OK, "confidence %g, n %d", conf, n)
		if n > 1 {
			assert.False(t, HodgesLehmann(seq(0, n-1), seq(0.5, n-1), conf).OK, "confidence %g, n-1 %d", conf, n-1)
		}
	}
}

// TestCutoffPaths: the bisection over stats.UDist (no table, up to 50 a
// side) finds the same rank as a plain scan, and the normal approximation
// beyond 50 a side is close to its nominal coverage.
func TestCutoffPaths(t *testing.T) {
	for _, sz := range [][2]int{{25, 20}, {50, 9}, {30, 30}} {
		for _, conf := range []float64{0.8, 0.95, 0.999} {
			n1, n2 := sz[0], sz[1]
			require.Greater(t, n1*n2, tableMaxPairs)
			k, cov, ok := cutoff(n1, n2, conf)
			require.True(t, ok)
			dist := stats.UDist{N1: n1, N2: n2}
			tail := (1 - conf) / 2
			assert.LessOrEqual(t, dist.CDF(float64(k-1)), tail*(1+1e-9), "%v at %g", sz, conf)
			assert.Greater(t, dist.CDF(float64(k)), tail*(1+1e-9), "%v at %g", sz, conf)
			assert.InDelta(t, 1-2*dist.CDF(float64(k-1)), cov, 1e-12)
		}
	}
	for _, conf := range []float64{0.8, 0.9, 0.99} {
		k, cov, ok := cutoff(60, 80, conf)
		require.True(t, ok)
		assert.Positive(t, k)
		assert.GreaterOrEqual(t, cov, conf-1e-12)
		assert.InDelta(t, conf, cov, 0.002)
	}
	s := HodgesLehmann(seq(0, 70), seq(10, 70), 0.95)
	require.True(t, s.OK)
	assert.InDelta(t, 10, s.Estimate, 1e-12)
	assert.Less(t, s.Lo, 10.0)
	assert.Greater(t, s.Hi, 10.0)
}

func TestSelectKth(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 1 + r.IntN(60)
		a := make([]float64, n)
		for i := range a {
			a[i] = float64(r.IntN(1 + trial%20)) // many duplicates in some trials
		}
		sorted := slices.Sorted(slices.Values(a))
		k := r.IntN(n)
		b := slices.Clone(a)
		got := selectKth(b, k)
		require.Equal(t, sorted[k], got)
		require.Equal(t, sorted[k], b[k])
		for i := range k {
			require.LessOrEqual(t, b[i], b[k])
		}
		for i := k + 1; i < n; i++ {
			require.GreaterOrEqual(t, b[i], b[k])
		}
		require.ElementsMatch(t, a, b)
	}
}
