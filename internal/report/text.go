package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/stat"
)

// The terminal renderer: a view as plain text, in the spirit of benchstat.
// Every untrusted text goes through clean (verdictClean).

// emitVerdictText renders v for a terminal: per scenario a header line and
// an aligned table of its gates (each side's median with its interval as ±
// percent, the Hodges-Lehmann change with its interval, the adjusted
// one-sided p, the tolerance and the outcome), the reasons and warnings
// that qualify them, the metrics shown but not gated, and the eval suites;
// then what changed between the two results, the mismatches compared
// anyway, the run's warnings, and a last line with the verdict.
func emitVerdictText(w io.Writer, v *compare.Verdict) error {
	return writeText(w, verdictView(v))
}

// emitText renders docs for a terminal: one document is its verdict's text,
// with each scenario's engine, GPU and cost medians and the telemetry
// sources that were unavailable (an A/B's opens with a line saying so);
// several get a section each, headed by the job's title, and a last line
// with the overall verdict.
func emitText(w io.Writer, docs []*reportfile.Document) error {
	if len(docs) == 0 {
		return errNoDocuments
	}
	return writeText(w, buildView(docs))
}

// writeText writes v for a terminal.
func writeText(w io.Writer, v *view) error {
	p := &verdictPrinter{w: w}
	if !v.Merged {
		textKind(p, v.Docs[0].Headline)
		textMeasured(p, v.Docs[0].Measured)
		textDoc(p, &v.Docs[0])
		return p.err
	}
	for i := range v.Docs {
		p.printf("=== %s\n\n", verdictClean(v.Docs[i].Title))
		textKind(p, v.Docs[i].Headline)
		textMeasured(p, v.Docs[i].Measured)
		textDoc(p, &v.Docs[i])
		p.println()
	}
	p.println("overall: " + textOf(v.Headline.Summary))
	return p.err
}

// textKind is, first, how a verdict was reached when not against a stored
// baseline (an A/B), and a blank line; nothing otherwise.
func textKind(p *verdictPrinter, h headline) {
	if len(h.Kind) > 0 {
		p.println(textOf(h.Kind))
		p.println()
	}
}

// textMeasured is what was measured, and a blank line; nothing when not
// known.
func textMeasured(p *verdictPrinter, m sentence) {
	if len(m) > 0 {
		p.println("measured: " + textOf(m))
		p.println()
	}
}

// textDoc is a document's blocks, a blank line apart, and its verdict line.
func textDoc(p *verdictPrinter, d *docView) {
	n := 0
	for _, b := range d.Blocks {
		if !b.shows(mediumText, detailFull) {
			continue
		}
		if n > 0 {
			p.println()
		}
		textBlock(p, b, "")
		n++
	}
	if n > 0 {
		p.println()
	}
	p.println("verdict: " + textOf(d.Verdict))
}

// textBlocks writes blocks at indent, with no blank lines between them.
func textBlocks(p *verdictPrinter, blocks []block, indent string) {
	for _, b := range blocks {
		if b.shows(mediumText, detailFull) {
			textBlock(p, b, indent)
		}
	}
}

// textBlock writes b at indent: a heading line over its content indented
// two more, a tab-aligned table, a list a line per item. A terminal draws
// no charts.
func textBlock(p *verdictPrinter, b block, indent string) {
	switch {
	case b.Section != nil:
		s := b.Section
		line := indent + lowerFirst(s.Label) + " " + verdictClean(s.Name)
		for _, f := range []string{s.Facts, s.Remark} {
			if f != "" {
				line += " · " + f
			}
		}
		p.println(line)
		textBlocks(p, s.Blocks, indent+"  ")
	case b.Table != nil:
		textTable(p, b.Table, indent)
	case b.List != nil:
		l := b.List
		if l.Title != "" {
			title := lowerFirst(l.Title)
			if l.Aside != "" {
				title += " (" + l.Aside + ")"
			}
			p.println(indent + title + ":")
			indent += "  "
		}
		for _, it := range l.Items {
			p.println(indent + textItem(it))
		}
	case b.Para != nil:
		p.println(indent + textOf(b.Para.Text))
	case b.Fold != nil:
		p.println(indent + lowerFirst(textOf(b.Fold.Summary)) + ":")
		textBlocks(p, b.Fold.Blocks, indent+"  ")
	}
}

// textTable writes t aligned by tabwriter, each line at indent and without
// trailing blanks.
func textTable(p *verdictPrinter, t *table, indent string) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	cells := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cells[i] = verdictClean(c.Title)
	}
	fmt.Fprintln(tw, indent+strings.Join(cells, "\t"))
	for _, r := range t.Rows {
		cells = cells[:0]
		for _, c := range r.Cells {
			cells = append(cells, textOfCell(c))
		}
		fmt.Fprintln(tw, indent+strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		p.err = err
		return
	}
	for line := range bytes.Lines(buf.Bytes()) {
		p.println(string(bytes.TrimRight(line, " \n")))
	}
}

// textOfCell is a cell as a terminal shows it.
func textOfCell(c cell) string {
	switch c.Kind {
	case cellSummary:
		return verdictSummary(c.Summary, c.Unit)
	case cellOutcome:
		return verdictOutcomeWord(c.Outcome)
	case cellOutput:
		if c.Failed != "" {
			return "failed: " + verdictClean(c.Failed)
		}
		return qualityPass(c.Pass) + " " + qualityOutputText(c.Output)
	case cellFlag:
		return c.Flag
	}
	return textOf(c.Text)
}

// textItem is "lead: subject: text", each part when there is one.
func textItem(it item) string {
	var parts []string
	if it.Lead != "" {
		parts = append(parts, it.Lead)
	}
	if len(it.Subject) > 0 {
		parts = append(parts, textOf(it.Subject))
	}
	return strings.Join(append(parts, textOf(it.Text)), ": ")
}

// textOf is s for a terminal, a model's answers quoted.
func textOf(s sentence) string { return s.renderOutputs(verdictClean, qualityOutputText) }

// lowerFirst is s with its first letter in lower case: a terminal's
// headings are ("scenario", "what changed:").
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// upperFirst is s with its first letter in upper case: markdown's remark
// under a heading is a sentence ("No baseline: not compared.").
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// verdictOutcomeWord is an outcome as a terminal shows it.
func verdictOutcomeWord(o stat.Outcome) string {
	switch o {
	case stat.Regression:
		return "REGRESSION"
	case stat.Pass:
		return "pass"
	case stat.Inconclusive:
		return "inconclusive"
	}
	return verdictClean(string(o))
}

// qualityPass is an eval item's result as a word.
func qualityPass(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}
