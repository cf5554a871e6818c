package resulttest

import "github.com/perfgate/perfgate/internal/result"

// WithPercentiles gives stats the extra percentiles p75 and p99.99, between
// their neighbours.
func WithPercentiles(s result.Stats) result.Stats {
	s.Percentiles = map[string]float64{"p75": (s.P50 + s.P90) / 2, "p99.99": (s.P999 + s.Max) / 2}
	return s
}

// PercentilesResult is a result whose config listed p50, p75, p99 and
// p99.99.
func PercentilesResult() *result.Result {
	var reps []result.Repetition
	for i, ttft := range []float64{30, 34, 31} {
		r := Rep(i+1, ttft)
		r.TTFT, r.TPOT, r.ITL, r.E2E = WithPercentiles(r.TTFT), WithPercentiles(r.TPOT), WithPercentiles(r.ITL), WithPercentiles(r.E2E)
		reps = append(reps, r)
	}
	return &result.Result{
		Schema:      result.Schema,
		Percentiles: []string{"p50", "p75", "p99", "p99.99"},
		Identity: result.Identity{PerfgateVersion: "v0.1.0",
			Target: result.Target{BaseURL: "http://127.0.0.1:8000", API: "chat", Model: "m"}},
		Scenarios: []result.ScenarioResult{{Name: "chat", Workload: "synth", WorkloadHash: "sha256:abc",
			Load: result.Load{Type: "closed", Concurrency: 8}, Repetitions: reps}},
	}
}
