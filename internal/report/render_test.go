package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/stat"
)

// The renderers' goldens: how each medium writes each kind of block, cell
// and page part, from a view built by hand (testdata/render/blocks.*).
// What the reports say is in the view's goldens (view_test.go).

// blocksEvil is untrusted text that every medium must make safe: markup,
// markdown syntax, a mention, an issue reference, a terminal escape and a
// bidirectional override.
const blocksEvil = "<b>x</b>|*y*_ @team #1\x1b[31m\u202e!"

// blocksView is two jobs merged: the first with one of every kind of block
// and cell, blocksEvil in every untrusted place; the second with a
// paragraph.
func blocksView() *view {
	evil := untrusted(blocksEvil)
	gates := &table{Kind: "gates", Columns: []column{
		{Title: "metric"},
		{Title: "baseline", Long: "baseline median [95% interval]", Kind: colNumber},
		{Title: "change", Kind: colNumber},
		{Title: "outcome"},
	}, Rows: []row{
		{Outcome: stat.Regression, Cells: []cell{
			textCell(cat(evil, plain(" ("), evil, plain(")"))),
			{Kind: cellSummary, Summary: compare.Summary{Median: 41.2, Lo: 40.1, Hi: 42.5}, Unit: "ms"},
			textCell(cat(plain("+3.10 [+1.00, +5.20] "), evil)),
			{Kind: cellOutcome, Outcome: stat.Regression},
		}},
		{Outcome: stat.Outcome(blocksEvil), Cells: []cell{
			plainCell("error rate (%)"),
			{Kind: cellSummary, Summary: compare.Summary{Median: 0.005, Lo: 0, Hi: 0.012}, Unit: "%"},
			plainCell("—"),
			{Kind: cellOutcome, Outcome: stat.Outcome(blocksEvil)},
		}},
	}}
	notes := &list{Kind: "notes", Items: []item{
		{Subject: join(", ", evil, plain("E2E p99")), Text: evil},
		{Subject: plain("warning"), Text: cat(plain("baseline: "), evil)},
		{Lead: "not gated", Subject: plain("cold start (ms)"), Text: cat(plain("baseline 3239 · candidate 3401 — "), evil)},
	}}
	suite := &section{Label: "Eval suite", Name: blocksEvil, Facts: "2 items · accuracy 50.0% (1/2) → 0.0% (0/2)", Blocks: []block{
		{List: &list{Kind: "notes", Items: []item{{Text: plain("outputs identical to the baseline's: 0 of 2")}}}},
		{Drop: detailNoCharts, Table: &table{Kind: "examples", Columns: []column{
			{Title: "changed item", Kind: colID},
			{Title: "baseline", Long: "baseline output"},
			{Title: "candidate", Long: "candidate output"},
		}, Rows: []row{{Cells: []cell{
			textCell(evil),
			{Kind: cellOutput, Pass: true, Output: "Answer:\n42 " + blocksEvil},
			{Kind: cellOutput, Output: ""},
		}}}}},
	}}
	telemetry := &fold{Summary: plain("Engine, GPU and cost"), Blocks: []block{{Table: &table{Kind: "telemetry", Columns: []column{
		{Title: "metric (median of repetitions)"},
		{Title: "candidate", Kind: colNumber},
		{Title: "gated"},
	}, Rows: []row{{Cells: []cell{textCell(cat(plain("GPU power ("), evil, plain(")"))), plainCell("610"), {Kind: cellFlag, Flag: "gated"}}}, {Cells: []cell{plainCell("GPU utilisation (%)"), plainCell("91"), {Kind: cellFlag}}}}}}}}
	mermaidCharts := &chartGroup{Title: cat(plain("Charts: "), evil), Charts: []*chart{{
		Kind: "percentiles", Title: cat(plain("TTFT "), evil), YTitle: cat(evil, plain(" (ms)")),
		Labels: [][]string{{"p50"}, {blocksEvil}},
		Series: []series{{Label: "baseline", Role: "baseline", Points: []point{{0, 20}, {1, 30.123456}}}, {Label: "candidate", Role: "candidate", Points: []point{{0, 26}, {1, 39}}}},
	}}}
	cdf := &chartGroup{Title: plain("Latency distributions"), Charts: []*chart{{
		Kind: "cdf", Scenario: blocksEvil, Metric: "ttft", Title: cat(plain("TTFT "), evil), XTitle: "TTFT (ms, log scale)", YTitle: plain("share of requests at or below"),
		Series: []series{{Label: "candidate", Role: "candidate", Points: []point{{12, 0.5}, {20, 1}}}},
	}}}
	trend := &chartGroup{Title: plain("History"), Facts: "2 promoted baselines, 2026-01-05 to 2026-01-06", Charts: []*chart{{
		Kind: "trend", Scenario: blocksEvil, Metric: "ttft.p99", Title: plain("TTFT p99"), XTitle: "promoted baseline (date, commit)", YTitle: plain("TTFT p99 (ms)"),
		Labels: [][]string{{"2026-01-05", blocksEvil}, {"2026-01-06"}}, Notes: []string{blocksEvil, ""},
		Series: []series{{Label: "baseline median", Role: "history", Points: []point{{0, 41}, {1, compare.Num(math.NaN())}}}},
	}}}
	scenario := &section{Label: "Scenario", Name: blocksEvil, Facts: "baseline n=7 · candidate n=7 · level 0.05", Badge: true, Compared: true, Outcome: stat.Regression,
		Blocks: []block{
			{Table: gates},
			{Drop: detailTables, List: notes},
			{Section: suite},
			{Media: mediumMarkdown, Drop: detailNoCharts, Charts: mermaidCharts},
			{Drop: detailNoDetails, Fold: telemetry},
			{Media: mediumHTML, Charts: cdf},
			{Media: mediumHTML, Charts: trend},
		}}
	notCompared := &section{Label: "Scenario", Name: "chat-c64", Facts: "candidate n=7 · no baseline: not compared", Badge: true, Blocks: []block{
		{Para: &para{Text: plain("No gates.")}},
		{Media: mediumHTML, Para: &para{Text: plain("No latency distributions: the results kept no histograms."), Aside: true}},
	}}
	details := &fold{Summary: plain("All percentiles and per-repetition values"), Blocks: []block{{Section: &section{Label: "Scenario", Name: blocksEvil, Blocks: []block{
		{Table: &table{Kind: "values", Columns: []column{{Title: "metric"}, {Title: blocksEvil, Kind: colNumber}}, Rows: []row{{Cells: []cell{textCell(evil), plainCell("40.1, 40.6")}}}}},
	}}}}}
	first := docView{
		Title: "job " + blocksEvil, PageTitle: "report " + blocksEvil, Outcome: stat.Regression,
		Headline: headline{Summary: plain("regression (1 of 2 gates regressed)"), Worst: cat(plain("worst: "), evil, plain(" +31.2%"))},
		Verdict:  cat(plain("REGRESSION (1 gate regressed: "), evil, plain(" +31.2%)")),
		Fields:   []field{{Name: "repository", Value: blocksEvil}, {Name: "alpha", Value: "0.05"}},
		Blocks: []block{
			{Section: scenario},
			{Section: notCompared},
			{Drop: detailTables, List: &list{Title: "Mismatches", Aside: "compared anyway: --allow-mismatch", Kind: "mismatches", Items: []item{
				{Text: cat(evil, plain(": "), plain("(none)"), plain(" → "), evil)},
			}}},
			{Media: mediumMarkdown, Drop: detailNoDetails, Fold: details},
		},
	}
	second := docView{
		Title: "job 2", PageTitle: "Report 2", Outcome: stat.Pass,
		Headline: headline{Summary: plain("pass (1 gate)")},
		Verdict:  plain("pass (1 gate)"),
		Blocks:   []block{{Para: &para{Text: plain("No gates.")}}},
	}
	return &view{
		Outcome: stat.Regression, ExitCode: 1, Merged: true,
		Headline: headline{Summary: plain("regression in 1 of 2 jobs (exit 1)"), Worst: cat(plain("worst: "), untrusted("job "+blocksEvil), plain(" · "), evil)},
		Page:     headline{Summary: plain("1 of 3 gates regressed"), Worst: cat(plain("worst: "), untrusted("report "+blocksEvil), plain(": "), evil)},
		Docs:     []docView{first, second},
		Footer:   []link{{RunURL: "https://github.com/acme/serving/actions/runs/99"}, {RunURL: "javascript:alert(1)"}, {Commit: blocksEvil}},
	}
}

