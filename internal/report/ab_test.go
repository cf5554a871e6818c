package report

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/stat"
)

// The report of an A/B (perfgate ab): base and candidate measured
// interleaved on one runner, eight rounds in ABBA order, compared pair by
// pair. Its goldens are the view's (testdata/view/report-ab.json,
// verdict-ab.json, through documentCases and verdictCases) and the media's
// (testdata/render/report-ab.*).

// abOrder is eight rounds in ABBA order: the base first in odd rounds.
func abOrder() []string {
	return []string{"AB", "BA", "AB", "BA", "AB", "BA", "AB", "BA"}
}

// abGate is a gate of an A/B: the two arms' values round by round, and the
// base arm's drift across the rounds.
func abGate(metric, title, unit, better, tolerance string, drift float64, base, cand compare.Summary, change compare.Interval, outcome stat.Outcome, reason string) compare.Gate {
	return compare.Gate{
		Metric: metric, Title: title, Unit: unit, Better: better, Tolerance: tolerance,
		Baseline: base, Candidate: cand, Change: change,
		Shift:      compare.Interval{Estimate: cand.Median - base.Median, Lo: verdictNaN, Hi: verdictNaN},
		Confidence: 0.9, P: 0.6, PAdjusted: 1, Level: 0.05,
		Outcome: outcome, Reason: reason, Drift: compare.Num(drift),
	}
}

