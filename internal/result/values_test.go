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
	}
	for _, m := range metric.All() {
		if m.Quality {
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
