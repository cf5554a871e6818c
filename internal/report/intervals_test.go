package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
)

// unitsResult is a result of one scenario, one repetition per TTFT p99
// value with the error rate of the same index, the other metrics steady.
func unitsResult(ttftP99, errorRate []float64) *result.Result {
	s := result.ScenarioResult{Name: "chat", WorkloadHash: "sha256:w", Load: result.Load{Type: "closed", Concurrency: 8}}
	for i, v := range ttftP99 {
		s.Repetitions = append(s.Repetitions, result.Repetition{
			Index: i + 1, TTFT: result.Stats{P95: v * 0.9, P99: v}, TPOT: result.Stats{P99: 10}, E2E: result.Stats{P99: 200},
			OutputThroughput: 1000, Goodput: 50, ErrorRate: errorRate[i], TokensFrom: "usage",
		})
	}
	return &result.Result{Schema: result.Schema, Identity: result.Identity{Server: result.Server{Engine: "vllm", Version: "0.6.3"}},
		Scenarios: []result.ScenarioResult{s}}
}

// unitsRender is the verdict of cand against base in the three media: the
// terminal's text, the PR comment's markdown and the HTML page's body
// (its chart data left out).
func unitsRender(t *testing.T, base, cand *result.Result) (v *compare.Verdict, text, md, page string) {
	t.Helper()
	v, err := compare.Compare([]*result.Result{base}, cand, compare.Options{})
	require.NoError(t, err)
	d := htmlDocumentOf("", v)
	var tb, mb bytes.Buffer
	require.NoError(t, emitText(&tb, []*reportfile.Document{d}))
	require.NoError(t, emitMarkdown(&mb, []*reportfile.Document{d}, MarkdownOptions{}))
	full := renderHTML(t, d)
	page = htmlText(full[:strings.Index(full, `<script type="application/json"`)])
	return v, tb.String(), mb.String(), page
}

// Five repetitions a side are too few for a 95% interval of a median: no
// cell reads "43.8 ± ∞" (nor HTML's "[-∞, 50.0]"); each shows its median
// alone, and the table says why once, under it, in every medium.
func TestTooFewRepetitionsSaidOncePerTable(t *testing.T) {
	zero := []float64{0, 0, 0, 0, 0}
	base := unitsResult([]float64{43.1, 43.8, 44.0, 43.5, 44.2}, zero)
	cand := unitsResult([]float64{43.3, 43.9, 44.1, 43.6, 44.3}, zero)
	_, text, md, page := unitsRender(t, base, cand)
	const note = "too few repetitions for a 95% interval: 5 a side, where one needs >= 6; the medians are shown without one"
	for _, c := range []struct{ medium, out string }{{"text", text}, {"markdown", md}, {"HTML", page}} {
		assert.NotContains(t, c.out, "∞", c.medium)
		assert.NotContains(t, c.out, "± ?", c.medium)
		assert.Equal(t, 1, strings.Count(c.out, note), "%s: the note once, under the table:\n%s", c.medium, c.out)
		assert.NotContains(t, c.out, "samples for confidence interval", "%s: benchmath's warning, once per gate and side, is the note", c.medium)
	}
	assert.Contains(t, md, "| TTFT p99 (ms) | 43.8 | 43.9 |")
	assert.Contains(t, page, "<td class=\"num\">43.8</td>")
}

// Error rates that alternate between 0 and 2% have a median of 1% whose
// interval reaches 0: benchstat's "1.00% ± ?" there. A share's ± is in
// points, so it reads "1.00% ± 1.00 pts".
func TestAlternatingErrorRateHasAnInterval(t *testing.T) {
	ttft := []float64{100, 101, 99, 100, 102, 98}
	alternating := []float64{0, 0.02, 0, 0.02, 0, 0.02}
	_, text, md, page := unitsRender(t, unitsResult(ttft, alternating), unitsResult(ttft, alternating))
	for _, c := range []struct{ medium, out string }{{"text", text}, {"markdown", md}} {
		assert.NotContains(t, c.out, "± ?", c.medium)
		assert.Contains(t, c.out, "1.00% ± 1.00 pts", c.medium)
	}
	assert.Contains(t, page, "1.00% [0.00%, 2.00%]")
}

// The error rate is in percentage points everywhere: 2.00% → 4.00% is
// "+2.00 pts" in the change column and the headline, "+2.00 points is
// beyond +1 point" in the reason, and change_points (not a relative
// change of +100%) in the JSON.
func TestErrorRateInPointsEverywhere(t *testing.T) {
	ttft := []float64{100, 101, 99, 100, 102, 98, 100, 101}
	base := unitsResult(ttft, []float64{0.02, 0.021, 0.019, 0.02, 0.022, 0.018, 0.02, 0.02})
	cand := unitsResult(ttft, []float64{0.04, 0.041, 0.039, 0.04, 0.042, 0.038, 0.04, 0.04})
	v, text, md, page := unitsRender(t, base, cand)
	for _, c := range []struct{ medium, out string }{{"text", text}, {"markdown", md}, {"HTML", page}} {
		assert.NotContains(t, c.out, "+100.0%", c.medium)
		assert.Contains(t, c.out, "+2.00 points is beyond +1 point", c.medium)
		assert.Regexp(t, `\+2\.00 \[\+[0-9.]+, \+[0-9.]+\] pts`, c.out, c.medium)
	}
	headline, _, _ := strings.Cut(md, "\n")
	assert.Contains(t, headline, "worst: chat error rate +2.00 [", "the headline")
	assert.Contains(t, text, "verdict: REGRESSION (1 gate regressed: chat error rate +2.00 pts)")

	var buf bytes.Buffer
	require.NoError(t, emitVerdictJSON(&buf, v))
	var got struct {
		Scenarios []struct {
			Gates []map[string]json.RawMessage `json:"gates"`
		} `json:"scenarios"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	for _, g := range got.Scenarios[0].Gates {
		if string(g["metric"]) != `"error_rate"` {
			continue
		}
		assert.JSONEq(t, `{"estimate": null, "lo": null, "hi": null}`, string(g["change"]))
		var points compare.Interval
		require.NoError(t, json.Unmarshal(g["change_points"], &points))
		assert.InDelta(t, 2.0, float64(points.Estimate), 1e-9)
	}
}