// abVerdict is an A/B whose base arm drifted during the run (TTFT p95
// +24%, output throughput -18% from the first round to the last, as a
// runner heating up would), and whose candidate is 12% slower in TTFT p95
// in every round: a regression the pairs show with a narrow interval,
// although each arm's own interval is wide with the drift. Its second
// scenario held steady.
func abVerdict() *compare.Verdict {
	ttft := abGate("ttft.p95", "TTFT p95", "ms", "lower", "+10%", 0.24,
		verdictSide(44.8, 41.4, 48.3, 40.0, 41.4, 42.6, 44.1, 45.5, 46.8, 48.3, 49.6),
		verdictSide(50.15, 46.2, 54.2, 44.9, 46.2, 47.9, 49.3, 51.0, 52.3, 54.2, 55.4),
		compare.Interval{Estimate: 0.12, Lo: 0.117, Hi: 0.122}, stat.Regression, "significant (p=0.0117) and +12.0% is beyond +10%")
	ttft.P, ttft.PAdjusted = 0.0039, 0.0117
	throughput := abGate("output_throughput", "output throughput", "tok/s", "higher", "-5%", -0.18,
		verdictSide(1173.5, 1095, 1262, 1300, 1262, 1228, 1190, 1157, 1122, 1095, 1066),
		verdictSide(1163, 1082, 1251, 1289, 1251, 1214, 1180, 1146, 1113, 1082, 1057),
		compare.Interval{Estimate: -0.009, Lo: -0.012, Hi: -0.006}, stat.Pass, "the 90% interval rules out worse than -5%")
	e2e := abGate("e2e.p99", "E2E p99", "ms", "lower", "+10%", 0.011,
		verdictSide(2505.5, 2495, 2515, 2490, 2495, 2500, 2503, 2508, 2512, 2515, 2518),
		verdictSide(2509.5, 2498, 2516, 2498, 2492, 2510, 2500, 2515, 2509, 2521, 2516),
		compare.Interval{Estimate: 0.001, Lo: -0.002, Hi: 0.003}, stat.Pass, "the 90% interval rules out worse than +10%")
	errors := abGate("error_rate", "error rate", "%", "lower", "+1 points", math.NaN(),
		verdictSide(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
		verdictSide(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
		compare.Interval{Estimate: verdictNaN, Lo: verdictNaN, Hi: verdictNaN}, stat.Pass, "no errors on either arm")
	errors.Shift = compare.Interval{Estimate: 0, Lo: 0, Hi: 0}
	steadyTTFT := abGate("ttft.p95", "TTFT p95", "ms", "lower", "+10%", 0.008,
		verdictSide(30.2, 29.9, 30.5, 30.0, 30.1, 29.9, 30.2, 30.3, 30.2, 30.5, 30.2),
		verdictSide(30.4, 30.0, 30.6, 30.1, 30.4, 30.0, 30.5, 30.4, 30.3, 30.6, 30.4),
		compare.Interval{Estimate: 0.006, Lo: 0.001, Hi: 0.011}, stat.Pass, "the 90% interval rules out worse than +10%")
	steadyTPOT := abGate("tpot.p99", "TPOT p99", "ms", "lower", "+10%", -0.012,
		verdictSide(14.1, 14.0, 14.2, 14.2, 14.1, 14.2, 14.1, 14.0, 14.1, 14.0, 14.0),
		verdictSide(14.2, 14.1, 14.3, 14.3, 14.2, 14.2, 14.3, 14.1, 14.2, 14.1, 14.2),
		compare.Interval{Estimate: 0.007, Lo: 0.003, Hi: 0.01}, stat.Pass, "the 90% interval rules out worse than +10%")
	return &compare.Verdict{
		Outcome: stat.Regression, OnInconclusive: "fail", Alpha: 0.05,
		AB: &compare.AB{Mode: "co-resident", Rounds: 8, Order: abOrder(), Base: "base.yaml", Candidate: "perfgate.yaml"},
		Scenarios: []compare.Scenario{
			{Name: "chat-c16", BaselineN: 8, CandidateN: 8, Level: 0.05, Gates: []compare.Gate{ttft, throughput, e2e, errors}},
			{Name: "chat-c1", BaselineN: 8, CandidateN: 8, Level: 0.05, Gates: []compare.Gate{steadyTTFT, steadyTPOT}},
		},
		Changes: []compare.Difference{{Field: "image", Baseline: "vllm/vllm-openai:v0.6.3", Candidate: "vllm/vllm-openai:v0.7.0"}},
	}
}

// abDocument is abVerdict's report as perfgate ab writes it: the arms'
// distributions, no history (an A/B has no baseline store).
func abDocument() *reportfile.Document {
	d := testDocument(abVerdict(), 1.12, 0)
	d.Source = reportfile.Source{Repository: "acme/serving", Commit: "0123456789abcdef", PullRequest: 42, RunURL: "https://github.com/acme/serving/actions/runs/99"}
	return d
}

// The A/B's report in every medium: its headline says how it was
// measured, its sides are base and candidate, and each scenario says how
// far the base arm drifted.
func TestRenderABReport(t *testing.T) {
	const line = "A/B on one runner: base.yaml vs perfgate.yaml · co-resident · 8 rounds (ABBA)"
	var md, text bytes.Buffer
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{abDocument()}, MarkdownOptions{Limit: commentLimit, Marker: "<!-- perfgate:perfgate.yaml -->"}))
	golden(t, filepath.Join("render", "report-ab.md"), md.Bytes())
	require.NoError(t, emitText(&text, []*reportfile.Document{abDocument()}))
	golden(t, filepath.Join("render", "report-ab.txt"), text.Bytes())
	page := renderHTML(t, abDocument())
	golden(t, filepath.Join("render", "report-ab.html.outline"), []byte(htmlOutline(t, page)))

	// The A/B's line follows the verdict's in markdown and opens the text.
	lines := strings.Split(md.String(), "\n")
	require.Greater(t, len(lines), 4)
	assert.True(t, strings.HasPrefix(lines[1], "### ❌ perfgate: regression (1 of 6 gates regressed) — worst: chat-c16 TTFT p95 +12.0%"), "first line %q", lines[1])
	assert.Equal(t, []string{"", line}, lines[2:4], "the A/B's line under the verdict's")
	assert.True(t, strings.HasPrefix(text.String(), line+"\n\n"), "the text opens with the A/B's line: %q", firstLine(text.String()))
	body := page[:strings.Index(page, `<script type="application/json"`)]
	htmlHas(t, body, `<p class="kind">`+line+`</p>`, "in the page's header")

	drift := "The base arm drifted across the rounds: TTFT p95 +24.0%, output throughput -18.0%; each round's pair saw the same drift, so the comparison does not count it."
	steady := "The base arm held steady across the rounds: no gated metric drifted by 2% or more from the first round to the last."
	for _, c := range []struct{ medium, out string }{{"markdown", md.String()}, {"text", text.String()}, {"HTML", htmlText(body)}} {
		for _, want := range []string{drift, steady, "base n=8 · candidate n=8 · level 0.05"} {
			assert.Contains(t, c.out, want, "%s", c.medium)
		}
		assert.NotContains(t, c.out, "E2E p99 +1.1%", "%s: a drift under 2%% is not named", c.medium)
		assert.NotContains(t, c.out, "error rate ?", "%s: an unknown drift is not named", c.medium)
		assert.NotContains(t, strings.ToLower(c.out), "baseline", "%s: an A/B has a base arm, not a baseline", c.medium)
	}
	assert.Contains(t, md.String(), "| metric | base | candidate | change | p | tolerance | detectable | outcome |")
	assert.Contains(t, md.String(), "<details><summary>All percentiles and per-round values</summary>")
	assert.Contains(t, md.String(), "| metric | base values | candidate values |")
	assert.Contains(t, md.String(), "percentiles (ms): base bars, candidate line")
	htmlHas(t, body, "<th>base median [95% interval]</th>")
	htmlHas(t, body, `<details class="fold"><summary>Each round&#39;s values and ratio</summary>`, "the per-round table, collapsed")
	assert.Equal(t, 2, strings.Count(body, `<details class="fold">`), "a per-round table per scenario")
	htmlHasNot(t, body, "Per-repetition values</h4>", "an A/B's rounds replace the repetitions")

	// The rounds charts and the first scenario's table, as the page has them.
	var rounds []htmlChart
	for _, c := range htmlChartData(t, page).Charts {
		if c.Kind == "rounds" {
			rounds = append(rounds, c)
		}
		assert.NotEqual(t, "reps", c.Kind, "an A/B draws rounds, not repetitions")
	}
	data, err := json.MarshalIndent(rounds, "", "  ")
	require.NoError(t, err)
	golden(t, filepath.Join("render", "report-ab-rounds.json"), append(data, '\n'))
	start := strings.Index(body, `<details class="fold">`)
	end := strings.Index(body[start:], "</details>")
	require.True(t, start >= 0 && end >= 0, "the first per-round table")
	golden(t, filepath.Join("render", "report-ab-rounds.html"), []byte(body[start:start+end+len("</details>")]+"\n"))
}

