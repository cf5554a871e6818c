package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/stat"
)

// htmlLognormal is a lognormal distribution's quantile q: median times
// e^(sigma·z).
func htmlLognormal(median, sigma, q float64) float64 {
	q = min(q, 0.9999)
	return median * math.Exp(sigma*math.Sqrt2*math.Erfinv(2*q-1))
}

// htmlDistribution is a distribution sampled as reportfile.New samples a
// pooled histogram, rounded to microseconds as a histogram would be.
func htmlDistribution(median, sigma float64) *reportfile.Distribution {
	d := &reportfile.Distribution{}
	for _, p := range []struct {
		name string
		q    float64
	}{{"p50", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99}, {"p99.9", 0.999}} {
		d.Percentiles = append(d.Percentiles, reportfile.Percentile{Name: p.name, Value: htmlLognormal(median, sigma, p.q)})
	}
	// Every percent and the tail in finer steps, as a document samples.
	quantiles := []float64{0.001}
	for i := 1; i <= 99; i++ {
		quantiles = append(quantiles, float64(i)/100)
	}
	for _, q := range append(quantiles, 0.995, 0.999, 0.9995, 0.9999, 1) {
		v := math.Round(htmlLognormal(median, sigma, q)*1000) / 1000
		if n := len(d.CDF); n > 0 && d.CDF[n-1].Value == v {
			d.CDF[n-1].Fraction = q
			continue
		}
		d.CDF = append(d.CDF, reportfile.CDFPoint{Value: v, Fraction: q})
	}
	return d
}

// htmlLatency is the four latency metrics of a scenario whose candidate's
// TTFT is slower by ttftFactor.
func htmlLatency(ttftFactor float64) []reportfile.LatencyData {
	return []reportfile.LatencyData{
		{Metric: "ttft", Title: "TTFT", Baseline: htmlDistribution(30, 0.35), Candidate: htmlDistribution(30*ttftFactor, 0.4)},
		{Metric: "tpot", Title: "TPOT", Baseline: htmlDistribution(14, 0.08), Candidate: htmlDistribution(14.2, 0.09)},
		{Metric: "itl", Title: "ITL", Baseline: htmlDistribution(13.5, 0.25), Candidate: htmlDistribution(13.6, 0.27)},
		{Metric: "e2e", Title: "E2E", Baseline: htmlDistribution(2500, 0.3), Candidate: htmlDistribution(2520, 0.3)},
	}
}

// htmlHistory is n promoted baselines of scenario name, a day apart, with
// a slow drift and, on the first two, too few repetitions for an interval.
func htmlHistory(name string, n int) []baseline.Entry {
	medians := map[string]float64{"ttft.p50": 30, "ttft.p99": 41, "tpot.p99": 14.5, "e2e.p99": 2510,
		"output_throughput": 1230, "goodput": 7.2, "error_rate": 0.002}
	var out []baseline.Entry
	for i := range n {
		e := baseline.Entry{
			Scenario: name, Commit: fmt.Sprintf("%07x0123456789abcdef", 0xa1b2c3+i*0x1111),
			Date:     time.Date(2026, 1, 5+i, 9, 30, 0, 0, time.UTC),
			Identity: "sha256:1d", Engine: "vllm", Version: "v0.6.3", Model: "llama-3-8b",
			Repetitions: 7, Metrics: map[string]baseline.Summary{},
		}
		if i >= n-4 {
			e.Version = "v0.7.0"
		}
		for _, m := range baseline.Headline {
			wobble := 1 + 0.03*math.Sin(float64(i)*1.7) + 0.004*float64(i)
			med := medians[m] * wobble
			s := baseline.Summary{Median: med, N: 7}
			if i >= 2 {
				lo, hi := med*0.97, med*1.03
				s.Lo, s.Hi = &lo, &hi
			} else {
				s.N = 3
			}
			e.Metrics[m] = s
		}
		out = append(out, e)
	}
	return out
}

// htmlDocument is regressionVerdict with the eval suite of qualityVerdict
// on its first scenario, the latency distributions of both scenarios and
// twelve promoted baselines of the first.
func htmlDocument() *reportfile.Document {
	v := regressionVerdict()
	v.Scenarios[0].Quality = qualityVerdict().Scenarios[0].Quality
	return &reportfile.Document{
		Schema: reportfile.Schema, Key: "perfgate.yaml", Verdict: v,
		Scenarios: []reportfile.ScenarioData{
			{Name: v.Scenarios[0].Name, Latency: htmlLatency(1.3), History: htmlHistory(v.Scenarios[0].Name, 12)},
			{Name: v.Scenarios[1].Name, Latency: htmlLatency(1.04)},
		},
		Source: reportfile.Source{Result: "result.json", Repository: "acme/serving", Commit: "0123456789abcdef0123456789abcdef01234567", PullRequest: 42},
	}
}

