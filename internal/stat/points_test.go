package stat

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A share gated absolutely (the error rate, +1 point) has its reasons in
// percentage points, the unit of its tolerance: "+2.00 points is beyond +1
// point", not "+0.02 is beyond +0.01".
func TestReasonsInPoints(t *testing.T) {
	base := []float64{0.02, 0.021, 0.019, 0.02, 0.022, 0.018, 0.02, 0.02}
	worse := []float64{0.04, 0.041, 0.039, 0.04, 0.042, 0.038, 0.04, 0.04}
	tests := []struct {
		name      string
		candidate []float64
		tolerance float64
		outcome   Outcome
		reason    string
	}{
		{"regression", worse, 0.01, Regression, "significant (p=7.8e-05) and +2.00 points is beyond +1 point"},
		{"pass", base, 0.01, Pass, "the 90% interval rules out worse than +1 point"},
		{"plural", base, 0.005, Pass, "the 90% interval rules out worse than +0.5 points"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide([]Gate{{Baseline: base, Candidate: tt.candidate, Tolerance: tt.tolerance, Points: true}}, 0.05)
			require.Len(t, d, 1)
			assert.Equal(t, tt.outcome, d[0].Outcome)
			assert.Equal(t, tt.reason, d[0].Reason)
		})
	}
}

// IntervalNeeds says how many samples a side the change's interval needs
// when it has none, and is 0 when it has one.
func TestIntervalNeeds(t *testing.T) {
	few := Decide([]Gate{{Baseline: []float64{1, 2}, Candidate: []float64{1, 2}, Relative: true, Tolerance: 0.1}}, 0.05)
	require.Len(t, few, 1)
	assert.False(t, few[0].Shift.OK)
	assert.Equal(t, IntervalSamples(1-2*0.05), few[0].IntervalNeeds)
	enough := Decide([]Gate{{Baseline: []float64{1, 2, 3, 4, 5, 6}, Candidate: []float64{1, 2, 3, 4, 5, 6}, Relative: true, Tolerance: 0.1}}, 0.05)
	assert.True(t, enough[0].Shift.OK)
	assert.Zero(t, enough[0].IntervalNeeds)
}
