package stat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/aclements/go-moremath/mathx"
	"github.com/stretchr/testify/assert"
)

// hdDirect is the Harrell–Davis estimate by its definition, every order
// statistic weighed.
func hdDirect(xs []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := float64(len(s))
	a, b := q*(n+1), (1-q)*(n+1)
	sum, prev := 0.0, 0.0
	for i, x := range s {
		c := mathx.BetaInc(float64(i+1)/n, a, b)
		sum += (c - prev) * x
		prev = c
	}
	return sum
}

func bars(xs []float64) []Bar {
	s := slices.Sorted(slices.Values(xs))
	var out []Bar
	for _, x := range s {
		if len(out) > 0 && out[len(out)-1].Value == x {
			out[len(out)-1].Count++
			continue
		}
		out = append(out, Bar{Value: x, Count: 1})
	}
	return out
}

func TestHarrellDavis(t *testing.T) {
	// The median of 1..n is its middle, by symmetry.
	for _, n := range []int{1, 2, 5, 10, 201} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		assert.InDelta(t, float64(n+1)/2, HarrellDavis(bars(xs), 0.5), 1e-9, "n=%d", n)
	}
	// Any sample, ties among it too: the definition, weighed in windows.
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		n := 1 + r.IntN(400)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(100 * math.Exp(r.NormFloat64()))
		}
		for _, q := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
			assert.InDelta(t, hdDirect(xs, q), HarrellDavis(bars(xs), q), 1e-6*hdDirect(xs, q), "n=%d q=%g", n, q)
		}
	}
	// It lies between the smallest and the largest value, and a p99 of
	// 200 weighs the top few: closer to their mean than the second
	// largest alone.
	xs := make([]float64, 200)
	for i := range xs {
		xs[i] = 30
	}
	xs[199], xs[198], xs[197] = 350, 300, 180
	hd := HarrellDavis(bars(xs), 0.99)
	assert.Greater(t, hd, 180.0)
	assert.Less(t, hd, 350.0)

	assert.True(t, math.IsNaN(HarrellDavis(nil, 0.5)), "no values")
	assert.True(t, math.IsNaN(HarrellDavis(bars(xs), 1)), "q outside (0, 1)")
	assert.True(t, math.IsNaN(HarrellDavis(bars(xs), 0)), "q outside (0, 1)")
}

// Beyond hdMaxValues values (an ITL distribution) it is the order
// statistic; up to it the incomplete beta function converges at every
// quantile a gate can name, so no estimate falls back.
func TestHarrellDavisLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1000, hdMaxValues, hdMaxValues + 1, 100000} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(1000 * math.Exp(0.3*r.NormFloat64()))
		}
		b := bars(xs)
		for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 0.9999} {
			hd := HarrellDavis(b, q)
			os := orderStatistic(b, q, int64(n))
			if n > hdMaxValues {
				assert.Equal(t, os, hd, "n=%d q=%g", n, q)
				continue
			}
			nf := float64(n)
			a, bb := q*(nf+1), (1-q)*(nf+1)
			for _, x := range []float64{q - 0.01, q - 0.001, q, q + 0.0001, (q + 1) / 2} {
				if x > 0 && x < 1 {
					_, ok := betaInc(x, a, bb)
					assert.True(t, ok, "BetaInc(%g, %g, %g) converges", x, a, bb)
				}
			}
			assert.False(t, math.IsNaN(hd), "n=%d q=%g", n, q)
		}
	}
}
