// Package frontier is the quality-cost frontier (perfgate report
// --frontier): several result files, one per configuration of a model,
// quantisation and engine, each with a capacity search and eval suites,
// placed by each suite's accuracy against the cost per million output
// tokens and the output throughput at capacity, with the Pareto-optimal
// configurations and what dominates the rest. internal/report renders it.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package frontier
