// Package result is the shared language of perfgate's pipeline: the versioned
// result file that `perfgate run` writes and `compare`, `report` and `baseline`
// read, the per-request records, and the aggregation of records into
// per-repetition summaries with HDR histograms.
//
// A sample, for the statistics downstream, is one value per repetition: the p95
// TTFT of repetition 3 is one value. So a Result keeps every repetition's summary
// (and its encoded histograms) rather than one pooled figure.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package result
