package stat

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// walsh returns the sorted Walsh averages (d_i + d_j)/2, i <= j: the
// definition, with a full sort.
func walsh(d []float64) []float64 {
	var w []float64
	for i := range d {
		for j := i; j < len(d); j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	return w
}

// bruteSignedRankCounts returns, for n ranks 1..n, how many of the 2^n sign
// assignments give each W+ (the sum of the ranks signed positive), by
// enumerating them all: the null distribution by its definition, apart
// from signedRankDist's dynamic programme.
func bruteSignedRankCounts(n int) []int {
	if c, ok := bruteCounts[n]; ok {
		return c
	}
	counts := make([]int, n*(n+1)/2+1)
	for mask := 0; mask < 1<<n; mask++ {
		w := 0
		for i := range n {
			if mask>>i&1 == 1 {
				w += i + 1
			}
		}
		counts[w]++
	}
	bruteCounts[n] = counts
	return counts
}

// bruteCounts caches bruteSignedRankCounts; the tests that use it do not
// run in parallel.
var bruteCounts = map[int][]int{}

// bruteSignedRankShift is SignedRankShift by its definition: the median of
// the sorted Walsh averages, and the k-th smallest and largest with k from
// the enumerated null distribution (the largest k with P(W+ <= k−1) <=
// (1−confidence)/2, k−1 at most half the averages).
func bruteSignedRankShift(d []float64, confidence float64) Shift {
	s := Shift{Estimate: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	w := walsh(d)
	n, nw := len(d), len(w)
	if nw%2 == 1 {
		s.Estimate = w[nw/2]
	} else {
		s.Estimate = (w[nw/2-1] + w[nw/2]) / 2
	}
	counts := bruteSignedRankCounts(n)
	total := float64(int(1) << n)
	tail := (1 - confidence) / 2 * (1 + 1e-9)
	k, cum := 0, 0
	for w := 0; w <= (nw-1)/2; w++ {
		cum += counts[w]
		if float64(cum)/total > tail {
			break
		}
		k = w + 1
	}
	if k == 0 {
		return s
	}
	below := 0 // the count of W+ <= k−1
	for w := 0; w < k; w++ {
		below += counts[w]
	}
	s.Lo, s.Hi = w[k-1], w[nw-k]
	s.Confidence = 1 - 2*float64(below)/total
	s.OK = true
	return s
}

func TestSignedRankShiftEstimate(t *testing.T) {
	cases := []struct {
		name  string
		diffs []float64
		want  float64
	}{
		// Walsh averages 1, 1.5, 2, 2, 2.5, 3: median 2.
		{"1 2 3", []float64{1, 2, 3}, 2},
		// -1, 1.5, 4: median 1.5.
		{"two", []float64{-1, 4}, 1.5},
		{"one", []float64{5}, 5},
		// 0, 0, 0, 5, 5, 10: median 2.5, neither the median (0) nor the
		// mean (3.33) of the differences.
		{"not the median", []float64{0, 0, 10}, 2.5},
		// 1, 1.5, 2, 2, 2.5, 2.5, 3, 3, 3.5, 4, 500.5, 501, 501.5, 502, 1000:
		// the 8th of 15 is 3, where the mean is 202.
		{"an outlier", []float64{1, 2, 3, 4, 1000}, 3},
		{"all equal", constant(6, -2), -2},
		{"near the float64 limit", []float64{1.5e308, 1.7e308}, 1.6e308},
	}
	for _, c := range cases {
		got := SignedRankShift(c.diffs, 0.9)
		assert.InEpsilon(t, c.want, got.Estimate, 1e-12, "%s: SignedRankShift(%v).Estimate = %g, want %g", c.name, c.diffs, got.Estimate, c.want)
		if got.OK {
			assert.LessOrEqual(t, got.Lo, got.Estimate, c.name)
			assert.GreaterOrEqual(t, got.Hi, got.Estimate, c.name)
		}
	}
}

func TestSignedRankShiftInterval(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name       string
		diffs      []float64
		confidence float64
		want       Shift
	}{
		// Walsh averages of 1..10 are (i+j)/2; the sums 2, 3, 4, 5, 6, 7 occur
		// 1, 1, 2, 2, 3, 3 times (cumulated 1, 2, 4, 6, 9, 12), so the 11th
		// smallest sum is 7 and by symmetry the 11th largest 15. With 10
		// pairs P(W+ <= 10) = 43/1024 <= 0.05 < P(W+ <= 11) = 54/1024: k = 11.
		{"10 pairs at 90%", seq(1, 10), 0.9,
			Shift{Estimate: 5.5, Lo: 3.5, Hi: 7.5, Confidence: 1 - 86.0/1024, OK: true}},
		// P(W+ <= 8) = 25/1024 <= 0.025 < P(W+ <= 9): k = 9, the 9th smallest
		// sum is 6 and the 9th largest 16.
		{"10 pairs at 95%", seq(1, 10), 0.95,
			Shift{Estimate: 5.5, Lo: 3, Hi: 8, Confidence: 1 - 50.0/1024, OK: true}},
		// 5 pairs at 90%: P(W+ = 0) = 1/32 <= 0.05 < P(W+ <= 1) = 2/32: the
		// widest interval, the smallest to the largest difference.
		{"5 pairs at 90%", seq(1, 5), 0.9,
			Shift{Estimate: 3, Lo: 1, Hi: 5, Confidence: 1 - 2.0/32, OK: true}},
		// At 93.75% exactly P(W+ = 0) = 1/32 is the tail: the rounding of
		// 1 − 0.9375 must not lose it.
		{"5 pairs at 93.75%", seq(1, 5), 0.9375,
			Shift{Estimate: 3, Lo: 1, Hi: 5, Confidence: 0.9375, OK: true}},
		{"4 pairs at 90%", seq(1, 4), 0.9,
			Shift{Estimate: 2.5, Lo: -inf, Hi: inf, OK: false}},
		{"confidence 1", seq(1, 10), 1,
			Shift{Estimate: 5.5, Lo: -inf, Hi: inf, OK: false}},
		{"confidence NaN", seq(1, 10), math.NaN(),
			Shift{Estimate: 5.5, Lo: -inf, Hi: inf, OK: false}},
		{"no differences", nil, 0.9,
			Shift{Estimate: math.NaN(), Lo: -inf, Hi: inf, OK: false}},
		{"NaN difference", []float64{1, math.NaN(), 3, 4, 5, 6}, 0.9,
			Shift{Estimate: math.NaN(), Lo: -inf, Hi: inf, OK: false}},
		{"infinite difference", []float64{1, inf, 3, 4, 5, 6}, 0.9,
			Shift{Estimate: math.NaN(), Lo: -inf, Hi: inf, OK: false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := SignedRankShift(c.diffs, c.confidence)
			if math.IsNaN(c.want.Estimate) {
				assert.True(t, math.IsNaN(got.Estimate), "SignedRankShift(%v).Estimate = %g, want NaN", c.diffs, got.Estimate)
				got.Estimate, c.want.Estimate = 0, 0
			}
			assert.InDelta(t, c.want.Confidence, got.Confidence, 1e-15)
			got.Confidence = c.want.Confidence
			assert.Equal(t, c.want, got)
		})
	}
}

// TestSignedRankCriticalValues: the lower critical values of the
// signed-rank statistic, the largest w with P(W+ <= w) <= alpha, from the
// standard published table (Wilcoxon, Katti and Wilcox 1970, reprinted in
// most textbooks), one-sided alpha 0.05 and 0.025 for n = 5..15 and 20
// ("-": no w). The interval at two-sided 1 − 2·alpha takes k − 1 = w.
func TestSignedRankCriticalValues(t *testing.T) {
	const none = -1
	table := map[float64]map[int]int{
		0.05: {5: 0, 6: 2, 7: 3, 8: 5, 9: 8, 10: 10, 11: 13, 12: 17, 13: 21, 14: 25, 15: 30, 20: 60},
		// n = 5 has no value at 0.025: 1/32 > 0.025.
		0.025: {5: none, 6: 0, 7: 2, 8: 3, 9: 5, 10: 8, 11: 10, 12: 13, 13: 17, 14: 21, 15: 25, 20: 52},
	}
	for alpha, row := range table {
		for n, crit := range row {
			k, _, ok := signedRankCutoff(n, 1-2*alpha)
			if crit == none {
				assert.False(t, ok, "n=%d alpha %g: signedRankCutoff ok, want none", n, alpha)
				continue
			}
			require.True(t, ok, "n=%d alpha %g", n, alpha)
			assert.Equal(t, crit, k-1, "n=%d alpha %g: critical value = %d, want %d", n, alpha, k-1, crit)
		}
	}
}

// TestSignedRankDistExact: the dynamic programme's null distribution of W+
// against the enumeration of every sign assignment, count for count.
func TestSignedRankDistExact(t *testing.T) {
	for n := 1; n <= 14; n++ {
		counts := bruteSignedRankCounts(n)
		cdf := signedRankCDF(n)
		require.Len(t, cdf, len(counts), "n=%d", n)
		cum := 0
		for w, c := range counts {
			cum += c
			assert.Equal(t, float64(cum)/float64(int(1)<<n), cdf[w], "n=%d: P(W+ <= %d)", n, w)
		}
	}
}

// TestSignedRankShiftBrute: SignedRankShift against its definition, over
// random differences with and without ties and zeros, at several
// confidences.
func TestSignedRankShiftBrute(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 3))
	for trial := range 300 {
		n := 1 + r.IntN(14)
		d := make([]float64, n)
		for i := range d {
			d[i] = r.NormFloat64() + 0.5
			if trial%3 == 0 {
				d[i] = float64(r.IntN(5) - 2) // ties and zeros
			}
		}
		for _, conf := range []float64{0.5, 0.8, 0.9, 0.95, 0.99} {
			want := bruteSignedRankShift(d, conf)
			got := SignedRankShift(d, conf)
			assert.InDelta(t, want.Confidence, got.Confidence, 1e-12, "diffs %v at %g", d, conf)
			got.Confidence = want.Confidence
			assert.InDelta(t, want.Estimate, got.Estimate, 1e-12, "diffs %v at %g", d, conf)
			got.Estimate = want.Estimate
			assert.Equal(t, want, got, "SignedRankShift(%v, %g)", d, conf)
		}
	}
}

