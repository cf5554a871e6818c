package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/quality"
	"github.com/perfgate/perfgate/internal/stat"
)

// qualityVerdict is a pass verdict's latency gates plus an eval suite whose
// accuracy regressed, with drift, a warning and changed items.
func qualityVerdict() *compare.Verdict {
	v := passVerdict()
	v.Outcome = stat.Regression
	v.Scenarios[0].Quality = []compare.Suite{{
		Name: "arithmetic", N: 200,
		Baseline:  compare.Accuracy{Pass: 180, N: 200, Rate: compare.Interval{Estimate: 0.9, Lo: 0.851, Hi: 0.934}},
		Candidate: compare.Accuracy{Pass: 120, N: 200, Rate: compare.Interval{Estimate: 0.6, Lo: 0.531, Hi: 0.665}},
		Drift: compare.Drift{Identical: 140, Differ: 60, Share: compare.Interval{Estimate: 0.7, Lo: 0.633, Hi: 0.759},
			FirstDiffChar: 14, FirstDiffWord: 3},
		Gates: []compare.QualityGate{{
			Metric: "accuracy", Title: "accuracy", Tolerance: "-2 points", Test: "mcnemar", N: 200,
			Baseline:  compare.Interval{Estimate: 0.9, Lo: 0.851, Hi: 0.934},
			Candidate: compare.Interval{Estimate: 0.6, Lo: 0.531, Hi: 0.665},
			Change:    compare.Interval{Estimate: -0.3, Lo: -0.351, Hi: -0.25}, Confidence: 0.9,
			Losses: 60, P: 1.7e-18, PAdjusted: 3.4e-18, Level: 0.05, Outcome: stat.Regression,
			Reason: "significant (p=3.4e-18) and -30.0 points is beyond -2 points, as is the whole 90% interval (up to -25.0 points)",
		}},
		Examples: []quality.Example{
			{ID: "arith-001", BaselinePass: true, BaselineOutput: "The answer is -21.", CandidateOutput: "The answer is -20.", FirstDiffChar: 16, FirstDiffWord: 3},
			{ID: "arith-007", BaselinePass: true, BaselineOutput: "Answer:\n42", CandidateOutput: strings.Repeat("long ", 40), FirstDiffChar: 0},
		},
		Warnings: []string{"the candidate answered 150 of 200 items amid the load and the rest alone: raise quality.share to interleave them all"},
	}}
	return v
}

func TestQualityVerdict(t *testing.T) {
	var text, md bytes.Buffer
	require.NoError(t, emitVerdictText(&text, qualityVerdict()))
	require.NoError(t, emitVerdictMarkdown(&md, qualityVerdict()))
	assert.True(t, strings.HasSuffix(text.String(), "verdict: REGRESSION (1 gate regressed: chat-c16 arithmetic accuracy -30.0 points)\n"), text.String())
	first, _, _ := strings.Cut(md.String(), "\n")
	assert.Equal(t, "### ❌ perfgate: regression (1 of 3 gates regressed) — worst: chat-c16 arithmetic accuracy -30.0 points", first)
}

// A model's outputs are untrusted: whatever they hold, the markdown stays in
// its table cell, opens no HTML, closes no <details>, and is cut short; the
// terminal gets no escape sequences or bidirectional overrides.
func TestQualityOutputsEscaped(t *testing.T) {
	hostile := "</details><script>alert(1)</script>| x |\n## heading\x1b[31m\u202etxet" + strings.Repeat("!", 300)
	v := qualityVerdict()
	v.Scenarios[0].Quality[0].Examples[0].CandidateOutput = hostile
	v.Scenarios[0].Quality[0].Examples[0].ID = "id|<b>"

	var md bytes.Buffer
	require.NoError(t, emitVerdictMarkdown(&md, v))
	out := md.String()
	for _, bad := range []string{"</details><script>", "<script>", "\x1b", "\u202e", "| x |", "\n## heading", "id|<b>"} {
		assert.NotContains(t, out, bad)
	}
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "alert(1)") {
			row = l
		}
	}
	require.NotEmpty(t, row, "the changed item's row")
	assert.Contains(t, row, "\\<script\\>alert(1)\\</script\\>\\| x \\|⏎\\#\u2060\\#\u2060 heading")
	assert.Less(t, strings.Count(row, "!"), qualityMaxOutput, "the output is cut")
	assert.Equal(t, 1, strings.Count(out, "</details>"), "only the report's own details block closes")

	var text bytes.Buffer
	require.NoError(t, emitVerdictText(&text, v))
	for _, bad := range []string{"\x1b", "\u202e", "\n## heading"} {
		assert.NotContains(t, text.String(), bad)
	}
}

