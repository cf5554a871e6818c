package baseline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// series makes a noisy series: levels[i] repeated counts[i] times, each value
// off by up to ±noise (uniform), from a generator seeded by seed.
func series(seed uint64, noise float64, steps ...struct {
	level float64
	n     int
}) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	var xs []float64
	for _, s := range steps {
		for range s.n {
			xs = append(xs, s.level+noise*(2*rng.Float64()-1))
		}
	}
	return xs
}

type step = struct {
	level float64
	n     int
}

func TestChangePoints(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want []int
	}{
		{"one step", series(1, 1, step{100, 10}, step{130, 10}), []int{10}},
		{"step down", series(2, 1, step{130, 10}, step{100, 10}), []int{10}},
		{"two steps", series(3, 1, step{100, 10}, step{130, 10}, step{100, 10}), []int{10, 20}},
		{"step near the end", series(5, 1, step{100, 15}, step{130, 3}), []int{15}},
		{"constant", []float64{5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, nil},
		{"empty", nil, nil},
		{"shorter than two segments", []float64{1, 1, 1, 100, 100}, nil},
		{"outlier is no regime", series(6, 1, step{100, 10}, step{200, 1}, step{100, 10}), nil},
		{"NaN", []float64{1, 1, 1, 1, 2, 2, 2, 2, 0 / zero}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ChangePoints(tt.xs, 42))
		})
	}
}

var zero float64

func TestChangePointsDeterministic(t *testing.T) {
	xs := series(7, 5, step{100, 20}, step{104, 20})
	first := ChangePoints(xs, 9)
	for range 5 {
		assert.Equal(t, first, ChangePoints(xs, 9))
	}
}

// TestChangePointsFindsClearSteps: whatever the seed and the noise, steps
// of 20 or more over noise of ±1 are found where they are. (A noise draw may
// hold a real small shift of its own, which the method rightly reports too,
// so this checks only that the true ones are found.)
func TestChangePointsFindsClearSteps(t *testing.T) {
	for seed := range uint64(20) {
		one := series(100+seed, 1, step{100, 10}, step{130, 10})
		assert.Contains(t, ChangePoints(one, seed), 10, "one step, seed %d", seed)
		two := series(200+seed, 1, step{100, 8}, step{120, 8}, step{150, 8})
		assert.Subset(t, ChangePoints(two, seed), []int{8, 16}, "two steps, seed %d", seed)
	}
}

// TestChangePointsFalsePositives: on series with no change, the permutation
// test at p <= 0.05 reports a change in about one series in twenty; 100
// series may show at most 10.
func TestChangePointsFalsePositives(t *testing.T) {
	const runs = 100
	spurious := 0
	for i := range uint64(runs) {
		rng := rand.New(rand.NewPCG(1000+i, 2))
		xs := make([]float64, 30)
		for j := range xs {
			xs[j] = 100 + 3*rng.NormFloat64()
		}
		if len(ChangePoints(xs, i)) > 0 {
			spurious++
		}
	}
	t.Logf("%d of %d flat series show a change point", spurious, runs)
	require.LessOrEqual(t, spurious, runs/10)
}

func BenchmarkChangePoints(b *testing.B) {
	xs := series(1, 5, step{100, 100}, step{110, 100})
	for b.Loop() {
		ChangePoints(xs, 1)
	}
}

// bestSplitByDefinition is Q's split by the formula itself, O(n²) a split:
// what the Fenwick sums must agree with.
func bestSplitByDefinition(x []float64) (int, float64) {
	n := len(x)
	if n < 2*minSegment {
		return -1, 0
	}
	within := func(s []float64) float64 {
		t := 0.0
		for i := range s {
			for k := i + 1; k < len(s); k++ {
				t += math.Abs(s[i] - s[k])
			}
		}
		return t
	}
	best, bestQ := -1, math.Inf(-1)
	for tau := minSegment; tau <= n-minSegment; tau++ {
		l, r := x[:tau], x[tau:]
		between := 0.0
		for _, a := range l {
			for _, b := range r {
				between += math.Abs(a - b)
			}
		}
		m, k := float64(len(l)), float64(len(r))
		e := 2*between/(m*k) - 2*within(l)/(m*(m-1)) - 2*within(r)/(k*(k-1))
		if q := m * k / (m + k) * e; q > bestQ {
			best, bestQ = tau, q
		}
	}
	return best, bestQ
}

// The O(n log n) split finds the split and Q the definition gives, ties
// among equal values included.
func TestBestSplitMatchesTheDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		n := 6 + rng.IntN(60)
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Round(rng.NormFloat64()*3) + float64(i/(n/2+1))*rng.Float64()*5 // ties, and a shift
		}
		d := divisive{before: make([]float64, n), after: make([]float64, n), rank: make([]int, n), order: make([]int, n),
			cnt: make([]float64, n+1), sum: make([]float64, n+1)}
		gotTau, gotQ := d.bestSplit(x, d.ranks(x))
		wantTau, wantQ := bestSplitByDefinition(x)
		require.InDelta(t, wantQ, gotQ, 1e-9*math.Max(1, math.Abs(wantQ)), "trial %d: %v", trial, x)
		assert.Equal(t, wantTau, gotTau, "trial %d: %v", trial, x)
	}
}

// Repeated values that binary floating point cannot hold exactly find no
// change where there is none (a review found the first Fenwick version
// marking dozens in a flat series of 123.456).
func TestChangePointsOfRepeatedDecimals(t *testing.T) {
	flat := func(v float64, n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = v
		}
		return xs
	}
	assert.Empty(t, ChangePoints(flat(0.1, 27), 42))
	assert.Empty(t, ChangePoints(flat(123.456, 167), 42))
	assert.Equal(t, []int{30}, ChangePoints(append(flat(4.8, 30), flat(7.2, 30)...), 42))
	assert.Equal(t, []int{30, 60}, ChangePoints(append(append(flat(4.8, 30), flat(7.2, 30)...), flat(4.8, 30)...), 42))
}

// A history of 5,000 runs with two planted level shifts: both found where
// planted, and nothing else.
func TestChangePointsAtFiveThousand(t *testing.T) {
	xs := series(11, 4, step{100, 2000}, step{115, 1500}, step{100, 1500})
	assert.Equal(t, []int{2000, 3500}, ChangePoints(xs, 42))
}

// BenchmarkChangePoints5000 is one metric of a 5,000-run history with two
// shifts: what the history site does per metric and scenario.
func BenchmarkChangePoints5000(b *testing.B) {
	xs := series(11, 4, step{100, 2000}, step{115, 1500}, step{100, 1500})
	for b.Loop() {
		ChangePoints(xs, 42)
	}
}
