package result

import "encoding/json"

// fromV1 converts r, decoded from data, a result of schema v1, to this
// version. v1 held the same fields under the same names as v2 but for the
// SLOs, which were Go durations in nanoseconds ({"ttft": 250000000}); they
// become milliseconds (250): the count of nanoseconds divided by 10⁶, the
// nearest float64 to its milliseconds, which JSON writes as the exact
// decimal (250, 13.5, 1.1) and the aggregator rounds back to the same
// nanoseconds.
func fromV1(r *Result, data []byte) error {
	var v1 struct {
		Scenarios []struct {
			SLO struct {
				TTFT int64 `json:"ttft"`
				TPOT int64 `json:"tpot"`
				E2E  int64 `json:"e2e"`
			} `json:"slo"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &v1); err != nil {
		return err
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	for i := range min(len(r.Scenarios), len(v1.Scenarios)) {
		slo := v1.Scenarios[i].SLO
		r.Scenarios[i].SLO = SLO{TTFT: ms(slo.TTFT), TPOT: ms(slo.TPOT), E2E: ms(slo.E2E)}
	}
	r.Schema = Schema
	return nil
}
