// Package capacity finds the highest load at which a scenario's SLOs hold:
// it brackets the capacity (doubling or halving from a start), then bisects
// the bracket to a resolution, judging each probe on its own repetitions by
// an explicit rule (every repetition, or a one-sided bound), and reports an
// interval with one capacity sample per repetition for the capacity gate.
//
// The package is pure: it measures nothing itself. The caller (the session)
// gives it a Probe that warms the stack up at a load and measures its
// repetitions, so the search is tested against fake probes with a known
// boundary and run for real against any stack.
//
//	c, reps, err := capacity.Search(ctx, spec, probe, log)
//	// c.Holds, c.Breaks: the capacity lies in [Holds, Breaks).
//	// reps: the repetitions at the capacity point (c.Probes[c.At]), whole.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package capacity
