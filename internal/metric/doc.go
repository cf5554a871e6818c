// Package metric is the catalogue of what perfgate can gate on: each metric's
// name as written in perfgate.yaml (`ttft.p99`, `output_throughput`), its
// unit, and which direction is better. Config validates gate names against it,
// result extracts per-repetition samples by it, and compare and the reports
// read direction and unit from it, so a metric is defined once.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package metric
