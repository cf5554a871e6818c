package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/reportfile"
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

// stepResult is a result of scenario chat-c16 as a step load of three
// repetitions whose recoveries are seconds; one of 60 s or more did not
// recover.
func stepResult(seconds ...float64) *result.Result {
	var reps []result.Repetition
	for i, sec := range seconds {
		r := rep(i+1, 30)
		r.Recovery = &result.Recovery{StepS: 20, WindowS: 5, Recovered: sec < 60, Seconds: sec, Breaches: int(10 * sec), BeforeP95MS: 95, PeakP95MS: 120 * sec}
		reps = append(reps, r)
	}
	return &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{{Name: "chat-c16", Repetitions: reps,
		Load: result.Load{Type: "step", Steps: []float64{8, 30}, At: []time.Duration{20 * time.Second}, Burstiness: 1, RecoveryWindow: 5 * time.Second}}}}
}

// The reports show a step load's spike on both sides in a table of its
// own: a fold in markdown and HTML, a table under the gates in text.
func TestSpikeRecoveryReport(t *testing.T) {
	d, err := reportfile.New(passVerdict(), []*result.Result{stepResult(21, 20, 22)}, stepResult(31, 64, 30), nil)
	require.NoError(t, err)
	d.Key = "perfgate.yaml"
	var text, md bytes.Buffer
	require.NoError(t, emitText(&text, []*reportfile.Document{d}))
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{}))
	page := renderHTML(t, d)
	golden(t, "spike.txt", text.Bytes())
	golden(t, "spike.md", md.Bytes())
	assert.Contains(t, text.String(), "spike recovery (median of repetitions)")
	assert.Equal(t, 1, strings.Count(md.String(), "<details><summary>Spike recovery</summary>"), "one spike fold")
	htmlHas(t, page, "<h4>Spike recovery</h4>")
	htmlHas(t, page, "<tr><td>repetitions not recovered (count)</td><td class=\"num\">0</td><td class=\"num\">1</td>")
}
