package reportfile

import (
	"slices"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/result"
)

// recoveryRows are the rows of a step load's spike table, or a fault's, in
// the TelemetryRow shape so that the telemetry table renders them: each
// side's median over its repetitions with a recovery; nil when neither
// side has one. The recovery row and the breaches row are flagged gated
// when a gate of scenario vs tested recovery or recovery_breaches. of is
// what was recovered from: "step" or "fault".
func recoveryRows(vs *compare.Scenario, bs, cs *result.ScenarioResult) (_ []TelemetryRow, of string) {
	b, c := ofRepetitions(bs, func(r *result.Repetition) *result.Recovery { return r.Recovery }),
		ofRepetitions(cs, func(r *result.Repetition) *result.Recovery { return r.Recovery })
	if b == nil && c == nil {
		return nil, ""
	}
	bf, cf := ofRepetitions(bs, func(r *result.Repetition) *result.Fault { return r.Fault }),
		ofRepetitions(cs, func(r *result.Repetition) *result.Fault { return r.Fault })
	of, event := "step", "the step"
	if bf != nil || cf != nil {
		of, event = "fault", "the fault"
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
		{"before_ttft_p95", "TTFT p95 before " + event, "ms", func(r *result.Recovery) (float64, bool) { return r.BeforeP95MS, true }},
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
	out = append(out, TelemetryRow{Metric: "not_recovered", Title: "repetitions not recovered", Unit: "count", Group: "recovery",
		Baseline: notRecovered(b), Candidate: notRecovered(c)})
	if of == "fault" {
		out = append(out, faultRows(bf, cf)...)
	}
	return out, of
}

// faultRows are a fault's own rows beside its recovery: each side's median
// over its repetitions.
func faultRows(b, c []*result.Fault) []TelemetryRow {
	rows := []struct {
		metric, title, unit string
		value               func(*result.Fault) (float64, bool)
	}{
		{"fault_errors", "errors from the fault on", "count", func(f *result.Fault) (float64, bool) { return float64(f.Errors), true }},
		{"replica_back", "replica back after", "s", func(f *result.Fault) (float64, bool) {
			if f.BackS == nil {
				return 0, false
			}
			return *f.BackS - f.KilledS, true
		}},
		{"goodput_before", "goodput before the fault", "req/s", func(f *result.Fault) (float64, bool) { return deref(f.BeforeRPS) }},
		{"goodput_down", "goodput while the replica was down", "req/s", func(f *result.Fault) (float64, bool) { return deref(f.DuringRPS) }},
	}
	out := make([]TelemetryRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, TelemetryRow{Metric: r.metric, Title: r.title, Unit: r.unit, Group: "recovery",
			Baseline: medianOver(b, r.value), Candidate: medianOver(c, r.value)})
	}
	return out
}

// deref is *x and true, or false for nil: a figure not measured.
func deref(x *float64) (float64, bool) {
	if x == nil {
		return 0, false
	}
	return *x, true
}
