package report

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/stat"
)

// The HTML renderer: a view as one self-contained page. The page, its
// style and its script are files under assets/, embedded; html/template
// escapes every value for its context, after clean (or htmlOutput) has
// stripped what a page should not show.

// assets are the HTML report's page template, style and script, and the
// vendored Chart.js (assets/README.md).
//
//go:embed assets/report.html.tmpl assets/report.css assets/report.js assets/chart.umd.min.js
var assets embed.FS

// chartJSVersion is the version of the vendored Chart.js (assets/README.md).
const chartJSVersion = "4.6.1"

// chartJSFile is Chart.js's UMD build, vendored unmodified.
var chartJSFile = asset("assets/chart.umd.min.js")

// chartJS is the library as a report inlines it: without the source-map
// comment, which names a file the report does not have.
var chartJS = func() string {
	s := strings.TrimRight(chartJSFile, "\n")
	if i := strings.LastIndex(s, "\n//# sourceMappingURL="); i >= 0 {
		s = s[:i]
	}
	return s + "\n"
}()

// htmlStyle is the page's style; htmlScript draws the charts from the JSON
// block, reading it with JSON.parse and writing nothing into the page but
// canvases, and on the root element data-charts="drawn/all" for a browser
// check to read.
var (
	htmlStyle  = asset("assets/report.css")
	htmlScript = asset("assets/report.js")
)

// htmlTemplate is the page (assets/report.html.tmpl). Its chartID function
// is each page's own: emitHTML executes a clone with the page's charts.
var htmlTemplate = template.Must(template.New("report.html.tmpl").Funcs(htmlFuncs(nil)).ParseFS(assets, "assets/report.html.tmpl"))

// asset is an embedded file's content.
func asset(name string) string {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return string(b)
}

// htmlCSP is the report's Content-Security-Policy: inline scripts and styles
// only, and nothing fetched, so a browser enforces what the tests check.
const htmlCSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"

// emitHTML renders docs (one document, or several merged: one section each,
// under the overall verdict) as one self-contained HTML file: the header
// with the overall verdict and the worst change; per scenario the gates, the
// eval suites with a few changed items, the notes, the engine, GPU and cost
// medians, and charts of the latency distributions (CDFs), of every gate's
// per-repetition values and of the promoted history; per sweep its points
// and its latency against throughput, per capacity scenario its search
// and a chart of its probes; per document the
// telemetry sources that were unavailable, what changed, the mismatches and
// the warnings. An A/B's page says so under the verdict, gives each
// scenario's drift of the base arm, and draws both arms round by round
// (with a collapsed table of the rounds) in place of the repetitions.
//
// The page fetches nothing: Chart.js is inlined, the chart data is a JSON
// block, and a Content-Security-Policy forbids any other source. Every text
// from a result is stripped of control characters, cut short and escaped.
// The tables need no JavaScript; the charts do.
func emitHTML(w io.Writer, docs []*reportfile.Document) error {
	if len(docs) == 0 {
		return errNoDocuments
	}
	for i, d := range docs {
		if d == nil || d.Verdict == nil {
			return fmt.Errorf("html report: document %d has no verdict", i+1)
		}
	}
	return writeHTMLView(w, buildView(docs))
}

