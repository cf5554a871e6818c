// Package problem is the one shape of "what is wrong with a file, and
// where" that perfgate's readers report: the file, the line and column
// where the file says, the field path of the value, and what is wrong.
// Configs (internal/config) and results and reports (internal/result)
// report their problems with it, so that every message reads alike:
// "perfgate.yaml:14:11: scenarios[1].load.rate: must be > 0, got -2".
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package problem