// firstLine is s's first line.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// A report of a stored baseline says nothing of an A/B.
func TestStoredBaselineSaysNoAB(t *testing.T) {
	d := documentCases[1].doc()
	for i := range d.Verdict.Scenarios {
		for j := range d.Verdict.Scenarios[i].Gates {
			d.Verdict.Scenarios[i].Gates[j].Drift = 0.3 // a drift outside an A/B is not shown
		}
	}
	var md, text bytes.Buffer
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{}))
	require.NoError(t, emitText(&text, []*reportfile.Document{d}))
	page := renderHTML(t, d)
	for _, c := range []struct{ medium, out string }{{"markdown", md.String()}, {"text", text.String()}, {"HTML", page}} {
		for _, bad := range []string{"A/B", "drift across the rounds", "drifted", `class="kind"`, `"rounds"`} {
			assert.NotContains(t, c.out, bad, "%s", c.medium)
		}
	}
}

func TestDriftPara(t *testing.T) {
	gate := func(title string, drift float64) compare.Gate {
		return compare.Gate{Title: title, Drift: compare.Num(drift)}
	}
	const steady = "The base arm held steady across the rounds: no gated metric drifted by 2% or more from the first round to the last."
	for _, c := range []struct {
		name  string
		gates []compare.Gate
		want  string // "" for no line
	}{
		{"both ways, in gate order", []compare.Gate{gate("TTFT p95", 0.24), gate("E2E p99", 0.011), gate("output throughput", -0.18)},
			"The base arm drifted across the rounds: «TTFT p95» +24.0%, «output throughput» -18.0%; each round's pair saw the same drift, so the comparison does not count it."},
		{"2% either way is notable", []compare.Gate{gate("a", 0.02), gate("b", -0.02), gate("c", 0.0199)},
			"The base arm drifted across the rounds: «a» +2.0%, «b» -2.0%; each round's pair saw the same drift, so the comparison does not count it."},
		{"none notable", []compare.Gate{gate("a", 0.019), gate("b", 0), gate("c", math.NaN())}, steady},
		{"unknown drift is not named", []compare.Gate{gate("a", math.NaN()), gate("b", 0.05), gate("c", math.Inf(1))},
			"The base arm drifted across the rounds: «b» +5.0%; each round's pair saw the same drift, so the comparison does not count it."},
		{"no drift known: no line", []compare.Gate{gate("a", math.NaN())}, ""},
		{"no gates: no line", nil, ""},
	} {
		got := ""
		if p := driftPara(c.gates); p != nil {
			got = sentenceJSON(p.Text)
		}
		if got != c.want {
			t.Errorf("%s: driftPara = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestABLine(t *testing.T) {
	long := make([]string, 14)
	for i := range long {
		long[i] = "AB"
	}
	for _, c := range []struct {
		name string
		ab   *compare.AB
		want string
	}{
		{"stored baseline", nil, ""},
		{"ABBA", &compare.AB{Mode: "co-resident", Rounds: 8, Order: abOrder(), Base: "base.yaml", Candidate: "perfgate.yaml"},
			"A/B on one runner: «base.yaml» vs «perfgate.yaml» · «co-resident» · 8 rounds (ABBA)"},
		{"one round", &compare.AB{Mode: "swap", Rounds: 1, Order: []string{"AB"}, Base: "a", Candidate: "b"},
			"A/B on one runner: «a» vs «b» · «swap» · 1 round («AB»)"},
		{"another order, as recorded", &compare.AB{Rounds: 3, Order: []string{"AB", "AB", "BA"}, Base: "a", Candidate: "b"},
			"A/B on one runner: «a» vs «b» · 3 rounds («AB» «AB» «BA»)"},
		{"ABBA starts with the base", &compare.AB{Rounds: 2, Order: []string{"BA", "AB"}, Base: "a", Candidate: "b"},
			"A/B on one runner: «a» vs «b» · 2 rounds («BA» «AB»)"},
		{"a long order, cut", &compare.AB{Rounds: 14, Order: long, Base: "a", Candidate: "b"},
			"A/B on one runner: «a» vs «b» · 14 rounds (" + strings.Repeat("«AB» ", 11) + "«AB» …)"},
		{"no names, no order", &compare.AB{Rounds: 4}, "A/B on one runner: (unnamed) vs (unnamed) · 4 rounds"},
	} {
		if got := sentenceJSON(abLine(c.ab)); got != c.want {
			t.Errorf("%s: abLine = %q, want %q", c.name, got, c.want)
		}
	}
}

// Each rounds chart holds its gate's values round by round on both arms,
// x the round labelled with its order; cold start's are its starts in
// order, with no order (swap restarts a stack only when the arm changes).
func TestRoundsCharts(t *testing.T) {
	v := abVerdict()
	v.AB.Mode = "swap"
	cold := abGate("cold_start", "cold start", "ms", "lower", "+20%", math.NaN(),
		verdictSide(3200, 3100, 3300, 3100, 3200, 3250, 3300, 3150),
		verdictSide(3300, 3200, 3400, 3200, 3300, 3400, 3350),
		compare.Interval{Estimate: 0.03, Lo: -0.02, Hi: 0.08}, stat.Pass, "the 90% interval rules out worse than +20%")
	v.Scenarios[0].Gates = append(v.Scenarios[0].Gates, cold)
	d := testDocument(v, 1.12, 0)
	page := renderHTML(t, d)
	byMetric := map[string]htmlChart{}
	for _, c := range htmlChartData(t, page).Charts {
		if c.Kind == "rounds" && c.Scenario == "chat-c16" {
			byMetric[c.Metric] = c
		}
	}
	require.Len(t, byMetric, len(v.Scenarios[0].Gates), "a rounds chart per gate")
	for _, g := range v.Scenarios[0].Gates {
		c := byMetric[g.Metric]
		scale := 1.0
		if g.Unit == "%" {
			scale = 100
		}
		require.Len(t, c.Series, 2, g.Metric)
		for i, side := range []struct {
			label, role string
			values      []compare.Num
		}{{"base", "baseline", g.Baseline.Values}, {"candidate", "candidate", g.Candidate.Values}} {
			ser := c.Series[i]
			assert.Equal(t, side.label, ser.Label, g.Metric)
			assert.Equal(t, side.role, ser.Role, g.Metric)
			require.Len(t, ser.Points, len(side.values), "%s %s", g.Metric, side.label)
			for k, want := range side.values {
				assert.Equal(t, float64(k+1), float64(ser.Points[k].X), "%s %s round %d", g.Metric, side.label, k+1)
				assert.InDelta(t, float64(want)*scale, float64(ser.Points[k].Y), 1e-9, "%s %s round %d", g.Metric, side.label, k+1)
			}
		}
		n := max(len(g.Baseline.Values), len(g.Candidate.Values))
		require.Len(t, c.Labels, n, g.Metric)
		require.Len(t, c.Notes, n, g.Metric)
		if g.Metric == "cold_start" {
			assert.Equal(t, "start (each arm's, in order)", c.XTitle)
			assert.Equal(t, []string{"5"}, c.Labels[4], "cold start's starts carry no order")
			assert.Empty(t, c.Subtitle, "no drift known")
			continue
		}
		assert.Equal(t, "round", c.XTitle, g.Metric)
		assert.Equal(t, []string{"1", "AB"}, c.Labels[0], g.Metric)
		assert.Equal(t, []string{"2", "BA"}, c.Labels[1], g.Metric)
		assert.Equal(t, "base first", c.Notes[0], g.Metric)
		assert.Equal(t, "candidate first", c.Notes[1], g.Metric)
	}
	assert.Equal(t, "base arm: +24.0% from the first round to the last", byMetric["ttft.p95"].Subtitle)

	// The table pairs cold starts in order: start 5 has a base value only.
	htmlHas(t, htmlText(page), "<tr><td>cold start (ms)</td><td>start 5</td><td>—</td><td class=\"num\">3150</td><td class=\"num\">—</td><td class=\"num\">—</td></tr>")
	htmlHas(t, htmlText(page), "<tr><td>TTFT p95 (ms)</td><td>2</td><td>BA</td><td class=\"num\">41.4</td><td class=\"num\">46.2</td><td class=\"num\">1.116</td></tr>")
	htmlHas(t, htmlText(page), "<tr><td>error rate (%)</td><td>1</td><td>AB</td><td class=\"num\">0.00%</td><td class=\"num\">0.00%</td><td class=\"num\">—</td></tr>", "no ratio over a base of 0")
}

// A report file of an A/B reads back (as perfgate report reads it) with
// its A/B and every gate's drift, unknown drifts included, and renders
// the same in every medium.
func TestABDocumentRoundTrip(t *testing.T) {
	d := abDocument()
	path := filepath.Join(t.TempDir(), "report.json")
	require.NoError(t, reportfile.Write(path, d))
	back, err := reportfile.Read(path)
	require.NoError(t, err)
	require.NotNil(t, back.Verdict.AB, "the A/B is read back")
	if !reflect.DeepEqual(d.Verdict.AB, back.Verdict.AB) {
		t.Errorf("reportfile.Read(reportfile.Write(ab)).Verdict.AB = %+v, want %+v", back.Verdict.AB, d.Verdict.AB)
	}
	for i, s := range d.Verdict.Scenarios {
		for j, g := range s.Gates {
			got := back.Verdict.Scenarios[i].Gates[j]
			if math.IsNaN(float64(g.Drift)) {
				assert.True(t, math.IsNaN(float64(got.Drift)), "%s %s: drift %v, want NaN (unknown)", s.Name, g.Metric, got.Drift)
				continue
			}
			assert.Equal(t, g.Drift, got.Drift, "%s %s drift", s.Name, g.Metric)
			assert.Equal(t, g.Baseline.Values, got.Baseline.Values, "%s %s base arm's rounds", s.Name, g.Metric)
			assert.Equal(t, g.Candidate.Values, got.Candidate.Values, "%s %s candidate's rounds", s.Name, g.Metric)
		}
	}
	raw, err := json.Marshal(d)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"ab":{"mode":"co-resident","rounds":8,"order":["AB","BA","AB","BA","AB","BA","AB","BA"],"base":"base.yaml","candidate":"perfgate.yaml"}`)
	assert.Contains(t, string(raw), `"drift":null`, "an unknown drift is null")

	render := func(d *reportfile.Document) (string, string, string) {
		var md, text, page bytes.Buffer
		require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{}))
		require.NoError(t, emitText(&text, []*reportfile.Document{d}))
		require.NoError(t, emitHTML(&page, []*reportfile.Document{d}))
		return md.String(), text.String(), page.String()
	}
	wantMD, wantText, wantHTML := render(d)
	gotMD, gotText, gotHTML := render(back)
	assert.Equal(t, wantMD, gotMD, "markdown read back")
	assert.Equal(t, wantText, gotText, "text read back")
	assert.Equal(t, wantHTML, gotHTML, "HTML read back")
	assert.Contains(t, gotMD, "A/B on one runner")
}

// The A/B's names and mode come from the command line, its orders from a
// file: each medium makes them safe as any text from a result.
func TestABEscaped(t *testing.T) {
	const (
		script  = `</script><script>alert(1)</script>`
		img     = `<img src=x onerror=alert(2)>`
		details = "</details>@mention #1 `code` |cell| *x*\x1b[31m\u202e"
	)
	d := abDocument()
	d.Verdict.AB = &compare.AB{Mode: details, Rounds: 2, Order: []string{img, script}, Base: "base " + script, Candidate: "cand " + img}
	d.Verdict.Scenarios[0].Gates[0].Title = "TTFT " + img

	var md, text bytes.Buffer
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{}))
	require.NoError(t, emitText(&text, []*reportfile.Document{d}))
	checkMarkdownEscaped(t, "ab", md.String())
	for _, bad := range []string{"@mention", "#1 ", "\x1b", "\u202e"} {
		assert.NotContains(t, md.String(), bad, "a mention, an issue reference, an escape or an override in markdown")
	}
	// Backslash-escaped is literal: "\<", "\*".
	for _, bad := range []string{"<script", "<img", "</details>@", "*x*"} {
		for i := strings.Index(md.String(), bad); i >= 0; i = nextIndex(md.String(), bad, i) {
			if i == 0 || md.String()[i-1] != '\\' {
				t.Errorf("markdown holds %q unescaped: …%s…", bad, md.String()[max(0, i-40):min(md.Len(), i+40)])
				break
			}
		}
	}
	for _, bad := range []string{"\x1b", "\u202e"} {
		assert.NotContains(t, text.String(), bad, "a terminal escape or an override reaches the terminal")
	}
	assert.Contains(t, firstLine(text.String()), "A/B on one runner: base </script><script>alert(1)</script> vs cand <img src=x onerror=alert(2)>")

	page := renderHTML(t, d, htmlDocumentOf("second", passVerdict()))
	rest := htmlWithoutLibrary(t, page)
	checkHTMLEscaped(t, "ab", rest)
	for _, bad := range []string{"<script>alert", "<img", "</details>@", "\u202e", "\x1b"} {
		htmlHasNot(t, rest, bad)
	}
	assert.Equal(t, 3, strings.Count(page, "<script"))
	assertTextOnly(t, rest, "onerror", "@mention", "alert(")
	htmlHas(t, rest, "A/B on one runner: base &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; vs cand &lt;img src=x onerror=alert(2)&gt;", "in the merged page's document")
	labels := map[string]bool{}
	for _, c := range htmlChartData(t, page).Charts {
		if c.Kind == "rounds" && len(c.Labels) > 1 {
			labels[c.Labels[0][1]], labels[c.Labels[1][1]] = true, true
		}
	}
	assert.True(t, labels[img] && labels[script], "the orders round-trip through the data block, escaped by the template: %v", labels)
}

// Wherever a report names the side compared against (the gates, the
// telemetry, the eval suites and their changed items, a metric shown but
// not gated, a side's warnings, the distributions, the details), an A/B
// names it base. The document is the richest of the cases, made an A/B;
// the texts compare wrote itself are left out, as they are compare's.
func TestABNamesItsSides(t *testing.T) {
	d := htmlDocument() // regression, an eval suite, a cold start not gated
	d.Verdict.AB = &compare.AB{Mode: "swap", Rounds: 7, Order: abOrder()[:7], Base: "a.yaml", Candidate: "b.yaml"}
	d.Verdict.Scenarios[0].Warnings = nil // compare's own words
	for i := range d.Scenarios {
		d.Scenarios[i].History = nil
		d.Scenarios[i].Telemetry = []reportfile.TelemetryRow{{Metric: "gpu_power", Title: "GPU power", Unit: "W", Baseline: fptr(600), Candidate: fptr(610), Gated: true}}
	}
	var md, text bytes.Buffer
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{}))
	require.NoError(t, emitText(&text, []*reportfile.Document{d}))
	page := renderHTML(t, d)
	body := htmlText(page[:strings.Index(page, `<script type="application/json"`)])
	for _, c := range []struct{ medium, out string }{{"markdown", md.String()}, {"text", text.String()}, {"HTML", body}} {
		assert.NotContains(t, strings.ToLower(c.out), "baseline", "%s", c.medium)
	}
	for _, want := range []string{
		"| metric (median of repetitions) | base | candidate | change | gated |",
		"| gate | base | candidate | change | p | tolerance | outcome |",
		"| changed item | base | candidate |",
		"outputs identical to the base arm's",
		"too few repetitions for a 95% interval: 3 a side, where one needs >= 6",
		"not gated: **cold start (ms)**: base 3239 · candidate 3401",
	} {
		assert.Contains(t, md.String(), want)
	}
	htmlHas(t, body, "<th>base output</th>")
	for _, c := range htmlChartData(t, page).Charts {
		if c.Kind == "cdf" {
			assert.Equal(t, "base", c.Series[0].Label, "a distribution's base arm")
		}
	}
}
