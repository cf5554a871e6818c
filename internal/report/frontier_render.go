package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/frontier"
)

// The frontier's renderings: a frontier.Frontier laid out as view blocks (a table
// of the configurations, per suite its charts, a table of accuracies and
// the dominated configurations, then what was not placed and the
// warnings), written by the terminal, markdown and HTML renderers. The
// HTML page is the report's shell, styles, script and CSP, with charts of
// kind frontier that report.js draws.

// emitFrontierText writes f for a terminal.
func emitFrontierText(w io.Writer, f *frontier.Frontier) error {
	l := frontierLayoutOf(f)
	p := &verdictPrinter{w: w}
	p.println("perfgate frontier: " + l.summary)
	for _, b := range l.blocks {
		if b.shows(mediumText, detailFull) {
			p.println()
			textBlock(p, b, "")
		}
	}
	return p.err
}

// emitFrontierMarkdown writes f as GitHub-flavoured markdown: tables, as
// mermaid cannot draw a scatter.
func emitFrontierMarkdown(w io.Writer, f *frontier.Frontier) error {
	l := frontierLayoutOf(f)
	p := &verdictPrinter{w: w}
	p.println("### perfgate: the quality-cost frontier")
	p.println()
	p.println(l.summary + ".")
	mdBlocks(p, l.blocks, 0, detailFull)
	return p.err
}

// emitFrontierJSON writes f as indented JSON.
func emitFrontierJSON(w io.Writer, f *frontier.Frontier) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// emitFrontierHTML writes f as one self-contained page: the HTML report's
// style, script and Content-Security-Policy, two charts per suite
// (accuracy against $/Mtok and against output tok/s at capacity) and the
// tables of the other media.
func emitFrontierHTML(w io.Writer, f *frontier.Frontier) error {
	l := frontierLayoutOf(f)
	v := &view{Docs: []docView{{Blocks: l.blocks}}}
	_, ids := htmlCharts(v)
	data := frontierHTMLData{Charts: []frontierChart{}}
	var walk func([]block)
	walk = func(blocks []block) {
		for _, b := range blocks {
			switch {
			case b.Section != nil:
				walk(b.Section.Blocks)
			case b.Charts != nil:
				for _, c := range b.Charts.Charts {
					fc := *l.charts[c]
					fc.ID = ids[c]
					data.Charts = append(data.Charts, fc)
				}
			}
		}
	}
	walk(l.blocks)
	js, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("frontier html: chart data: %w", err)
	}
	page := frontierPage{Summary: l.summary, Blocks: l.blocks, htmlPage: htmlPage{
		Title: "perfgate: the quality-cost frontier", CSP: htmlCSP, Version: chartJSVersion,
		Style: template.CSS(htmlStyle), Script: template.JS(htmlScript), ChartJS: template.JS(chartJS), Data: js,
	}}
	t, err := frontierTemplate.Clone()
	if err != nil {
		return fmt.Errorf("frontier html: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Funcs(htmlFuncs(ids)).ExecuteTemplate(&buf, "frontier-page", page); err != nil {
		return fmt.Errorf("frontier html: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("frontier html: %w", err)
	}
	return nil
}

// frontierPage is what the frontier's template renders: the report
// page's shell with the frontier's blocks.
type frontierPage struct {
	htmlPage
	Summary string
	Blocks  []block
}

// frontierTemplate is the report's template with a page of its own for
// the frontier, which reuses its blocks, cells and script.
var frontierTemplate = template.Must(template.Must(htmlTemplate.Clone()).Parse(`
{{- define "frontier-page" -}}
{{template "head" .}}<style>.charts.frontier figure.chart { height: 440px; }</style>
</head>
<body>
<header class="verdict none">
<h1>perfgate: the quality-cost frontier</h1>
<p class="summary">{{.Summary}}</p>
<p class="facts">Each configuration is placed at its capacity: the cost of a million output tokens and the output throughput where its SLOs held. Filled points are Pareto-optimal, hollow ones dominated; the bars are the accuracy's Wilson 95% interval.</p>
<p class="nojs">The charts need JavaScript, which is off: every number is in the tables.</p>
</header>
<main>
<section class="doc">
{{- range .Blocks}}{{template "block" (at 0 .)}}{{end}}
</section>
</main>
<footer>perfgate report --frontier · charts drawn by Chart.js {{.Version}} (MIT licence), inlined: this page fetches nothing.</footer>
<script type="application/json" id="perfgate-data">{{.Data}}</script>
<script>{{.ChartJS}}</script>
<script>
{{.Script}}</script>
</body>
</html>
{{end}}`))

// frontierHTMLData is the JSON the page's script draws its charts from.
type frontierHTMLData struct {
	Charts []frontierChart `json:"charts"`
}

// frontierChart is one frontier chart as report.js's frontier function
// reads it: a scatter of the configurations (x the axis's figure, y the
// accuracy with its interval), the Pareto-optimal ones joined by the
// steps of what the frontier attains. Its strings are cleaned; the
// template escapes the whole.
type frontierChart struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Title    string `json:"title"`
	Subtitle string `json:"subtitle"`
	XTitle   string `json:"x_title"`
	YTitle   string `json:"y_title"`
	// XUnit is how the tooltip names x ("$/Mtok", "tok/s"); XLog asks for
	// a logarithmic x axis (the figures span a factor of 10 or more).
	XUnit string `json:"x_unit"`
	XLog  bool   `json:"x_log"`
	// Lower is true when a lower x is better (cost).
	Lower  bool                 `json:"lower"`
	Points []frontierChartPoint `json:"points"`
	// Step is the frontier's staircase, optimal point to optimal point.
	Step []frontierXY `json:"step"`
}

