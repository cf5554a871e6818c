// Package export writes a perfgate result file in the formats other tools
// read, for `perfgate export --format`:
//
//   - bmf: Bencher Metric Format JSON, for `bencher run --adapter json`
//     (bmf.go);
//   - gab and gab-bigger: github-action-benchmark's custom JSON, for its
//     tools customSmallerIsBetter and customBiggerIsBetter (gab.go);
//   - csv: a table for a spreadsheet, one row per scenario and metric, or per
//     repetition (csv.go);
//   - vllm: the JSON `vllm bench serve --save-result` writes, one object per
//     repetition (vllm.go).
//
// The Go benchmark format, for benchstat, is WriteBenchfmt.
//
// Every format is checked in this package's tests against a schema derived
// from the consuming tool's own documentation or source; testdata/schema
// says where each came from.
//
// # What is written
//
// The metrics are the catalogue's (metric.All), in its order: the latency
// percentiles and means, throughputs, goodput, error rate, cold start, a
// capacity search's estimates, and the engine, GPU and cost telemetry. A
// percentile the catalogue gains (metric.LatencyStats) is written by every
// format with no change here; measures is the one place that decides the
// unit each metric is written in. Eval suites' quality metrics are not
// written: they are item-by-item comparisons with a baseline, not figures of
// one result.
//
// A metric a scenario did not measure is left out, never written as zero:
// telemetry whose source was unavailable (result.NotMeasuredError), a
// latency distribution with no requests in it (TPOT of one-token replies),
// cold start on an external stack, capacity outside a capacity search. A
// value that is not finite is left out too, so NaN and ±Inf never reach a
// JSON file (where they are not valid) or a spreadsheet.
//
// The summary formats (bmf, gab, csv by scenario) give each scenario's
// figure as the median over its repetitions (the figure perfgate's own
// summary shows and its gates compare), with the repetitions' minimum and
// maximum as its spread.
//
// Units are the catalogue's (metric.Info.Unit), but shares (the error rate,
// KV-cache use, GPU utilisation, the prefix-cache hit rate), which the
// result holds as fractions, are written in percent: 2.5 for 2.5 %.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package export