// writeHTMLView writes the page of v.
func writeHTMLView(w io.Writer, v *view) error {
	charts, ids := htmlCharts(v)
	data, err := json.Marshal(htmlData{Charts: charts})
	if err != nil {
		return fmt.Errorf("html report: chart data: %w", err)
	}
	page := htmlPage{
		Title:   "perfgate: " + verdictClean(string(v.Outcome)),
		View:    v,
		CSP:     htmlCSP,
		Version: chartJSVersion,
		Style:   template.CSS(htmlStyle),
		Script:  template.JS(htmlScript),
		ChartJS: template.JS(chartJS),
		Data:    data,
	}
	if v.Name != "" {
		page.Title += " · " + verdictClean(v.Name)
	}
	t, err := htmlTemplate.Clone()
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Funcs(htmlFuncs(ids)).ExecuteTemplate(&buf, "page", page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// htmlPage is what the template renders.
type htmlPage struct {
	// Title is the page's title, cleaned.
	Title string
	View  *view
	CSP   string
	// Version is Chart.js's.
	Version string
	Style   template.CSS
	Script  template.JS
	ChartJS template.JS
	// Data is the charts' JSON; the template escapes it for its <script>.
	Data json.RawMessage
}

// htmlFuncs are the template's functions; ids numbers the page's charts.
func htmlFuncs(ids map[*chart]string) template.FuncMap {
	return template.FuncMap{
		"clean":        verdictClean,
		"text":         htmlTextOf,
		"badge":        htmlOutcomeOf,
		"sectionBadge": htmlSectionBadge,
		"rowClass":     htmlRowClass,
		"anchor":       func(i int) string { return "doc-" + strconv.Itoa(i+1) },
		"at":           func(depth int, b block) htmlBlock { return htmlBlock{Depth: depth, Block: b} },
		"shows":        func(b block) bool { return b.shows(mediumHTML, detailFull) },
		"columnTitle":  htmlColumnTitle,
		"cellOf":       htmlCellOf,
		"chartKind":    htmlChartKind,
		"chartID":      func(c *chart) string { return ids[c] },
		"chartText":    htmlChartText,
	}
}

// htmlBlock is a block with how deep it is: a scenario's blocks are at 1,
// a suite's at 2.
type htmlBlock struct {
	Depth int
	Block block
}

// htmlTextOf is s cleaned for the template to escape.
func htmlTextOf(s sentence) string { return s.render(verdictClean) }

// htmlChartText is a chart's title cleaned as a whole, and cut short as
// one, for the template or the chart data to escape.
func htmlChartText(s sentence) string { return verdictClean(s.raw()) }

// htmlOutcome is an outcome's badge: its class and its word.
type htmlOutcome struct{ Class, Word string }

func htmlOutcomeOf(o stat.Outcome) htmlOutcome {
	switch o {
	case stat.Regression:
		return htmlOutcome{"regression", "regression"}
	case stat.Pass:
		return htmlOutcome{"pass", "pass"}
	case stat.Inconclusive:
		return htmlOutcome{"inconclusive", "inconclusive"}
	}
	return htmlOutcome{"none", verdictClean(string(o))}
}

// htmlSectionBadge is a section's badge; nil for a section without one.
func htmlSectionBadge(s *section) *htmlOutcome {
	switch {
	case !s.Badge:
		return nil
	case !s.Compared:
		return &htmlOutcome{"none", "not compared"}
	}
	b := htmlOutcomeOf(s.Outcome)
	return &b
}

// htmlRowClass is the class of a row with outcome o; "" for a row without
// one.
func htmlRowClass(o stat.Outcome) string {
	if o == "" {
		return ""
	}
	return htmlOutcomeOf(o).Class
}

// htmlColumnTitle is a column's longer title when it has one.
func htmlColumnTitle(c column) string {
	if c.Long != "" {
		return verdictClean(c.Long)
	}
	return verdictClean(c.Title)
}

// htmlCell is a cell as the template writes it: its class, and its text or
// an eval item's answer.
type htmlCell struct {
	Class  string
	Text   string
	Output *htmlAnswer
}

// htmlAnswer is an eval item's answer: pass or fail, and the output.
type htmlAnswer struct {
	Mark htmlOutcome
	Text string
}

// htmlCellOf is cell c of column i of columns.
func htmlCellOf(columns []column, i int, c cell) htmlCell {
	var out htmlCell
	if i < len(columns) {
		switch columns[i].Kind {
		case colNumber:
			out.Class = "num"
		case colID:
			out.Class = "id"
		}
	}
	switch c.Kind {
	case cellSummary:
		out.Text = htmlSummary(c.Summary, c.Unit)
	case cellOutcome:
		out.Class, out.Text = "outcome", htmlOutcomeOf(c.Outcome).Word
	case cellOutput:
		mark := htmlOutcome{"regression", "fail"}
		switch {
		case c.Failed != "":
			out.Output = &htmlAnswer{Mark: htmlOutcome{"inconclusive", "failed"}, Text: htmlOutput(c.Failed)}
			return out
		case c.Pass:
			mark = htmlOutcome{"pass", "pass"}
		}
		out.Output = &htmlAnswer{Mark: mark, Text: htmlOutput(c.Output)}
	case cellFlag:
		out.Text = c.Flag
	default:
		out.Text = htmlTextOf(c.Text)
	}
	return out
}

// htmlSummary is a side's median with its 95% interval: "41.2 [40.1,
// 42.5]"; the median alone with no interval or an unbounded one (too few
// repetitions: the table's note says so once).
func htmlSummary(s compare.Summary, unit string) string {
	if !s.Median.Finite() {
		return "—"
	}
	m := verdictValue(float64(s.Median), unit)
	if !s.Lo.Finite() || !s.Hi.Finite() {
		return m
	}
	return m + " [" + verdictValue(float64(s.Lo), unit) + ", " + verdictValue(float64(s.Hi), unit) + "]"
}

// htmlChartKind is the kind of a group's charts, for its class.
func htmlChartKind(g *chartGroup) string {
	if len(g.Charts) == 0 {
		return ""
	}
	return g.Charts[0].Kind
}

// htmlData is the JSON the page's script draws its charts from.
type htmlData struct {
	Charts []htmlChart `json:"charts"`
}

// htmlChart is one chart as the script reads it (report.js): kind cdf (x
// log-scaled, y a share), reps (x the repetition), trend (x the labels,
// one per history entry), rounds (an A/B's arms; x the round, from 1,
// labelled with its number and order; notes say who went first), curve (a
// sweep: x the output throughput, y a latency, log-scaled; point i of each
// series at the offered load labelled i) or capacity (a search's probes: x
// the load, y the worst margin, both log-scaled; a "-band" series holds
// a side's [holds, breaks) as two x values). Its
// strings are cleaned; the template escapes the whole for its <script>.
type htmlChart struct {
	ID       string       `json:"id"`
	Kind     string       `json:"kind"`
	Document int          `json:"document"`
	Scenario string       `json:"scenario"`
	Metric   string       `json:"metric"`
	Title    string       `json:"title"`
	Subtitle string       `json:"subtitle,omitempty"`
	XTitle   string       `json:"x_title"`
	YTitle   string       `json:"y_title"`
	Labels   [][]string   `json:"labels,omitempty"`
	Notes    []string     `json:"notes,omitempty"`
	Series   []htmlSeries `json:"series"`
	// YAxis is the value axis's range; XAxis and XTicks a log-scaled x
	// axis's range and ticks (axes.go). Absent: the script decides.
	YAxis *axisRange `json:"y_axis,omitempty"`
	// YNote says where the value axis starts when not at zero, under
	// the subtitle.
	YNote  string     `json:"y_note,omitempty"`
	XAxis  *axisRange `json:"x_axis,omitempty"`
	XTicks []float64  `json:"x_ticks,omitempty"`
}

// htmlSeries is one line: role baseline, candidate, baseline-median,
// candidate-median, history, lo or hi decides how it is drawn.
type htmlSeries struct {
	Label  string      `json:"label"`
	Role   string      `json:"role"`
	Points []htmlPoint `json:"points"`
}

// htmlPoint is a point; a missing value (NaN) is null.
type htmlPoint struct {
	X compare.Num `json:"x"`
	Y compare.Num `json:"y"`
}

// htmlCharts are the charts the page shows, in its order, as the script
// reads them, and each one's id (chart-1, chart-2, …).
func htmlCharts(v *view) ([]htmlChart, map[*chart]string) {
	var out []htmlChart
	ids := map[*chart]string{}
	var walk func(doc int, blocks []block)
	walk = func(doc int, blocks []block) {
		for _, b := range blocks {
			if !b.shows(mediumHTML, detailFull) {
				continue
			}
			switch {
			case b.Section != nil:
				walk(doc, b.Section.Blocks)
			case b.Fold != nil:
				walk(doc, b.Fold.Blocks)
			case b.Charts != nil:
				for _, c := range b.Charts.Charts {
					id := "chart-" + strconv.Itoa(len(out)+1)
					ids[c] = id
					out = append(out, htmlChartOf(id, doc, c))
				}
			}
		}
	}
	for i := range v.Docs {
		walk(i, v.Docs[i].Blocks)
	}
	return out, ids
}

// htmlChartOf is chart c, number id of document doc, with its strings
// cleaned.
func htmlChartOf(id string, doc int, c *chart) htmlChart {
	h := htmlChart{ID: id, Kind: c.Kind, Document: doc, Scenario: verdictClean(c.Scenario), Metric: verdictClean(c.Metric),
		Title: htmlChartText(c.Title), Subtitle: verdictClean(c.Subtitle), XTitle: verdictClean(c.XTitle), YTitle: htmlChartText(c.YTitle),
		YAxis: c.YAxis, XAxis: c.XAxis, XTicks: c.XTicks}
	h.YNote = axisNote(c)
	for _, l := range c.Labels {
		cleaned := make([]string, len(l))
		for i, s := range l {
			cleaned[i] = verdictClean(s)
		}
		h.Labels = append(h.Labels, cleaned)
	}
	for _, n := range c.Notes {
		h.Notes = append(h.Notes, verdictClean(n))
	}
	for _, s := range c.Series {
		hs := htmlSeries{Label: s.Label, Role: s.Role, Points: []htmlPoint{}}
		for _, p := range s.Points {
			hs.Points = append(hs.Points, htmlPoint{p.X, p.Y})
		}
		h.Series = append(h.Series, hs)
	}
	return h
}
