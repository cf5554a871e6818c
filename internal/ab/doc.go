// Package ab is `perfgate ab` as a library: a base and a candidate stack
// measured interleaved on one runner, and compared pair by pair.
//
// A stored baseline was measured on another day, maybe on another runner,
// under another neighbour and another temperature; a drift of the runner
// between the two shows up as a change of the pull request. An A/B
// measures both in one job, in rounds: round r measures one repetition of
// each scenario on each arm, base then candidate in odd rounds and
// candidate then base in even ones (ABBA), each arm warmed up to steady
// state before its repetition. Repetition r of both arms is a pair, taken
// minutes or seconds apart under the same drift, and the verdict tests
// the paired differences (compare.Options.AB, stat.DecideRounds).
//
// The two stacks are held in one of two ways (config.AB.Mode): co-resident,
// both up at once on different ports, the load switched between them; or
// swap, one at a time, the running one stopped and the other started at
// every change of arm, so that every start is a cold-start sample.
//
// An arm's stack warms a scenario up fully after every start; where it
// stayed up since its last warm-up of the scenario (co-resident mode after
// round 1, swap mode where ABBA leaves the arm running across a round's
// boundary) a round gives it a short re-warm instead (config.AB.Rewarm).
// Every warm-up's passes are salted for its arm and round, so that no
// prompt cache answers one from an earlier warm-up or repetition; the
// repetitions of round r are salted alike on both arms, as repetition r of
// any run, so that the pair sends the same text.
//
//	if err := ab.Check(base, candidate, baseScenarios, candScenarios); err != nil { ... }
//	out, err := ab.Run(ctx, base, candidate, baseScenarios, candScenarios, ab.Options{Mode: config.ABSwap})
//	// out.Base, out.Candidate: each arm's result; out.Verdict: the paired verdict
//
// Rounds are sequential as perfgate gate's repetitions are: the
// candidate's ab.rounds.min rounds, then more while a gate is
// undecided, up to ab.rounds.max, with alpha spent over the looks
// (compare.Sequential). Errors carry their exit codes (internal/exit).
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package ab
