package report

import (
	"strings"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/stat"
)

// The view: one neutral model of a report, built once from its documents
// (build.go) and serialised by each medium (text.go, markdown.go, html.go).
//
// A view says what a report shows and in what order: headlines, sections
// with headings, tables of typed cells, lists of notes, paragraphs, folds of
// detail and charts as data. The renderers know how their medium lays those
// out (a tab-aligned table, a pipe table, an HTML table) and nothing about
// gates, suites or telemetry: a new report section is a change to the
// builder alone.
//
// Text that came from a result or a report file is kept as it came, marked
// untrusted (a span with untrusted set, a cell's output, a section's name),
// and each renderer makes it safe for its medium as it writes it: clean for
// a terminal, verdictMD for markdown, clean and html/template's escaping for
// HTML, mermaidText inside a mermaid chart. Nothing in a view is escaped
// already.

// medium is a set of the media a report is rendered in.
type medium uint8

const (
	// mediumText is the terminal.
	mediumText medium = 1 << iota
	// mediumMarkdown is the pull request comment and the step summary.
	mediumMarkdown
	// mediumHTML is the self-contained HTML report.
	mediumHTML
)

// view is a report of one document, or of several merged.
type view struct {
	// outcome is the worst of the documents' verdicts; exitCode the exit
	// code under each verdict's own on_inconclusive.
	Outcome  stat.Outcome
	ExitCode int
	Merged   bool
	// headline is the verdict and its worst change: markdown's first line
	// and, for several documents, the text's last.
	Headline headline
	// page is the HTML report's header: the gates of every document
	// counted together ("1 of 8 gates regressed") and the worst change,
	// named by the document's title.
	Page headline
	// name names a report of one document in the HTML's heading: its
	// title, else its config's file name; empty for none, and for a
	// merged report. Untrusted.
	Name string
	Docs []docView
	// footer names the workflow runs and the commits measured, each once.
	Footer []link
}

// headline is a verdict in a line: its summary ("regression (1 of 5 gates
// regressed)") and its worst change ("worst: chat-c16 TTFT p99 +31.2% …"),
// which is empty when there is none. Kind, when set, says the verdict was
// not reached against a stored baseline, and how it was ("A/B on one
// runner: base.yaml vs perfgate.yaml · co-resident · 8 rounds (ABBA)"):
// each medium shows it right under the verdict's line.
type headline struct {
	Summary, Worst sentence
	Kind           sentence
}

// link is one entry of a report's last line: a workflow run's URL, or a
// commit.
type link struct {
	RunURL, Commit string
}

// docView is one document: a job of a merged report, or the report itself.
type docView struct {
	// title is the document's title; in a merged report the job's name
	// (its title, else its key, else its place). Untrusted.
	Title string
	// pageTitle is the HTML report's heading for it: its title; in a
	// merged page "Report N" for a document without one. Untrusted.
	PageTitle string
	Outcome   stat.Outcome
	Headline  headline
	// verdict is the verdict's line: the text's last, the HTML's first
	// under the document's title ("REGRESSION (1 gate regressed: …)").
	Verdict sentence
	// measured says what was measured: the model, the engine and its
	// version, the GPUs, the workload and the baseline's commit and age
	// (measured.go); nil for a verdict without a document, or a document
	// from before it was kept.
	Measured sentence
	// fields say where the document came from (repository, commit, …).
	Fields []field
	Blocks []block
}

// field is a named value; the value is untrusted.
type field struct{ Name, Value string }

// detail is how much of a report the markdown shows: a report too long for
// its limit is rendered again with less, and the verdict is never cut.
type detail int

const (
	// detailFull is everything.
	detailFull detail = iota
	// detailNoDetails leaves out the collapsed per-repetition, percentile
	// and telemetry tables.
	detailNoDetails
	// detailNoCharts also leaves out the charts and the eval suites'
	// changed items.
	detailNoCharts
	// detailTables keeps the headlines and the gate tables alone, with an
	// A/B's drift lines.
	detailTables
)