func TestRenderBlocksText(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writeText(&buf, blocksView()))
	out := buf.String()
	golden(t, filepath.Join("render", "blocks.txt"), buf.Bytes())
	for _, bad := range []string{"\x1b", "\u202e"} {
		assert.NotContains(t, out, bad, "a terminal escape or an override reaches the terminal")
	}
	assert.NotContains(t, out, "mermaid", "a terminal draws no charts")
	assert.NotContains(t, out, "per-repetition values", "markdown's collapsed details are not the terminal's")
	assert.NotContains(t, out, "No latency distributions", "the HTML's own note")
	for i, l := range strings.Split(out, "\n") {
		assert.Equal(t, strings.TrimRight(l, " "), l, "line %d has trailing blanks", i+1)
	}
}

func TestRenderBlocksMarkdown(t *testing.T) {
	out := renderMarkdown(blocksView(), detailFull, MarkdownOptions{Marker: "<!-- perfgate:blocks -->"})
	golden(t, filepath.Join("render", "blocks.md"), []byte(out))
	assert.NotRegexp(t, `(^|[^\\])<(b|/b)>`, out, "markup from the view is escaped")
	assert.NotContains(t, out, "@team", "a mention would notify")
	assert.NotContains(t, out, "#1", "an issue reference would link")
	assert.NotContains(t, out, "javascript:", "only an http(s) link")
	assert.NotContains(t, out, "Latency distributions", "the HTML's own charts")
	assert.Equal(t, strings.Count(out, "<details>"), strings.Count(out, "</details>"))
	for _, c := range []struct {
		level    detail
		gone     []string
		kept     []string
		cutNoted bool
	}{
		{detailNoDetails, []string{"Engine, GPU and cost", "All percentiles"}, []string{"```mermaid", "changed item", "**Mismatches**"}, true},
		{detailNoCharts, []string{"```mermaid", "changed item"}, []string{"**Mismatches**", "- **warning**"}, true},
		{detailTables, []string{"**Mismatches**", "- **warning**"}, []string{"| metric |", "outputs identical"}, true},
	} {
		out := renderMarkdown(blocksView(), c.level, MarkdownOptions{})
		for _, s := range c.gone {
			assert.NotContains(t, out, s, "level %d", c.level)
		}
		for _, s := range c.kept {
			assert.Contains(t, out, s, "level %d", c.level)
		}
		assert.Equal(t, c.cutNoted, strings.Contains(out, cutNote))
	}
}

