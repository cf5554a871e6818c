package stat

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// DetectableChange is what Decide does: an unchanged candidate passes a
// gate whose tolerance is the detectable change in about 1 − miss of fresh
// A/A comparisons (Decide itself, on draws other than DetectableChange's),
// and one whose tolerance is well below it far less often.
func TestDetectableChangeIsDecides(t *testing.T) {
	const m, miss = 7, 0.05 / 7
	for _, tc := range []struct {
		noise Noise
		n     int
		level float64
	}{
		{Noise{Within: 0.05, Relative: true}, 6, 0.025},
		{Noise{Within: 0.2, Relative: true}, 6, 0.025},
		{Noise{Within: 0.05, Between: 0.03, Relative: true}, 10, 0.05},
		{Noise{Within: 3, Relative: false}, 8, 0.05},
		// A throughput that falls: its bad side is the lower bound.
		{Noise{Within: 0.05, Relative: true, Falls: true}, 6, 0.025},
		{Noise{Within: 0.2, Relative: true, Falls: true}, 6, 0.025},
	} {
		d := DetectableChange(tc.noise, []Look{{tc.n, tc.n, tc.level}}, m, miss)
		pass := func(tol float64) float64 {
			r := rand.New(rand.NewPCG(11, 12))
			passed := 0
			const draws = 3000
			for range draws {
				gates := make([]Gate, m)
				bRun, cRun := tc.noise.Between*r.NormFloat64(), tc.noise.Between*r.NormFloat64()
				base, cand := make([]float64, tc.n), make([]float64, tc.n)
				for i := range base {
					x, y := bRun+tc.noise.Within*r.NormFloat64(), cRun+tc.noise.Within*r.NormFloat64()
					if tc.noise.Relative {
						base[i], cand[i] = 100*math.Exp(x), 100*math.Exp(y)
					} else {
						base[i], cand[i] = 100+x, 100+y
					}
				}
				gates[0] = Gate{Baseline: base, Candidate: cand, Relative: tc.noise.Relative, Tolerance: tol, HigherIsBetter: tc.noise.Falls}
				if Decide(gates, tc.level)[0].Outcome == Pass {
					passed++
				}
			}
			return float64(passed) / draws
		}
		assert.InDelta(t, 1-miss, pass(d), 0.01, "%+v: at the detectable change %.4g", tc.noise, d)
		assert.Less(t, pass(d/2), 0.95, "%+v: at half of it", tc.noise)
	}
}

func TestDetectableChangeScales(t *testing.T) {
	looks := []Look{{6, 6, 0.025}}
	small := DetectableChange(Noise{Within: 0.02, Relative: true}, looks, 7, 0.005)
	large := DetectableChange(Noise{Within: 0.04, Relative: true}, looks, 7, 0.005)
	assert.InDelta(t, 2, large/small, 0.1, "twice the noise, about twice the change: %g, %g", small, large)
	between := DetectableChange(Noise{Within: 0.02, Between: 0.02, Relative: true}, looks, 7, 0.005)
	assert.Greater(t, between, 1.5*small, "a run-to-run spread the interval does not see")
	more := DetectableChange(Noise{Within: 0.02, Relative: true}, []Look{{12, 6, 0.0155}, {12, 12, 0.0095}}, 7, 0.005)
	assert.Less(t, more, small, "a second look at 12 repetitions confirms less")

	assert.Equal(t, math.Inf(1), DetectableChange(Noise{Within: 0.02, Relative: true}, []Look{{3, 3, 0.05}}, 7, 0.005), "3 a side cannot reach 0.05/7")
	assert.Equal(t, 0.0, DetectableChange(Noise{Relative: true}, looks, 7, 0.005), "no noise")
	assert.True(t, math.IsNaN(DetectableChange(Noise{Within: -1}, looks, 7, 0.005)))
}

// For rounds, what DecideRounds does: pairs whose log-ratios spread by
// Within pass at the detectable change in about 1 − miss of fresh A/As.
func TestDetectableChangePaired(t *testing.T) {
	const m, miss, n, level = 4, 0.05 / 4, 12, 0.025
	noise := Noise{Within: 0.08, Relative: true, Paired: true}
	d := DetectableChange(noise, []Look{{n, n, level}}, m, miss)
	r := rand.New(rand.NewPCG(21, 22))
	passed := 0
	const draws = 3000
	for range draws {
		base, cand := make([]float64, n), make([]float64, n)
		for i := range base {
			level := 100 * math.Exp(0.5*r.NormFloat64()) // a drift the pairing cancels
			base[i], cand[i] = level, level*math.Exp(noise.Within*r.NormFloat64())
		}
		gates := make([]Gate, m)
		gates[0] = Gate{Baseline: base, Candidate: cand, Relative: true, Tolerance: d}
		out, _ := DecideRounds(gates, nil, level)
		if out[0].Outcome == Pass {
			passed++
		}
	}
	assert.InDelta(t, 1-miss, float64(passed)/draws, 0.01, "at the detectable change %.4g", d)
	assert.Equal(t, math.Inf(1), DetectableChange(noise, []Look{{5, 5, level}}, m, miss), "5 pairs cannot reach 0.025/4")
}

// AAPassRate counts the draws DetectableChange takes its quantile of: at
// the detectable change it is about 1 − miss, and it rises with the
// tolerance.
func TestAAPassRate(t *testing.T) {
	looks := []Look{{6, 6, 0.025}}
	noise := Noise{Within: 0.05, Relative: true}
	d := DetectableChange(noise, looks, 7, 0.01)
	assert.InDelta(t, 0.99, AAPassRate(noise, looks, 7, d), 0.001)
	prev := 0.0
	for _, tol := range []float64{0, 0.02, 0.05, 0.1, 0.2} {
		r := AAPassRate(noise, looks, 7, tol)
		assert.GreaterOrEqual(t, r, prev, "tolerance %g", tol)
		prev = r
	}
	assert.Equal(t, 0.0, AAPassRate(noise, []Look{{3, 3, 0.05}}, 7, 1), "no look can pass")
	assert.Equal(t, 1.0, AAPassRate(Noise{Relative: true}, looks, 7, 0), "no noise")
}
