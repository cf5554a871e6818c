package report

import (
	"math"
	"testing"

	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// degenerateValues are the floats an axis must survive: zero, negatives,
// subnormals, the largest float, infinities and NaN.
var degenerateValues = []float64{
	0, math.Copysign(0, -1), 1, -1, 5e-324, -5e-324, math.SmallestNonzeroFloat64 * 3,
	2.2250738585072014e-308, 1e-300, 1e300, math.MaxFloat64, -math.MaxFloat64,
	math.Inf(1), math.Inf(-1), math.NaN(), 1 << 55, 1<<55 + 8, 1.0000000000000002,
}

// checkLogTicks fails t unless ticks are a log axis's few ticks: finite,
// rising, at most maxLogTicks, and some for a range that has any.
func checkLogTicks(t *testing.T, lo, hi float64, ticks []float64) {
	t.Helper()
	assert.LessOrEqual(t, len(ticks), maxLogTicks, "logTicks(%v, %v) = %v", lo, hi, ticks)
	for i, v := range ticks {
		assert.True(t, finite(v), "logTicks(%v, %v) = %v: not finite", lo, hi, ticks)
		if i > 0 {
			assert.Greater(t, v, ticks[i-1], "logTicks(%v, %v) = %v: not rising", lo, hi, ticks)
		}
	}
	if lo > 0 && hi >= lo && finite(hi) {
		assert.NotEmpty(t, ticks, "logTicks(%v, %v)", lo, hi)
	} else {
		assert.Empty(t, ticks, "logTicks(%v, %v): no log axis", lo, hi)
	}
}

// checkValueAxis fails t unless r, the axis valueAxis gave values, has
// finite ends, lo below hi, and holds every finite value.
func checkValueAxis(t *testing.T, values []float64, kind axisKind, r axisRange, ok bool) {
	t.Helper()
	if !ok {
		return
	}
	assert.True(t, finite(r.Lo) && finite(r.Hi) && r.Lo < r.Hi, "valueAxis(%v, %d) = %+v", values, kind, r)
	if kind == axisShare {
		return
	}
	for _, v := range values {
		if finite(v) {
			assert.True(t, v >= r.Lo && v <= r.Hi, "valueAxis(%v, %d) = %+v leaves %v out", values, kind, r, v)
		}
	}
}

// A range narrower than the floats' spacing near it once spun logTicks
// forever (v += step left v unchanged): a report whose CDF had the values
// 1 and 1.0000000000000002 hung `perfgate report --html`. linearTicks now
// ends on its own after a few steps, never at its cap.
func TestLogTicksOfDegenerateRanges(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []float64
	}{
		{1 << 55, 1<<55 + 8, []float64{3.6e16}},
		{1, 1.0000000000000002, []float64{1}},
		{1, 1, []float64{1}},
		{5e-324, 5e-324, []float64{5e-324}},
		{5e-324, 1e-323, []float64{5e-324, 1e-323}},
		{math.MaxFloat64, math.MaxFloat64, []float64{math.MaxFloat64}},
		{1e308, math.MaxFloat64, nil},
		{2, 1, nil},
		{0, 1, nil},
		{-1, 1, nil},
		{math.NaN(), 1, nil},
		{1, math.NaN(), nil},
		{1, math.Inf(1), nil},
	} {
		got := logTicks(c.lo, c.hi)
		if len(c.want) > 0 {
			assert.Equal(t, c.want, got, "logTicks(%v, %v)", c.lo, c.hi)
		}
		checkLogTicks(t, c.lo, c.hi, got)
		if c.lo > 0 && c.hi >= c.lo && finite(c.hi) {
			_, steps := linearTicks(c.lo, c.hi)
			assert.Less(t, steps, maxLinearSteps, "linearTicks(%v, %v) ran to its cap", c.lo, c.hi)
		}
	}
	for _, lo := range degenerateValues {
		for _, hi := range degenerateValues {
			checkLogTicks(t, lo, hi, logTicks(lo, hi))
			if lo > 0 && hi >= lo && finite(hi) {
				_, steps := linearTicks(lo, hi)
				assert.Less(t, steps, maxLinearSteps, "linearTicks(%v, %v) ran to its cap", lo, hi)
			}
		}
	}
}

// Value axes over degenerate values have finite ends in order and hold
// every value: a largest float once gave an axis ending at +Inf, which no
// JSON can carry.
func TestValueAxisOfDegenerateValues(t *testing.T) {
	for _, kind := range []axisKind{axisLine, axisZero, axisShare} {
		for _, a := range degenerateValues {
			for _, b := range degenerateValues {
				values := []float64{a, b}
				r, ok := valueAxis(values, kind)
				checkValueAxis(t, values, kind, r, ok)
			}
		}
	}
	for _, x := range degenerateValues {
		s := niceStep(x)
		assert.True(t, finite(s) && s > 0, "niceStep(%v) = %v", x, s)
		assert.False(t, math.IsNaN(roundSig(x, 3)) && !math.IsNaN(x), "roundSig(%v, 3) is NaN", x)
	}
	assert.Equal(t, 5e-324, roundSig(5e-324, 3), "a subnormal rounds to itself, not NaN")
	assert.Equal(t, 1.23e-320, roundSig(1.2345e-320, 3))
}

// FuzzAxes: no pair of floats hangs an axis, or gives one a tick or an end
// that is not finite, too many ticks, or an axis that leaves a value out.
func FuzzAxes(f *testing.F) {
	for _, c := range [][2]float64{{1, 1.0000000000000002}, {1 << 55, 1<<55 + 8}, {70, 2000}, {5e-324, 1}, {1e300, math.MaxFloat64}, {-1, 0}, {3850, 3862}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, a, b float64) {
		checkLogTicks(t, a, b, logTicks(a, b))
		checkLogTicks(t, b, a, logTicks(b, a))
		if a > 0 && b >= a && finite(b) {
			_, steps := linearTicks(a, b)
			require.Less(t, steps, maxLinearSteps, "linearTicks(%v, %v) ran to its cap", a, b)
		}
		for _, kind := range []axisKind{axisLine, axisZero, axisShare} {
			values := []float64{a, b}
			r, ok := valueAxis(values, kind)
			checkValueAxis(t, values, kind, r, ok)
		}
	})
}

// A report whose CDF values are a float's spacing apart renders: its
// chart's log axis has ticks (the hang of `perfgate report --html` on such
// a report, end to end).
func TestHTMLOfCDFNarrowerThanFloatSpacing(t *testing.T) {
	d := htmlDocument()
	ld := &d.Scenarios[0].Latency[0]
	narrow := []reportfile.CDFPoint{{Value: 1, Fraction: 0.5}, {Value: 1.0000000000000002, Fraction: 1}}
	ld.Baseline = &reportfile.Distribution{CDF: narrow}
	ld.Candidate = &reportfile.Distribution{CDF: narrow}
	for _, c := range htmlChartData(t, renderHTML(t, d)).Charts {
		if c.Kind == "cdf" && c.Scenario == d.Scenarios[0].Name && c.Metric == ld.Metric {
			assert.Equal(t, []float64{1}, c.XTicks)
			return
		}
	}
	t.Fatal("no CDF chart of the narrow distribution")
}