func TestRenderBlocksHTML(t *testing.T) {
	page := renderView(t, blocksView())
	htmlWellFormed(t, page)
	body := page[strings.Index(page, "<body>"):strings.Index(page, "<footer>")]
	golden(t, filepath.Join("render", "blocks.html"), []byte(body+"\n"))
	data, err := json.MarshalIndent(htmlChartData(t, page), "", "  ")
	require.NoError(t, err)
	golden(t, filepath.Join("render", "blocks-charts.json"), append(data, '\n'))
	rest := htmlWithoutLibrary(t, page)
	for _, bad := range []string{"<b>", "\x1b", "\u202e", "mermaid", "All percentiles"} {
		htmlHasNot(t, rest, bad)
	}
	assertTextOnly(t, rest, "<b>", "@team")
}

// renderView is v as a page, through emitHTML's own steps.
func renderView(t *testing.T, v *view) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, writeHTMLView(&buf, v))
	return buf.String()
}

// The report of the regression document, end to end in each medium: what
// a pull request comment and a terminal show, and the HTML page's outline.
func TestRenderReport(t *testing.T) {
	var md, text bytes.Buffer
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{documentCases[1].doc()}, MarkdownOptions{Limit: commentLimit, Marker: "<!-- perfgate:perfgate.yaml -->"}))
	golden(t, filepath.Join("render", "report-regression.md"), md.Bytes())
	require.NoError(t, emitText(&text, []*reportfile.Document{telemetryCases[1].doc(t)}))
	golden(t, filepath.Join("render", "report-telemetry-nogpu.txt"), text.Bytes())
	page := renderHTML(t, htmlDocument())
	golden(t, filepath.Join("render", "report-regression.html.outline"), []byte(htmlOutline(t, page)))
}