// TestSignedRankShiftCoverage: the coverage, exactly. When the differences
// are symmetric about 0 (the true centre) and continuous, given their
// magnitudes every one of the 2^n sign assignments is equally likely; the
// interval must hold 0 for exactly Confidence·2^n of them. Tukey's duality
// is what makes it exact: the number of positive Walsh averages is W+.
func TestSignedRankShiftCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 11; n++ {
		abs := make([]float64, n)
		for i := range abs {
			abs[i] = 0.1 + r.ExpFloat64() // distinct magnitudes, none 0
		}
		for _, conf := range []float64{0.8, 0.9, 0.95} {
			want := SignedRankShift(abs, conf)
			d := make([]float64, n)
			covered := 0
			for mask := 0; mask < 1<<n; mask++ {
				for i := range d {
					d[i] = abs[i]
					if mask>>i&1 == 1 {
						d[i] = -abs[i]
					}
				}
				s := SignedRankShift(d, conf)
				require.Equal(t, want.OK, s.OK)
				require.Equal(t, want.Confidence, s.Confidence, "the coverage depends on n alone")
				if s.Lo <= 0 && 0 <= s.Hi {
					covered++
				}
			}
			total := float64(int(1) << n)
			if !want.OK {
				assert.Equal(t, 1<<n, covered, "n=%d at %g: an unbounded interval covers everything", n, conf)
				continue
			}
			assert.Equal(t, want.Confidence, float64(covered)/total,
				"n=%d at %g: coverage by enumeration = %d/%g, want %g", n, conf, covered, total, want.Confidence)
			assert.GreaterOrEqual(t, want.Confidence, conf)
		}
	}
}