// block is one piece of a report; exactly one of its parts is set.
type block struct {
	// media are the media that show it; 0 is every medium. Charts are
	// drawn in the medium that can draw them (mermaid in markdown,
	// Chart.js in HTML), and the collapsed details of markdown have no
	// place in a terminal.
	Media medium
	// drop is the markdown detail level from which the block is left out
	// to fit a size limit; 0 keeps it at every level.
	Drop detail

	Section *section
	Table   *table
	List    *list
	Para    *para
	Fold    *fold
	Charts  *chartGroup
}

// shows reports whether b is rendered in medium m at markdown detail level.
func (b block) shows(m medium, level detail) bool {
	if b.Media != 0 && b.Media&m == 0 {
		return false
	}
	return b.Drop == 0 || level < b.Drop
}

// section is a headed part of a report: a scenario, an eval suite.
type section struct {
	// label says what it is ("Scenario", "Eval suite"); name which one
	// (untrusted); facts what it is measured on ("baseline n=15 · …").
	Label, Name, Facts string
	// remark qualifies the facts ("no baseline: not compared"): a
	// terminal and HTML add it to the facts, markdown writes it as a
	// sentence under the heading.
	Remark string
	// outcome is the section's outcome, for the HTML's badge; compared is
	// false for a scenario without a baseline. A suite has no badge.
	Outcome  stat.Outcome
	Compared bool
	Badge    bool
	Blocks   []block
}

// table is a table of typed cells.
type table struct {
	// kind names what the table holds (gates, telemetry, examples,
	// values, percentiles): the HTML's class.
	Kind    string
	Columns []column
	Rows    []row
}

// column is a table's column: its title (treated as untrusted: a
// percentile's name comes from the report file) and, where a medium has
// room, a longer one.
type column struct {
	Title, Long string
	Kind        columnKind
}

// columnKind is how a column's cells are aligned and styled.
type columnKind int

const (
	// colText is left-aligned text.
	colText columnKind = iota
	// colNumber is right-aligned figures.
	colNumber
	// colID is left-aligned names that may wrap anywhere (an eval item's id).
	colID
)

// row is a table's row; outcome, when set, colours it in HTML.
type row struct {
	Outcome stat.Outcome
	Cells   []cell
}

// cell is one typed value of a table. Each medium writes a kind its own
// way: a summary as "41.2 ± 3%" in a terminal and markdown and as "41.2
// [40.1, 42.5]" in HTML; an outcome as a word, a mark or a badge.
type cell struct {
	Kind cellKind
	// text is a text cell's content.
	Text sentence
	// summary is a side's median and interval, in unit.
	Summary compare.Summary
	Unit    string
	// outcome is an outcome cell's.
	Outcome stat.Outcome
	// flag is a flag cell's word ("gated"), empty when it is not set.
	Flag string
	// pass and output are an eval item's answer on one side; the output
	// is untrusted. Failed, when set, is why that side's request failed
	// (untrusted too): the item has no answer there, neither right nor
	// wrong.
	Pass   bool
	Output string
	Failed string
}

// cellKind is the type of a cell.
type cellKind int

const (
	cellText cellKind = iota
	cellSummary
	cellOutcome
	cellOutput
	// cellFlag is a yes-or-no mark: its word where set, or nothing; markdown,
	// whose tables are narrow, shows ✓ for the word.
	cellFlag
)

// textCell is a cell of text.
func textCell(s sentence) cell { return cell{Kind: cellText, Text: s} }

// plainCell is a cell of perfgate's own words or figures.
func plainCell(s string) cell { return textCell(plain(s)) }

// list is a list of notes, with a title or under a heading.
type list struct {
	// title and aside head a list of its own ("Mismatches", "compared
	// anyway: --allow-mismatch"); "" for a list under a section's heading.
	Title, Aside string
	// kind names what it holds (notes, changes, mismatches, warnings):
	// the HTML's class.
	Kind  string
	Items []item
}

