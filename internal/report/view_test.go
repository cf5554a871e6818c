package report

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
)

// The view's goldens: what a report says, whatever the medium, as JSON
// (testdata/view/*.json). Untrusted text shows as «text», so a golden also
// shows what each renderer must escape. How each medium writes each kind
// of block is in testdata/render (render_test.go).

// viewGolden compares the view v, as JSON, with testdata/view/name.json.
func viewGolden(t *testing.T, name string, v *view) {
	t.Helper()
	b, err := json.MarshalIndent(viewJSON(v), "", "  ")
	require.NoError(t, err)
	golden(t, filepath.Join("view", name+".json"), append(b, '\n'))
}

// The JSON of a view: a readable transcript, not a file format. A table's
// columns and each of its rows are a line, cells apart by " | "; a chart's
// labels and each of its series are a line. Every string in a chart is
// untrusted, and not marked.
type (
	jView struct {
		Outcome  string   `json:"outcome"`
		ExitCode int      `json:"exit_code"`
		Merged   bool     `json:"merged,omitempty"`
		Headline string   `json:"headline"`
		Kind     string   `json:"headline_kind,omitempty"`
		Page     string   `json:"page_headline"`
		PageKind string   `json:"page_headline_kind,omitempty"`
		Footer   []string `json:"footer,omitempty"`
		Docs     []jDoc   `json:"docs"`
	}
	jDoc struct {
		Title     string   `json:"title,omitempty"`
		PageTitle string   `json:"page_title,omitempty"`
		Outcome   string   `json:"outcome"`
		Headline  string   `json:"headline"`
		Kind      string   `json:"headline_kind,omitempty"`
		Verdict   string   `json:"verdict"`
		Measured  string   `json:"measured,omitempty"`
		Fields    []string `json:"fields,omitempty"`
		Blocks    []jBlock `json:"blocks"`
	}
	jBlock struct {
		Media   string     `json:"only_in,omitempty"`
		Drop    string     `json:"left_out_at,omitempty"`
		Section string     `json:"section,omitempty"`
		Badge   string     `json:"badge,omitempty"`
		Table   string     `json:"table,omitempty"`
		Columns []string   `json:"columns,omitempty"`
		Rows    []string   `json:"rows,omitempty"`
		List    string     `json:"list,omitempty"`
		Title   string     `json:"title,omitempty"`
		Items   []string   `json:"items,omitempty"`
		Para    string     `json:"para,omitempty"`
		Aside   bool       `json:"aside,omitempty"`
		Fold    string     `json:"fold,omitempty"`
		Closed  bool       `json:"collapsed_in_html,omitempty"`
		Charts  string     `json:"charts,omitempty"`
		Facts   string     `json:"facts,omitempty"`
		Chart   [][]string `json:"chart,omitempty"`
		Blocks  []jBlock   `json:"blocks,omitempty"`
	}
)

func viewJSON(v *view) jView {
	out := jView{Outcome: string(v.Outcome), ExitCode: v.ExitCode, Merged: v.Merged, Headline: headlineJSON(v.Headline), Page: headlineJSON(v.Page),
		Kind: sentenceJSON(v.Headline.Kind), PageKind: sentenceJSON(v.Page.Kind)}
	for _, l := range v.Footer {
		if l.RunURL != "" {
			out.Footer = append(out.Footer, "run "+mark(l.RunURL))
		} else {
			out.Footer = append(out.Footer, "commit "+mark(l.Commit))
		}
	}
	for _, d := range v.Docs {
		jd := jDoc{Outcome: string(d.Outcome), Headline: headlineJSON(d.Headline), Kind: sentenceJSON(d.Headline.Kind), Verdict: sentenceJSON(d.Verdict), Measured: sentenceJSON(d.Measured)}
		if d.Title != "" {
			jd.Title = mark(d.Title)
		}
		if d.PageTitle != d.Title {
			jd.PageTitle = mark(d.PageTitle)
		}
		for _, f := range d.Fields {
			jd.Fields = append(jd.Fields, f.Name+": "+mark(f.Value))
		}
		jd.Blocks = blocksJSON(d.Blocks)
		out.Docs = append(out.Docs, jd)
	}
	return out
}

// mark is untrusted text as the goldens show it.
func mark(s string) string { return "«" + s + "»" }

func sentenceJSON(s sentence) string { return s.render(mark) }

func headlineJSON(h headline) string {
	s := sentenceJSON(h.Summary)
	if len(h.Worst) > 0 {
		s += " — " + sentenceJSON(h.Worst)
	}
	return s
}

func blocksJSON(blocks []block) []jBlock {
	var out []jBlock
	for _, b := range blocks {
		out = append(out, blockJSON(b))
	}
	return out
}

