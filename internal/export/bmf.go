package export

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
)

// The bmf format is Bencher Metric Format (BMF) JSON, which Bencher's json
// adapter reads (`bencher run --adapter json --file bmf.json`). Its schema is
// Bencher's own, published with the format's reference page
// (bencher.dev/docs/reference/bencher-metric-format, schema bmf.json),
// committed as testdata/schema/bmf.schema.json:
//
//	{"<benchmark>": {"<measure>": {"value": x, "lower_value": y, "upper_value": z}}}
//
// Each scenario is a benchmark, named by the scenario's name. Each metric
// the scenario measured is a measure, keyed by a slug (measureSlug:
// "ttft-p99-ms", "output-throughput-tok-s", "error-rate-pct"), which Bencher
// creates in the project the first time it sees it. value is the median over
// the repetitions, and lower_value and upper_value their minimum and
// maximum (left out with one repetition). Bencher keeps no direction in the
// file: a threshold on a latency measure wants an upper boundary, one on a
// throughput a lower boundary (docs/export.md).

// bmfMetric is one measure's values.
type bmfMetric struct {
	Value float64  `json:"value"`
	Lower *float64 `json:"lower_value,omitempty"`
	Upper *float64 `json:"upper_value,omitempty"`
}

// bmfMaxSlug is the longest measure slug Bencher accepts.
const bmfMaxSlug = 64

func bmf(r *result.Result) ([]byte, error) {
	out := map[string]map[string]bmfMetric{}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		measures := map[string]bmfMetric{}
		err := scenarioSummaries(r, s, func(m measure, sum summary) {
			v := bmfMetric{Value: round(sum.median)}
			if sum.hasSpread {
				lo, hi := round(sum.min), round(sum.max)
				v.Lower, v.Upper = &lo, &hi
			}
			measures[measureSlug(m)] = v
		})
		if err != nil {
			return nil, err
		}
		out[cleanName(s.Name)] = measures
	}
	// encoding/json writes map keys sorted: the same result always gives
	// the same bytes.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// measureSlug is the Bencher measure slug of metric m: its name in kebab
// case with a percentile's point dropped ("p99.9" is "p999"), followed by its
// unit (ms, tok-s, req-s, pct, count, mib, w, j-tok, tok-j, usd-mtok), so that
// the measure Bencher creates says what its values are in: "ttft-p99-ms",
// "ttft-p999-ms", "goodput-req-s", "error-rate-pct". Every slug is at most
// bmfMaxSlug characters of [a-z0-9-].
func measureSlug(m measure) string {
	name := strings.NewReplacer(".", "-", "_", "-").Replace(percentileNoPoint(m.Name))
	return name + "-" + unitSlug(m)
}

// percentileNoPoint drops the decimal point of a latency percentile:
// "ttft.p99.9" is "ttft.p999".
func percentileNoPoint(name string) string {
	family, stat, ok := strings.Cut(name, ".")
	if !ok || !strings.HasPrefix(stat, "p") {
		return name
	}
	return family + "." + strings.ReplaceAll(stat, ".", "")
}

// unitSlug is the unit of m's values, in characters a slug may hold.
func unitSlug(m measure) string {
	if m.Kind == metric.Fraction {
		return "pct"
	}
	switch m.unit {
	case "tok/s":
		return "tok-s"
	case "req/s":
		return "req-s"
	case "J/tok":
		return "j-tok"
	case "tok/J":
		return "tok-j"
	case "$/Mtok":
		return "usd-mtok"
	}
	return strings.ToLower(m.unit) // ms, count, mib, w
}
