// Package stat is the mathematics of a gate: the one-sided Mann-Whitney U
// test, the Hodges-Lehmann shift and its distribution-free interval, Holm's
// correction across gates, alpha spending across sequential looks, and the
// three-outcome decision (regression, pass, inconclusive) that combines them.
// It knows nothing of results or configs: samples in, decisions out.
package stat
