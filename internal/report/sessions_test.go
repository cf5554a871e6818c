package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
)

// sessionResult is a result of scenario chat-c16 of three repetitions with
// sessions: k scales the latencies, and the middle repetition is the
// median of each figure.
func sessionResult(k float64) *result.Result {
	var reps []result.Repetition
	for i, m := range []float64{1.1, 0.9, 1.0} {
		r := rep(i+1, 30)
		r.Sessions = &result.SessionStats{Started: 40, Completed: 38 + i%2*2, TurnsMean: 3.2, TurnsMax: 5,
			FirstTurnTTFT: result.Stats{Count: 40, P50: 80 * k * m, P99: 200 * k * m},
			LaterTurnTTFT: result.Stats{Count: 88, P50: 35 * k * m, P99: 90 * k * m},
			E2E:           result.Stats{Count: 38, P50: 9000 * k * m, P99: 15000 * k * m}}
		reps = append(reps, r)
	}
	return &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{{Name: "chat-c16", Repetitions: reps}}}
}

func TestSessionsReport(t *testing.T) {
	d, err := reportfile.New(passVerdict(), []*result.Result{sessionResult(1)}, sessionResult(1.2), nil)
	require.NoError(t, err)
	d.Key = "perfgate.yaml"
	rows := map[string]reportfile.TelemetryRow{}
	for _, r := range d.Scenarios[0].Sessions {
		rows[r.Metric] = r
	}
	require.Len(t, rows, 9, "session rows")
	assert.InDelta(t, 80, *rows["ttft_first_turn.p50"].Baseline, 1e-9, "baseline TTFT p50 of turn 1: the median repetition's")
	assert.InDelta(t, 96, *rows["ttft_first_turn.p50"].Candidate, 1e-9, "candidate TTFT p50 of turn 1")
	assert.InDelta(t, 0.95, *rows["sessions_completed"].Baseline, 1e-9, "sessions completed: 38, 40, 38 of 40, median 38")
	assert.False(t, rows["session_e2e.p99"].Gated, "a session figure is never gated")

	var text, md bytes.Buffer
	require.NoError(t, emitText(&text, []*reportfile.Document{d}))
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{}))
	page := renderHTML(t, d)
	golden(t, "sessions.txt", text.Bytes())
	golden(t, "sessions.md", md.Bytes())
	assert.Contains(t, text.String(), "sessions (median of repetitions; not gated)")
	assert.Equal(t, 1, strings.Count(md.String(), "<details><summary>Sessions (not gated)</summary>"), "one sessions fold")
	htmlHas(t, page, "<h4>Sessions (not gated)</h4>")
	htmlHas(t, page, "<tr><td>TTFT p50, later turns (ms)</td><td class=\"num\">35.0</td><td class=\"num\">42.0</td><td class=\"num\">&#43;20.0%</td><td></td></tr>")

	plain, err := reportfile.New(passVerdict(), []*result.Result{telemetryBase()}, telemetryBase(), nil)
	require.NoError(t, err)
	assert.Nil(t, plain.Scenarios[0].Sessions, "no sessions on either side: no rows")
}

func telemetryBase() *result.Result {
	return &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{{Name: "chat-c16", Repetitions: []result.Repetition{rep(1, 30)}}}}
}
