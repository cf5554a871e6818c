package compare

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// withErrorRates sets the error rate of r's repetitions, one value each.
func withErrorRates(r *result.Result, rates ...float64) *result.Result {
	for i := range r.Scenarios[0].Repetitions {
		r.Scenarios[0].Repetitions[i].ErrorRate = rates[i]
	}
	return r
}

// The error rate is in percentage points everywhere: its change is
// ChangePoints (2.00% → 4.00% is +2 points), its relative change is not
// given (from a baseline of 2% it would read +100%), and its reason says
// points. The JSON names the unit: change_points.
func TestErrorRateChangeInPoints(t *testing.T) {
	ttft := []float64{100, 101, 99, 100, 102, 98, 100, 101}
	base := withErrorRates(fakeResult("chat", ttft...), 0.02, 0.021, 0.019, 0.02, 0.022, 0.018, 0.02, 0.02)
	cand := withErrorRates(fakeResult("chat", ttft...), 0.04, 0.041, 0.039, 0.04, 0.042, 0.038, 0.04, 0.04)
	v, err := Compare([]*result.Result{base}, cand, Options{})
	require.NoError(t, err)
	g := gateOf(t, v.Scenarios[0], "error_rate")
	assert.Equal(t, stat.Regression, g.Outcome)
	require.NotNil(t, g.ChangePoints)
	assert.InDelta(t, 2.0, float64(g.ChangePoints.Estimate), 1e-9)
	assert.Less(t, float64(g.ChangePoints.Lo), float64(g.ChangePoints.Hi))
	assert.True(t, math.IsNaN(float64(g.Change.Estimate)), "no relative change for a share: %v", g.Change.Estimate)
	assert.Contains(t, g.Reason, "+2.00 points is beyond +1 point")

	b, err := json.Marshal(g)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, map[string]any{"estimate": nil, "lo": nil, "hi": nil}, m["change"])
	assert.InDelta(t, 2.0, m["change_points"].(map[string]any)["estimate"], 1e-9)

	// A latency gate has no change in points.
	assert.Nil(t, gateOf(t, v.Scenarios[0], "ttft.p99").ChangePoints)
}

// With too few repetitions for a 95% interval of a median, the summary
// says how many it needs, once, instead of benchmath's warning; the JSON
// is valid and says the same (interval_needs beside the null bound).
func TestIntervalNeedsWithFewRepetitions(t *testing.T) {
	v, err := Compare([]*result.Result{fakeResult("chat", 100, 101, 99, 100, 102)}, fakeResult("chat", 130, 131, 129, 130, 132), Options{})
	require.NoError(t, err)
	g := gateOf(t, v.Scenarios[0], "ttft.p99")
	assert.Equal(t, 6, g.Baseline.IntervalNeeds)
	assert.Equal(t, 6, g.Candidate.IntervalNeeds)
	assert.Empty(t, g.Baseline.Warnings)
	assert.Zero(t, g.IntervalNeeds, "5 a side give the change a 90% interval")
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.True(t, json.Valid(b))
	assert.Contains(t, string(b), `"interval_needs":6`)

	v, err = Compare([]*result.Result{fakeResult("chat", 100, 101)}, fakeResult("chat", 130, 131), Options{})
	require.NoError(t, err)
	g = gateOf(t, v.Scenarios[0], "ttft.p99")
	assert.Equal(t, stat.IntervalSamples(1-2*float64(g.Level)), g.IntervalNeeds)
	for _, w := range g.Warnings {
		assert.NotContains(t, w, "interval", "IntervalNeeds says it")
	}
	assert.NotEmpty(t, g.Warnings, "the other warnings stay")
	assert.True(t, math.IsInf(float64(g.Change.Hi), 1))

	enough := fakeResult("chat", 100, 101, 99, 100, 102, 98)
	v, err = Compare([]*result.Result{enough}, enough, Options{})
	require.NoError(t, err)
	assert.Zero(t, gateOf(t, v.Scenarios[0], "ttft.p99").Baseline.IntervalNeeds)
	assert.Equal(t, 6, MedianIntervalNeeds())
}