// htmlDocumentOf is a document of v with distributions for each scenario and
// no history.
func htmlDocumentOf(title string, v *compare.Verdict) *reportfile.Document {
	d := &reportfile.Document{Schema: reportfile.Schema, Title: title, Verdict: v}
	for _, s := range v.Scenarios {
		d.Scenarios = append(d.Scenarios, reportfile.ScenarioData{Name: s.Name, Latency: htmlLatency(1)})
	}
	return d
}

func renderHTML(t *testing.T, docs ...*reportfile.Document) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, emitHTML(&buf, docs))
	htmlWellFormed(t, buf.String())
	return buf.String()
}

// htmlWithoutLibrary is page with the inlined Chart.js replaced by a
// placeholder, for goldens and for reading.
func htmlWithoutLibrary(t *testing.T, page string) string {
	t.Helper()
	require.Equal(t, 1, strings.Count(page, chartJS), "the library is inlined once")
	return strings.Replace(page, chartJS, "/* Chart.js "+chartJSVersion+" (assets/chart.umd.min.js) */\n", 1)
}

// htmlChartData is the page's chart data, parsed.
func htmlChartData(t *testing.T, page string) htmlData {
	t.Helper()
	const open = `<script type="application/json" id="perfgate-data">`
	start := strings.Index(page, open)
	require.GreaterOrEqual(t, start, 0, "the data block")
	rest := page[start+len(open):]
	end := strings.Index(rest, "</script>")
	require.GreaterOrEqual(t, end, 0, "the data block's end")
	var data htmlData
	require.NoError(t, json.Unmarshal([]byte(rest[:end]), &data), "the data block is JSON")
	return data
}

// htmlText is page with its character references decoded, for finding
// phrases ("+31.2%" is "&#43;31.2%" in the page).
func htmlText(page string) string { return html.UnescapeString(page) }

// htmlHas and htmlHasNot check for text in a page without printing it all.
func htmlHas(t *testing.T, page, want string, why ...string) {
	t.Helper()
	if !strings.Contains(page, want) {
		t.Errorf("the page lacks %q %s", want, strings.Join(why, " "))
	}
}

func htmlHasNot(t *testing.T, page, bad string, why ...string) {
	t.Helper()
	if i := strings.Index(page, bad); i >= 0 {
		t.Errorf("the page holds %q %s: …%s…", bad, strings.Join(why, " "), page[max(0, i-80):min(len(page), i+len(bad)+80)])
	}
}

