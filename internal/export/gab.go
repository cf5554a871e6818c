package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// The gab and gab-bigger formats are the custom JSON that
// github-action-benchmark (benchmark-action/github-action-benchmark) reads
// with its tools customSmallerIsBetter and customBiggerIsBetter: an array of
// {"name", "unit", "value", "range"?, "extra"?}. The fields are the
// BenchmarkResult schema of the action's src/extract.ts, which keeps
// exactly those five and throws on a file with no entry;
// testdata/schema/gab.schema.json is derived from it (its README names the
// commit).
//
// The action takes one direction per file, so a result is exported twice:
// gab holds the metrics for which smaller is better (latencies, the error
// rate, cost, ...) for tool customSmallerIsBetter, gab-bigger those for which
// bigger is better (throughputs, goodput, capacity, ...) for tool
// customBiggerIsBetter; docs/export.md shows the two steps.
//
// An entry is one metric of one scenario, named "<scenario>/<metric>"
// ("chat/ttft.p99") in the metric's unit ("ms"). value is the median over the
// repetitions; range is "± d", where d is the larger distance from the median
// to the repetitions' minimum or maximum, so that value ± d spans every
// repetition (left out with one repetition or no spread). The action's
// range parser (src/extractRangeInfo.ts) wanted a digit and at least one
// more character after "± " until recently, so a whole d is written "5.0". extra says how many
// repetitions, their extremes and what was measured (model, engine, GPUs),
// shown in the chart's tooltip.

// gabEntry is one element of the array.
type gabEntry struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	Range string  `json:"range,omitempty"`
	Extra string  `json:"extra,omitempty"`
}

func gab(r *result.Result, bigger bool) ([]byte, error) {
	what := identityLine(r)
	entries := []gabEntry{}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		err := scenarioSummaries(r, s, func(m measure, sum summary) {
			if m.HigherIsBetter != bigger {
				return
			}
			e := gabEntry{
				Name:  cleanName(s.Name) + "/" + m.Name,
				Unit:  m.unit,
				Value: round(sum.median),
			}
			extra := fmt.Sprintf("median of %d", sum.n)
			if sum.hasSpread {
				extra += fmt.Sprintf(" (min %s, max %s)", number(sum.min), number(sum.max))
				if d := sum.medianToExtremity; d > 0 {
					e.Range = "± " + gabRange(d)
				}
			}
			e.Extra = extra + "\n" + what
			entries = append(entries, e)
		})
		if err != nil {
			return nil, err
		}
	}
	if len(entries) == 0 {
		// The action refuses a file with no benchmark in it.
		dir := "smaller"
		if bigger {
			dir = "bigger"
		}
		return nil, fmt.Errorf("the result has no metric for which %s is better", dir)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(entries); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gabRange is d as the action's range parser reads it: a digit and at least
// one more character ("5.0", not "5").
func gabRange(d float64) string {
	s := number(d)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// identityLine says in one line what the result measured: model, engine and
// version, GPUs ("model llama-8b · engine vllm 0.6.3 · 2x H100"), each value
// cleaned of control characters and cut; "" when none is known.
func identityLine(r *result.Result) string {
	id := r.Identity
	var parts []string
	add := func(label, v string) {
		if v = strings.TrimSpace(textsafe.Cut(v, 120)); v != "" {
			parts = append(parts, label+" "+v)
		}
	}
	add("model", id.Target.Model)
	add("engine", strings.TrimSpace(id.Server.Engine+" "+id.Server.Version))
	add("gpu", result.DescribeGPUs(id.GPUs))
	if id.Simulated {
		parts = append(parts, "simulated")
	}
	return strings.Join(parts, " · ")
}
