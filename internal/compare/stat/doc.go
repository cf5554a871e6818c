// Package stat is the mathematics of a gate: the one-sided Mann-Whitney U
// test, the Hodges-Lehmann shift and its distribution-free interval, Holm's
// correction across gates, alpha spending across sequential looks, and the
// three-outcome decision (regression, pass, inconclusive) that combines them.
//
// Quality gates compare eval items paired, each answered once by each side:
// McNemar's exact test and the Agresti–Min interval for pass rates, the
// Wilcoxon signed-rank test and a t interval for mean scores, an exact
// binomial test and the Wilson interval for the share of identical outputs.
// DecideAll decides latency and quality gates as one family, under one Holm
// adjustment.
//
// It knows nothing of results or configs: samples in, decisions out.
package stat
