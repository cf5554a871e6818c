// Package traceimport turns another tool's request or trace format into
// perfgate workload requests, so that a team can replay its own traffic
// shape instead of hand-converting it. It is what `perfgate workload import`
// runs; every format lives in its own file (openai.go, sharegpt.go,
// mooncake.go, aiperf.go), which cites the documentation it follows.
//
// Use:
//
//	res, err := traceimport.Import(f, "trace.jsonl", "openai", traceimport.Options{})
//	// res.Requests is ready for workload.Write; res.Summary says what was
//	// dropped or skipped, and why, for the user.
//
// Every importer is strict in perfgate's style: a problem is a
// *workload.LineError naming the file, the line (the element's first line
// in a JSON array) and the field path in the source's own terms, all of
// them joined (at most workload.MaxProblems). What a source holds that a
// perfgate request cannot carry (a stop sequence, a tool call id) is
// counted, never silently lost: Summary lists it. max_tokens is never
// made up: a source record without one is an error unless Options.MaxTokens
// gives one, and Summary then says how many requests took it.
//
// Reading is bounded like workload.Load: at most workload.MaxFileBytes, in
// lines of at most workload.MaxLineBytes. The requests Import returns always
// load with workload.Parse: each one is checked by it (its problems said at
// the source line), and so is the whole result.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package traceimport