func blockJSON(b block) jBlock {
	var j jBlock
	var media []string
	for _, m := range []struct {
		m    medium
		name string
	}{{mediumText, "text"}, {mediumMarkdown, "markdown"}, {mediumHTML, "html"}} {
		if b.Media&m.m != 0 {
			media = append(media, m.name)
		}
	}
	j.Media = strings.Join(media, ", ")
	j.Drop = map[detail]string{detailNoDetails: "no details", detailNoCharts: "no charts", detailTables: "tables alone"}[b.Drop]
	switch {
	case b.Section != nil:
		s := b.Section
		j.Section = s.Label + " " + mark(s.Name)
		if s.Facts != "" {
			j.Section += " · " + s.Facts
		}
		if s.Remark != "" {
			j.Section += " (remark: " + s.Remark + ")"
		}
		if s.Badge {
			j.Badge = string(s.Outcome)
			if !s.Compared {
				j.Badge = "not compared"
			}
		}
		j.Blocks = blocksJSON(s.Blocks)
	case b.Table != nil:
		t := b.Table
		j.Table = t.Kind
		for _, c := range t.Columns {
			var about []string
			switch c.Kind {
			case colNumber:
				about = append(about, "number")
			case colID:
				about = append(about, "id")
			}
			if c.Long != "" {
				about = append(about, "long: "+c.Long)
			}
			col := c.Title
			if len(about) > 0 {
				col += " (" + strings.Join(about, "; ") + ")"
			}
			j.Columns = append(j.Columns, col)
		}
		j.Columns = []string{strings.Join(j.Columns, " | ")}
		for _, r := range t.Rows {
			cells := make([]string, len(r.Cells))
			for i, c := range r.Cells {
				cells[i] = cellJSON(c)
			}
			row := strings.Join(cells, " | ")
			if r.Outcome != "" {
				row = "[" + string(r.Outcome) + "] " + row
			}
			j.Rows = append(j.Rows, row)
		}
	case b.List != nil:
		l := b.List
		j.List, j.Title = l.Kind, l.Title
		if l.Aside != "" {
			j.Title += " (" + l.Aside + ")"
		}
		for _, it := range l.Items {
			var parts []string
			if it.Lead != "" {
				parts = append(parts, it.Lead)
			}
			if len(it.Subject) > 0 {
				parts = append(parts, "*"+sentenceJSON(it.Subject)+"*")
			}
			j.Items = append(j.Items, strings.Join(append(parts, sentenceJSON(it.Text)), ": "))
		}
	case b.Para != nil:
		j.Para, j.Aside = sentenceJSON(b.Para.Text), b.Para.Aside
	case b.Fold != nil:
		j.Fold, j.Closed = sentenceJSON(b.Fold.Summary), b.Fold.Collapse
		j.Blocks = blocksJSON(b.Fold.Blocks)
	case b.Charts != nil:
		j.Charts, j.Facts = sentenceJSON(b.Charts.Title), b.Charts.Facts
		for _, c := range b.Charts.Charts {
			j.Chart = append(j.Chart, chartJSON(c))
		}
	}
	return j
}

func cellJSON(c cell) string {
	switch c.Kind {
	case cellSummary:
		s := fmt.Sprintf("median %s [%s, %s]", num(c.Summary.Median), num(c.Summary.Lo), num(c.Summary.Hi))
		if c.Unit != "" {
			s += " " + mark(c.Unit)
		}
		return s
	case cellOutcome:
		return "outcome " + mark(string(c.Outcome))
	case cellOutput:
		return qualityPass(c.Pass) + " " + mark(c.Output)
	case cellFlag:
		if c.Flag == "" {
			return "flag: none"
		}
		return "flag: " + c.Flag
	}
	return sentenceJSON(c.Text)
}

// chartJSON is a chart in a few lines: what it is, its axes, its labels
// and notes, and a line per series.
func chartJSON(c *chart) []string {
	head := []string{c.Kind}
	for _, f := range []string{c.Scenario, c.Metric, c.Title.raw(), c.Subtitle} {
		if f != "" {
			head = append(head, f)
		}
	}
	axes := "y " + c.YTitle.raw()
	if c.XTitle != "" {
		axes = "x " + c.XTitle + ", " + axes
	}
	out := []string{strings.Join(head, " · "), axes}
	if len(c.Labels) > 0 {
		labels := make([]string, len(c.Labels))
		for i, l := range c.Labels {
			labels[i] = strings.Join(l, " ")
		}
		out = append(out, "labels: "+few(labels, ", "))
	}
	if len(c.Notes) > 0 {
		out = append(out, "notes: "+few(c.Notes, "; "))
	}
	for _, s := range c.Series {
		points := make([]string, len(s.Points))
		for i, p := range s.Points {
			points[i] = num(p.X) + ":" + num(p.Y)
		}
		out = append(out, fmt.Sprintf("%s (%s): %s", s.Role, s.Label, few(points, " ")))
	}
	return out
}

