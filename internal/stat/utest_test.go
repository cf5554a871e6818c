package stat

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aclements/go-moremath/stats"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOneSidedU(t *testing.T) {
	low := []float64{1, 2, 3, 4, 5}
	high := []float64{11, 12, 13, 14, 15}
	cases := []struct {
		name                string
		baseline, candidate []float64
		higherIsBetter      bool
		want                float64
	}{
		// Complete separation in the bad direction: the smallest p-value
		// there is, 1/C(10,5).
		{"latency grew", low, high, false, 1.0 / 252},
		{"latency fell", high, low, false, 1},
		{"throughput fell", high, low, true, 1.0 / 252},
		{"throughput grew", low, high, true, 1},
		// One pair out of order: P(U <= 1) = 2/252.
		{"latency grew, one pair out of order", []float64{1, 2, 3, 4, 11.5}, high, false, 2.0 / 252},
		// Ties, by hand: merged 1,1,1,2 with the baseline {1,1} at ranks
		// 2,2: U = 1. Of the C(4,2) = 6 ways to place the baseline, the 3
		// inside the three 1s give U = 1 and the 3 with the 2 give U = 3,
		// so P(U <= 1) = 0.5 and P(U >= 1) = 1.
		{"ties, lower is better", []float64{1, 1}, []float64{1, 2}, false, 0.5},
		{"ties, higher is better", []float64{1, 1}, []float64{1, 2}, true, 1},
		{"all equal, lower is better", []float64{3, 3, 3}, []float64{3, 3}, false, 1},
		{"all equal, higher is better", []float64{3, 3, 3}, []float64{3, 3}, true, 1},
		// Past the exact limits: the normal approximation's zero variance.
		{"all equal, large", constant(60, 7), constant(60, 7), false, 1},
		{"one value a side", []float64{1}, []float64{2}, false, 0.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := OneSidedU(c.baseline, c.candidate, c.higherIsBetter)
			require.NoError(t, err)
			assert.InDelta(t, c.want, p, 1e-12)
		})
	}
}

func TestOneSidedUErrors(t *testing.T) {
	cases := []struct {
		name                string
		baseline, candidate []float64
	}{
		{"empty baseline", nil, []float64{1}},
		{"empty candidate", []float64{1}, []float64{}},
		{"both empty", nil, nil},
		{"NaN", []float64{1, math.NaN()}, []float64{1, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, hib := range []bool{false, true} {
				p, err := OneSidedU(c.baseline, c.candidate, hib)
				assert.Error(t, err)
				assert.True(t, math.IsNaN(p))
			}
		})
	}
	_, err := OneSidedU(nil, []float64{1}, false)
	assert.ErrorIs(t, err, stats.ErrSampleSize)
}

// TestOneSidedUMatchesMoremath: the p-value is moremath's LocationLess test
// with the worse-is-smaller side first, to the last bit, with and without
// ties, on both sides of the table's size limit; without ties it is also
// moremath's LocationGreater with the arguments in order.
func TestOneSidedUMatchesMoremath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := [][2]int{{1, 1}, {2, 3}, {5, 5}, {15, 5}, {5, 15}, {20, 20}, {21, 20}, {30, 8}, {60, 55}}
	for _, sz := range sizes {
		for trial := range 40 {
			x, y := make([]float64, sz[0]), make([]float64, sz[1])
			shift := r.NormFloat64()
			for i := range x {
				x[i] = r.NormFloat64()
			}
			for i := range y {
				y[i] = r.NormFloat64() + shift
			}
			ties := trial%4 == 0
			if ties { // within and between the samples
				for i := range x {
					x[i] = math.Round(x[i])
				}
				for i := range y {
					y[i] = math.Round(y[i])
				}
			}
			for _, hib := range []bool{false, true} {
				x1, x2 := x, y
				if hib {
					x1, x2 = y, x
				}
				got, err := OneSidedU(x, y, hib)
				require.NoError(t, err)
				want, err := stats.MannWhitneyUTest(x1, x2, stats.LocationLess)
				if err != nil {
					require.ErrorIs(t, err, stats.ErrSamplesEqual)
					assert.Equal(t, 1.0, got)
					continue
				}
				assert.Equal(t, want.P, got, "sizes %v trial %d higherIsBetter %v", sz, trial, hib)
				if !ties {
					alt := stats.LocationLess
					if hib {
						alt = stats.LocationGreater
					}
					inOrder, err := stats.MannWhitneyUTest(x, y, alt)
					require.NoError(t, err)
					assert.InDelta(t, inOrder.P, got, 1e-12, "sizes %v trial %d higherIsBetter %v", sz, trial, hib)
				}
			}
		}
	}
}

