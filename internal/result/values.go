package result

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/metric"
)

// Values returns the samples of a metric for the scenario: one value per
// repetition, in repetition order, in the metric's unit (milliseconds, tokens
// or requests per second, or a fraction for the error rate). Cold start has
// one value per stack start, so a scenario has at most one; none for an
// external stack.
func (s *ScenarioResult) Values(name string) ([]float64, error) {
	m, err := metric.Lookup(name)
	if err != nil {
		return nil, err
	}
	if m.Name == "cold_start" {
		if s.ColdStartMS <= 0 {
			return nil, nil
		}
		return []float64{s.ColdStartMS}, nil
	}
	out := make([]float64, 0, len(s.Repetitions))
	for i := range s.Repetitions {
		v, err := repValue(&s.Repetitions[i], m.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// repValue is one repetition's value of a per-repetition metric.
func repValue(r *Repetition, name string) (float64, error) {
	switch name {
	case "output_throughput":
		return r.OutputThroughput, nil
	case "input_throughput":
		return r.InputThroughput, nil
	case "request_throughput":
		return r.RequestThroughput, nil
	case "goodput":
		return r.Goodput, nil
	case "error_rate":
		return r.ErrorRate, nil
	}
	family, stat, ok := strings.Cut(name, ".")
	if !ok {
		return 0, fmt.Errorf("metric %s has no per-repetition value", name)
	}
	var st *Stats
	switch family {
	case "ttft":
		st = &r.TTFT
	case "tpot":
		st = &r.TPOT
	case "itl":
		st = &r.ITL
	case "e2e":
		st = &r.E2E
	default:
		return 0, fmt.Errorf("metric %s has no per-repetition value", name)
	}
	switch stat {
	case "p50":
		return st.P50, nil
	case "p90":
		return st.P90, nil
	case "p95":
		return st.P95, nil
	case "p99":
		return st.P99, nil
	case "p99.9":
		return st.P999, nil
	case "mean":
		return st.Mean, nil
	}
	return 0, fmt.Errorf("metric %s has no per-repetition value", name)
}
