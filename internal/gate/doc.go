// Package gate is `perfgate gate` as a library: what happens around a run
// that compares it with its baselines.
//
// Prepare reads and checks every baseline before anything runs (a corrupt
// baseline, one that measured something else, one that cannot answer a
// telemetry gate, or one of another salting costs no GPU time); the Gate's
// More decides, look by look, whether a scenario needs another repetition
// (compare.Sequential keeps the false-regression rate within compare.alpha
// however many looks are taken); Verdict compares the finished result; and
// Document builds the report document that every renderer reads.
//
//	g, err := gate.Prepare(cfg, scenarios, baseline.Store{Dir: cfg.BaselinesDir()}, false)
//	res, err := session.Run(ctx, cfg, scenarios, session.Options{More: g.More})
//	v, err := g.Verdict(res)
//	doc, warnings, err := g.Document(v, res)
//
// Errors that are the input's fault carry exit.UsageError (internal/exit).
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package gate
