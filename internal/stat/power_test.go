package stat

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCV(t *testing.T) {
	cases := []struct {
		name   string
		values []float64
		want   float64
	}{
		{"by hand", []float64{1, 2, 3}, 0.5}, // sd 1, mean 2
		{"constant", []float64{4, 4, 4}, 0},
		{"one value", []float64{5}, 0},
		{"none", nil, 0},
		{"n-1 denominator", []float64{9, 11}, math.Sqrt2 / 10},
		{"negative mean", []float64{-1, -2, -3}, -0.5},
	}
	for _, c := range cases {
		assert.InDelta(t, c.want, CV(c.values), 1e-12, c.name)
	}
	assert.True(t, math.IsNaN(CV([]float64{-1, 1})), "zero mean")
}

func TestMinDetectable(t *testing.T) {
	// By hand: (z_0.95 + z_0.8) = 1.644854 + 0.841621 = 2.486475;
	// × 0.1 × sqrt(0.2) / sqrt(3/π) = 2.486475 × 0.1 × 0.447214 / 0.977205.
	assert.InDelta(t, 0.113793, MinDetectable(0.1, 10, 10, 0.05, 0.8), 1e-5)
	// Linear in the CV.
	assert.InDelta(t, 2*MinDetectable(0.05, 8, 12, 0.01, 0.9), MinDetectable(0.1, 8, 12, 0.01, 0.9), 1e-12)
	// More samples, smaller detectable shift.
	prev := math.Inf(1)
	for n := 4; n <= 30; n++ {
		d := MinDetectable(0.1, n, n, 0.05, 0.9)
		assert.Less(t, d, prev, "n=%d", n)
		prev = d
	}
	// Unreachable significance: +Inf.
	cases := []struct {
		n1, n2 int
		level  float64
	}{
		{2, 2, 0.05},      // MinP 1/6
		{3, 3, 0.05},      // MinP 1/20, not below 0.05
		{4, 4, 0.00625},   // MinP 1/70
		{0, 10, 0.05},     // an empty side
		{10, 10, 1e-7},    // MinP 1/184756
		{1, 1000, 0.0005}, // MinP 1/1001
	}
	for _, c := range cases {
		assert.True(t, math.IsInf(MinDetectable(0.1, c.n1, c.n2, c.level, 0.8), 1), "%+v", c)
	}
}
