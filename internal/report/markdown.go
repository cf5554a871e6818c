package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/stat"
)

// The markdown renderer: a view as GitHub-flavoured markdown, for a pull
// request comment or a step summary. Every untrusted text goes through
// verdictMD (mermaidText inside a chart, qualityOutputMD for a model's
// output).

// MarkdownOptions say where a markdown report goes.
type MarkdownOptions struct {
	// Limit is the most bytes the output may take (GitHub's limits are
	// internal/github's CommentLimit and SummaryLimit); 0 is no limit.
	Limit int
	// Marker, when set, is the first line, kept whatever is cut: the hidden
	// marker that finds a sticky comment again.
	Marker string
}

// emitMarkdown renders docs as GitHub-flavoured markdown for a pull
// request comment or a step summary. One document is one verdict: a first
// line with the verdict and its worst change, per scenario the gate table,
// the notes, quality, collapsed mermaid charts (TTFT and TPOT percentiles
// on both sides, the promoted history) and a collapsed table of the
// engine, GPU and cost medians (a capacity scenario's opens with its
// search: both sides' capacity, and its probes collapsed; a swept scenario
// is one section with a table of its points and mermaid charts of their
// TTFT and TPOT p99 by offered load, and a point has a section of its own
// only when gated), then the telemetry sources that were
// unavailable, what changed, warnings, and collapsed details with every
// percentile and per-repetition value. An A/B says so under its first
// line, and how far each scenario's base arm drifted under its gates.
// Several documents (a matrix of jobs, merged) get one overall verdict, a
// table of the jobs and a section each.
//
// When the result is longer than o.Limit, it is rendered again with less
// detail (the details and the telemetry tables first, then the charts and
// examples, then everything but the gate tables), and as a last resort cut
// at a line, with a note saying so; the first line, the verdict, always
// stays.
func emitMarkdown(w io.Writer, docs []*reportfile.Document, o MarkdownOptions) error {
	if len(docs) == 0 {
		return errNoDocuments
	}
	v := buildView(docs)
	var out string
	for level := detailFull; level <= detailTables; level++ {
		out = renderMarkdown(v, level, o)
		if o.Limit <= 0 || len(out) <= o.Limit {
			break
		}
	}
	if o.Limit > 0 && len(out) > o.Limit {
		out = cutMarkdown(out, o.Limit)
	}
	_, err := io.WriteString(w, out)
	return err
}

// emitVerdictMarkdown renders v as GitHub-flavoured markdown, for a pull
// request comment or a job summary: a first line with the verdict and the
// worst change, a table per scenario, what changed, the warnings, and a
// collapsed block with every gate's per-repetition values. (emitMarkdown
// renders a whole report Document, with its charts.)
func emitVerdictMarkdown(w io.Writer, v *compare.Verdict) error {
	_, err := io.WriteString(w, renderMarkdown(verdictView(v), detailFull, MarkdownOptions{}))
	return err
}

// renderMarkdown is the report at one level of detail.
func renderMarkdown(v *view, level detail, o MarkdownOptions) string {
	var buf bytes.Buffer
	p := &verdictPrinter{w: &buf}
	if o.Marker != "" {
		p.println(o.Marker)
	}
	if !v.Merged {
		d := &v.Docs[0]
		name := "perfgate"
		if d.Title != "" {
			name += " · " + verdictMD(d.Title)
		}
		p.printf("### %s %s: %s\n", outcomeMark(d.Outcome), name, mdHeadline(d.Headline))
		mdKind(p, d.Headline)
		mdMeasured(p, d.Measured)
		mdBlocks(p, d.Blocks, 0, level)
	} else {
		p.printf("### %s perfgate: %s\n", outcomeMark(v.Outcome), mdHeadline(v.Headline))
		p.println()
		p.println("| job | verdict |")
		p.println("|:--|:--|")
		for _, d := range v.Docs {
			p.printf("| %s %s | %s |\n", outcomeMark(d.Outcome), verdictMD(d.Title), mdOf(d.Headline.Summary))
		}
		for i := range v.Docs {
			d := &v.Docs[i]
			p.println()
			p.println("---")
			p.println()
			p.printf("### %s %s: %s\n", outcomeMark(d.Outcome), verdictMD(d.Title), mdHeadline(d.Headline))
			mdKind(p, d.Headline)
			mdMeasured(p, d.Measured)
			mdBlocks(p, d.Blocks, 0, level)
		}
	}
	if level > detailFull {
		p.println()
		p.println(cutNote)
	}
	mdFooter(p, v.Footer)
	return buf.String()
}

// mdHeadline is "summary — worst".
func mdHeadline(h headline) string {
	s := mdOf(h.Summary)
	if len(h.Worst) > 0 {
		s += " — " + mdOf(h.Worst)
	}
	return s
}

