package metric

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A subset metric is a metric of some of a repetition's requests, measured
// apart beside the whole: `ttft.p95@structured` is the TTFT p95 of the
// requests that asked for JSON or tools, `tpot.p50@model:sql-lora` the
// TPOT p50 of those sent to adapter sql-lora. It lets a scenario that mixes
// kinds of traffic gate one kind alone.
const (
	// SubsetSep separates a metric from its subset.
	SubsetSep = "@"
	// SubsetStructured are the requests that asked for structured output
	// (a response_format of JSON, or tools).
	SubsetStructured = "structured"
	// SubsetFree are the others, where a repetition had both kinds.
	SubsetFree = "free"
	// SubsetColdAdapter are the first requests to each adapter after a
	// scenario's cold_adapters reload; SubsetWarmAdapter the adapters'
	// other requests.
	SubsetColdAdapter = "cold-adapter"
	SubsetWarmAdapter = "warm-adapter"
	// ModelSubsetPrefix starts a model's subset: "model:" and its name.
	ModelSubsetPrefix = "model:"
	// maxModelName bounds a model's name in a subset.
	maxModelName = 256
)

// subsetBases are the metrics, beside the latency statistics, that a
// subset has.
var subsetBases = []string{"output_throughput", "decode_throughput", "error_rate"}

// ModelSubset is the subset name of the requests sent to model.
func ModelSubset(model string) string { return ModelSubsetPrefix + model }

// Subset splits a subset metric's name into the metric and the subset
// ("ttft.p95@structured" is ttft.p95 and structured); ok is false for a
// name without SubsetSep. It does not check either part: Lookup does.
func Subset(name string) (base, subset string, ok bool) {
	return strings.Cut(name, SubsetSep)
}

// subsetInfo is the Info of subset metric name; ok is false for a name
// without SubsetSep.
func subsetInfo(name string) (Info, bool, error) {
	base, subset, ok := Subset(name)
	if !ok {
		return Info{}, false, nil
	}
	title, err := subsetTitle(subset)
	if err != nil {
		return Info{}, true, fmt.Errorf("metric %q: %w", name, err)
	}
	m, err := Lookup(base)
	if err != nil {
		return Info{}, true, err
	}
	if m.Group != GroupLatency || m.PerStart || strings.HasPrefix(base, "ttfa.") || RecoveryOnly(base) {
		if !slices.Contains(subsetBases, base) {
			return Info{}, true, fmt.Errorf("metric %q: a subset (%s%s) has the latency statistics (ttft, tpot, itl, e2e) and %s, not %s",
				name, SubsetSep, subset, strings.Join(subsetBases, ", "), base)
		}
	}
	m.Name, m.Title = name, m.Title+" ("+title+")"
	m.Doc = m.Doc + ", of the " + title + " requests alone"
	m.Subset = subset
	return m, true, nil
}

// subsetTitle checks a subset's name and says it in words.
func subsetTitle(subset string) (string, error) {
	switch {
	case subset == SubsetStructured, subset == SubsetFree:
		return subset, nil
	case subset == SubsetColdAdapter, subset == SubsetWarmAdapter:
		return strings.Replace(subset, "-", " ", 1), nil
	case strings.HasPrefix(subset, ModelSubsetPrefix):
		model := strings.TrimPrefix(subset, ModelSubsetPrefix)
		// What a workload line's model may be: any name of at most 256
		// bytes without control characters (a YAML key with a space is
		// quoted).
		if model == "" || len(model) > maxModelName || !utf8.ValidString(model) || strings.IndexFunc(model, unicode.IsControl) >= 0 {
			return "", fmt.Errorf("want %s<a model's name, at most %d bytes, no control characters> after %s", ModelSubsetPrefix, maxModelName, SubsetSep)
		}
		return "model " + model, nil
	}
	return "", fmt.Errorf("unknown subset %q after %s: want %s, %s, %s, %s or %s<model>", subset, SubsetSep,
		SubsetStructured, SubsetFree, SubsetColdAdapter, SubsetWarmAdapter, ModelSubsetPrefix)
}