// TestSignedRankCutoffNormal: beyond 50 pairs the cut-off comes from the
// normal approximation; there its coverage is at least the requested one
// by construction, and within 0.003 of the exact coverage of the same rank
// (the exact distribution is still computable there).
func TestSignedRankCutoffNormal(t *testing.T) {
	for _, n := range []int{51, 60, 80} {
		ranks := make([]int, n)
		for i := range ranks {
			ranks[i] = i + 1
		}
		dist := signedRankDist(ranks)
		for _, conf := range []float64{0.8, 0.9, 0.95, 0.99} {
			k, coverage, ok := signedRankCutoff(n, conf)
			require.True(t, ok)
			below := 0.0
			for w := range k {
				below += dist[w]
			}
			exact := 1 - 2*below
			assert.GreaterOrEqual(t, coverage, conf, "n=%d at %g", n, conf)
			assert.InDelta(t, exact, coverage, 0.003, "n=%d at %g: normal coverage %g, exact %g", n, conf, coverage, exact)
		}
	}
	s := SignedRankShift(seq(-30, 61), 0.95)
	require.True(t, s.OK)
	assert.Equal(t, 0.0, s.Estimate)
	assert.Less(t, s.Lo, 0.0)
	assert.Greater(t, s.Hi, 0.0)
}

