// Package simstack starts perfgate's simulator in-process as a serving
// stack: a stack.Instance that session.Options.StartStack can start, stop
// and start again, with no process and no binary. Tests and benchmarks of
// whole runs use it where a process stack would add seconds of process
// start-up and nothing they measure (perfgate ab's tests and its drift
// benchmark); the end-to-end tests of the CLI use real process stacks.
//
//	st := simstack.New(func(addr string) sim.Config { return cfg })
//	res, err := session.Run(ctx, cfg, scenarios, session.Options{StartStack: st.Start})
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package simstack
