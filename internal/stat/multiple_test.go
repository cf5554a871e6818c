package stat

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHolm(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		p    []float64
		want []float64
	}{
		// Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06,
		// 0.04, and the last raised to 0.06 by monotonicity.
		{"textbook", []float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}},
		{"one", []float64{0.03}, []float64{0.03}},
		{"none", []float64{}, []float64{}},
		{"capped at 1", []float64{0.6, 0.2, 0.9}, []float64{1, 0.6, 1}},
		{"ties", []float64{0.01, 0.01, 0.01}, []float64{0.03, 0.03, 0.03}},
		// NaN counts in m (3), is ordered last and stays NaN.
		{"NaN", []float64{0.02, nan, 0.01}, []float64{0.04, nan, 0.03}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Holm(c.p)
			assert.Len(t, got, len(c.want))
			for i := range c.want {
				if math.IsNaN(c.want[i]) {
					assert.True(t, math.IsNaN(got[i]), "index %d", i)
					continue
				}
				assert.InDelta(t, c.want[i], got[i], 1e-12, "index %d", i)
			}
		})
	}
}

// TestHolmProperties: adjusted p-values are >= the raw ones, <= 1, and
// ordered as the raw ones are.
func TestHolmProperties(t *testing.T) {
	p := []float64{0.2, 0.001, 0.04, 0.04, 0.5, 0.0101, 0.9, 0.011}
	adj := Holm(p)
	for i := range p {
		assert.GreaterOrEqual(t, adj[i], p[i])
		assert.LessOrEqual(t, adj[i], 1.0)
		for j := range p {
			if p[i] < p[j] {
				assert.LessOrEqual(t, adj[i], adj[j], "p[%d] < p[%d]", i, j)
			}
		}
	}
}

func TestSpend(t *testing.T) {
	const alpha = 0.05
	cases := []struct {
		t, want float64
	}{
		{0, 0},
		{1, alpha},
		{-0.5, 0},
		{2, alpha},
		{0.5, alpha * math.Log(1+(math.E-1)/2)},
	}
	for _, c := range cases {
		assert.InDelta(t, c.want, Spend(alpha, c.t), 1e-15, "t=%g", c.t)
	}
	assert.Equal(t, alpha, Spend(alpha, 1))
	prev := 0.0
	for i := 1; i <= 100; i++ {
		s := Spend(alpha, float64(i)/100)
		assert.Greater(t, s, prev, "monotone at t=%g", float64(i)/100)
		prev = s
	}
	// Pocock-type spending spends early: more than a straight line.
	assert.Greater(t, Spend(alpha, 1.0/3), alpha/3)
}

func TestLookLevel(t *testing.T) {
	const alpha = 0.05
	schedules := [][]float64{
		{1},
		{0.5, 1},
		{5.0 / 15, 6.0 / 15, 7.0 / 15, 8.0 / 15, 9.0 / 15, 10.0 / 15, 11.0 / 15, 12.0 / 15, 13.0 / 15, 14.0 / 15, 1},
		{0.1, 0.15, 0.7, 1},
	}
	for _, ts := range schedules {
		sum, prev := 0.0, 0.0
		for _, tt := range ts {
			l := LookLevel(alpha, prev, tt)
			assert.Positive(t, l)
			sum += l
			prev = tt
		}
		assert.InDelta(t, alpha, sum, 1e-15, "schedule %v", ts)
	}
	// Stopping early spends less than alpha.
	assert.Less(t, LookLevel(alpha, 0, 0.4)+LookLevel(alpha, 0.4, 0.8), alpha)
	assert.Equal(t, 0.0, LookLevel(alpha, 0.6, 0.4))
	assert.Equal(t, 0.0, LookLevel(alpha, 0.5, 0.5))
	assert.Equal(t, Spend(alpha, 0.3), LookLevel(alpha, 0, 0.3))
}
