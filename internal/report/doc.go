// Package report renders results for people: the terminal summary that
// `perfgate run` prints, and the markdown, text and HTML views of a verdict
// and of report files (internal/reportfile, which builds them). Rendering
// is kept apart from measurement and statistics: it reads a result.Result
// or a reportfile.Document and writes text, each format behind a Reporter.
//
// Everything from the server that a report shows (engine names, versions) is
// untrusted text: it is stripped of control characters and truncated.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package report