// Where the media part ways, on purpose: each keeps what main's renderers
// wrote before they shared a view.
func TestRenderMediaDiffer(t *testing.T) {
	v := noBaselineVerdict()
	v.Scenarios[1].Warnings = []string{"only one side measured"}
	nb := testDocument(v, 1, 0)
	nb.Scenarios[1].Telemetry = []reportfile.TelemetryRow{{Metric: "gpu_power", Title: "GPU power", Unit: "W", Candidate: fptr(610), Gated: true}}
	q := testDocument(qualityVerdict(), 1, 0)
	merged := []*reportfile.Document{htmlDocumentOf("", regressionVerdict()), htmlDocumentOf("", passVerdict())}
	merged[1].Key = "b.yaml"

	text := func(docs ...*reportfile.Document) string {
		var b bytes.Buffer
		require.NoError(t, emitText(&b, docs))
		return b.String()
	}
	md := func(docs ...*reportfile.Document) string {
		var b bytes.Buffer
		require.NoError(t, emitMarkdown(&b, docs, MarkdownOptions{}))
		return b.String()
	}
	for _, c := range []struct {
		what, out   string
		has, hasNot []string
	}{
		{"a scenario without a baseline, in a terminal", text(nb),
			[]string{"scenario chat-c64 · candidate n=7 · no baseline: not compared\n  engine, GPU and cost (median of repetitions)  baseline  candidate  change\n  GPU power (W)                                 —         610        —       gated\n"},
			[]string{"only one side measured"}},
		{"a scenario without a baseline, in markdown", md(nb),
			[]string{"#### Scenario chat-c64 · candidate n=7\n\nNo baseline: not compared.\n", "| GPU power (W) | — | 610 | — | ✓ |"},
			[]string{"only one side measured"}},
		{"a scenario without a baseline, in HTML", renderHTML(t, nb),
			[]string{`<p class="facts">candidate n=7 · no baseline: not compared</p>`, "<strong>warning</strong>: only one side measured", "<td>gated</td>"}, nil},
		{"changed items in a terminal", text(q),
			[]string{`    changed arith-001 (pass → fail): "The answer is -21." → "The answer is -20."` + "\n"},
			[]string{"changed item"}},
		{"changed items in markdown", md(q), []string{"| changed item | baseline | candidate |"}, []string{"changed arith-001"}},
		{"a not-gated metric in HTML", renderHTML(t, htmlDocument()),
			[]string{"<li>not gated: cold start (ms): baseline 3239"}, []string{"<strong>cold start"}},
		{"a merged page's header and headings", renderHTML(t, merged...),
			[]string{"1 of 7 gates regressed — <strong>worst: chat-c16 TTFT p99", "Report 1</h2>", "Report 2</a>", "<dt>config</dt><dd>b.yaml</dd>"},
			[]string{"b.yaml</a>", "b.yaml</h2>", "jobs"}},
		{"a merged comment's headline and headings", md(merged...),
			[]string{"regression in 1 of 2 jobs (exit 1) — worst: job 1 · chat-c16 TTFT p99", "b.yaml: pass"},
			[]string{"Report 1"}},
	} {
		for _, s := range c.has {
			if !strings.Contains(c.out, s) {
				t.Errorf("%s: lacks %q", c.what, s)
			}
		}
		for _, s := range c.hasNot {
			if strings.Contains(c.out, s) {
				t.Errorf("%s: has %q", c.what, s)
			}
		}
	}
}

// htmlNode is an element of a page: its tag, id and classes, and children.
type htmlNode struct {
	tag, id, class string
	children       []*htmlNode
}

// htmlVoid are the elements without an end tag.
var htmlVoid = map[string]bool{"meta": true, "br": true, "img": true, "input": true, "link": true, "hr": true, "wbr": true, "col": true, "area": true, "base": true, "source": true, "track": true, "embed": true}

var (
	htmlTagName = regexp.MustCompile(`^<(/?)([a-z][a-z0-9]*)`)
	htmlAttr    = regexp.MustCompile(`\s([a-z-]+)(?:="([^"]*)")?`)
)

