// Package quality is perfgate's eval suites: the suite file format
// (evals/*.jsonl, one item a line), its strict loading with file:line errors,
// and the scorers that turn a model's output into a score and a pass.
//
// A suite file looks like:
//
//	{"id":"capital-fr","messages":[{"role":"user","content":"Capital of France? One word."}],"scorer":"exact","expected":"Paris"}
//	{"id":"sum","prompt":"2+2=","max_tokens":8,"scorer":"numeric","expected":4}
//
// Load (or Parse) reads and checks a suite, compiling every regular
// expression and JSON Schema, and reports every problem as a
// *workload.LineError ("evals/facts.jsonl:3: scorer: unknown scorer ...").
// Item.Score scores one output; it accepts any text and never panics.
// Item.CorrectAnswer and Item.WrongAnswer make a response the item's scorer
// passes and one it fails: what `perfgate sim --answers` serves, and what
// tests use.
//
// See docs/evals.md for the format, every scorer and its options, and the
// normalisation and extraction rules.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package quality
