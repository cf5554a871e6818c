package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/stat"
)

// tailVerdict is a regression verdict whose one gate is a tail gate: 4.6%
// of the candidate's requests beyond the baseline's pooled p99.
func tailVerdict() *compare.Verdict {
	g := compare.Gate{Metric: "ttft.p99.tail", Title: "TTFT p99 tail", Unit: "%", Better: "lower", Tolerance: "+10%",
		Baseline:  verdictSide(0.01, 0.008, 0.012, 0.008, 0.01, 0.012),
		Candidate: verdictSide(0.046, 0.03, 0.06, 0.03, 0.046, 0.06),
		Shift:     compare.Interval{Estimate: verdictNaN, Lo: verdictNaN, Hi: verdictNaN},
		Change:    compare.Interval{Estimate: verdictNaN, Lo: verdictNaN, Hi: verdictNaN},
		P:         0.002, PAdjusted: 0.004, Level: 0.05, Confidence: verdictNaN,
		Outcome: stat.Regression, Reason: "significant (p=0.004): 3.9% of the candidate's requests beyond the baseline's p99 ×1.1, expected 1%",
		Tail: &compare.Tail{Percentile: 0.99, Threshold: 101.5, Expected: 0.01, Share: 0.046, AdjustedShare: 0.039,
			PLower: 1, Splits: 924, Exact: true}}
	return &compare.Verdict{Outcome: stat.Regression, OnInconclusive: "fail", Alpha: 0.05,
		Scenarios: []compare.Scenario{{Name: "chat", BaselineN: 3, CandidateN: 3, Level: 0.05, Gates: []compare.Gate{g}}}}
}

func TestTailGateRendered(t *testing.T) {
	for name, write := range map[string]func(*bytes.Buffer, *compare.Verdict) error{
		"text":     func(b *bytes.Buffer, v *compare.Verdict) error { return emitVerdictText(b, v) },
		"markdown": func(b *bytes.Buffer, v *compare.Verdict) error { return emitVerdictMarkdown(b, v) },
	} {
		var b bytes.Buffer
		require.NoError(t, write(&b, tailVerdict()), name)
		out := b.String()
		assert.Contains(t, out, "TTFT p99 tail (%)", "%s: the row's metric", name)
		assert.Contains(t, out, "4.6% beyond (3.9% adjusted), expected 1%", "%s: the change column", name)
		assert.Contains(t, out, "p=0.004", "%s: the adjusted p", name)
		assert.Contains(t, out, "beyond the baseline's p99 ×1.1", "%s: the reason", name)
	}
	var b bytes.Buffer
	require.NoError(t, emitVerdictJSON(&b, tailVerdict()))
	assert.Contains(t, b.String(), `"adjusted_share": 0.039`, "the JSON verdict carries the evidence")
}
