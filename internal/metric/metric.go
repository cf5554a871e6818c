// Package metric is the catalogue of what perfgate can gate on: each metric's
// name as written in perfgate.yaml (`ttft.p99`, `output_throughput`), its
// unit, and which direction is better. Config validates gate names against it,
// result extracts per-repetition samples by it, and compare and the reports
// read direction and unit from it, so a metric is defined once.
package metric

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/suggest"
)

// Kind says what a metric's values are, which decides its unit and the units
// an absolute tolerance may be written in.
type Kind int

const (
	// Latency values are milliseconds; an absolute tolerance is a Go
	// duration (`+20ms`).
	Latency Kind = iota
	// TokenRate values are tokens per second (`-100 tok/s`).
	TokenRate
	// RequestRate values are requests per second (`-0.5 req/s`).
	RequestRate
	// Fraction values are shares in [0,1]; an absolute tolerance is in
	// percentage points (`+1 points`).
	Fraction
)

// Info describes one metric.
type Info struct {
	// Name is the metric's name in configs and reports.
	Name string
	// Kind decides the unit.
	Kind Kind
	// HigherIsBetter is true for throughputs and goodput, false for
	// latencies and the error rate.
	HigherIsBetter bool
	// Title is a short human label ("TTFT p99").
	Title string
	// PerStart is true for a metric measured once per stack start (cold
	// start) rather than once per repetition.
	PerStart bool
	// Quality is true for an eval suite's metric (accuracy, score,
	// identical): compared item by item, gated under quality.gates, with a
	// tolerance in points.
	Quality bool
}

// Unit is the unit of the metric's values as reports print it.
func (i Info) Unit() string {
	switch i.Kind {
	case Latency:
		return "ms"
	case TokenRate:
		return "tok/s"
	case RequestRate:
		return "req/s"
	default:
		return "%"
	}
}

// Better is "lower" or "higher", as benchfmt's better= metadata spells it.
func (i Info) Better() string {
	if i.HigherIsBetter {
		return "higher"
	}
	return "lower"
}

// Latency families and the statistics each has.
var (
	latencyFamilies = []struct{ name, title string }{
		{"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2e", "E2E"},
	}
	// LatencyStats are the statistics of a latency distribution, in the
	// order reports list them.
	LatencyStats = []string{"p50", "p90", "p95", "p99", "p99.9", "mean"}
)

var catalogue = build()

func build() []Info {
	var all []Info
	for _, f := range latencyFamilies {
		for _, s := range LatencyStats {
			all = append(all, Info{Name: f.name + "." + s, Kind: Latency, Title: f.title + " " + s})
		}
	}
	return append(all,
		Info{Name: "output_throughput", Kind: TokenRate, HigherIsBetter: true, Title: "output throughput"},
		Info{Name: "input_throughput", Kind: TokenRate, HigherIsBetter: true, Title: "input throughput"},
		Info{Name: "request_throughput", Kind: RequestRate, HigherIsBetter: true, Title: "request throughput"},
		Info{Name: "goodput", Kind: RequestRate, HigherIsBetter: true, Title: "goodput"},
		Info{Name: "error_rate", Kind: Fraction, Title: "error rate"},
		Info{Name: "cold_start", Kind: Latency, Title: "cold start", PerStart: true},
	)
}

// qualityMetrics are the metrics of an eval suite, compared item by item
// with the baseline's outcomes for the same items.
var qualityMetrics = []Info{
	// accuracy: the share of items whose output passed its scorer.
	{Name: "accuracy", Kind: Fraction, HigherIsBetter: true, Title: "accuracy", Quality: true},
	// score: the mean score (suites with a continuous scorer, reference).
	{Name: "score", Kind: Fraction, HigherIsBetter: true, Title: "mean score", Quality: true},
	// identical: the share of items whose output is identical to the
	// baseline's (output drift).
	{Name: "identical", Kind: Fraction, HigherIsBetter: true, Title: "identical outputs", Quality: true},
}

// QualityMetrics returns the metrics of an eval suite, in report order.
func QualityMetrics() []Info { return slices.Clone(qualityMetrics) }

// All returns every metric, in report order.
func All() []Info { return slices.Clone(catalogue) }

// Lookup returns the metric called name, or an error that lists the close
// names.
func Lookup(name string) (Info, error) {
	for _, m := range slices.Concat(catalogue, qualityMetrics) {
		if m.Name == name {
			return m, nil
		}
	}
	var names []string
	for _, m := range slices.Concat(catalogue, qualityMetrics) {
		names = append(names, m.Name)
	}
	if s, ok := suggest.Closest(name, names); ok {
		return Info{}, fmt.Errorf("unknown metric %q (did you mean %q?)", name, s)
	}
	return Info{}, fmt.Errorf("unknown metric %q (known: %s)", name, strings.Join(names, ", "))
}

// Order is a metric's position in report order, for sorting.
func Order(name string) int {
	for i, m := range slices.Concat(catalogue, qualityMetrics) {
		if m.Name == name {
			return i
		}
	}
	return len(catalogue) + len(qualityMetrics)
}