func TestRoundsToReach(t *testing.T) {
	pocock := Spend(0.05, 0.5) // the first look at 8 of 16 rounds: 0.0310
	cases := []struct {
		level float64
		want  int
	}{
		{0.05, 5},          // 1/32 < 0.05 <= 1/16
		{0.05 / 3, 6},      // 1/64 < 0.0167 <= 1/32
		{0.05 / 7, 8},      // 1/256 < 0.00714 <= 1/128
		{pocock, 6},        // 1/64 < 0.0310 <= 1/32 = 0.03125
		{pocock / 3, 7},    // 1/128 < 0.0103 <= 1/64
		{pocock / 7, 8},    // 1/256 < 0.00443 <= 1/128
		{0.5, 2},           // 1/4 < 0.5 <= 1/2
		{0, searchCap},     // nothing reaches 0
		{-1, searchCap},    //
		{math.NaN(), 1000}, //
	}
	for _, c := range cases {
		assert.Equal(t, c.want, RoundsToReach(c.level), "RoundsToReach(%g)", c.level)
	}
	for _, level := range []float64{0.04, 1e-3, 1e-9, 1e-20} {
		n := RoundsToReach(level)
		assert.Less(t, WilcoxonSignedRank(constant(n, -1)), level, "level %g: %d rounds all worse", level, n)
		assert.GreaterOrEqual(t, WilcoxonSignedRank(constant(n-1, -1)), level, "level %g: %d rounds all worse", level, n-1)
	}
	// roundsForInterval agrees with SignedRankShift.
	for _, conf := range []float64{0.5, 0.8, 0.9, 0.938, 0.95, 0.99, 0.999} {
		n := roundsForInterval(conf)
		assert.True(t, SignedRankShift(seq(0, n), conf).OK, "confidence %g, n %d", conf, n)
		assert.False(t, SignedRankShift(seq(0, n-1), conf).OK, "confidence %g, n-1 %d", conf, n-1)
	}
	assert.Equal(t, searchCap, roundsForInterval(1))
}

func TestTheilSen(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name   string
		values []float64
		want   float64
	}{
		{"a line", []float64{1, 2, 3, 4}, 1},
		{"two", []float64{5, 3}, -2},
		{"flat", constant(5, 7), 0},
		// Slopes 2, 0.5 (over 2) and -1: median 0.5.
		{"three", []float64{1, 3, 2}, 0.5},
		// Slopes 1, 1.5, 7/3, 2, 3, 4: median (2 + 7/3)/2.
		{"even count", []float64{1, 2, 4, 8}, (2 + 7.0/3) / 2},
		// Slopes 2 ×6, 25, 32.7, 48, 94: the outlier moves it not at all,
		// where least squares would give a slope of 20.4.
		{"an outlier", []float64{0, 2, 4, 6, 100}, 2},
		{"one", []float64{3}, nan},
		{"none", nil, nan},
		{"NaN", []float64{1, nan, 3}, nan},
		{"infinite", []float64{1, 2, inf}, nan},
	}
	for _, c := range cases {
		got := TheilSen(c.values)
		if math.IsNaN(c.want) {
			assert.True(t, math.IsNaN(got), "%s: TheilSen(%v) = %g, want NaN", c.name, c.values, got)
			continue
		}
		assert.InDelta(t, c.want, got, 1e-12, "%s: TheilSen(%v) = %g, want %g", c.name, c.values, got, c.want)
	}
}

// depression is the Hamilton depression scale data of Hollander and Wolfe
// (1973, p. 29) that R's ?wilcox.test uses: nine patients' scores at the
// first (x) and second (y) visit after starting a tranquilliser. R gives
// wilcox.test(x, y, paired = TRUE, alternative = "greater"): V = 40,
// p-value = 0.01953 (10/512: the sign sets of ranks 1..9 summing to at most
// 45 − 40 = 5).
var depressionX = []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
var depressionY = []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}

