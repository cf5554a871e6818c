package config

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

// The SLOs a result records are in milliseconds, exactly the durations the
// config wrote.
func TestSLOResultInMilliseconds(t *testing.T) {
	c, err := Parse([]byte(`
scenarios:
  - name: a
    synth: {requests: 10, input: {type: fixed, value: 10}, output: {type: fixed, value: 10}}
    load: {concurrency: 2}
    slo: {ttft: 250ms, tpot: 13500us, e2e: 1.1s}
`), "perfgate.yaml")
	require.NoError(t, err)
	got := c.Scenarios[0].SLO.Result()
	want := result.SLO{TTFT: 250, TPOT: 13.5, E2E: 1100}
	if got != want {
		t.Errorf("SLO.Result() = %+v, want %+v", got, want)
	}
	assert.Equal(t, result.SLO{}, SLO{}.Result(), "no SLO stays no SLO")
}

// A result records the load shape, the comparison settings and the price
// under the config's own JSON names (as results of schema v1 did, which
// held the config's types), and loses no field of them: a field added to
// the config's type and not to the result's fails here.
func TestResultKeepsTheConfigsFields(t *testing.T) {
	cases := []struct {
		config, result any
	}{
		{Load{Type: LoadGamma, Concurrency: 3, Rate: 4.5, Burstiness: 0.5, MaxInFlight: 16, Speedup: 2, ThinkTime: "fixed:1500", Overload: OverloadMeasure, Arrivals: ArrivalsFresh,
			Steps: []float64{4, 16}, At: StepTimes{time.Minute}, RecoveryWindow: 5 * time.Second},
			Load{Type: LoadGamma, Concurrency: 3, Rate: 4.5, Burstiness: 0.5, MaxInFlight: 16, Speedup: 2, ThinkTime: "fixed:1500", Overload: OverloadMeasure, Arrivals: ArrivalsFresh,
				Steps: []float64{4, 16}, At: StepTimes{time.Minute}, RecoveryWindow: 5 * time.Second}.Result()},
		{Compare{Alpha: 0.01, OnInconclusive: InconclusivePass, Baselines: "../baselines", Tail: "p95", Estimator: EstimatorSample},
			Compare{Alpha: 0.01, OnInconclusive: InconclusivePass, Baselines: "../baselines", Tail: "p95", Estimator: EstimatorSample}.Result()},
		{Cost{USDPerGPUHour: 2.5, GPUs: 8}, Cost{USDPerGPUHour: 2.5, GPUs: 8}.Result()},
	}
	// A sweep never reaches a result: Measured expands it into one scenario
	// per value, each with its own rate or concurrency.
	expanded := map[string]bool{"Load.Sweep": true, "Load.SweepParam": true}
	for _, tc := range cases {
		ct, rt := reflect.TypeOf(tc.config), reflect.TypeOf(tc.result)
		fields := 0
		for i := range ct.NumField() {
			if !expanded[ct.Name()+"."+ct.Field(i).Name] {
				fields++
			}
		}
		if fields != rt.NumField() {
			t.Errorf("%s has %d fields a result records, %s %d: a result must record every field", ct, fields, rt, rt.NumField())
		}
		for i := range ct.NumField() {
			if expanded[ct.Name()+"."+ct.Field(i).Name] {
				continue
			}
			if reflect.ValueOf(tc.config).Field(i).IsZero() {
				t.Fatalf("the case of %s leaves %s zero: set every field", ct, ct.Field(i).Name)
			}
		}
		cj, err := json.Marshal(tc.config)
		require.NoError(t, err)
		rj, err := json.Marshal(tc.result)
		require.NoError(t, err)
		assert.JSONEq(t, string(cj), string(rj), "%s.Result() as JSON", ct)
	}
}