// TestOneSidedUExactWithTies: with ties, the p-value is the exact
// permutation p-value P(S >= observed S), S counting the pairs in which the
// candidate is worse (ties count a half), by enumerating every way to split
// the pooled values into a baseline and a candidate.
func TestOneSidedUExactWithTies(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 150 {
		n1, n2 := 1+r.IntN(6), 1+r.IntN(6)
		levels := 1 + r.IntN(4) // few distinct values: many ties
		pooled := make([]float64, n1+n2)
		for i := range pooled {
			pooled[i] = float64(r.IntN(levels))
		}
		base, cand := pooled[:n1], pooled[n1:]
		for _, hib := range []bool{false, true} {
			worse := func(b, c []float64) float64 {
				s := 0.0
				for _, x := range b {
					for _, y := range c {
						switch {
						case y == x:
							s += 0.5
						case (y > x) != hib:
							s++
						}
					}
				}
				return s
			}
			observed := worse(base, cand)
			atLeast, all := 0, 0
			for mask := 0; mask < 1<<(n1+n2); mask++ {
				var b, c []float64
				for i, v := range pooled {
					if mask>>i&1 == 1 {
						b = append(b, v)
					} else {
						c = append(c, v)
					}
				}
				if len(b) != n1 {
					continue
				}
				all++
				if worse(b, c) >= observed {
					atLeast++
				}
			}
			got, err := OneSidedU(base, cand, hib)
			require.NoError(t, err)
			assert.InDelta(t, float64(atLeast)/float64(all), got, 1e-12,
				"baseline %v candidate %v higherIsBetter %v", base, cand, hib)
		}
	}
}

func TestMinP(t *testing.T) {
	cases := []struct {
		n1, n2 int
		want   float64
	}{
		{4, 4, 1.0 / 70},
		{5, 5, 1.0 / 252},
		{3, 3, 1.0 / 20},
		{1, 1, 0.5},
		{15, 5, 1.0 / 15504},
		{5, 15, 1.0 / 15504},
		{0, 5, 1},
		{5, 0, 1},
		{-1, 3, 1},
	}
	for _, c := range cases {
		assert.InEpsilon(t, c.want, MinP(c.n1, c.n2), 1e-12, "MinP(%d, %d)", c.n1, c.n2)
	}
	// It is what the test gives for samples that do not overlap.
	for _, n := range []int{2, 4, 7} {
		p, err := OneSidedU(seq(0, n), seq(100, n), false)
		require.NoError(t, err)
		assert.InEpsilon(t, MinP(n, n), p, 1e-9, "n=%d", n)
	}
}

func TestSamplesToReach(t *testing.T) {
	cases := []struct {
		level float64
		want  int
	}{
		{0.05, 4},       // 1/70 < 0.05 <= 1/20
		{0.00625, 5},    // 0.05 over 8 gates: 1/252 < 0.00625 <= 1/70
		{1.0 / 70, 5},   // strict: 1/70 itself is not enough
		{0.5, 2},        // 1/6 < 0.5 <= 1/2
		{0.9, 1},        // 1/2 < 0.9
		{0.001, 7},      // 1/924 is not below it, 1/3432 is
		{0, searchCap},  // unreachable
		{-1, searchCap}, // unreachable
	}
	for _, c := range cases {
		assert.Equal(t, c.want, SamplesToReach(c.level), "level %g", c.level)
	}
	assert.Equal(t, searchCap, SamplesToReach(math.NaN()))
	// The definition, for levels spread over many decades.
	for e := -1.0; e > -30; e -= 0.37 {
		level := math.Pow(10, e)
		n := SamplesToReach(level)
		assert.Less(t, MinP(n, n), level, "level %g", level)
		assert.GreaterOrEqual(t, MinP(n-1, n-1), level, "level %g", level)
	}
}

func seq(from float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = from + float64(i)
	}
	return s
}

func constant(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}