func TestDecideRoundsPublished(t *testing.T) {
	// "x greater than y" is a regression of a lower-is-better metric whose
	// candidate is x.
	g := Gate{Baseline: depressionY, Candidate: depressionX}
	ds, _ := DecideRounds([]Gate{g}, nil, 0.05)
	require.Len(t, ds, 1)
	d := ds[0]
	assert.InDelta(t, 10.0/512, d.P, 1e-15, "P = %g, want R's 0.01953 (10/512)", d.P)
	assert.Equal(t, Regression, d.Outcome, d.Reason)
	assert.True(t, strings.HasPrefix(d.Reason, "significant (p=0.02) and +"), d.Reason)

	diffs := make([]float64, len(depressionX))
	for i := range diffs {
		diffs[i] = depressionX[i] - depressionY[i]
	}
	want := bruteSignedRankShift(diffs, 0.9)
	assert.InDelta(t, want.Estimate, d.Shift.Estimate, 1e-12)
	assert.Equal(t, want.Lo, d.Shift.Lo)
	assert.Equal(t, want.Hi, d.Shift.Hi)
	assert.Equal(t, d.Shift.Estimate, d.Worse, "absolute tolerance, lower is better: Worse is the estimate")

	// The other direction: "x is smaller", 1 − P(V >= 41) = 1 − 7/512.
	g.HigherIsBetter = true
	ds, _ = DecideRounds([]Gate{g}, nil, 0.05)
	assert.InDelta(t, 505.0/512, ds[0].P, 1e-15)
	assert.Equal(t, Pass, ds[0].Outcome, "an improvement with tolerance 0: %s", ds[0].Reason)
}