// mdKind is, under a verdict's heading, how the verdict was reached when
// not against a stored baseline (an A/B); nothing otherwise.
func mdKind(p *verdictPrinter, h headline) {
	if len(h.Kind) > 0 {
		p.println()
		p.println(mdOf(h.Kind))
	}
}

// mdMeasured is, under a verdict's heading, what was measured: the
// model, engine, GPUs, workload and baseline; nothing when not known.
func mdMeasured(p *verdictPrinter, m sentence) {
	if len(m) > 0 {
		p.println()
		p.println("**Measured:** " + mdOf(m))
	}
}

// mdFooter is the last line: the runs and commits measured, when known.
func mdFooter(p *verdictPrinter, links []link) {
	var parts []string
	for _, l := range links {
		switch {
		case l.RunURL != "" && safeURL(l.RunURL):
			parts = append(parts, fmt.Sprintf("[workflow run](%s)", l.RunURL))
		case l.Commit != "":
			parts = append(parts, "commit "+verdictMD(l.Commit))
		}
	}
	if len(parts) > 0 {
		p.println()
		p.println("<sub>" + strings.Join(parts, " · ") + "</sub>")
	}
}

// mdBlocks writes the blocks markdown shows at level, each after a blank
// line; depth is how many sections and folds they are inside.
func mdBlocks(p *verdictPrinter, blocks []block, depth int, level detail) {
	for _, b := range blocks {
		if !b.shows(mediumMarkdown, level) {
			continue
		}
		p.println()
		switch {
		case b.Section != nil:
			s := b.Section
			head := s.Label + " " + verdictMD(s.Name)
			if depth == 0 {
				head = "#### " + head
			} else {
				head = "**" + head + "**"
			}
			if s.Facts != "" {
				head += " · " + s.Facts
			}
			p.println(head)
			if s.Remark != "" {
				p.println()
				p.println(upperFirst(s.Remark) + ".")
			}
			mdBlocks(p, s.Blocks, depth+1, level)
		case b.Table != nil:
			mdTable(p, b.Table)
		case b.List != nil:
			l := b.List
			if l.Title != "" {
				title := "**" + l.Title + "**"
				if l.Aside != "" {
					title += " (" + l.Aside + ")"
				}
				p.println(title)
				p.println()
			}
			for _, it := range l.Items {
				p.println("- " + mdItem(it))
			}
		case b.Para != nil:
			p.println(mdOf(b.Para.Text))
		case b.Fold != nil:
			p.printf("<details><summary>%s</summary>\n", mdOf(b.Fold.Summary))
			mdBlocks(p, b.Fold.Blocks, depth+1, level)
			p.println()
			p.println("</details>")
		case b.Charts != nil:
			p.printf("<details><summary>%s</summary>\n", mdOf(b.Charts.Title))
			for _, c := range b.Charts.Charts {
				p.println()
				p.println("```mermaid")
				p.print(mermaid(c))
				p.println("```")
				if l := mermaidLegend(c); l != "" {
					p.println()
					p.println(l)
				}
			}
			p.println()
			p.println("</details>")
		}
	}
}

// mdTable is a pipe table: numbers right-aligned, text left.
func mdTable(p *verdictPrinter, t *table) {
	head := make([]string, len(t.Columns))
	align := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = verdictMD(c.Title)
		align[i] = ":--"
		if c.Kind == colNumber {
			align[i] = "--:"
		}
	}
	p.println("| " + strings.Join(head, " | ") + " |")
	p.println("|" + strings.Join(align, "|") + "|")
	for _, r := range t.Rows {
		cells := make([]string, len(r.Cells))
		for i, c := range r.Cells {
			cells[i] = mdCell(c)
		}
		p.println("| " + strings.Join(cells, " | ") + " |")
	}
}

// mdCell is a cell as markdown shows it.
func mdCell(c cell) string {
	switch c.Kind {
	case cellSummary:
		return verdictSummary(c.Summary, c.Unit)
	case cellOutcome:
		return verdictOutcomeMarkdown(c.Outcome)
	case cellOutput:
		if c.Failed != "" {
			return "⚠ failed: " + qualityOutputMD(c.Failed)
		}
		return qualityPassMark(c.Pass) + " " + qualityOutputMD(c.Output)
	case cellFlag:
		if c.Flag != "" {
			return "✓"
		}
		return ""
	}
	return mdOf(c.Text)
}

// mdItem is "lead: **subject**: text", each part when there is one.
func mdItem(it item) string {
	var parts []string
	if it.Lead != "" {
		parts = append(parts, it.Lead)
	}
	if len(it.Subject) > 0 {
		parts = append(parts, "**"+mdOf(it.Subject)+"**")
	}
	return strings.Join(append(parts, mdOf(it.Text)), ": ")
}