// item is one note: an optional lead ("not gated"), an optional subject
// shown emphasised (the gates it is about) and its text.
type item struct {
	Lead    string
	Subject sentence
	Text    sentence
}

// para is a sentence of its own; an aside is shown muted where the medium
// can.
type para struct {
	Text  sentence
	Aside bool
}

// fold is a titled group of blocks that markdown collapses (<details>).
// HTML shows a fold's blocks under its title as a heading, unless collapse
// is set: then it too collapses them, closed until opened (a long table of
// figures that the charts above it already draw).
type fold struct {
	Summary  sentence
	Blocks   []block
	Collapse bool
}

// chartGroup is a group of charts under a title, with facts about them.
type chartGroup struct {
	Title  sentence
	Facts  string
	Charts []*chart
}

// chart is one chart as data. Its kind says how it is drawn: percentiles
// (baseline bars, candidate line) and history (a line over promoted
// baselines) as mermaid in markdown; cdf (x log-scaled, y a share), reps
// (x the repetition), trend (x the labels) and rounds (an A/B's arms, x the
// round, labelled with its order) by the HTML report's script.
// Every string in it is untrusted; its title and y axis's are sentences,
// as mermaid cuts each untrusted part short on its own.
type chart struct {
	Kind, Scenario, Metric string
	Title                  sentence
	Subtitle, XTitle       string
	YTitle                 sentence
	// labels are the x axis's categories (trend, percentiles, history),
	// each one or more lines; notes one line more about each.
	Labels [][]string
	Notes  []string
	Series []series
	// yAxis is the value axis's range (axes.go); nil leaves it to the
	// medium. xAxis and xTicks are a log-scaled x axis's range and
	// ticks (a CDF's).
	YAxis  *axisRange
	XAxis  *axisRange
	XTicks []float64
}

// series is one line or set of bars: its role (baseline, candidate,
// baseline-median, candidate-median, history, lo or hi) decides how it is
// drawn.
type series struct {
	Label, Role string
	Points      []point
}

// point is a point of a series; a missing value is NaN.
type point struct{ X, Y compare.Num }

// sentence is a run of text in spans, some of them untrusted.
type sentence []span

// span is a piece of a sentence: perfgate's own words and figures, or
// untrusted text from a result or a report file. An output is a model's
// answer, untrusted: a terminal shows it quoted and cut short.
type span struct {
	Text      string
	Untrusted bool
	Output    bool
}

// plain is a sentence of perfgate's own words.
func plain(s string) sentence {
	if s == "" {
		return nil
	}
	return sentence{{Text: s}}
}

// untrusted is a sentence of text from a result or a report file.
func untrusted(s string) sentence {
	if s == "" {
		return nil
	}
	return sentence{{Text: s, Untrusted: true}}
}

// output is a sentence of a model's answer.
func output(s string) sentence { return sentence{{Text: s, Untrusted: true, Output: true}} }

// join is the sentences one after the other, with sep (perfgate's words)
// between them.
func join(sep string, parts ...sentence) sentence {
	var out sentence
	for i, p := range parts {
		if i > 0 && sep != "" {
			out = append(out, span{Text: sep})
		}
		out = append(out, p...)
	}
	return out
}

// cat is the sentences one after the other.
func cat(parts ...sentence) sentence { return join("", parts...) }

// render writes s with esc applied to its untrusted spans, outputs
// included.
func (s sentence) render(esc func(string) string) string { return s.renderOutputs(esc, esc) }

// renderOutputs writes s with esc applied to its untrusted spans and out to
// its outputs.
func (s sentence) renderOutputs(esc, out func(string) string) string {
	var b strings.Builder
	for _, sp := range s {
		switch {
		case sp.Output:
			b.WriteString(out(sp.Text))
		case sp.Untrusted:
			b.WriteString(esc(sp.Text))
		default:
			b.WriteString(sp.Text)
		}
	}
	return b.String()
}

// raw is s as it came, nothing escaped: for comparing and for tests, and
// for output only through a cleaner (htmlChartText).
func (s sentence) raw() string { return s.render(func(t string) string { return t }) }