// frontierChartPoint is one configuration on a chart.
type frontierChartPoint struct {
	Label   string  `json:"label"`
	X       float64 `json:"x"`
	Y       float64 `json:"y"`
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	Optimal bool    `json:"optimal"`
	// Bound is "at least" or "at most" for a censored capacity: its x
	// bounds the truth.
	Bound string `json:"bound,omitempty"`
}

// frontierXY is a corner of a frontier's staircase.
type frontierXY struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// frontierLayout is a frontier.Frontier as view blocks, with the data of each of
// its charts.
type frontierLayout struct {
	summary string
	blocks  []block
	charts  map[*chart]*frontierChart
}

// frontierLayoutOf lays out f.
func frontierLayoutOf(f *frontier.Frontier) frontierLayout {
	l := frontierLayout{charts: map[*chart]*frontierChart{}}
	l.summary = verdictCount(len(f.Configs), "configuration") + " · " + verdictCount(len(f.Suites), "eval suite") +
		" · " + strconv.Itoa(len(f.Configs)-frontierUnplaced(f)) + " placed"
	l.blocks = append(l.blocks, block{Section: frontierConfigsSection(f)})
	for i := range f.Suites {
		l.blocks = append(l.blocks, block{Section: l.suiteSection(f, &f.Suites[i])})
	}
	if len(f.NotPlaced) > 0 {
		ls := &list{Title: "Not placed", Kind: "warnings"}
		for _, n := range f.NotPlaced {
			ls.Items = append(ls.Items, item{Subject: frontierWho(f, n.Config), Text: plain(n.Reason)})
		}
		ls.Items = frontierUntrustedReasons(ls.Items)
		l.blocks = append(l.blocks, block{List: ls})
	}
	if len(f.Warnings) > 0 {
		ls := &list{Title: "Warnings", Kind: "warnings"}
		for _, w := range f.Warnings {
			ls.Items = append(ls.Items, item{Text: untrusted(w)})
		}
		l.blocks = append(l.blocks, block{List: ls})
	}
	return l
}

// frontierUntrustedReasons marks the reasons untrusted: they quote
// scenario names from the results.
func frontierUntrustedReasons(items []item) []item {
	for i := range items {
		items[i].Text = untrusted(items[i].Text.raw())
	}
	return items
}

// frontierUnplaced counts the configurations on no frontier at all.
func frontierUnplaced(f *frontier.Frontier) int {
	n := 0
	for _, np := range f.NotPlaced {
		if !np.Throughput {
			n++
		}
	}
	return n
}