// htmlParse reads page's element tree, failing t where the page is not
// well formed: a tag that does not close, an end tag of another element,
// an attribute with a stray quote, a tag with an angle bracket in it. The
// bodies of <script> and <style> are text.
func htmlParse(t *testing.T, page string) *htmlNode {
	t.Helper()
	root := &htmlNode{tag: "#document"}
	stack := []*htmlNode{root}
	for i := 0; i < len(page); {
		j := strings.IndexByte(page[i:], '<')
		if j < 0 {
			break
		}
		i += j
		switch {
		case strings.HasPrefix(page[i:], "<!--"):
			end := strings.Index(page[i:], "-->")
			require.GreaterOrEqual(t, end, 0, "a comment that does not end")
			i += end + 3
			continue
		case strings.HasPrefix(page[i:], "<!"):
			i += strings.IndexByte(page[i:], '>') + 1
			continue
		}
		end := strings.IndexByte(page[i:], '>')
		require.GreaterOrEqual(t, end, 0, "a tag that does not end: %.60q", page[i:])
		tag := page[i : i+end+1]
		i += end + 1
		m := htmlTagName.FindStringSubmatch(tag)
		if m == nil {
			t.Errorf("a '<' that starts no tag: %.60q", tag)
			continue
		}
		assert.NotContains(t, tag[1:], "<", "an angle bracket in a tag")
		assert.Zero(t, strings.Count(tag, `"`)%2, "a stray quote in %s", tag)
		name := m[2]
		if m[1] == "/" {
			top := stack[len(stack)-1]
			if top.tag != name {
				t.Errorf("</%s> closes <%s>", name, top.tag)
				continue
			}
			stack = stack[:len(stack)-1]
			continue
		}
		n := &htmlNode{tag: name}
		for _, a := range htmlAttr.FindAllStringSubmatch(tag[len(m[0]):], -1) {
			switch a[1] {
			case "id":
				n.id = a[2]
			case "class":
				n.class = a[2]
			}
		}
		parent := stack[len(stack)-1]
		parent.children = append(parent.children, n)
		switch {
		case htmlVoid[name]:
		case name == "script" || name == "style":
			close := strings.Index(page[i:], "</"+name+">")
			require.GreaterOrEqual(t, close, 0, "<%s> does not end", name)
			i += close + len("</"+name+">")
		default:
			stack = append(stack, n)
		}
	}
	var open []string
	for _, n := range stack[1:] {
		open = append(open, n.tag)
	}
	assert.Empty(t, open, "elements left open")
	return root
}

// htmlWellFormed checks page's structure: well formed, every id once,
// every link to an id of the page, every chart's canvas there and every
// canvas's chart in the data.
func htmlWellFormed(t *testing.T, page string) {
	t.Helper()
	root := htmlParse(t, page)
	ids := map[string]int{}
	var canvases []string
	var walk func(n *htmlNode)
	walk = func(n *htmlNode) {
		if n.id != "" {
			ids[n.id]++
		}
		if n.tag == "canvas" {
			canvases = append(canvases, n.id)
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(root)
	for id, n := range ids {
		assert.Equal(t, 1, n, "id %q %d times", id, n)
	}
	for _, m := range regexp.MustCompile(`href="#([^"]*)"`).FindAllStringSubmatch(page, -1) {
		assert.Contains(t, ids, m[1], "a link to no element")
	}
	var charts []string
	for _, c := range htmlChartData(t, page).Charts {
		charts = append(charts, c.ID)
	}
	assert.ElementsMatch(t, charts, canvases, "a canvas per chart, a chart per canvas")
	require.Len(t, root.children, 1)
	assert.Equal(t, "html", root.children[0].tag)
}

// htmlOutline is page's element tree, one element a line (tag#id.class),
// a run of identical siblings once with its count.
func htmlOutline(t *testing.T, page string) string {
	t.Helper()
	var b strings.Builder
	var write func(n *htmlNode, indent string) string
	write = func(n *htmlNode, indent string) string {
		var s strings.Builder
		s.WriteString(indent + n.tag)
		if n.id != "" {
			s.WriteString("#" + n.id)
		}
		for _, c := range strings.Fields(n.class) {
			s.WriteString("." + c)
		}
		s.WriteString("\n")
		var prev string
		count := 0
		flush := func() {
			if count == 0 {
				return
			}
			if count > 1 {
				first, rest, _ := strings.Cut(prev, "\n")
				prev = fmt.Sprintf("%s ×%d\n%s", first, count, rest)
			}
			s.WriteString(prev)
		}
		for _, c := range n.children {
			sub := write(c, indent+"  ")
			if sub == prev {
				count++
				continue
			}
			flush()
			prev, count = sub, 1
		}
		flush()
		return s.String()
	}
	for _, c := range htmlParse(t, page).children {
		b.WriteString(write(c, ""))
	}
	return b.String()
}