func TestDecideRounds(t *testing.T) {
	base8 := []float64{100, 102, 98, 101, 99, 103, 97, 100}
	// A drift of +70% over the rounds shared by both sides, the candidate
	// within ±0.5% of the baseline in each round.
	drift := []float64{100, 110, 120, 130, 140, 150, 160, 170}
	near := []float64{100.5, 109.5, 120.5, 129.5, 140.5, 149.5, 160.5, 169.5}
	pocock := Spend(0.05, 0.5)
	cases := []struct {
		name     string
		gates    []Gate
		level    float64
		outcome  Outcome
		reason   string   // the exact Reason
		warnings []string // the exact Warnings
		p        float64  // the raw P; NaN: not checked
		change   float64  // Change.Estimate; NaN: not checked
	}{
		{
			name:    "latency 1.3x, relative 10%",
			gates:   []Gate{{Baseline: base8, Candidate: scaled(base8, 1.3), Relative: true, Tolerance: 0.1}},
			level:   0.05,
			outcome: Regression, reason: "significant (p=0.0039) and +30.0% is beyond +10%",
			p: 1.0 / 256, change: 0.3,
		},
		{
			name:    "throughput 0.7x, relative 10%",
			gates:   []Gate{{Baseline: base8, Candidate: scaled(base8, 0.7), HigherIsBetter: true, Relative: true, Tolerance: 0.1}},
			level:   0.05,
			outcome: Regression, reason: "significant (p=0.0039) and -30.0% is beyond -10%",
			p: 1.0 / 256, change: -0.3,
		},
		{
			// 1.3x with three gates at the first Pocock look of 8 of 16
			// rounds: 3/256 = 0.0117 < 0.031.
			name: "1.3x, 3 gates, first look",
			gates: []Gate{
				{Baseline: base8, Candidate: scaled(base8, 1.3), Relative: true, Tolerance: 0.1},
				{Baseline: base8, Candidate: scaled(base8, 1.3), Relative: true, Tolerance: 0.1},
				{Baseline: base8, Candidate: scaled(base8, 1/1.3), HigherIsBetter: true, Relative: true, Tolerance: 0.05},
			},
			level:   pocock,
			outcome: Regression, reason: "significant (p=0.012) and +30.0% is beyond +10%",
			p: 1.0 / 256, change: 0.3,
		},
		{
			name:    "drifting A/A, relative 10%",
			gates:   []Gate{{Baseline: drift, Candidate: near, Relative: true, Tolerance: 0.1}},
			level:   0.05,
			outcome: Pass, reason: "the 90% interval rules out worse than +10%",
			// The log-ratios' magnitudes fall with the drift: the rounds
			// where the candidate was faster (turned round: positive) have
			// ranks 7, 5, 3, 1, W+ = 16, and 108 of the 256 sign sets of
			// ranks 1..8 sum to at most 16.
			p: 108.0 / 256, change: math.NaN(),
		},
		{
			name:    "drifting A/A, absolute 2",
			gates:   []Gate{{Baseline: drift, Candidate: near, Tolerance: 2}},
			level:   0.05,
			outcome: Pass, reason: "the 90% interval rules out worse than +2",
			// Differences ±0.5, four each, all tied at midrank 4.5: W+ is 4.5
			// times the number of positive signs, K ~ Binomial(8, 1/2), and
			// the observed K is 4: P(K <= 4) = 163/256.
			p: 163.0 / 256, change: 0,
		},
		{
			name:    "drifting, 1.3x",
			gates:   []Gate{{Baseline: drift, Candidate: scaled(drift, 1.3), Relative: true, Tolerance: 0.1}},
			level:   0.05,
			outcome: Regression, reason: "significant (p=0.0039) and +30.0% is beyond +10%",
			p: 1.0 / 256, change: 0.3,
		},
		{
			name:    "4 rounds",
			gates:   []Gate{{Baseline: base8[:4], Candidate: scaled(base8[:4], 1.3), Relative: true, Tolerance: 0.1}},
			level:   0.05,
			outcome: Inconclusive, reason: "too few rounds: need >= 5",
			warnings: []string{"need >= 5 rounds to detect a regression at level 0.05", "need >= 5 rounds for a 90% interval"},
			p:        1.0 / 16, change: 0.3,
		},
		{
			// 3/64 = 0.047 >= 0.031: undetectable, however tight.
			name: "6 rounds, 3 gates, first look",
			gates: []Gate{
				{Baseline: base8[:6], Candidate: base8[:6], Relative: true, Tolerance: 0.1},
				{Baseline: base8[:6], Candidate: base8[:6], Relative: true, Tolerance: 0.1},
				{Baseline: base8[:6], Candidate: base8[:6], Relative: true, Tolerance: 0.1},
			},
			level:   pocock,
			outcome: Inconclusive, reason: "too few rounds: need >= 7",
			warnings: []string{"need >= 7 rounds to detect a regression at level 0.0103 (alpha 0.031 over 3 gates)"},
			p:        1, change: 0,
		},
		{
			name:    "unequal rounds",
			gates:   []Gate{{Baseline: base8, Candidate: base8[:7], Relative: true, Tolerance: 0.1}},
			level:   0.05,
			outcome: Inconclusive, reason: "unequal rounds",
			warnings: []string{"the baseline has 8 values and the candidate 7: an A/B pairs them round by round, so they must be as many; the gate cannot be decided"},
			p:        math.NaN(), change: math.NaN(),
		},
		{
			name:    "zero with a relative tolerance",
			gates:   []Gate{{Baseline: []float64{0, 1, 2, 3, 4, 5}, Candidate: seq(1, 6), Relative: true, Tolerance: 0.1}},
			level:   0.05,
			outcome: Inconclusive, reason: "a relative tolerance needs positive values",
			warnings: []string{"a value is 0 or negative: a relative tolerance compares the rounds' ratios candidate/baseline and needs values > 0; use an absolute tolerance"},
			p:        math.NaN(), change: math.NaN(),
		},
		{
			name:    "negative with a relative tolerance",
			gates:   []Gate{{Baseline: seq(1, 6), Candidate: seq(-1, 6), HigherIsBetter: true, Relative: true, Tolerance: 0.1}},
			level:   0.05,
			outcome: Inconclusive, reason: "a relative tolerance needs positive values",
			warnings: []string{"a value is 0 or negative: a relative tolerance compares the rounds' ratios candidate/baseline and needs values > 0; use an absolute tolerance"},
			p:        math.NaN(), change: math.NaN(),
		},
		{
			// The same values with an absolute tolerance are fine: every
			// difference is -2, a drop of a higher-is-better metric.
			name:    "negative with an absolute tolerance",
			gates:   []Gate{{Baseline: seq(1, 6), Candidate: seq(-1, 6), HigherIsBetter: true, Tolerance: 1}},
			level:   0.05,
			outcome: Regression, reason: "significant (p=0.016) and -2 is beyond -1",
			p: 1.0 / 64, change: -2 / 3.5,
		},
		{
			name:    "NaN",
			gates:   []Gate{{Baseline: []float64{1, math.NaN(), 3}, Candidate: seq(1, 3), Tolerance: 1}},
			level:   0.05,
			outcome: Inconclusive, reason: "a baseline value is not finite",
			warnings: []string{"the baseline holds a NaN or infinite value: the gate cannot be decided"},
			p:        math.NaN(), change: math.NaN(),
		},
		{
			name:    "overflowing difference",
			gates:   []Gate{{Baseline: constant(6, -1e308), Candidate: constant(6, 1e308), Tolerance: 1}},
			level:   0.05,
			outcome: Inconclusive, reason: "a difference is not finite",
			warnings: []string{"a difference candidate − baseline overflows float64: the gate cannot be decided"},
			p:        math.NaN(), change: math.NaN(),
		},
		{
			name:    "level 0.5",
			gates:   []Gate{{Baseline: base8, Candidate: base8, Tolerance: 1}},
			level:   0.5,
			outcome: Inconclusive, reason: "invalid level",
			warnings: []string{"level 0.5 is not in (0, 0.5): no gate can be decided"},
			p:        math.NaN(), change: math.NaN(),
		},
		{
			name:    "level NaN",
			gates:   []Gate{{Baseline: base8, Candidate: base8, Tolerance: 1}},
			level:   math.NaN(),
			outcome: Inconclusive, reason: "invalid level",
			warnings: []string{"level NaN is not in (0, 0.5): no gate can be decided"},
			p:        math.NaN(), change: math.NaN(),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ds []Decision
			require.NotPanics(t, func() { ds, _ = DecideRounds(c.gates, nil, c.level) })
			require.Len(t, ds, len(c.gates))
			d := ds[0]
			assert.Equal(t, c.outcome, d.Outcome, d.Reason)
			assert.Equal(t, c.reason, d.Reason)
			assert.Equal(t, c.warnings, d.Warnings)
			if math.IsNaN(c.p) {
				assert.True(t, math.IsNaN(d.P), "P = %g, want NaN", d.P)
				assert.True(t, math.IsNaN(d.PAdjusted))
				assert.False(t, d.Shift.OK)
			} else {
				assert.InDelta(t, c.p, d.P, 1e-12, "P")
			}
			if !math.IsNaN(c.change) {
				assert.InDelta(t, c.change, d.Change.Estimate, 1e-9, "Change.Estimate")
			}
			if d.Shift.OK {
				assert.LessOrEqual(t, d.Change.Lo, d.Change.Estimate)
				assert.GreaterOrEqual(t, d.Change.Hi, d.Change.Estimate)
			}
		})
	}
}