// frontierWho is a config as the lists name it: its label, with its file
// when the label does not already end with it.
func frontierWho(f *frontier.Frontier, i int) sentence {
	c := f.Configs[i]
	if strings.HasSuffix(c.Label, "("+c.File+")") || c.Label == c.File {
		return untrusted(c.Label)
	}
	return untrusted(c.Label + " (" + c.File + ")")
}

// frontierConfigsSection is the table of the configurations at capacity.
func frontierConfigsSection(f *frontier.Frontier) *section {
	t := &table{Kind: "frontier-configs", Columns: []column{
		{Title: "configuration"}, {Title: "file"}, {Title: "scenario"},
		{Title: "capacity", Long: "capacity [holds, breaks)", Kind: colNumber},
		{Title: "output tok/s", Kind: colNumber}, {Title: "$/Mtok", Kind: colNumber}, {Title: "outcome"},
	}}
	for _, c := range f.Configs {
		r := row{Cells: []cell{textCell(untrusted(c.Label)), textCell(untrusted(c.File)), textCell(untrusted(c.Scenario))}}
		if c.Scenario == "" {
			r.Cells = append(r.Cells, plainCell("—"), plainCell("—"), plainCell("—"), plainCell("no capacity search"))
		} else {
			r.Cells = append(r.Cells, plainCell(frontierCapacity(c)), plainCell(frontierBoundOf(c, false)+verdictSigFigs(c.OutputThroughput)),
				textCell(frontierDollars(frontierCostOf(c))), textCell(untrusted(c.Outcome)))
		}
		t.Rows = append(t.Rows, r)
	}
	return &section{Label: "Configurations", Name: "at capacity", Facts: verdictCount(len(f.Configs), "result file"),
		Blocks: []block{{Table: t}}}
}

// frontierCapacity is a config's capacity interval as the report writes
// it (capacityInterval): "148 req/s [148, 155)", "≥ 640 req/s", "< 10
// req/s", "not found (no probe held)".
func frontierCapacity(c frontier.Config) string {
	unit := " " + c.Unit
	switch {
	case c.Bound == frontier.BoundAtLeast && c.Holds <= 0:
		return "not found (no probe held)"
	case c.Bound == frontier.BoundAtMost:
		return "< " + loadText(c.Breaks) + unit
	case c.Bound == frontier.BoundAtLeast:
		return "≥ " + loadText(c.Holds) + unit
	case c.Breaks > 0:
		return loadText(c.Holds) + unit + " [" + loadText(c.Holds) + ", " + loadText(c.Breaks) + ")"
	}
	return loadText(c.Holds) + unit
}

// frontierBoundOf is the mark of a censored capacity's figure: "≥ " for a
// lower bound, "≤ " for an upper one; cost reverses them.
func frontierBoundOf(c frontier.Config, cost bool) string {
	atLeast := c.Bound == frontier.BoundAtLeast
	if c.Bound == "" {
		return ""
	}
	if cost {
		atLeast = !atLeast
	}
	if atLeast {
		return "≥ "
	}
	return "≤ "
}

// frontierCostOf is a config's cost at capacity ("$0.42"), "—" without a
// price.
func frontierCostOf(c frontier.Config) string {
	if c.CostPerMTok == nil {
		return "—"
	}
	return frontierBoundOf(c, true) + frontierMoney(*c.CostPerMTok)
}

// frontierDollars is perfgate's text holding a dollar sign, marked for
// escaping as untrusted text is: markdown would read two bare $ on a line
// as inline math.
func frontierDollars(s string) sentence { return untrusted(s) }

// frontierMoney is dollars: "$0.42", "$12.50", "$0.0031".
func frontierMoney(x float64) string {
	if x >= 0.1 {
		return "$" + strconv.FormatFloat(x, 'f', 2, 64)
	}
	return "$" + strconv.FormatFloat(x, 'g', 2, 64)
}

// frontierAccuracy is "0.74 [0.70, 0.78]".
func frontierAccuracy(p frontier.Point) string {
	return frontierShare(p.Accuracy) + " [" + frontierShare(p.Lo) + ", " + frontierShare(p.Hi) + "]"
}

