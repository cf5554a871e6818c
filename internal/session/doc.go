// Package session runs one measurement of perfgate as a library: Run turns a
// config and its prepared scenarios into a *result.Result.
//
// A run owns the life of the serving stack: it starts it (again, for a
// scenario that asks for a fresh one), waits until it is ready, identifies
// it, opens telemetry, warms each scenario up to steady state under a crash
// watch, measures its repetitions, answers its eval items, and stops the
// stack on every path out. `perfgate run` and `perfgate gate` drive it; so
// can any other way of running the pipeline (an A/B of two stacks, a
// capacity search).
//
// Everything a run reaches outside itself is a field of Options, with the
// real one as the default: the stack starter, the sender, telemetry, the
// clock, the limit on open files, and where progress goes. A test runs a
// whole session against a fake stack and the in-process simulator:
//
//	cfg, _ := config.Parse(yaml, "perfgate.yaml")
//	scenarios, _ := run.Prepare(cfg, nil)
//	res, err := session.Run(ctx, cfg, scenarios, session.Options{
//		StartStack: fakeStart, // else stack.Start
//		More:       func(p *result.ScenarioResult) bool { return len(p.Repetitions) < 3 },
//	})
//
// Its errors carry their exit codes (internal/exit): a run that failed is
// exit.RunError, a target that cannot be built from the config is
// exit.UsageError.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package session
