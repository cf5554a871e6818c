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
// An A/B (perfgate ab) measures both sides in rounds on one runner, and
// DecideRounds compares them pair by pair: Wilcoxon's signed-rank test on
// the paired differences (or log-ratios), the Hodges-Lehmann estimate of
// the pairs with Tukey's interval from the Walsh averages
// (SignedRankShift), the same Holm family and three outcomes. TheilSen
// measures the drift that the pairing cancelled. A single gate can be
// tested so inside DecideAll's family too (Gate.Paired): a capacity gate
// whose two sides drew the same seeded arrivals, repetition by
// repetition. ReachablePairs and PairsToDecide say what n pairs can decide.
//
// It knows nothing of results or configs: samples in, decisions out.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package stat