func frontierShare(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// suiteSection is a suite's charts, its table of accuracies and its
// dominated configurations.
func (l *frontierLayout) suiteSection(f *frontier.Frontier, s *frontier.Suite) *section {
	name := s.Suite
	if s.Hash != "" {
		name += " (" + shortHash(s.Hash) + ")"
	}
	items := 0
	for _, p := range s.Points {
		items = max(items, p.Items)
	}
	sec := &section{Label: "Eval suite", Name: name,
		Facts: verdictCount(len(s.Points), "configuration") + " · " + verdictCount(items, "item")}
	g := &chartGroup{Title: plain("Accuracy at capacity")}
	for _, axis := range []struct {
		title, xTitle, unit string
		pareto              frontier.Pareto
		value               frontier.Axis
	}{
		{"accuracy against $/Mtok at capacity", "$ per million output tokens at capacity (lower is better)", "$/Mtok", s.Cost, frontier.CostAxis},
		{"accuracy against output tok/s at capacity", "output tokens per second at capacity (higher is better)", "tok/s", s.Throughput, frontier.ThroughputAxis},
	} {
		fc := frontierChartOf(f, s, axis.pareto, axis.value, name+": "+axis.title, axis.xTitle, axis.unit)
		if len(fc.Points) == 0 {
			continue // no configuration with a price: the table says so
		}
		c := &chart{Kind: "frontier", Scenario: name, Title: untrusted(name + ": " + axis.title)}
		g.Charts = append(g.Charts, c)
		l.charts[c] = fc
	}
	if len(g.Charts) > 0 {
		sec.Blocks = append(sec.Blocks, block{Media: mediumHTML, Charts: g})
	}

	t := &table{Kind: "frontier", Columns: []column{
		{Title: "configuration"}, {Title: "accuracy", Long: "accuracy [Wilson 95%]", Kind: colNumber}, {Title: "passed", Kind: colNumber},
		{Title: "$/Mtok", Kind: colNumber}, {Title: "output tok/s", Kind: colNumber},
		{Title: "on cost"}, {Title: "on throughput"},
	}}
	for _, p := range s.Points {
		c := f.Configs[p.Config]
		t.Rows = append(t.Rows, row{Cells: []cell{
			textCell(untrusted(c.Label)), plainCell(frontierAccuracy(p)), plainCell(strconv.Itoa(p.Passed) + "/" + strconv.Itoa(p.Items)),
			textCell(frontierDollars(frontierCostOf(c))), plainCell(frontierBoundOf(c, false) + verdictSigFigs(c.OutputThroughput)),
			plainCell(frontierStanding(s.Cost, p.Config)), plainCell(frontierStanding(s.Throughput, p.Config)),
		}})
	}
	sec.Blocks = append(sec.Blocks, block{Table: t})
	sec.Blocks = append(sec.Blocks, frontierDominated(f, s, s.Cost, "cost", func(c frontier.Config) string {
		return frontierCostOf(c)
	}, " /Mtok"))
	sec.Blocks = append(sec.Blocks, frontierDominated(f, s, s.Throughput, "throughput", func(c frontier.Config) string {
		return frontierBoundOf(c, false) + verdictSigFigs(c.OutputThroughput)
	}, " tok/s"))
	return sec
}

// frontierStanding is a config's place on a frontier: optimal, dominated,
// or "—" when it is not on it.
func frontierStanding(p frontier.Pareto, config int) string {
	for _, o := range p.Optimal {
		if o == config {
			return "optimal"
		}
	}
	for _, d := range p.Dominated {
		if d.Config == config {
			return "dominated"
		}
	}
	return "—"
}

// frontierDominated lists the configurations dominated on one axis, each
// with every configuration that dominates it and the figures:
// "llama-8b awq (b.json): dominated by llama-8b fp8 (a.json): accuracy
// 0.71 vs 0.74, $0.42 vs $0.31 /Mtok".
func frontierDominated(f *frontier.Frontier, s *frontier.Suite, p frontier.Pareto, axis string, figure func(frontier.Config) string, unit string) block {
	switch {
	case len(p.Optimal) == 0:
		return block{Para: &para{Aside: true, Text: plain(fmt.Sprintf("On %s, no configuration is placed: none has a price.", axis))}}
	case len(p.Dominated) == 0:
		n := len(p.Optimal)
		return block{Para: &para{Aside: true, Text: plain(fmt.Sprintf("On %s, no configuration is dominated: %s optimal.", axis, verdictCount(n, "configuration")))}}
	}
	ls := &list{Title: "Dominated on " + axis, Kind: "notes"}
	acc := map[int]float64{}
	for _, pt := range s.Points {
		acc[pt.Config] = pt.Accuracy
	}
	for _, d := range p.Dominated {
		me := f.Configs[d.Config]
		var text sentence
		text = append(text, span{Text: "dominated by "})
		for j, by := range d.By {
			if j > 0 {
				text = append(text, span{Text: "; "})
			}
			other := f.Configs[by]
			text = append(text, frontierWho(f, by)...)
			text = append(text, span{Text: fmt.Sprintf(": accuracy %s vs %s, ", frontierShare(acc[d.Config]), frontierShare(acc[by]))})
			text = append(text, frontierDollars(figure(me)+" vs "+figure(other)+unit)...)
			if d.WithinNoise[j] {
				text = append(text, span{Text: " (within noise: the accuracy intervals overlap)"})
			}
		}
		ls.Items = append(ls.Items, item{Subject: frontierWho(f, d.Config), Text: text})
	}
	return block{List: ls}
}

// frontierChartOf is one chart's data: every point with a figure on the
// axis, and the staircase through the optimal ones.
func frontierChartOf(f *frontier.Frontier, s *frontier.Suite, p frontier.Pareto, axis frontier.Axis, title, xTitle, unit string) *frontierChart {
	fc := &frontierChart{Kind: "frontier", Title: verdictClean(title), Subtitle: "filled: Pareto-optimal · hollow: dominated · bars: Wilson 95% interval",
		XTitle: xTitle, YTitle: "accuracy (share of items passed)", XUnit: unit, Lower: axis.Lower, Points: []frontierChartPoint{}, Step: []frontierXY{}}
	optimal := map[int]bool{}
	for _, o := range p.Optimal {
		optimal[o] = true
	}
	byConfig := map[int]frontier.Point{}
	lo, hi := 0.0, 0.0
	for _, pt := range s.Points {
		c := f.Configs[pt.Config]
		x, ok := axis.Value(c)
		if !ok {
			continue
		}
		byConfig[pt.Config] = pt
		if len(fc.Points) == 0 || x < lo {
			lo = x
		}
		hi = max(hi, x)
		bound := ""
		if b := frontierBoundOf(c, axis.Lower); b == "≥ " {
			bound = "at least"
		} else if b == "≤ " {
			bound = "at most"
		}
		fc.Points = append(fc.Points, frontierChartPoint{Label: verdictClean(c.Label), X: x, Y: pt.Accuracy, Lo: pt.Lo, Hi: pt.Hi,
			Optimal: optimal[pt.Config], Bound: bound})
	}
	fc.XLog = lo > 0 && hi/lo >= 8
	// The staircase: Optimal runs from the best x to the worst, rising in
	// accuracy; each point's accuracy is attained from it to the next
	// point's x (a horizontal step), where the next one's takes over (a
	// vertical one).
	var prev *frontierXY
	for _, o := range p.Optimal {
		pt := byConfig[o]
		x, _ := axis.Value(f.Configs[o])
		cur := frontierXY{x, pt.Accuracy}
		if prev != nil {
			fc.Step = append(fc.Step, frontierXY{cur.X, prev.Y})
		}
		fc.Step = append(fc.Step, cur)
		prev = &cur
	}
	if !axis.Lower {
		// Optimal is best first: highest throughput first; draw left to right.
		for i, j := 0, len(fc.Step)-1; i < j; i, j = i+1, j-1 {
			fc.Step[i], fc.Step[j] = fc.Step[j], fc.Step[i]
		}
	}
	return fc
}