// The page fetches nothing: the library is inlined once, nothing names a
// remote source, and the browser is told to load nothing else.
func TestHTMLSelfContained(t *testing.T) {
	require.Contains(t, chartJSFile, "Chart.js v"+chartJSVersion, "the vendored library is the version html.go names")
	require.NotContains(t, strings.ToLower(chartJS), "</script", "the library can be inlined in a <script>")
	require.NotContains(t, chartJS, "sourceMappingURL")

	page := renderHTML(t, htmlDocument())
	assert.Equal(t, 1, strings.Count(page, chartJS))
	assert.Equal(t, 1, strings.Count(page, "Chart.js v"+chartJSVersion))
	rest := strings.ToLower(htmlWithoutLibrary(t, page))
	for _, bad := range []string{`src="http`, `href="http`, `src=http`, `href=http`, "@import", "fetch(", "xmlhttprequest", "<link", "<iframe", "url("} {
		htmlHasNot(t, rest, bad)
	}
	assert.NotContains(t, strings.ToLower(chartJS), "fetch(")
	htmlHas(t, page, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;unsafe-inline&#39;; style-src &#39;unsafe-inline&#39;; img-src data:">`)
	assert.Equal(t, 3, strings.Count(page, "<script"), "the data, the library and the page's script")
	assert.Equal(t, 3, strings.Count(page, "</script>"))
	assert.True(t, strings.HasPrefix(page, "<!DOCTYPE html>\n"))
	assert.True(t, strings.HasSuffix(page, "</html>\n"))
}

// The data block is JSON that holds the distributions and values as given.
func TestHTMLDataRoundTrip(t *testing.T) {
	d := htmlDocument()
	page := renderHTML(t, d)
	data := htmlChartData(t, page)

	byKey := map[string]htmlChart{}
	for _, c := range data.Charts {
		key := c.Kind + "/" + c.Scenario + "/" + c.Metric
		_, dup := byKey[key]
		require.False(t, dup, "chart %s twice", key)
		byKey[key] = c
		htmlHas(t, page, `<canvas id="`+c.ID+`"`, "for chart", key)
		assert.NotEmpty(t, c.Title)
		assert.NotEmpty(t, c.XTitle)
		assert.NotEmpty(t, c.YTitle)
	}
	for i, s := range d.Scenarios {
		for _, ld := range s.Latency {
			c, ok := byKey["cdf/"+s.Name+"/"+ld.Metric]
			require.True(t, ok, "CDF of %s %s", s.Name, ld.Metric)
			require.Len(t, c.Series, 2)
			for j, want := range []*reportfile.Distribution{ld.Baseline, ld.Candidate} {
				got := c.Series[j].Points
				require.Len(t, got, len(want.CDF), "%s %s %s", s.Name, ld.Metric, c.Series[j].Role)
				for k, p := range want.CDF {
					assert.Equal(t, p.Value, float64(got[k].X))
					assert.Equal(t, p.Fraction, float64(got[k].Y))
				}
			}
			assert.Equal(t, []string{"baseline", "candidate"}, []string{c.Series[0].Role, c.Series[1].Role})
		}
		for _, g := range d.Verdict.Scenarios[i].Gates {
			c, ok := byKey["reps/"+s.Name+"/"+g.Metric]
			require.True(t, ok, "per-repetition values of %s %s", s.Name, g.Metric)
			scale := 1.0
			if g.Unit == "%" {
				scale = 100
			}
			for _, side := range []struct {
				role   string
				values []compare.Num
			}{{"baseline", g.Baseline.Values}, {"candidate", g.Candidate.Values}} {
				var got []htmlPoint
				for _, ser := range c.Series {
					if ser.Role == side.role {
						got = ser.Points
					}
				}
				require.Len(t, got, len(side.values), "%s %s", g.Metric, side.role)
				for k, v := range side.values {
					assert.Equal(t, float64(k+1), float64(got[k].X))
					assert.InDelta(t, float64(v)*scale, float64(got[k].Y), 1e-9)
				}
			}
		}
	}
	var trends []htmlChart
	for _, c := range data.Charts {
		if c.Kind == "trend" {
			trends = append(trends, c)
		}
	}
	require.Len(t, trends, len(baseline.Headline), "one history chart per headline metric")
	for _, c := range trends {
		assert.Equal(t, "chat-c16", c.Scenario)
		var med htmlSeries
		for _, s := range c.Series {
			if s.Role == "history" {
				med = s
			}
		}
		require.Len(t, med.Points, 12, c.Metric)
		want := d.Scenarios[0].History[11].Metrics[c.Metric].Median
		if c.Metric == "error_rate" {
			want *= 100
		}
		assert.InDelta(t, want, float64(med.Points[11].Y), 1e-9, c.Metric)
		assert.Equal(t, []string{"2026-01-05", "0a1b2c3"}, c.Labels[0])
	}
	// The candidate of a gated headline metric lands after the history.
	ttft := byKey["trend/chat-c16/ttft.p99"]
	require.Len(t, ttft.Labels, 13)
	assert.Equal(t, []string{"this PR"}, ttft.Labels[12])
	assert.Equal(t, "candidate", ttft.Series[len(ttft.Series)-1].Role)
	assert.InDelta(t, 54.05, float64(ttft.Series[len(ttft.Series)-1].Points[0].Y), 1e-9)
}

// Text from a result cannot break out of its element, its attribute or the
// data block, whatever it holds.
func TestHTMLEscapesResultText(t *testing.T) {
	const (
		script  = `</script><script>alert(1)</script>`
		img     = `<img src=x onerror=alert(2)>`
		details = `</details></table>@mention <b>bold</b>`
	)
	d := htmlDocument()
	d.Title = "job " + img
	d.Source.RunURL = "javascript:alert(3)" + img
	v := d.Verdict
	v.Scenarios[0].Name = "chat " + script
	d.Scenarios[0].Name = v.Scenarios[0].Name
	for i := range d.Scenarios[0].History {
		d.Scenarios[0].History[i].Commit = script
		d.Scenarios[0].History[i].Engine = img
	}
	v.Scenarios[0].Gates[0].Title = "TTFT " + img
	v.Scenarios[0].Gates[0].Reason = details
	v.Scenarios[0].Gates[0].Tolerance = `+10%"><script>alert(4)</script>`
	v.Scenarios[0].Warnings = append(v.Scenarios[0].Warnings, details)
	v.Scenarios[1].NotGated[0].Reason = details
	q := &v.Scenarios[0].Quality[0]
	q.Name = "suite " + img
	q.Examples[0].ID = "item " + details
	q.Examples[0].CandidateOutput = details + script + "\u202egnp.exe\x1b[31m" + strings.Repeat("x", 1000)
	q.Examples[1].BaselineOutput = img
	v.Changes = append(v.Changes, compare.Difference{Field: "engine " + img, Baseline: script, Candidate: details})
	v.Mismatches[0].Candidate = img
	v.Warnings = append(v.Warnings, script)

	page := renderHTML(t, d, htmlDocumentOf("second "+script, passVerdict()))
	rest := htmlWithoutLibrary(t, page)
	for _, bad := range []string{"<script>alert", "<img", "</details>", "<b>", "</table>@", "\u202e", "\x1b", `"><script>`, `href="javascript`} {
		htmlHasNot(t, rest, bad)
	}
	assert.Equal(t, 3, strings.Count(page, "<script"))
	assert.Equal(t, 3, strings.Count(page, "</script>"))
	htmlHas(t, rest, "chat &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;", "the scenario's name shows, escaped")
	htmlHas(t, rest, "&lt;/details&gt;&lt;/table&gt;@mention &lt;b&gt;bold&lt;/b&gt;")
	htmlHas(t, rest, "TTFT &lt;img src=x onerror=alert(2)&gt;")
	assertTextOnly(t, rest, "onerror", "@mention", "alert(")

	// The data block still parses and holds the names as they were.
	data := htmlChartData(t, page)
	names := map[string]bool{}
	for _, c := range data.Charts {
		names[c.Scenario] = true
		for _, l := range c.Labels {
			for _, s := range l {
				assert.NotContains(t, s, "<script", "a history label is cut short")
			}
		}
	}
	assert.True(t, names["chat "+script], "the hostile scenario name round-trips through the data block: %v", names)

	// A model's output is cut to htmlMaxOutput runes.
	for _, l := range strings.Split(rest, "\n") {
		if strings.Contains(l, "xxxxxxxx") {
			assert.Less(t, strings.Count(l, "x"), htmlMaxOutput)
		}
	}
}

// htmlQuoted is a quoted attribute value.
var htmlQuoted = regexp.MustCompile(`"[^"<>]*"`)

// assertTextOnly fails when a marker occurs inside a tag of page (outside
// the scripts' bodies) but not inside a quoted attribute value: result text
// may be an element's text or an escaped attribute value, never a tag, an
// attribute name or an unquoted value. A tag with a stray quote or angle
// bracket fails too.
func assertTextOnly(t *testing.T, page string, markers ...string) {
	t.Helper()
	inTag, inScript := false, false
	var tag strings.Builder
	for i := 0; i < len(page); i++ {
		c := page[i]
		switch {
		case inScript:
			if strings.HasPrefix(page[i:], "</script>") {
				inScript = false
				i += len("</script>") - 1
			}
		case inTag:
			if c == '>' {
				inTag = false
				s := tag.String()
				// Quoted attribute values are the template's to escape
				// (aria-label holds a chart's title); what is left is
				// names, which result text must never become.
				names := htmlQuoted.ReplaceAllString(s, `""`)
				for _, m := range markers {
					assert.NotContains(t, names, m, "result text outside an attribute's value: <%s>", s)
				}
				assert.NotContains(t, strings.ReplaceAll(names, `""`, ""), `"`, "a stray quote: <%s>", s)
				assert.NotContains(t, s, "<", "an angle bracket in a tag: <%s>", s)
				if strings.HasPrefix(s, "script") {
					inScript = true
				}
				tag.Reset()
				continue
			}
			tag.WriteByte(c)
		case c == '<' && i+1 < len(page) && (page[i+1] == '/' || page[i+1] == '!' || (page[i+1] >= 'a' && page[i+1] <= 'z')):
			inTag = true
		}
	}
}

func TestHTMLMerged(t *testing.T) {
	docs := []*reportfile.Document{
		htmlDocumentOf("llama-3-8b on H100", passVerdict()),
		htmlDocumentOf("mistral-7b on A100", regressionVerdict()),
		htmlDocumentOf("", inconclusiveVerdict()),
	}
	page := renderHTML(t, docs...)
	assert.Equal(t, 3, strings.Count(page, `<section class="doc"`), "one section per document")
	htmlHas(t, page, `<header class="verdict regression">`, "the worst verdict is on top")
	htmlHas(t, page, `<title>perfgate: regression</title>`)
	htmlHas(t, htmlText(page), "1 of 8 gates regressed — <strong>worst: mistral-7b on A100: chat-c16 TTFT p99 +31.2% [+25.0%, +38.1%]</strong>")
	htmlHas(t, page, "exit code 1 · 3 reports merged")
	for _, title := range []string{"llama-3-8b on H100", "mistral-7b on A100", "Report 3"} {
		htmlHas(t, page, title+"</h2>")
	}
	// Every document's charts are drawn, with ids unique across the page.
	data := htmlChartData(t, page)
	seen := map[string]bool{}
	docsSeen := map[int]bool{}
	for _, c := range data.Charts {
		assert.False(t, seen[c.ID], "chart id %s twice", c.ID)
		seen[c.ID] = true
		docsSeen[c.Document] = true
	}
	assert.Len(t, docsSeen, 3)

	for _, c := range []struct {
		docs []*reportfile.Document
		want string
	}{
		{[]*reportfile.Document{htmlDocumentOf("a", passVerdict()), htmlDocumentOf("b", passVerdict())}, `<header class="verdict pass">`},
		{[]*reportfile.Document{htmlDocumentOf("a", passVerdict()), htmlDocumentOf("b", inconclusiveVerdict())}, `<header class="verdict inconclusive">`},
	} {
		htmlHas(t, renderHTML(t, c.docs...), c.want)
	}
}

func TestHTMLOneDocument(t *testing.T) {
	page := renderHTML(t, htmlDocumentOf("", passVerdict()))
	assert.Equal(t, 1, strings.Count(page, `<section class="doc"`))
	htmlHasNot(t, page, "<h2>", "a document of its own has no section title")
	htmlHas(t, htmlText(page), "2 gates passed — <strong>worst change: chat-c16 TTFT p99 +1.0% [-1.0%, +3.0%]</strong>")
	htmlHas(t, page, "exit code 0</p>")

	// No histograms kept, no history: the tables only.
	d := htmlDocumentOf("", noBaselineVerdict())
	for i := range d.Scenarios {
		d.Scenarios[i].Latency = nil
	}
	page = renderHTML(t, d)
	htmlHas(t, page, "No latency distributions: the results kept no histograms.")
	htmlHas(t, page, "candidate n=7 · no baseline: not compared")
	htmlHasNot(t, page, `<h4>History</h4>`)
	for _, c := range htmlChartData(t, page).Charts {
		assert.Equal(t, "reps", c.Kind)
	}
}

func TestHTMLErrors(t *testing.T) {
	var buf bytes.Buffer
	err := emitHTML(&buf, nil)
	assert.ErrorIs(t, err, errNoDocuments)
	assert.ErrorIs(t, emitHTML(&buf, []*reportfile.Document{}), errNoDocuments)
	assert.Error(t, emitHTML(&buf, []*reportfile.Document{{Schema: reportfile.Schema}}), "a document without a verdict")
	assert.Zero(t, buf.Len(), "nothing written on error")

	boom := errors.New("disk full")
	err = emitHTML(htmlFailingWriter{boom}, []*reportfile.Document{htmlDocument()})
	assert.ErrorIs(t, err, boom)
}

type htmlFailingWriter struct{ err error }

func (w htmlFailingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestHTMLOutput(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "(empty)"},
		{"Answer:\r\n42\t!", "Answer:\n42\t!"},
		{"a\x1b[31mb\u202ec\u200bd", "a [31mb c d"},
		{strings.Repeat("é", 301), strings.Repeat("é", 299) + "…"},
		{strings.Repeat("é", 300), strings.Repeat("é", 300)},
	} {
		assert.Equal(t, c.want, htmlOutput(c.in), "htmlOutput(%q)", c.in)
	}
}

func TestHTMLSummary(t *testing.T) {
	for _, c := range []struct {
		s    compare.Summary
		unit string
		want string
	}{
		{verdictSide(41.2, 40.1, 42.5), "ms", "41.2 [40.1, 42.5]"},
		{verdictSide(30.1, math.Inf(-1), math.Inf(1)), "ms", "30.1"},
		{verdictSide(43.8, math.Inf(-1), 50), "ms", "43.8"},
		{verdictSide(0.005, 0, 0.012), "%", "0.50% [0.00%, 1.20%]"},
		{compare.Summary{Median: verdictNaN}, "ms", "—"},
		{compare.Summary{Median: 3, Lo: verdictNaN, Hi: verdictNaN}, "ms", "3.00"},
	} {
		assert.Equal(t, c.want, htmlSummary(c.s, c.unit))
	}
	assert.Equal(t, htmlOutcome{"regression", "regression"}, htmlOutcomeOf(stat.Regression))
}
