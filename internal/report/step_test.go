package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

// A step load's summary: its steps in the scenario's line, the recovery
// rows, and a line for the repetition whose server never recovered.
func TestSummaryOfAStepLoad(t *testing.T) {
	var reps []result.Repetition
	for i, rc := range []result.Recovery{
		{StepS: 60, WindowS: 5, Recovered: true, Seconds: 21, Breaches: 598, BeforeP95MS: 98, PeakP95MS: 3870},
		{StepS: 60, WindowS: 5, Recovered: true, Seconds: 23.4, Breaches: 640, BeforeP95MS: 97, PeakP95MS: 4102},
		{StepS: 60, WindowS: 5, Recovered: false, Seconds: 115, Breaches: 2210, BeforeP95MS: 99, PeakP95MS: 9050},
	} {
		r := rep(i+1, 900)
		r.Recovery = &rc
		reps = append(reps, r)
	}
	r := &result.Result{
		Schema: result.Schema,
		Identity: result.Identity{PerfgateVersion: "v0.1.0", Simulated: true,
			Target: result.Target{BaseURL: "http://127.0.0.1:8000", API: "chat", Model: "m"}},
		Scenarios: []result.ScenarioResult{{Name: "spike", Workload: "synth", WorkloadHash: "sha256:abc",
			Load: result.Load{Type: "step", Steps: []float64{8, 30}, At: []time.Duration{time.Minute}, Burstiness: 1, RecoveryWindow: 5 * time.Second},
			SLO:  result.SLO{TTFT: 500}, Repetitions: reps}},
	}
	var buf bytes.Buffer
	require.NoError(t, Summary(&buf, r))
	golden(t, "summary-step.golden", buf.Bytes())
	out := buf.String()
	assert.Contains(t, out, "step 8 req/s, 30 from 1m0s")
	assert.Contains(t, out, "NOT RECOVERED in repetition 3")
	assert.Regexp(t, `recovery \(s\)\s+23\.4\s+21\.0\s+115\.0`, out, "median, min, max")
}
