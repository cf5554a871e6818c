package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// For a step load, a list of rates is its steps, not a sweep: one scenario
// is measured, with its steps, their times and the defaults of a spike.
func TestStepLoadIsNotASweep(t *testing.T) {
	c, err := Parse([]byte(`scenarios:
  - name: spike
    synth: {requests: 64, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: step, rate: [4, 16, 8], at: [60s, 2m]}
    duration: 3m
    slo: {ttft: 500ms}
`), "p.yaml")
	require.NoError(t, err)
	measured := c.Measured()
	require.Len(t, measured, 1, "one scenario, not one per rate")
	l := measured[0].Load
	assert.Equal(t, []float64{4, 16, 8}, l.Steps)
	assert.Equal(t, StepTimes{time.Minute, 2 * time.Minute}, l.At)
	assert.Nil(t, l.Sweep)
	assert.Empty(t, l.SweepParam)
	assert.Equal(t, DefaultRecoveryWindow, l.RecoveryWindow)
	assert.Equal(t, DefaultBurstiness, l.Burstiness)

	one, err := Parse([]byte(`scenarios:
  - name: spike
    synth: {requests: 64, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: step, rate: [4, 16], at: 30s, recovery_window: 2s}
    duration: 1m
    slo: {ttft: 500ms}
`), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, StepTimes{30 * time.Second}, one.Scenarios[0].Load.At, "one time, not a list")
	assert.Equal(t, 2*time.Second, one.Scenarios[0].Load.RecoveryWindow)
}

func TestStepLoadRates(t *testing.T) {
	l := Load{Type: LoadStep, Steps: []float64{4, 16, 8}, At: StepTimes{time.Minute, 2 * time.Minute}, Burstiness: 0.5}
	// 60 s at 4, 60 s at 16, 60 s at 8: (240+960+480)/180.
	assert.InDelta(t, 1680.0/180, l.OfferedRate(3*time.Minute), 1e-9)
	assert.InDelta(t, (240+480)/90.0, l.OfferedRate(90*time.Second), 1e-9, "a repetition cut before a step offers none of it")
	assert.Equal(t, 4.0, l.OfferedRate(0), "no duration: the first step")
	assert.Equal(t, 7.5, Load{Type: LoadPoisson, Rate: 7.5}.OfferedRate(time.Minute))

	w := l.WarmupLoad()
	assert.Equal(t, Load{Type: LoadGamma, Rate: 4, Burstiness: 0.5}, w, "a warm-up runs at the first step")
	p := Load{Type: LoadPoisson, Rate: 3}
	assert.Equal(t, p, p.WarmupLoad())
}

// A top-level gate on the recovery applies to the step loads alone: a
// scenario at one rate has no recovery to gate.
func TestRecoveryGatesOnlyStepLoads(t *testing.T) {
	c, err := Parse([]byte(`gates: {recovery: +5s}
scenarios:
  - name: spike
    synth: {requests: 64, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: step, rate: [4, 16], at: 30s}
    duration: 1m
    slo: {ttft: 500ms}
  - name: steady
    synth: {requests: 64, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: poisson, rate: 4}
`), "p.yaml")
	require.NoError(t, err)
	names := func(s Scenario) []string {
		var out []string
		for _, g := range c.GatesOf(s) {
			out = append(out, g.Metric)
		}
		return out
	}
	assert.Contains(t, names(c.Scenarios[0]), "recovery")
	assert.NotContains(t, names(c.Scenarios[1]), "recovery")
}
