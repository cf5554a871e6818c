package report

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
)

// overloadText is a side's verdict in a report's words: "overloaded
// (declared): offered 12.0 req/s, served 8.6 req/s; the queue grew through
// every repetition". The figures come from a report file, untrusted, and
// are only ever printed as numbers.
func overloadText(whose string, v *result.OverloadVerdict) string {
	return fmt.Sprintf("%s%s: %s", whose, v.Label(), v.Sentence())
}

// overloadBlocks are the paragraphs that label an overloaded scenario in
// the text, markdown and HTML reports, the candidate's first.
func overloadBlocks(sd *reportfile.ScenarioData, names sides) []block {
	if sd == nil || sd.Overload == nil {
		return nil
	}
	var out []block
	if v := sd.Overload.Candidate; v != nil && v.Any() {
		out = append(out, block{Para: &para{Text: plain(upperFirst(overloadText("", v)))}})
	}
	if v := sd.Overload.Baseline; v != nil && v.Any() {
		out = append(out, block{Para: &para{Text: plain(overloadText(names.Base+": ", v))}})
	}
	return out
}

// overloadLine is the run summary's line for an overloaded scenario; ""
// when the server kept up (or the scenario is a capacity search, which
// judges each probe itself).
func overloadLine(s *result.ScenarioResult) string {
	v := s.Overload()
	if !v.Any() {
		return ""
	}
	label := "OVERLOADED"
	if v.Declared {
		label = v.Label()
	}
	return fmt.Sprintf("   %s: %s", label, v.Sentence())
}
