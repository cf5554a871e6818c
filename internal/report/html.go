package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/compare/stat"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/metric"
)

// chartJSVersion is the version of the vendored Chart.js (assets/README.md).
const chartJSVersion = "4.6.1"

// chartJSFile is Chart.js's UMD build, vendored unmodified.
//
//go:embed assets/chart.umd.min.js
var chartJSFile string

// chartJS is the library as a report inlines it: without the source-map
// comment, which names a file the report does not have.
var chartJS = func() string {
	s := strings.TrimRight(chartJSFile, "\n")
	if i := strings.LastIndex(s, "\n//# sourceMappingURL="); i >= 0 {
		s = s[:i]
	}
	return s + "\n"
}()

// htmlMaxOutput is the most runes of a model's output the HTML report shows.
const htmlMaxOutput = 300

// htmlCSP is the report's Content-Security-Policy: inline scripts and styles
// only, and nothing fetched, so a browser enforces what the tests check.
const htmlCSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"

// WriteHTML renders docs (one document, or several merged: one section each,
// under the overall verdict) as one self-contained HTML file: the header
// with the overall verdict and the worst change; per scenario the gates, the
// eval suites with a few changed items, the notes, the engine, GPU and cost
// medians, and charts of the latency distributions (CDFs), of every gate's
// per-repetition values and of the promoted history; per document the
// telemetry sources that were unavailable, what changed, the mismatches and
// the warnings.
//
// The page fetches nothing: Chart.js is inlined, the chart data is a JSON
// block, and a Content-Security-Policy forbids any other source. Every text
// from a result is stripped of control characters, cut short and escaped.
// The tables need no JavaScript; the charts do.
func WriteHTML(w io.Writer, docs []*Document) error {
	if len(docs) == 0 {
		return errNoDocuments
	}
	for i, d := range docs {
		if d == nil || d.Verdict == nil {
			return fmt.Errorf("html report: document %d has no verdict", i+1)
		}
	}
	b := &htmlBuilder{}
	page := b.page(docs)
	data, err := json.Marshal(htmlData{Charts: b.charts})
	if err != nil {
		return fmt.Errorf("html report: chart data: %w", err)
	}
	page.Data = data
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// htmlPage is what the template renders; every string in it is plain text
// that the template escapes.
type htmlPage struct {
	Title    string
	Outcome  htmlOutcome
	Summary  string
	Worst    string
	ExitCode int
	Merged   bool
	Docs     []htmlDoc
	Version  string
	CSP      string
	Style    template.CSS
	Script   template.JS
	ChartJS  template.JS
	// Data is the charts' JSON; the template escapes it for its <script>.
	Data json.RawMessage
}

type htmlOutcome struct{ Class, Word string }

type htmlDoc struct {
	Anchor     string
	Title      string
	Outcome    htmlOutcome
	Line       string
	Source     []htmlField
	Scenarios  []htmlScenario
	Telemetry  []string
	Changes    []string
	Mismatches []string
	Warnings   []string
}

type htmlField struct{ Name, Value string }

// htmlNote is a reason or warning with the gates it is about.
type htmlNote struct{ Subject, Text string }

func htmlNotes(ns []verdictNote) []htmlNote {
	out := make([]htmlNote, len(ns))
	for i, n := range ns {
		out[i] = htmlNote{n.subject, n.text}
	}
	return out
}

type htmlScenario struct {
	Name       string
	Outcome    htmlOutcome
	NoBaseline bool
	Facts      string
	Gates      []htmlGateRow
	Notes      []htmlNote
	NotGated   []string
	Suites     []htmlSuite
	Telemetry  []htmlTelemetryRow
	CDF        []htmlChartRef
	Reps       []htmlChartRef
	Trend      []htmlChartRef
	TrendFacts string
}

type htmlGateRow struct {
	Metric, Baseline, Candidate, Change, P, Tolerance string
	Outcome                                           htmlOutcome
}

// htmlTelemetryRow is one engine, GPU or cost metric's medians.
type htmlTelemetryRow struct{ Metric, Baseline, Candidate, Change, Gated string }

type htmlSuite struct {
	Name     string
	Facts    string
	Gates    []htmlGateRow
	Drift    string
	Notes    []htmlNote
	Examples []htmlExample
}

type htmlExample struct {
	ID                              string
	BaselinePass, CandidatePass     htmlOutcome
	BaselineOutput, CandidateOutput string
}

type htmlChartRef struct{ ID, Title string }

// htmlData is the JSON the page's script draws its charts from.
type htmlData struct {
	Charts []htmlChart `json:"charts"`
}

// htmlChart is one chart: kind cdf (x log-scaled, y a share), reps (x the
// repetition) or trend (x the labels, one per history entry).
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

// htmlBuilder turns documents into the page and collects the charts.
type htmlBuilder struct {
	charts []htmlChart
}

func (b *htmlBuilder) page(docs []*Document) htmlPage {
	out := Outcome(docs)
	summary, worst := htmlHeadline(docs)
	p := htmlPage{
		Outcome:  htmlOutcomeOf(out),
		Summary:  summary,
		Worst:    worst,
		ExitCode: ExitCode(docs, exit.FailOnConfig),
		Merged:   len(docs) > 1,
		Version:  chartJSVersion,
		CSP:      htmlCSP,
		Style:    template.CSS(htmlStyle),
		Script:   template.JS(htmlScript),
		ChartJS:  template.JS(chartJS),
	}
	p.Title = "perfgate: " + string(out)
	if len(docs) == 1 && docs[0].Title != "" {
		p.Title += " · " + clean(docs[0].Title, verdictMaxShown)
	}
	for i, d := range docs {
		p.Docs = append(p.Docs, b.doc(i, d, len(docs) > 1))
	}
	return p
}

func (b *htmlBuilder) doc(i int, d *Document, merged bool) htmlDoc {
	v := d.Verdict
	hd := htmlDoc{
		Anchor:     "doc-" + strconv.Itoa(i+1),
		Title:      clean(d.Title, verdictMaxShown),
		Outcome:    htmlOutcomeOf(v.Outcome),
		Line:       verdictLine(v),
		Changes:    verdictDifferences(v.Changes, verdictClean),
		Mismatches: verdictDifferences(v.Mismatches, verdictClean),
		Warnings:   verdictCleanAll(v.Warnings, verdictClean),
		Telemetry:  unavailableSources(d.TelemetrySources, false, verdictClean),
	}
	if merged && hd.Title == "" {
		hd.Title = "Report " + strconv.Itoa(i+1)
	}
	src := d.Source
	add := func(name, value string) {
		if value != "" {
			hd.Source = append(hd.Source, htmlField{name, clean(value, verdictMaxShown)})
		}
	}
	add("repository", src.Repository)
	add("commit", src.Commit)
	if src.PullRequest > 0 {
		add("pull request", "#"+strconv.Itoa(src.PullRequest))
	}
	add("workflow run", src.RunURL)
	add("result", src.Result)
	add("alpha", verdictLevel(v.Alpha))
	if v.Sequential {
		add("gate", "sequential")
	}
	for j := range v.Scenarios {
		hd.Scenarios = append(hd.Scenarios, b.scenario(i, &v.Scenarios[j], scenarioData(d, j)))
	}
	return hd
}

// scenarioData is the chart data of the document's j-th verdict scenario:
// the j-th entry when its name matches, else the entry of that name.
func scenarioData(d *Document, j int) *ScenarioData {
	name := d.Verdict.Scenarios[j].Name
	if j < len(d.Scenarios) && d.Scenarios[j].Name == name {
		return &d.Scenarios[j]
	}
	for k := range d.Scenarios {
		if d.Scenarios[k].Name == name {
			return &d.Scenarios[k]
		}
	}
	return nil
}

func (b *htmlBuilder) scenario(doc int, s *compare.Scenario, sd *ScenarioData) htmlScenario {
	hs := htmlScenario{Name: clean(s.Name, verdictMaxShown), NoBaseline: s.NoBaseline}
	if s.NoBaseline {
		hs.Outcome = htmlOutcome{"none", "not compared"}
		hs.Facts = fmt.Sprintf("candidate n=%d · no baseline: not compared", s.CandidateN)
	} else {
		hs.Outcome = htmlOutcomeOf(s.Outcome())
		hs.Facts = fmt.Sprintf("baseline n=%d · candidate n=%d · level %s", s.BaselineN, s.CandidateN, verdictLevel(s.Level))
	}
	for _, g := range s.Gates {
		hs.Gates = append(hs.Gates, htmlGateRow{
			Metric:    verdictMetricLabel(g.Title, g.Unit),
			Baseline:  htmlSummary(g.Baseline, g.Unit),
			Candidate: htmlSummary(g.Candidate, g.Unit),
			Change:    verdictChange(g),
			P:         verdictPString(g.PAdjusted),
			Tolerance: clean(g.Tolerance, verdictMaxShown),
			Outcome:   htmlOutcomeOf(g.Outcome),
		})
	}
	hs.Notes = htmlNotes(verdictNotes(s, verdictClean))
	for _, ng := range s.NotGated {
		hs.NotGated = append(hs.NotGated, verdictMetricLabel(ng.Title, ng.Unit)+": "+verdictNotGatedValues(ng)+" — "+clean(ng.Reason, verdictMaxShown))
	}
	for _, q := range s.Quality {
		hs.Suites = append(hs.Suites, htmlSuiteOf(q))
	}
	name := clean(s.Name, verdictMaxShown)
	if sd != nil {
		for _, r := range sd.Telemetry {
			hs.Telemetry = append(hs.Telemetry, htmlTelemetryRow{
				Metric:    verdictMetricLabel(r.Title, r.Unit),
				Baseline:  telemetryValue(r.Baseline, r.Unit),
				Candidate: telemetryValue(r.Candidate, r.Unit),
				Change:    telemetryChange(r),
				Gated:     telemetryGated(r),
			})
		}
		for _, ld := range sd.Latency {
			if c, ok := cdfChart(doc, name, ld); ok {
				hs.CDF = append(hs.CDF, b.add(c))
			}
		}
	}
	for _, g := range s.Gates {
		hs.Reps = append(hs.Reps, b.add(repsChart(doc, name, g)))
	}
	if sd != nil {
		hs.Trend, hs.TrendFacts = b.trendCharts(doc, name, s, sd.History)
	}
	return hs
}

// add numbers chart c and keeps it.
func (b *htmlBuilder) add(c htmlChart) htmlChartRef {
	c.ID = "chart-" + strconv.Itoa(len(b.charts)+1)
	b.charts = append(b.charts, c)
	return htmlChartRef{ID: c.ID, Title: c.Title}
}

// cdfChart is the CDFs of a latency metric, baseline against candidate;
// false when neither side has one. A log axis has no place for 0 ms, so
// points at or below it are left out.
func cdfChart(doc int, scenario string, ld LatencyData) (htmlChart, bool) {
	title := clean(ld.Title, verdictMaxShown)
	c := htmlChart{Kind: "cdf", Document: doc, Scenario: scenario, Metric: clean(ld.Metric, verdictMaxShown),
		Title: title + " distribution", XTitle: title + " (ms, log scale)", YTitle: "share of requests at or below"}
	for _, side := range []struct {
		role string
		d    *Distribution
	}{{"baseline", ld.Baseline}, {"candidate", ld.Candidate}} {
		if side.d == nil || len(side.d.CDF) == 0 {
			continue
		}
		ser := htmlSeries{Label: side.role, Role: side.role}
		for _, p := range side.d.CDF {
			if p.Value > 0 && !math.IsInf(p.Value, 0) && !math.IsNaN(p.Fraction) {
				ser.Points = append(ser.Points, htmlPoint{compare.Num(p.Value), compare.Num(p.Fraction)})
			}
		}
		if len(ser.Points) > 0 {
			c.Series = append(c.Series, ser)
		}
	}
	return c, len(c.Series) > 0
}

// repsChart is a gate's value in each repetition on both sides, with each
// side's median as a dashed line.
func repsChart(doc int, scenario string, g compare.Gate) htmlChart {
	scale := 1.0
	if g.Unit == "%" {
		scale = 100
	}
	c := htmlChart{Kind: "reps", Document: doc, Scenario: scenario, Metric: clean(g.Metric, verdictMaxShown),
		Title: clean(g.Title, verdictMaxShown) + " by repetition", Subtitle: "dashed: each side's median",
		XTitle: "repetition", YTitle: verdictMetricLabel(g.Title, g.Unit)}
	for _, side := range []struct {
		role string
		s    compare.Summary
	}{{"baseline", g.Baseline}, {"candidate", g.Candidate}} {
		ser := htmlSeries{Label: side.role, Role: side.role}
		for i, v := range side.s.Values {
			ser.Points = append(ser.Points, htmlPoint{compare.Num(i + 1), v * compare.Num(scale)})
		}
		c.Series = append(c.Series, ser)
		if n := len(side.s.Values); n > 0 && side.s.Median.Finite() {
			m := side.s.Median * compare.Num(scale)
			c.Series = append(c.Series, htmlSeries{Label: side.role + " median", Role: side.role + "-median",
				Points: []htmlPoint{{1, m}, {compare.Num(n), m}}})
		}
	}
	return c
}

// trendCharts are one chart per headline metric of the scenario's history:
// each entry's median with its 95% interval, and where this pull request's
// candidate lands when a gate measured the same metric.
func (b *htmlBuilder) trendCharts(doc int, scenario string, s *compare.Scenario, history []baseline.Entry) ([]htmlChartRef, string) {
	if len(history) == 0 {
		return nil, ""
	}
	var labels [][]string
	var notes []string
	for _, e := range history {
		label := []string{e.Date.UTC().Format("2006-01-02")}
		if c := []rune(clean(e.Commit, verdictMaxShown)); len(c) > 0 {
			label = append(label, string(c[:min(len(c), 7)]))
		}
		labels = append(labels, label)
		note := strings.TrimSpace(clean(e.Engine, 60) + " " + clean(e.Version, 60))
		if e.Repetitions > 0 {
			note = strings.TrimSpace(note + fmt.Sprintf(" · %d repetitions", e.Repetitions))
		}
		notes = append(notes, note)
	}
	var refs []htmlChartRef
	for _, name := range baseline.Headline {
		title, unit := name, ""
		if m, err := metric.Lookup(name); err == nil {
			title, unit = m.Title, m.Unit()
		}
		scale := compare.Num(1)
		if unit == "%" {
			scale = 100
		}
		med := htmlSeries{Label: "baseline median", Role: "history"}
		lo := htmlSeries{Label: "", Role: "lo"}
		hi := htmlSeries{Label: "95% interval", Role: "hi"}
		found, bounded := false, false
		for i, e := range history {
			x := compare.Num(i)
			sum, ok := e.Metrics[name]
			if !ok {
				med.Points = append(med.Points, htmlPoint{x, compare.Num(math.NaN())})
				lo.Points = append(lo.Points, htmlPoint{x, compare.Num(math.NaN())})
				hi.Points = append(hi.Points, htmlPoint{x, compare.Num(math.NaN())})
				continue
			}
			found = true
			med.Points = append(med.Points, htmlPoint{x, compare.Num(sum.Median) * scale})
			l, h := compare.Num(math.NaN()), compare.Num(math.NaN())
			if sum.Lo != nil && sum.Hi != nil {
				l, h, bounded = compare.Num(*sum.Lo)*scale, compare.Num(*sum.Hi)*scale, true
			}
			lo.Points = append(lo.Points, htmlPoint{x, l})
			hi.Points = append(hi.Points, htmlPoint{x, h})
		}
		if !found {
			continue
		}
		c := htmlChart{Kind: "trend", Document: doc, Scenario: scenario, Metric: name,
			Title: title, XTitle: "promoted baseline (date, commit)", YTitle: verdictMetricLabel(title, unit),
			Labels: labels, Notes: notes}
		if bounded {
			c.Series = append(c.Series, lo, hi)
		}
		c.Series = append(c.Series, med)
		for _, g := range s.Gates {
			if g.Metric == name && g.Candidate.Median.Finite() {
				c.Labels = append(append([][]string{}, labels...), []string{"this PR"})
				c.Notes = append(append([]string{}, notes...), "candidate median")
				c.Series = append(c.Series, htmlSeries{Label: "this PR (candidate)", Role: "candidate",
					Points: []htmlPoint{{compare.Num(len(history)), g.Candidate.Median * scale}}})
				break
			}
		}
		refs = append(refs, b.add(c))
	}
	first, last := history[0], history[len(history)-1]
	facts := fmt.Sprintf("%d promoted baseline%s, %s to %s", len(history), plural(len(history)),
		first.Date.UTC().Format("2006-01-02"), last.Date.UTC().Format("2006-01-02"))
	return refs, facts
}

func htmlSuiteOf(q compare.Suite) htmlSuite {
	hs := htmlSuite{
		Name:  clean(q.Name, verdictMaxShown),
		Facts: fmt.Sprintf("%d items · accuracy %s → %s", q.N, qualityAccuracy(q.Baseline), qualityAccuracy(q.Candidate)),
		Drift: qualityDrift(q),
		Notes: htmlNotes(qualityNotes(q, verdictClean)),
	}
	for _, g := range q.Gates {
		hs.Gates = append(hs.Gates, htmlGateRow{
			Metric:    clean(g.Title, verdictMaxShown),
			Baseline:  qualityRate(g.Baseline),
			Candidate: qualityRate(g.Candidate),
			Change:    qualityChange(g.Change),
			P:         verdictPString(g.PAdjusted),
			Tolerance: clean(g.Tolerance, verdictMaxShown),
			Outcome:   htmlOutcomeOf(g.Outcome),
		})
	}
	for _, ex := range q.Examples {
		hs.Examples = append(hs.Examples, htmlExample{
			ID:              clean(ex.ID, verdictMaxShown),
			BaselinePass:    htmlPassOf(ex.BaselinePass),
			CandidatePass:   htmlPassOf(ex.CandidatePass),
			BaselineOutput:  htmlOutput(ex.BaselineOutput),
			CandidateOutput: htmlOutput(ex.CandidateOutput),
		})
	}
	return hs
}

// htmlHeadline is the header's summary of docs together ("1 of 5 gates
// regressed") and their worst change: the worst regressed latency gate, else
// the largest quality drop that regressed, else the worst latency change.
func htmlHeadline(docs []*Document) (summary, worst string) {
	var t gateTally
	for i, d := range docs {
		t.add(d.Verdict, i)
	}
	prefix := func(doc int) string {
		if len(docs) > 1 && docs[doc].Title != "" {
			return clean(docs[doc].Title, verdictMaxShown) + ": "
		}
		return ""
	}
	name := func(doc int, r *verdictGateRef) string {
		return prefix(doc) + clean(r.s.Name, verdictMaxShown) + " " + clean(r.g.Title, verdictMaxShown) + " " + verdictChange(*r.g)
	}
	switch Outcome(docs) {
	case stat.Regression:
		summary = fmt.Sprintf("%d of %s regressed", t.regressed, verdictCount(t.total, "gate"))
		switch {
		case t.worstRegressed != nil:
			worst = "worst: " + name(t.worstRegressedDoc, t.worstRegressed)
		case t.worstQuality != nil:
			q := t.worstQuality
			worst = "worst: " + prefix(t.worstQualityDoc) + clean(q.s.Name, verdictMaxShown) + " " + qualityGateName(*q.q, *q.g) + " " + qualityChange(q.g.Change)
		}
		return summary, worst
	case stat.Pass:
		summary = verdictCount(t.total, "gate") + " passed"
	default:
		if t.total == 0 {
			summary = "no gate was tested"
		} else {
			summary = fmt.Sprintf("%d of %s undecided", t.undecided, verdictCount(t.total, "gate"))
		}
	}
	if t.worstAny != nil {
		worst = "worst change: " + name(t.worstAnyDoc, t.worstAny)
	}
	return summary, worst
}

// htmlSummary is a side's median with its 95% interval: "41.2 [40.1, 42.5]".
func htmlSummary(s compare.Summary, unit string) string {
	if !s.Median.Finite() {
		return "—"
	}
	m := verdictValue(float64(s.Median), unit)
	if math.IsNaN(float64(s.Lo)) || math.IsNaN(float64(s.Hi)) {
		return m
	}
	return m + " [" + verdictValue(float64(s.Lo), unit) + ", " + verdictValue(float64(s.Hi), unit) + "]"
}

// htmlOutput is a model's output as the report shows it: control and format
// characters other than newlines and tabs made spaces, cut to htmlMaxOutput
// runes; "(empty)" for nothing. The template escapes it.
func htmlOutput(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > htmlMaxOutput {
		s = string(r[:htmlMaxOutput-1]) + "…"
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

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

func htmlPassOf(pass bool) htmlOutcome {
	if pass {
		return htmlOutcome{"pass", "pass"}
	}
	return htmlOutcome{"regression", "fail"}
}

var htmlTemplate = template.Must(template.New("report").Parse(htmlPageTemplate))

// htmlPageTemplate is the page. The charts' canvases name their chart by
// id; the script draws them from the JSON block.
const htmlPageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="perfgate">
<title>{{.Title}}</title>
<style>{{.Style}}</style>
</head>
<body>
<header class="verdict {{.Outcome.Class}}">
<h1><span class="badge {{.Outcome.Class}}">{{.Outcome.Word}}</span> perfgate</h1>
<p class="summary">{{.Summary}}{{if .Worst}} — <strong>{{.Worst}}</strong>{{end}}</p>
<p class="facts">exit code {{.ExitCode}}{{if .Merged}} · {{len .Docs}} reports merged: the verdict is the worst of theirs{{end}}</p>
<p class="nojs">The charts need JavaScript, which is off: every number is in the tables.</p>
{{- if .Merged}}
<nav><ul class="toc">
{{- range .Docs}}
<li><a href="#{{.Anchor}}">{{.Title}}</a> <span class="badge {{.Outcome.Class}}">{{.Outcome.Word}}</span></li>
{{- end}}
</ul></nav>
{{- end}}
</header>
<main>
{{- range .Docs}}
<section class="doc" id="{{.Anchor}}">
{{- if .Title}}
<h2><span class="badge {{.Outcome.Class}}">{{.Outcome.Word}}</span> {{.Title}}</h2>
{{- end}}
<p class="line">verdict: {{.Line}}</p>
{{- if .Source}}
<dl class="source">
{{- range .Source}}<div><dt>{{.Name}}</dt><dd>{{.Value}}</dd></div>{{end}}
</dl>
{{- end}}
{{- range .Scenarios}}
<section class="scenario">
<h3><span class="badge {{.Outcome.Class}}">{{.Outcome.Word}}</span> Scenario <span class="name">{{.Name}}</span></h3>
<p class="facts">{{.Facts}}</p>
{{- if not .NoBaseline}}
{{- if .Gates}}
<div class="scroll"><table class="gates">
<thead><tr><th>metric</th><th>baseline median [95% interval]</th><th>candidate median [95% interval]</th><th>change [interval]</th><th>p (Holm)</th><th>tolerance</th><th>outcome</th></tr></thead>
<tbody>
{{- range .Gates}}
<tr class="{{.Outcome.Class}}"><td>{{.Metric}}</td><td class="num">{{.Baseline}}</td><td class="num">{{.Candidate}}</td><td class="num">{{.Change}}</td><td class="num">{{.P}}</td><td class="num">{{.Tolerance}}</td><td class="outcome">{{.Outcome.Word}}</td></tr>
{{- end}}
</tbody>
</table></div>
{{- else}}
<p>No gates.</p>
{{- end}}
{{- end}}
{{- if or .Notes .NotGated}}
<ul class="notes">
{{- range .Notes}}
<li><strong>{{.Subject}}</strong>: {{.Text}}</li>
{{- end}}
{{- range .NotGated}}
<li>not gated: {{.}}</li>
{{- end}}
</ul>
{{- end}}
{{- range .Suites}}
<div class="suite">
<h4>Eval suite <span class="name">{{.Name}}</span></h4>
<p class="facts">{{.Facts}}</p>
{{- if .Gates}}
<div class="scroll"><table class="gates">
<thead><tr><th>gate</th><th>baseline</th><th>candidate</th><th>change</th><th>p (Holm)</th><th>tolerance</th><th>outcome</th></tr></thead>
<tbody>
{{- range .Gates}}
<tr class="{{.Outcome.Class}}"><td>{{.Metric}}</td><td class="num">{{.Baseline}}</td><td class="num">{{.Candidate}}</td><td class="num">{{.Change}}</td><td class="num">{{.P}}</td><td class="num">{{.Tolerance}}</td><td class="outcome">{{.Outcome.Word}}</td></tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
<ul class="notes">
<li>{{.Drift}}</li>
{{- range .Notes}}
<li><strong>{{.Subject}}</strong>: {{.Text}}</li>
{{- end}}
</ul>
{{- if .Examples}}
<div class="scroll"><table class="examples">
<thead><tr><th>changed item</th><th>baseline output</th><th>candidate output</th></tr></thead>
<tbody>
{{- range .Examples}}
<tr><td class="id">{{.ID}}</td><td><span class="mark {{.BaselinePass.Class}}">{{.BaselinePass.Word}}</span><pre>{{.BaselineOutput}}</pre></td><td><span class="mark {{.CandidatePass.Class}}">{{.CandidatePass.Word}}</span><pre>{{.CandidateOutput}}</pre></td></tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
</div>
{{- end}}
{{- if .Telemetry}}
<h4>Engine, GPU and cost</h4>
<div class="scroll"><table class="telemetry">
<thead><tr><th>metric (median of repetitions)</th><th>baseline</th><th>candidate</th><th>change</th><th>gated</th></tr></thead>
<tbody>
{{- range .Telemetry}}
<tr><td>{{.Metric}}</td><td class="num">{{.Baseline}}</td><td class="num">{{.Candidate}}</td><td class="num">{{.Change}}</td><td>{{.Gated}}</td></tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
{{- if .CDF}}
<div class="part">
<h4>Latency distributions</h4>
<div class="charts cdf">
{{- range .CDF}}
<figure class="chart"><canvas id="{{.ID}}" role="img" aria-label="{{.Title}}"></canvas></figure>
{{- end}}
</div>
</div>
{{- else}}
<p class="facts">No latency distributions: the results kept no histograms.</p>
{{- end}}
{{- if .Reps}}
<div class="part">
<h4>Per-repetition values</h4>
<div class="charts reps">
{{- range .Reps}}
<figure class="chart small"><canvas id="{{.ID}}" role="img" aria-label="{{.Title}}"></canvas></figure>
{{- end}}
</div>
</div>
{{- end}}
{{- if .Trend}}
<div class="part">
<h4>History</h4>
<p class="facts">{{.TrendFacts}}</p>
<div class="charts trend">
{{- range .Trend}}
<figure class="chart small"><canvas id="{{.ID}}" role="img" aria-label="{{.Title}}"></canvas></figure>
{{- end}}
</div>
</div>
{{- end}}
</section>
{{- end}}
{{- if .Telemetry}}
<h3>Telemetry</h3>
<ul class="warnings">
{{- range .Telemetry}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
{{- if .Changes}}
<h3>What changed</h3>
<ul class="changes">
{{- range .Changes}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
{{- if .Mismatches}}
<h3>Mismatches <small>(compared anyway: --allow-mismatch)</small></h3>
<ul class="mismatches">
{{- range .Mismatches}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
{{- if .Warnings}}
<h3>Warnings</h3>
<ul class="warnings">
{{- range .Warnings}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
</section>
{{- end}}
</main>
<footer>perfgate report · charts drawn by Chart.js {{.Version}} (MIT licence), inlined: this page fetches nothing.</footer>
<script type="application/json" id="perfgate-data">{{.Data}}</script>
<script>{{.ChartJS}}</script>
<script>{{.Script}}</script>
</body>
</html>
`

const htmlStyle = `
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #ffffff; --soft: #f6f8fa;
  --red: #b42318; --red-bg: #fdecea; --amber: #8a5a00; --amber-bg: #fff4d6; --green: #1a7f37; --green-bg: #e8f5ec; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header, main, footer { max-width: 1320px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 20px; padding-bottom: 12px; border-bottom: 4px solid var(--line); }
header.regression { border-bottom-color: var(--red); }
header.inconclusive { border-bottom-color: #d4a72c; }
header.pass { border-bottom-color: var(--green); }
h1 { font-size: 26px; margin: 0 0 6px; }
h2 { font-size: 22px; margin: 28px 0 6px; padding-top: 12px; border-top: 1px solid var(--line); }
main > section.doc:first-child > h2 { border-top: 0; padding-top: 0; }
h3 { font-size: 18px; margin: 22px 0 4px; }
h4 { font-size: 16px; margin: 18px 0 4px; }
.part h4 { font-size: 14px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
/* Without JavaScript there are no charts: their parts are hidden and a note says why. */
.part { display: none; }
.js .part { display: block; }
.nojs { color: var(--amber); margin: 4px 0; }
.js .nojs { display: none; }
.summary { font-size: 17px; margin: 4px 0; overflow-wrap: anywhere; }
.facts, .line, footer { color: var(--muted); margin: 4px 0; overflow-wrap: anywhere; }
.name { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: .72em; font-weight: 600;
  vertical-align: middle; text-transform: uppercase; letter-spacing: .03em; background: var(--soft); color: var(--muted); }
.badge.regression { background: var(--red); color: #fff; }
.badge.inconclusive { background: #d4a72c; color: #1f2328; }
.badge.pass { background: var(--green); color: #fff; }
.toc { list-style: none; padding: 0; margin: 8px 0 0; display: flex; flex-wrap: wrap; gap: 8px 20px; }
.toc a { color: var(--fg); }
section.scenario { margin: 8px 0 28px; }
dl.source { display: flex; flex-wrap: wrap; gap: 4px 24px; margin: 6px 0; color: var(--muted); }
dl.source div { display: flex; gap: 6px; }
dl.source dt::after { content: ":"; }
dl.source dd { margin: 0; color: var(--fg); overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0; font-size: 14px; }
th, td { border: 1px solid var(--line); padding: 5px 10px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.outcome { font-weight: 600; white-space: nowrap; }
tr.regression td { background: var(--red-bg); }
tr.regression td.outcome { color: var(--red); }
tr.inconclusive td { background: var(--amber-bg); }
tr.inconclusive td.outcome { color: var(--amber); }
tr.pass td.outcome { color: var(--green); }
table.examples { width: 100%; table-layout: fixed; }
table.examples th:first-child { width: 14%; }
table.examples td.id { overflow-wrap: anywhere; }
pre { margin: 4px 0 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 13px;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--soft); padding: 6px 8px; border-radius: 4px; }
.mark { font-size: 12px; font-weight: 600; text-transform: uppercase; }
.mark.pass { color: var(--green); }
.mark.regression { color: var(--red); }
ul.notes, ul.changes, ul.mismatches, ul.warnings { margin: 6px 0; padding-left: 22px; overflow-wrap: anywhere; }
ul.mismatches li, ul.warnings li { color: var(--amber); }
.suite { margin: 14px 0; padding: 2px 14px 8px; border-left: 3px solid var(--line); }
.charts { display: grid; gap: 14px; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); }
.charts.reps, .charts.trend { grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); }
figure.chart { position: relative; margin: 0; height: 320px; min-width: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
figure.chart.small { height: 300px; }
@media (max-width: 900px) { td.num { white-space: normal; } header, main, footer { padding-left: 12px; padding-right: 12px; } }
footer { padding-top: 16px; padding-bottom: 24px; border-top: 1px solid var(--line); margin-top: 24px; font-size: 13px; }
`

// htmlScript draws the charts from the JSON block. It reads the data with
// JSON.parse and writes nothing into the document but canvases.
const htmlScript = `
(function () {
  "use strict";
  var el = document.getElementById("perfgate-data");
  if (!el || typeof Chart === "undefined") { return; }
  document.documentElement.classList.add("js");
  var data = JSON.parse(el.textContent);
  var colour = { baseline: "#4e79a7", candidate: "#e8590c", history: "#4e79a7", band: "rgba(78, 121, 167, 0.18)" };
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
  Chart.defaults.font.size = 12;
  Chart.defaults.color = "#1f2328";
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.responsive = true;

  function num(x) {
    if (x === null || x === undefined) { return "—"; }
    var a = Math.abs(x);
    if (a === 0) { return "0"; }
    if (a >= 100) { return x.toFixed(0); }
    return x.toPrecision(3);
  }
  function pct(x) {
    var p = 100 * x;
    return (p >= 99 || p < 1 ? String(Math.round(p * 100) / 100) : p.toFixed(0)) + "%";
  }
  // padded widens a value axis by a tenth of its range each way, but not
  // below zero when no value is.
  function padded(scale) {
    var r = scale.max - scale.min || Math.abs(scale.max) || 1;
    var lo = scale.min - 0.1 * r;
    scale.min = scale.min >= 0 && lo < 0 ? 0 : lo;
    scale.max += 0.1 * r;
  }
  function axis(text) { return { display: true, text: text, font: { weight: "bold" } }; }
  function plugins(c) {
    return {
      title: { display: true, text: c.title, font: { size: 14, weight: "bold" } },
      subtitle: { display: !!c.subtitle, text: c.subtitle || "", color: "#59636e" },
      legend: { position: "bottom", labels: { boxWidth: 14, filter: function (item, d) { var r = d.datasets[item.datasetIndex].role; return r !== "lo" && r.indexOf("-median") < 0; } } }
    };
  }
  function line(role) {
    var col = colour[role.replace("-median", "")] || colour.baseline;
    var ds = { borderColor: col, backgroundColor: col, borderWidth: 2, pointRadius: 0, fill: false };
    if (role === "baseline" || role === "candidate") { ds.borderWidth = 1.5; ds.pointRadius = 4; ds.pointHoverRadius = 6; }
    if (role.indexOf("-median") > 0) { ds.borderDash = [6, 4]; ds.borderWidth = 1.5; ds.pointRadius = 0; ds.pointHitRadius = 0; }
    return ds;
  }

  function cdf(c) {
    var datasets = c.series.map(function (s) {
      var ds = line(s.role);
      ds.label = s.label;
      ds.role = s.role;
      ds.data = s.points;
      ds.pointRadius = 0;
      ds.pointHitRadius = 6;
      ds.borderWidth = 2.5;
      return ds;
    });
    return {
      type: "line",
      data: { datasets: datasets },
      options: {
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: { type: "logarithmic", title: axis(c.x_title), ticks: { maxRotation: 0, autoSkip: true } },
          y: { type: "linear", min: 0, max: 1, title: axis(c.y_title), ticks: { stepSize: 0.2, callback: function (v) { return Math.round(100 * v) + "%"; } } }
        },
        plugins: Object.assign(plugins(c), {
          tooltip: { callbacks: { label: function (ctx) { return ctx.dataset.label + ": " + pct(ctx.parsed.y) + " at or below " + num(ctx.parsed.x) + " ms"; } } }
        })
      }
    };
  }

  function reps(c) {
    var n = 1;
    var datasets = c.series.map(function (s) {
      var ds = line(s.role);
      ds.label = s.label;
      ds.role = s.role;
      ds.data = s.points;
      s.points.forEach(function (p) { if (p.x > n) { n = p.x; } });
      return ds;
    });
    return {
      type: "line",
      data: { datasets: datasets },
      options: {
        interaction: { mode: "nearest", intersect: true },
        scales: {
          x: { type: "linear", min: 0.5, max: n + 0.5, title: axis(c.x_title),
               afterBuildTicks: function (scale) {
                 var step = Math.max(1, Math.ceil(n / 20)), ticks = [];
                 for (var i = 1; i <= n; i += step) { ticks.push({ value: i }); }
                 scale.ticks = ticks;
               } },
          y: { type: "linear", title: axis(c.y_title), afterDataLimits: padded }
        },
        plugins: Object.assign(plugins(c), {
          tooltip: { callbacks: { label: function (ctx) { return ctx.dataset.label + (ctx.dataset.label.indexOf("median") < 0 ? " #" + ctx.parsed.x : "") + ": " + num(ctx.parsed.y); } } }
        })
      }
    };
  }

  function trend(c) {
    var labels = c.labels || [];
    var datasets = c.series.map(function (s) {
      var ys = labels.map(function () { return null; });
      s.points.forEach(function (p) { if (p.x >= 0 && p.x < ys.length) { ys[p.x] = p.y; } });
      var ds;
      if (s.role === "lo" || s.role === "hi") {
        ds = { borderWidth: 0, pointRadius: 0, pointHitRadius: 0, backgroundColor: colour.band, borderColor: colour.band,
               fill: s.role === "hi" ? "-1" : false, spanGaps: false };
      } else if (s.role === "candidate") {
        ds = { borderColor: colour.candidate, backgroundColor: colour.candidate, showLine: false, pointRadius: 6, pointHoverRadius: 8, pointStyle: "rectRot" };
      } else {
        ds = { borderColor: colour.history, backgroundColor: colour.history, borderWidth: 2, pointRadius: 3, pointHoverRadius: 5, spanGaps: true };
      }
      ds.label = s.label;
      ds.role = s.role;
      ds.data = ys;
      return ds;
    });
    return {
      type: "line",
      data: { labels: labels, datasets: datasets },
      options: {
        interaction: { mode: "index", intersect: false },
        scales: {
          x: { type: "category", title: axis(c.x_title), ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 8 } },
          y: { type: "linear", title: axis(c.y_title), afterDataLimits: padded }
        },
        plugins: Object.assign(plugins(c), {
          tooltip: {
            filter: function (item) { return item.dataset.label !== "" && item.parsed.y !== null; },
            callbacks: {
              afterTitle: function (items) { var i = items.length ? items[0].dataIndex : -1; return c.notes && c.notes[i] ? c.notes[i] : ""; },
              label: function (ctx) {
                if (ctx.dataset.label === "95% interval") {
                  var lo = ctx.chart.data.datasets[ctx.datasetIndex - 1].data[ctx.dataIndex];
                  return "95% interval: " + num(lo) + " to " + num(ctx.parsed.y);
                }
                return ctx.dataset.label + ": " + num(ctx.parsed.y);
              }
            }
          }
        })
      }
    };
  }

  var build = { cdf: cdf, reps: reps, trend: trend };
  data.charts.forEach(function (c) {
    var canvas = document.getElementById(c.id);
    if (!canvas || !build[c.kind]) { return; }
    try {
      new Chart(canvas, build[c.kind](c));
    } catch (e) {
      canvas.parentNode.textContent = "chart failed: " + e;
    }
  });
})();
`