// mdOf is s for markdown.
func mdOf(s sentence) string { return s.render(verdictMD) }

// mermaid is a chart as a mermaid xychart: its series with role baseline
// as bars, the others as lines, over its labels.
func mermaid(c *chart) string {
	var b strings.Builder
	b.WriteString("xychart-beta\n")
	fmt.Fprintf(&b, "    title %q\n", c.Title.render(mermaidText))
	labels := make([]string, len(c.Labels))
	for i, l := range c.Labels {
		if len(l) > 0 {
			labels[i] = strconv.Quote(mermaidText(l[0]))
		}
	}
	fmt.Fprintf(&b, "    x-axis [%s]\n", strings.Join(labels, ", "))
	if c.YAxis != nil {
		fmt.Fprintf(&b, "    y-axis %q %s --> %s\n", c.YTitle.render(mermaidText), mermaidNumber(c.YAxis.Lo), mermaidNumber(c.YAxis.Hi))
	} else {
		fmt.Fprintf(&b, "    y-axis %q\n", c.YTitle.render(mermaidText))
	}
	for _, s := range c.Series {
		values := make([]string, len(s.Points))
		for i, pt := range s.Points {
			values[i] = mermaidNumber(float64(pt.Y))
		}
		kind := "line"
		if s.Role == "baseline" {
			kind = "bar"
		}
		fmt.Fprintf(&b, "    %s [%s]\n", kind, strings.Join(values, ", "))
	}
	return b.String()
}

// mermaidLegend says which series of a mermaid chart is which, for an
// xychart has no legend of its own: "bars: baseline · line: candidate".
func mermaidLegend(c *chart) string {
	var parts []string
	for _, s := range c.Series {
		kind := "line"
		if s.Role == "baseline" {
			kind = "bars"
		}
		what := verdictMD(s.Label)
		if c.Kind == "history" {
			what = "promoted baselines' " + what + ", then this run's candidate (last point)"
		}
		parts = append(parts, kind+": "+what)
	}
	if note := axisNote(c); note != "" {
		parts = append(parts, note)
	}
	if len(parts) == 0 {
		return ""
	}
	return "<sub>" + strings.Join(parts, " · ") + "</sub>"
}

// outcomeMark is the mark of an outcome: ❌, ✅ or ⚠️.
func outcomeMark(o stat.Outcome) string {
	switch o {
	case stat.Regression:
		return "❌"
	case stat.Pass:
		return "✅"
	}
	return "⚠️"
}

// verdictOutcomeMarkdown is an outcome in a table.
func verdictOutcomeMarkdown(o stat.Outcome) string {
	switch o {
	case stat.Regression:
		return "❌ **regression**"
	case stat.Pass:
		return "✅ pass"
	case stat.Inconclusive:
		return "⚠️ inconclusive"
	}
	return verdictMD(string(o))
}

// qualityPassMark is an eval item's result as a mark.
func qualityPassMark(pass bool) string {
	if pass {
		return "✅"
	}
	return "❌"
}

// cutNote ends a report that was rendered with less than everything.
const cutNote = "_Cut to fit GitHub's size limit: the HTML report and the report file have everything._"

// safeURL reports whether u is an http(s) URL with nothing in it that could
// leave a markdown link.
func safeURL(u string) bool {
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return false
	}
	return !strings.ContainsAny(u, " ()<>[]\"'`\\\n\r\t")
}

// cutMarkdown cuts s at a line so that it and cutNote fit in limit bytes.
func cutMarkdown(s string, limit int) string {
	room := limit - len(cutNote) - 2
	if room <= 0 {
		// Too small even for the note: the first line alone, cut.
		first, _, _ := strings.Cut(s, "\n")
		return truncateBytes(first, limit)
	}
	cut := s[:room]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i+1]
	} else {
		cut = truncateBytes(cut, room) + "\n"
	}
	return cut + "\n" + cutNote + "\n"
}

// truncateBytes cuts s to at most n bytes without splitting a character.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// emitDocumentsJSON writes one document as indented JSON, or several as a
// JSON array of documents.
func emitDocumentsJSON(w io.Writer, docs []*reportfile.Document) error {
	if len(docs) == 0 {
		return errNoDocuments
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(docs) == 1 {
		return enc.Encode(docs[0])
	}
	return enc.Encode(docs)
}

// emitVerdictJSON writes v as indented JSON, with the model's own field
// names; NaN and infinite numbers (no estimate, an unbounded interval) are
// null.
func emitVerdictJSON(w io.Writer, v *compare.Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
