package compare

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// twoScenarios is an A/A result of two scenarios with the default gates and
// no stack start (an external server): cold start is shown, not tested.
func twoScenarios(r *rand.Rand) *result.Result {
	a := fakeResult("chat", noisy(r, 6, 100, 0.02)...)
	b := fakeResult("bursty", noisy(r, 6, 100, 0.02)...)
	a.Scenarios = append(a.Scenarios, b.Scenarios[0])
	return a
}

// evenLevels gives every family alpha over their number, as internal/gate's
// policy does (gate.Calibrate; its tests check that compare, gate and
// compare --aa agree).
func evenLevels(alpha float64, families map[string]int) map[string]float64 {
	out := map[string]float64{}
	for name := range families {
		out[name] = alpha / float64(len(families))
	}
	return out
}

// compare --aa counts the gates compare and gate test, not the gates
// configured: the default cold-start gate has no starts to test here, so
// each scenario's family is 7 gates, as compare's verdict shows, and Holm's
// first step is alpha/2 (two scenarios) over 7.
func TestCalibrateFamilyIsCompares(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	results := []*result.Result{twoScenarios(r), twoScenarios(r), twoScenarios(r)}
	v, err := Compare(results[:1], results[1], Options{})
	require.NoError(t, err)
	cal, err := Calibrate(results, 0.05, nil, evenLevels)
	require.NoError(t, err)
	require.Len(t, cal.Scenarios, 2)
	for i, cs := range cal.Scenarios {
		assert.Len(t, v.Scenarios[i].Gates, 7, "compare's family of %s", cs.Name)
		assert.Equal(t, len(v.Scenarios[i].Gates), cs.Gates, "scenario %s", cs.Name)
		assert.InDelta(t, 0.05/2/7, float64(cs.Level), 1e-15, "scenario %s", cs.Name)
	}
	assert.Equal(t, 3, cal.Pairs)
}

// The levels a sequential gate spends at its looks are the ones config's
// validation reads (stat.LookLevels).
func TestSequentialSpendsLookLevels(t *testing.T) {
	for _, r := range [][2]int{{6, 6}, {6, 12}, {5, 10}, {4, 20}} {
		s := &Sequential{Options: Options{Alpha: 0.05}, Min: r[0], Max: r[1], Share: 0.025}
		var got []float64
		for _, n := range Looks(r[0], r[1]) {
			sc := &result.ScenarioResult{Name: "chat", Repetitions: make([]result.Repetition, n)}
			got = append(got, s.spend(sc))
		}
		assert.Equal(t, stat.LookLevels(0.025, r[0], r[1]), got, "repetitions %v", r)
		assert.Equal(t, got[0], s.FirstLevel(), "repetitions %v", r)
	}
}

// A scenario first seen in a later result has its family and level: the
// families come from every pair, not the first.
func TestCalibrateScenarioInLaterResultsOnly(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	chatOnly := fakeResult("chat", noisy(r, 6, 100, 0.02)...)
	results := []*result.Result{chatOnly, twoScenarios(r), twoScenarios(r)}
	cal, err := Calibrate(results, 0.05, nil, evenLevels)
	require.NoError(t, err)
	require.Len(t, cal.Scenarios, 2)
	assert.Equal(t, "bursty", cal.Scenarios[1].Name)
	for _, cs := range cal.Scenarios {
		assert.Equal(t, 7, cs.Gates, cs.Name)
		assert.InDelta(t, 0.05/2/7, float64(cs.Level), 1e-15, cs.Name)
	}
	assert.Equal(t, 3, cal.Pairs)
}
