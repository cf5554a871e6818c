package reportfile

import (
	"slices"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// recoveryRows are the rows of a step load's spike table, in the
// TelemetryRow shape so that the telemetry table renders them: each side's
// median over its repetitions with a recovery; nil when neither side has
// one. The recovery row and the breaches row are flagged gated when a gate
// of scenario vs tested recovery or recovery_breaches.
func recoveryRows(vs *compare.Scenario, bs, cs *result.ScenarioResult) []TelemetryRow {
	b, c := recoveries(bs), recoveries(cs)
	if b == nil && c == nil {
		return nil
	}
	gated := func(name string) bool {
		return slices.ContainsFunc(vs.Gates, func(g compare.Gate) bool { return g.Metric == name })
	}
	rows := []struct {
		metric, title, unit string
		value               func(*result.Recovery) float64
	}{
		{"recovery", "recovery", "s", func(r *result.Recovery) float64 { return r.Seconds }},
		{"recovery_breaches", "requests over slo.ttft meanwhile", "count", func(r *result.Recovery) float64 { return float64(r.Breaches) }},
		{"before_ttft_p95", "TTFT p95 before the step", "ms", func(r *result.Recovery) float64 { return r.BeforeP95MS }},
		{"peak_ttft_p95", "TTFT p95 at its peak", "ms", func(r *result.Recovery) float64 { return r.PeakP95MS }},
	}
	out := make([]TelemetryRow, 0, len(rows)+1)
	for _, r := range rows {
		out = append(out, TelemetryRow{Metric: r.metric, Title: r.title, Unit: r.unit, Group: "recovery",
			Baseline: recoveryMedian(b, r.value), Candidate: recoveryMedian(c, r.value), Gated: gated(r.metric)})
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

// recoveries are the recoveries of the repetitions of s that have one; nil
// when none has.
func recoveries(s *result.ScenarioResult) []*result.Recovery {
	if s == nil {
		return nil
	}
	var out []*result.Recovery
	for i := range s.Repetitions {
		if r := s.Repetitions[i].Recovery; r != nil {
			out = append(out, r)
		}
	}
	return out
}

// recoveryMedian is the median of value over reps; nil without any.
func recoveryMedian(reps []*result.Recovery, value func(*result.Recovery) float64) *float64 {
	if len(reps) == 0 {
		return nil
	}
	xs := make([]float64, len(reps))
	for i, r := range reps {
		xs[i] = value(r)
	}
	m := stat.FiniteMedian(xs)
	if !finite(m) {
		return nil
	}
	return &m
}