// TestDecideRoundsPairing: the point of pairs. A drift shared by both
// sides spreads each side's values far more than the candidate differs
// from the baseline within a round: the two-sample decision sees only the
// spread and cannot rule out a 10% regression, the paired one passes.
func TestDecideRoundsPairing(t *testing.T) {
	drift := []float64{100, 110, 120, 130, 140, 150, 160, 170}
	near := []float64{100.5, 109.5, 120.5, 129.5, 140.5, 149.5, 160.5, 169.5}
	g := Gate{Baseline: drift, Candidate: near, Relative: true, Tolerance: 0.1}
	two := Decide([]Gate{g}, 0.05)[0]
	paired, _ := DecideRounds([]Gate{g}, nil, 0.05)
	assert.Equal(t, Inconclusive, two.Outcome, two.Reason)
	assert.Equal(t, Pass, paired[0].Outcome, paired[0].Reason)
	assert.Less(t, paired[0].Change.Hi-paired[0].Change.Lo, (two.Change.Hi-two.Change.Lo)/10,
		"the paired interval is more than ten times narrower")
	// Relative: the change is the ratio's, bounded by exp of the log-ratios'
	// Walsh interval.
	logs := make([]float64, len(drift))
	for i := range logs {
		logs[i] = math.Log(near[i] / drift[i])
	}
	ls := bruteSignedRankShift(logs, 0.9)
	assert.InDelta(t, math.Expm1(ls.Estimate), paired[0].Change.Estimate, 1e-12)
	assert.InDelta(t, math.Expm1(ls.Lo), paired[0].Change.Lo, 1e-12)
	assert.InDelta(t, math.Expm1(ls.Hi), paired[0].Change.Hi, 1e-12)
}

