package reportfile

import (
	"slices"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/result"
)

// recoveryRows are the rows of a step load's spike table, in the
// TelemetryRow shape so that the telemetry table renders them: each side's
// median over its repetitions with a recovery; nil when neither side has
// one. The recovery row and the breaches row are flagged gated when a gate
// of scenario vs tested recovery or recovery_breaches.
func recoveryRows(vs *compare.Scenario, bs, cs *result.ScenarioResult) []TelemetryRow {
	b, c := ofRepetitions(bs, func(r *result.Repetition) *result.Recovery { return r.Recovery }),
		ofRepetitions(cs, func(r *result.Repetition) *result.Recovery { return r.Recovery })
	if b == nil && c == nil {
		return nil
	}
	gated := func(name string) bool {
		return slices.ContainsFunc(vs.Gates, func(g compare.Gate) bool { return g.Metric == name })
	}
	rows := []struct {
		metric, title, unit string
		value               func(*result.Recovery) (float64, bool)
	}{
		{"recovery", "recovery", "s", func(r *result.Recovery) (float64, bool) { return r.Seconds, true }},
		{"recovery_breaches", "requests over slo.ttft meanwhile", "count", func(r *result.Recovery) (float64, bool) { return float64(r.Breaches), true }},
		{"before_ttft_p95", "TTFT p95 before the step", "ms", func(r *result.Recovery) (float64, bool) { return r.BeforeP95MS, true }},
		{"peak_ttft_p95", "TTFT p95 at its peak", "ms", func(r *result.Recovery) (float64, bool) { return r.PeakP95MS, true }},
	}
	out := make([]TelemetryRow, 0, len(rows)+1)
	for _, r := range rows {
		out = append(out, TelemetryRow{Metric: r.metric, Title: r.title, Unit: r.unit, Group: "recovery",
			Baseline: medianOver(b, r.value), Candidate: medianOver(c, r.value), Gated: gated(r.metric)})
	}
	notRecovered := func(reps []*result.Recovery) *float64 {
		if reps == nil {
			return nil
		}
		n := 0.0
		for _, r := range reps {
			if !r.Recovered {
				n++
			}
		}
		return &n
	}
	return append(out, TelemetryRow{Metric: "not_recovered", Title: "repetitions not recovered", Unit: "count", Group: "recovery",
		Baseline: notRecovered(b), Candidate: notRecovered(c)})
}
