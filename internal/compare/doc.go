// Package compare turns a baseline and a candidate result into a verdict: for
// every gate of every scenario, the per-repetition samples of both sides, the
// one-sided test in the bad direction, Holm's correction across the gates, the
// Hodges-Lehmann shift with its interval, and one of three outcomes
// (regression, pass, inconclusive). Before comparing it checks that the two
// results measured the same thing on the same hardware.
//
// In an A/B (Options.AB) the two sides were measured in rounds on one
// runner, and each gate compares them pair by pair (stat.DecideRounds):
// repetition r of the baseline with repetition r of the candidate. So does
// a capacity gate whose two sides drew fresh arrivals for each repetition
// with the same seed, its sample r on each side measured on arrivals of its
// own (capacityPairing); its reason says whether it was paired, and why
// not.
//
// The mathematics is in the stat subpackage; rendering is internal/report's.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package compare