// TestDecideRoundsFamily: latency and quality gates are one Holm family,
// as in DecideAll.
func TestDecideRoundsFamily(t *testing.T) {
	base8 := []float64{100, 102, 98, 101, 99, 103, 97, 100}
	gates := []Gate{
		{Baseline: base8, Candidate: scaled(base8, 1.3), Relative: true, Tolerance: 0.1},
		{Baseline: base8, Candidate: []float64{101, 101, 99, 100, 100, 102, 98, 100.5}, Relative: true, Tolerance: 0.1},
	}
	pass := make([]float64, 40)
	for i := range pass {
		pass[i] = 1
	}
	worse := slices.Clone(pass)
	for i := range 12 {
		worse[i] = 0
	}
	paired := []PairedGate{{Kind: PassRate, Baseline: pass, Candidate: worse, Tolerance: 0.02}}
	ds, pds := DecideRounds(gates, paired, 0.05)
	require.Len(t, ds, 2)
	require.Len(t, pds, 1)
	raw := []float64{ds[0].P, ds[1].P, pds[0].P}
	assert.InDelta(t, McNemar(12, 0), pds[0].P, 1e-15, "the quality gate's test is DecideAll's")
	adjusted := Holm(raw)
	assert.Equal(t, adjusted[0], ds[0].PAdjusted)
	assert.Equal(t, adjusted[1], ds[1].PAdjusted)
	assert.Equal(t, adjusted[2], pds[0].PAdjusted)
	assert.Equal(t, Regression, ds[0].Outcome, ds[0].Reason)
	assert.Equal(t, Regression, pds[0].Outcome, pds[0].Reason)
	_, alone := DecideAll(nil, paired, 0.05)
	assert.Equal(t, alone[0].Change, pds[0].Change)

	// The family's size counts in detectability: 7 rounds detect alone
	// (1/128·1 < 0.05) but not with 7 gates (7/128 >= 0.05).
	g7 := Gate{Baseline: base8[:7], Candidate: base8[:7], Relative: true, Tolerance: 0.1}
	one, _ := DecideRounds([]Gate{g7}, nil, 0.05)
	assert.Equal(t, Pass, one[0].Outcome, one[0].Reason)
	seven, _ := DecideRounds(slices.Repeat([]Gate{g7}, 7), nil, 0.05)
	assert.Equal(t, Inconclusive, seven[0].Outcome)
	assert.Equal(t, "too few rounds: need >= 8", seven[0].Reason)

	ds, pds = DecideRounds(nil, nil, 0.05)
	assert.NotNil(t, ds)
	assert.NotNil(t, pds)
	assert.Empty(t, ds)
	assert.Empty(t, pds)
}

// TestDecideRoundsNeverPanics runs DecideRounds over awkward inputs, equal
// and unequal lengths: every outcome is one of the three, and no gate that
// cannot be paired passes.
func TestDecideRoundsNeverPanics(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	samples := [][]float64{
		nil, {0}, {nan}, {inf, -inf}, {1, 1, 1}, {-5, -4, -3}, {1e308, -1e308, 1e308},
		{0, 0, 0, 0, 0, 0}, seq(1, 6), seq(-2, 6), constant(60, 3), {5e-324, 0, -5e-324},
	}
	levels := []float64{-1, 1e-300, 0.05, 0.5, nan}
	tolerances := []float64{0, 0.1, inf, nan}
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
					require.NotPanics(t, func() { ds, _ = DecideRounds(gates, nil, level) }, "b %v c %v level %g tol %g", b, c, level, tol)
					require.Len(t, ds, len(gates))
					for i, d := range ds {
						require.Contains(t, []Outcome{Regression, Pass, Inconclusive}, d.Outcome)
						require.NotEmpty(t, d.Reason)
						bad := len(b) != len(c) || len(b) == 0 || hasNonFinite(b) || hasNonFinite(c)
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