// few is items joined by sep; more than six are shown by their first three,
// their last two and their count (a chart's values are checked one by one
// by the renderers' tests, TestHTMLDataRoundTrip and TestMarkdownCharts).
func few(items []string, sep string) string {
	if len(items) <= 6 {
		return strings.Join(items, sep)
	}
	n := len(items)
	return strings.Join(items[:3], sep) + sep + "…" + sep + strings.Join(items[n-2:], sep) + fmt.Sprintf(" (%d)", n)
}

// num is a number in a golden: shortest form, NaN and infinities by name.
func num(n compare.Num) string {
	x := float64(n)
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "+Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// The verdict alone: no charts, no telemetry, no percentiles.
func TestVerdictViewGolden(t *testing.T) {
	verdicts := map[string]func() *compare.Verdict{"quality": qualityVerdict}
	for _, c := range verdictCases {
		verdicts[c.name] = c.verdict
	}
	for name, verdict := range verdicts {
		t.Run(name, func(t *testing.T) {
			v := verdictView(verdict())
			viewGolden(t, "verdict-"+name, v)
			for _, b := range v.Docs[0].Blocks {
				require.Nil(t, b.Charts, "a verdict alone has no charts")
				if b.Section != nil {
					for _, sb := range b.Section.Blocks {
						assert.Nil(t, sb.Charts, "a verdict alone has no charts")
						assert.Nil(t, sb.Fold, "a verdict alone has no telemetry")
					}
				}
			}
		})
	}
}

// Every document case, merged, and the telemetry cases.
func TestReportViewGolden(t *testing.T) {
	for _, c := range documentCases {
		t.Run(c.name, func(t *testing.T) {
			viewGolden(t, "report-"+c.name, buildView([]*reportfile.Document{c.doc()}))
		})
	}
	for _, c := range telemetryCases {
		t.Run(c.name, func(t *testing.T) {
			viewGolden(t, "report-"+c.name, buildView([]*reportfile.Document{c.doc(t)}))
		})
	}
	t.Run("merged", func(t *testing.T) {
		docs := mergedDocuments()
		for _, d := range docs {
			for i := range d.Scenarios {
				d.Scenarios[i].Latency = nil // the jobs' charts are the other cases'
			}
		}
		viewGolden(t, "report-merged", buildView(docs))
	})
}

// Media and detail levels: charts are drawn where they can be, markdown's
// collapsed details have no place elsewhere, and the blocks markdown sheds
// to fit a limit are the ones emitMarkdown's documentation names.
func TestViewMediaAndDetail(t *testing.T) {
	v := buildView([]*reportfile.Document{documentCases[1].doc()}) // regression, with history
	type seen struct {
		media medium
		drop  detail
	}
	kinds := map[string][]seen{}
	var walk func(blocks []block)
	walk = func(blocks []block) {
		for _, b := range blocks {
			var kind string
			switch {
			case b.Section != nil:
				kind = "section " + b.Section.Label
				walk(b.Section.Blocks)
			case b.Table != nil:
				kind = "table " + b.Table.Kind
			case b.List != nil:
				kind = "list " + b.List.Kind
			case b.Para != nil:
				kind = "para"
			case b.Fold != nil:
				kind = "fold " + b.Fold.Summary.raw()
				walk(b.Fold.Blocks)
			case b.Charts != nil:
				kind = "charts " + b.Charts.Charts[0].Kind
			}
			kinds[kind] = append(kinds[kind], seen{b.Media, b.Drop})
		}
	}
	walk(v.Docs[0].Blocks)
	for _, c := range []struct {
		kind  string
		media medium
		drop  detail
	}{
		{"section Scenario", 0, 0},
		{"table gates", 0, 0},
		{"list notes", 0, detailTables},
		{"list changes", 0, detailTables},
		{"list mismatches", 0, detailTables},
		{"list warnings", 0, detailTables},
		{"charts percentiles", mediumMarkdown, detailNoCharts},
		{"charts cdf", mediumHTML, 0},
		{"charts reps", mediumHTML, 0},
		{"charts trend", mediumHTML, 0},
		{"fold All percentiles and per-repetition values", mediumMarkdown, detailNoDetails},
		{"table values", 0, 0}, // inside the fold, which markdown alone shows
	} {
		got := kinds[c.kind]
		require.NotEmpty(t, got, "no %s block", c.kind)
		for _, s := range got {
			assert.Equal(t, seen{c.media, c.drop}, s, "%s: media and level", c.kind)
		}
	}

	// The suites' changed items go with the charts (a terminal lists them
	// a line each); the telemetry table with the details (a terminal, which
	// has no folds, shows the table alone); the suite's notes stay to the
	// end.
	q := buildView([]*reportfile.Document{documentCases[3].doc()}).Docs[0].Blocks[0].Section
	var suite *section
	for _, b := range q.Blocks {
		if b.Section != nil {
			suite = b.Section
		}
	}
	require.NotNil(t, suite)
	require.Len(t, suite.Blocks, 4)
	for i, want := range []struct {
		media medium
		drop  detail
		what  string
	}{
		{0, 0, "the quality gates"},
		{0, 0, "the drift and notes"},
		{mediumText, 0, "the changed items, a line each"},
		{mediumMarkdown | mediumHTML, detailNoCharts, "the changed items' table"},
	} {
		assert.Equal(t, want.media, suite.Blocks[i].Media, "%s: media", want.what)
		assert.Equal(t, want.drop, suite.Blocks[i].Drop, "%s: level", want.what)
	}
	tel := buildView([]*reportfile.Document{telemetryCases[0].doc(t)}).Docs[0].Blocks[0].Section
	var folds, tables []block
	for _, b := range tel.Blocks {
		switch {
		case b.Fold != nil:
			folds = append(folds, b)
		case b.Table != nil && b.Table.Kind == "telemetry":
			tables = append(tables, b)
		}
	}
	require.Len(t, folds, 1)
	assert.Equal(t, detailNoDetails, folds[0].Drop)
	assert.Equal(t, mediumMarkdown|mediumHTML, folds[0].Media, "markdown and HTML fold the telemetry")
	require.Len(t, tables, 1)
	assert.Equal(t, mediumText, tables[0].Media, "a terminal shows the telemetry table alone")
}

// mergedDocuments are three jobs: a pass, a regression and an inconclusive
// verdict.
func mergedDocuments() []*reportfile.Document {
	a := testDocument(passVerdict(), 1.01, 0)
	a.Title = "llama-3.1-8b · H100"
	b := testDocument(regressionVerdict(), 1.3, 0)
	b.Title = "llama-3.1-70b · 4×H100"
	c := testDocument(inconclusiveVerdict(), 1.08, 0)
	c.Title = "qwen2.5-7b · L4"
	return []*reportfile.Document{a, b, c}
}

// A view of several documents has one headline over them: the worst
// outcome, its jobs counted, and the worst change among those jobs.
func TestMergedHeadline(t *testing.T) {
	reg2 := testDocument(regressionVerdict(), 1.3, 0)
	reg2.Title = "bigger"
	reg2.Verdict.Scenarios[0].Gates[0].Change.Estimate = 0.5
	reg2.Verdict.Scenarios[0].Gates[0].Change.Lo = 0.4
	reg2.Verdict.Scenarios[0].Gates[0].Change.Hi = 0.6
	inc := testDocument(inconclusiveVerdict(), 1.08, 0)
	inc.Key = "inc.yaml"
	for _, c := range []struct {
		name string
		docs []*reportfile.Document
		want string
	}{
		{"the worst regression of any job", append(mergedDocuments(), reg2),
			"regression in 2 of 4 jobs (exit 1) — worst: «bigger» · «chat-c16» «TTFT p99» +50.0% [+40.0%, +60.0%]"},
		{"inconclusive: the worst change among the inconclusive jobs", []*reportfile.Document{mergedDocuments()[0], inc},
			"inconclusive in 1 of 2 jobs (exit 0) — worst: «inc.yaml» · «chat-c16» «TTFT p99» +8.0% [+6.0%, +14.0%]"},
		{"pass: the jobs counted", []*reportfile.Document{mergedDocuments()[0], mergedDocuments()[0]}, "pass (2 jobs)"},
	} {
		if got := headlineJSON(buildView(c.docs).Headline); got != c.want {
			t.Errorf("%s: headline = %q, want %q", c.name, got, c.want)
		}
	}
}

// A view's goldens are refreshed with the others; this keeps stale ones
// from piling up.
func TestViewGoldensAreUsed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "view", "*.json"))
	require.NoError(t, err)
	want := map[string]bool{"report-merged.json": true, "report-capacity.json": true}
	for _, c := range verdictCases {
		want["verdict-"+c.name+".json"] = true
	}
	want["verdict-quality.json"] = true
	for _, c := range documentCases {
		want["report-"+c.name+".json"] = true
	}
	for _, c := range telemetryCases {
		want["report-"+c.name+".json"] = true
	}
	for _, f := range files {
		assert.True(t, want[filepath.Base(f)], "%s is no test's golden", f)
	}
	assert.Len(t, files, len(want), "a golden per case")
}
