package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
)

// qualityFailedFacts is what a suite's facts add when requests failed:
// " · failed requests 0 → 26 (http 13, stream 13) · 26 items dropped";
// "" when none did.
func qualityFailedFacts(q compare.Suite) string {
	if q.Baseline.Failed == 0 && q.Candidate.Failed == 0 {
		return ""
	}
	s := fmt.Sprintf(" · failed requests %d → %d", q.Baseline.Failed, q.Candidate.Failed)
	if len(q.Candidate.FailedKinds) > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(q.Candidate.FailedKinds)) {
			kinds = append(kinds, fmt.Sprintf("%s %d", verdictClean(k), q.Candidate.FailedKinds[k]))
		}
		s += " (" + strings.Join(kinds, ", ") + ")"
	}
	return s + fmt.Sprintf(" · %d %s dropped", q.Dropped, map[bool]string{true: "item", false: "items"}[q.Dropped == 1])
}

// qualityLoss is how much worse a quality gate's estimate is, in the
// direction that is worse: a drop for accuracy, a rise for the error rate.
func qualityLoss(g *compare.QualityGate) float64 {
	if m, err := metric.Lookup(g.Metric); err == nil && !m.HigherIsBetter {
		return float64(g.Change.Estimate)
	}
	return -float64(g.Change.Estimate)
}

// qualityPassOrFailed is an eval item's result on one side as a word:
// failed when its request failed (failure is its error).
func qualityPassOrFailed(pass bool, failure string) string {
	if failure != "" {
		return "failed"
	}
	return qualityPass(pass)
}

// qualityAnswer is one side's answer to an eval item: its output, or
// "failed: " and its error when the request failed.
func qualityAnswer(out, failure string) sentence {
	if failure != "" {
		return cat(plain("failed: "), untrusted(failure))
	}
	return output(out)
}

// summaryFailed is a suite's failed requests for the run summary: "0", or
// "26 (http 13, stream 13)".
func summaryFailed(q *result.SuiteResult) string {
	kinds := q.FailedKinds()
	if len(kinds) == 0 {
		return "0"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%s %d", clean(k, 32), kinds[k]))
	}
	return fmt.Sprintf("%d (%s)", q.Failed(), strings.Join(parts, ", "))
}