// failedVerdict is the case: a candidate answering every item right
// but failing 26 of its 200 eval requests. Accuracy is over the 174
// answered on both sides; the error-rate gate regressed; the changed items
// show the error where the answer would be.
func failedVerdict() *compare.Verdict {
	v := passVerdict()
	v.Outcome = stat.Regression
	all := compare.Interval{Estimate: 1, Lo: 0.978, Hi: 1}
	v.Scenarios[0].Quality = []compare.Suite{{
		Name: "facts", N: 174, Dropped: 26,
		Baseline: compare.Accuracy{Pass: 174, N: 174, Rate: all, ErrorRate: compare.Interval{Estimate: 0, Lo: 0, Hi: 0.019}},
		Candidate: compare.Accuracy{Pass: 174, N: 174, Rate: all, Failed: 26, FailedKinds: map[string]int{"http": 13, "stream": 13},
			ErrorRate: compare.Interval{Estimate: 0.13, Lo: 0.09, Hi: 0.184}},
		Drift: compare.Drift{Identical: 174, Share: all},
		Gates: []compare.QualityGate{
			{
				Metric: "eval_error_rate", Title: "error rate", Tolerance: "+5 points", Test: "mcnemar", N: 200,
				Baseline:  compare.Interval{Estimate: 0, Lo: 0, Hi: 0.019},
				Candidate: compare.Interval{Estimate: 0.13, Lo: 0.09, Hi: 0.184},
				Change:    compare.Interval{Estimate: 0.13, Lo: 0.089, Hi: 0.168}, Confidence: 0.9,
				Losses: 26, P: 1.5e-8, PAdjusted: 3e-8, Level: 0.05, Outcome: stat.Regression,
				Reason: "significant (p=3e-08) and +13.0 points is beyond +5 points, as is the whole 90% interval (from +8.9 points)",
			},
			{
				Metric: "accuracy", Title: "accuracy", Tolerance: "-2 points", Test: "mcnemar", N: 174,
				Baseline: all, Candidate: all, Change: compare.Interval{Estimate: 0, Lo: -0.009, Hi: 0.009}, Confidence: 0.9,
				P: 1, PAdjusted: 1, Level: 0.05, Outcome: stat.Pass, Reason: "the 90% interval rules out worse than -2 points",
			},
		},
		Examples: []quality.Example{
			{ID: "co2", BaselinePass: true, BaselineOutput: "carbon dioxide", CandidateError: "http 500: simulated engine error", CandidateErrorKind: "http"},
			{ID: "moon", BaselinePass: true, BaselineOutput: "the Moon", CandidateOutput: "the", CandidateError: "stream: connection reset by peer", CandidateErrorKind: "stream"},
		},
	}}
	return v
}

func TestQualityFailedItemsRendered(t *testing.T) {
	var md bytes.Buffer
	require.NoError(t, emitVerdictMarkdown(&md, failedVerdict()))
	out := md.String()
	first, _, _ := strings.Cut(out, "\n")
	assert.Equal(t, "### ❌ perfgate: regression (1 of 4 gates regressed) — worst: chat-c16 facts error rate +13.0 points", first)
	assert.Contains(t, out, "174 items · accuracy 100.0% (174/174) → 100.0% (174/174) · failed requests 0 → 26 (http 13, stream 13) · 26 items dropped")
	assert.Contains(t, out, "| co2 | ✅ carbon dioxide | ⚠ failed: http 500: simulated engine error |")
	assert.Contains(t, out, "| moon | ✅ the Moon | ⚠ failed: stream: connection reset by peer |")
	assert.NotContains(t, out, "❌ (empty)")

	var text bytes.Buffer
	require.NoError(t, emitVerdictText(&text, failedVerdict()))
	assert.Contains(t, text.String(), `changed co2 (pass → failed): "carbon dioxide" → failed: http 500: simulated engine error`)
	assert.Contains(t, text.String(), "verdict: REGRESSION (1 gate regressed: chat-c16 facts error rate +13.0 points)")

	page := renderHTML(t, htmlDocumentOf("failed", failedVerdict()))
	assert.Contains(t, page, "failed")
	assert.Contains(t, page, "http 500: simulated engine error")

	// An error is the server's text: escaped like an output.
	v := failedVerdict()
	v.Scenarios[0].Quality[0].Examples[0].CandidateError = "http 500: </details><script>x</script>| y |\x1b[31m"
	md.Reset()
	require.NoError(t, emitVerdictMarkdown(&md, v))
	for _, bad := range []string{"<script>", "| y |", "\x1b"} {
		assert.NotContains(t, md.String(), bad)
	}
	text.Reset()
	require.NoError(t, emitVerdictText(&text, v))
	assert.NotContains(t, text.String(), "\x1b")
}
