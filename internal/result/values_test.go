package result

import (
	"errors"
	"testing"

	"github.com/perfgate/perfgate/internal/metric"
)

// Every metric of the catalogue but the eval suites' has a value in a
// repetition that measured everything: the result knows on its own which
// field holds which metric, and this keeps the two in step.
func TestValuesOfEveryMetric(t *testing.T) {
	r, err := Read("testdata/v1/quality-cost-telemetry.json")
	if err != nil {
		t.Fatal(err)
	}
	s := &r.Scenarios[0]
	one := 1.0
	for i := range s.Repetitions {
		s.Repetitions[i].GPU = &GPUTelemetry{Source: "nvml", MemoryPeakMiB: 1000, UtilizationMean: &one,
			PowerMeanW: &one, EnergyJ: &one, EnergyPerToken: &one, TokensPerJoule: &one}
		s.Repetitions[i].PrefillThroughput, s.Repetitions[i].DecodeThroughput = &one, &one // a v1 result has neither
		s.Repetitions[i].Structured, s.Repetitions[i].StructuredErrors, s.Repetitions[i].StructuredErrorRate = 10, 1, 0.1
		s.Repetitions[i].Reasoning = &ReasoningStats{Requests: 4, ReasoningTokens: 400, AnswerTokens: 40, TTFA: Stats{Count: 4, P50: 1, P95: 2, P99: 3}}
		s.Repetitions[i].Recovery = &Recovery{StepS: 30, WindowS: 5, Recovered: true, Seconds: 12.5, Breaches: 40}
		s.Repetitions[i].Utilization = &Utilization{MBU: &one, MFU: &one}
	}
	if _, err := s.Values("capacity"); !errors.As(err, new(*NotMeasuredError)) {
		t.Errorf("Values(capacity) of a scenario with no search = %v, want a *NotMeasuredError", err)
	}
	s.Capacity = &Capacity{}
	for i := range s.Repetitions {
		s.Capacity.Samples = append(s.Capacity.Samples, CapacitySample{Repetition: i + 1, RequestRate: float64(10 + i), OutputThroughput: float64(100 + i)})
	}
	for _, m := range metric.All() {
		if m.Quality {
			continue
		}
		if m.Name == "headroom" {
			// A headroom search's only: a capacity search has none.
			if _, err := s.Values(m.Name); !errors.As(err, new(*NotMeasuredError)) {
				t.Errorf("Values(headroom) of a capacity search = %v, want a *NotMeasuredError", err)
			}
			continue
		}
		want := len(s.Repetitions)
		if m.PerStart {
			want = 1
		}
		v, err := s.Values(m.Name)
		if err != nil || len(v) != want {
			t.Errorf("Values(%s) = %d values, %v; want %d values", m.Name, len(v), err, want)
		}
		if m.Name == "recovery" && len(v) > 0 && v[0] != 12500 {
			t.Errorf("Values(recovery) = %v, want the recovery in milliseconds, 12500", v)
		}
		if m.Name == "capacity" && len(v) > 1 && (v[0] != 10 || v[1] != 11) {
			t.Errorf("Values(capacity) = %v, want the samples' request rates 10, 11, ...", v)
		}
	}
	var missing *NotMeasuredError
	s.Repetitions[0].PrefillThroughput = nil
	if _, err := s.Values("prefill_throughput"); !errors.As(err, &missing) {
		t.Errorf("Values(prefill_throughput) of a repetition without it = %v, want a *NotMeasuredError", err)
	}
	if _, err := s.Values("ttft.p42"); err == nil {
		t.Error("Values(ttft.p42) = nil error, want one: no such metric")
	}
}
