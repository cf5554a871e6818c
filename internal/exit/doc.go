// Package exit maps errors and verdicts to perfgate's process exit codes, in
// one place.
//
// The codes (README, "Exit codes"): 0 pass, 1 regression, 2 usage or input error, 3 the run
// itself failed. Code wraps nothing it does not know about as a pass: an error
// that carries no code is a failed run (3), so a broken run can never exit 0.
//
// ForOutcome is the one mapping from a verdict's outcome and the policy in
// force (--fail-on, compare.on_inconclusive) to an exit code; compare,
// report and the commands all ask it. It takes the outcome as a string so
// that this package imports nothing of perfgate's.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package exit
