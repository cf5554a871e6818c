package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
)

// capacityDocument is the report of cand against base, compared with the
// gates they recorded, as perfgate report --baseline makes it.
func capacityDocument(t *testing.T, base, cand *result.Result) *reportfile.Document {
	t.Helper()
	v, err := compare.Compare([]*result.Result{base}, cand, compare.Options{Detectable: true})
	require.NoError(t, err)
	d, err := reportfile.New(v, []*result.Result{base}, cand, nil)
	require.NoError(t, err)
	d.Key = "capacity.yaml"
	return d
}

// sortedMedian is the median of xs, by sorting: apart from medianOf, to
// check it.
func sortedMedian(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// reportfile.New groups the candidate's sweep points by the scenario they
// sweep, in value order, each with its baseline found by name and the
// medians of its repetitions; a capacity scenario carries both searches.
func TestNewDocumentSweepsAndCapacity(t *testing.T) {
	base, cand := capacityFixtures()
	// A point measured on the candidate alone, listed before the others:
	// no baseline, and sorted into place.
	extra := cand.Scenarios[0]
	extra.Name, extra.Sweep = "chat.rate-10", &result.SweepPoint{Of: "chat", Param: "rate", Value: 10, Index: 0, Points: 5}
	cand.Scenarios = append([]result.ScenarioResult{extra}, cand.Scenarios...)
	d := capacityDocument(t, base, cand)

	require.Len(t, d.Sweeps, 1)
	sw := d.Sweeps[0]
	assert.Equal(t, "chat", sw.Of)
	assert.Equal(t, "rate", sw.Param)
	assert.Equal(t, "req/s", sw.Unit)
	var values []float64
	for _, p := range sw.Points {
		values = append(values, p.Value)
	}
	assert.Equal(t, []float64{10, 25, 50, 100, 150}, values, "points in value order")
	assert.Nil(t, sw.Points[0].Baseline, "chat.rate-10 has no baseline")
	require.NotNil(t, sw.Points[0].Candidate)

	for _, p := range sw.Points[1:] {
		bs, cs := scenarioNamed(base, p.Scenario), scenarioNamed(cand, p.Scenario)
		require.NotNil(t, bs, p.Scenario)
		for _, side := range []struct {
			got *reportfile.PointStats
			s   *result.ScenarioResult
		}{{p.Baseline, bs}, {p.Candidate, cs}} {
			require.NotNil(t, side.got, p.Scenario)
			var rate, ttft99, tpot50 []float64
			for _, r := range side.s.Repetitions {
				rate, ttft99, tpot50 = append(rate, r.RequestThroughput), append(ttft99, r.TTFT.P99), append(tpot50, r.TPOT.P50)
			}
			assert.Equal(t, sortedMedian(rate), side.got.RequestRate, "%s request rate", p.Scenario)
			assert.Equal(t, sortedMedian(ttft99), side.got.TTFTP99, "%s TTFT p99", p.Scenario)
			assert.Equal(t, sortedMedian(tpot50), side.got.TPOTP50, "%s TPOT p50", p.Scenario)
			assert.Equal(t, len(side.s.Repetitions), side.got.N)
		}
	}
	// The candidate is slower at every load: its TPOT p99 is higher.
	for _, p := range sw.Points[1:] {
		assert.Greater(t, p.Candidate.TPOTP99, p.Baseline.TPOTP99, p.Scenario)
	}

	var capacity *reportfile.ScenarioData
	for i := range d.Scenarios {
		if d.Scenarios[i].Name == "chat-capacity" {
			capacity = &d.Scenarios[i]
		} else {
			assert.Nil(t, d.Scenarios[i].Capacity, d.Scenarios[i].Name)
		}
	}
	require.NotNil(t, capacity)
	require.NotNil(t, capacity.Capacity)
	assert.Same(t, base.Scenarios[4].Capacity, capacity.Capacity.Baseline)
	assert.Same(t, cand.Scenarios[5].Capacity, capacity.Capacity.Candidate)
}

// A report with sweeps and capacity reads back whole; one from before them
// reads with neither.
func TestDocumentCapacityReadsBack(t *testing.T) {
	dir := t.TempDir()
	base, cand := capacityFixtures()
	d := capacityDocument(t, base, cand)
	path := filepath.Join(dir, "report.json")
	require.NoError(t, reportfile.Write(path, d))
	got, err := reportfile.Read(path)
	require.NoError(t, err)
	assert.Equal(t, d.Sweeps, got.Sweeps)
	for i := range d.Scenarios {
		assert.Equal(t, d.Scenarios[i].Capacity, got.Scenarios[i].Capacity, d.Scenarios[i].Name)
	}

	old := filepath.Join(dir, "old.json")
	require.NoError(t, reportfile.Write(old, testDocument(passVerdict(), 1, 0)))
	raw, err := os.ReadFile(old)
	require.NoError(t, err)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &keys))
	assert.NotContains(t, keys, "sweeps", "omitted when empty, as in a report from before sweeps")
	assert.NotContains(t, string(raw), `"capacity"`)
	got, err = reportfile.Read(old)
	require.NoError(t, err)
	assert.Nil(t, got.Sweeps)
	for _, s := range got.Scenarios {
		assert.Nil(t, s.Capacity)
	}
}

// fixtureDocument is the report of the committed capacity fixtures.
func fixtureDocument(t *testing.T) *reportfile.Document {
	t.Helper()
	base, err := result.Read(filepath.Join("testdata", "capacity", "base.json"))
	require.NoError(t, err)
	cand, err := result.Read(filepath.Join("testdata", "capacity", "cand.json"))
	require.NoError(t, err)
	return capacityDocument(t, base, cand)
}

// sectionNames are the names of a document view's top sections, each
// "label name".
func sectionNames(dv docView) []string {
	var out []string
	for _, b := range dv.Blocks {
		if b.Section != nil {
			out = append(out, b.Section.Label+" "+b.Section.Name)
		}
	}
	return out
}

// A sweep is one section before its points, with a row a point; only a
// gated point keeps a section of its own; the warning of an ungated point
// shows in the sweep's notes. A verdict alone (no document, no sweeps)
// keeps every scenario.
func TestSweepView(t *testing.T) {
	d := fixtureDocument(t)
	d.Verdict.Scenarios[0].Warnings = []string{"3 requests timed out"} // chat.rate-25, not gated
	v := buildView([]*reportfile.Document{d})
	dv := v.Docs[0]
	assert.Equal(t, []string{"Sweep chat", "Scenario chat.rate-100", "Scenario chat-capacity"}, sectionNames(dv))
	sw := dv.Blocks[0].Section
	assert.Equal(t, "rate 25…150 req/s · 4 points", sw.Facts)

	var tbl *table
	var notes *list
	kinds := map[string]medium{}
	for _, b := range sw.Blocks {
		switch {
		case b.Table != nil:
			tbl = b.Table
		case b.List != nil:
			notes = b.List
		case b.Charts != nil:
			for _, c := range b.Charts.Charts {
				kinds[c.Kind] |= b.Media
				if c.Kind == "sweep" {
					assert.Equal(t, detailNoCharts, b.Drop, "markdown's charts go before the tables")
				}
			}
		}
	}
	assert.Equal(t, map[string]medium{"sweep": mediumMarkdown, "curve": mediumHTML}, kinds)
	require.NotNil(t, tbl)
	require.Len(t, tbl.Rows, 4)
	p := d.Sweeps[0].Points[3]
	row := tbl.Rows[3].Cells
	assert.Equal(t, "chat.rate-150", row[0].Text.raw())
	assert.Equal(t, "150 req/s", row[1].Text.raw())
	want := verdictValue(p.Baseline.TTFTP99, "") + " → " + verdictValue(p.Candidate.TTFTP99, "")
	assert.Equal(t, want, row[4].Text.raw(), "TTFT p99 baseline → candidate")
	require.NotNil(t, notes)
	require.Len(t, notes.Items, 1)
	assert.Equal(t, "chat.rate-25", notes.Items[0].Subject.raw())
	assert.Equal(t, "3 requests timed out", notes.Items[0].Text.raw())

	alone := verdictView(d.Verdict)
	assert.Len(t, sectionNames(alone.Docs[0]), 5, "a verdict alone has every scenario")
}

// The curves put each point at its achieved throughput, a side's missing
// point as NaN (null in the page), and label each point with its offered
// load; a sweep with a candidate point missing draws no markdown chart.
func TestSweepCharts(t *testing.T) {
	d := fixtureDocument(t)
	sw := d.Sweeps[0]
	sw.Points = append([]reportfile.SweepPointData(nil), sw.Points...)
	sw.Points[1].Baseline = nil
	c, ok := curveChart(&sw, sweepMetrics[1], sidesOf(nil))
	require.True(t, ok)
	assert.Equal(t, [][]string{{"25 req/s"}, {"50 req/s"}, {"100 req/s"}, {"150 req/s"}}, c.Labels)
	require.Len(t, c.Series, 4)
	assert.Equal(t, []string{"baseline", "baseline-p50", "candidate", "candidate-p50"},
		[]string{c.Series[0].Role, c.Series[1].Role, c.Series[2].Role, c.Series[3].Role})
	assert.True(t, math.IsNaN(float64(c.Series[0].Points[1].Y)), "the baseline has no point at 50")
	assert.Equal(t, compare.Num(sw.Points[3].Candidate.OutputThroughput), c.Series[2].Points[3].X)
	assert.Equal(t, compare.Num(sw.Points[3].Candidate.TPOTP99), c.Series[2].Points[3].Y)
	assert.Equal(t, compare.Num(sw.Points[3].Candidate.TPOTP50), c.Series[3].Points[3].Y)

	m, ok := sweepChart(&sw, sweepMetrics[0], sidesOf(nil))
	require.True(t, ok)
	require.Len(t, m.Series, 1, "a baseline with a point missing is no bars")
	assert.Equal(t, "TTFT p99 (ms) by offered rate (req/s): candidate line", m.Title.raw())
	sw.Points[2].Candidate = nil
	_, ok = sweepChart(&sw, sweepMetrics[0], sidesOf(nil))
	assert.False(t, ok, "a candidate with a point missing: no chart")

	odd := reportfile.SweepData{Of: "x", Param: "<b>", Unit: "<i>", Points: sw.Points[:1]}
	assert.Equal(t, "load 25…25 · 1 point", sweepRange(&odd), "a param perfgate does not know is not shown")
}

// Each way a search ends reads as a sentence, and its capacity as an
// interval or the bound it found.
func TestCapacityOutcome(t *testing.T) {
	search := result.CapacitySearch{Metric: "request_rate", Min: 10, Max: 640, Resolution: 0.05, Budget: 8}
	probes := func(loads ...float64) []result.CapacityProbe {
		var ps []result.CapacityProbe
		for _, l := range loads {
			ps = append(ps, result.CapacityProbe{Load: l, Phase: "bracket"})
		}
		return ps
	}
	for _, c := range []struct {
		c                  result.Capacity
		interval, sentence string
	}{
		{result.Capacity{Outcome: result.CapacityBracketed, Holds: 128.8, Breaks: 134.5}, "129 req/s [129, 134)", "bracketed to 5%"},
		{result.Capacity{Outcome: result.CapacityBelowMin, Breaks: 10}, "< 10 req/s",
			"SLO broken at the lowest load, 10 req/s: the capacity is below it (lower capacity.min to find it)"},
		{result.Capacity{Outcome: result.CapacityAboveMax, Holds: 640}, "≥ 640 req/s",
			"SLO held at the highest load, 640 req/s: the capacity is at least that (raise capacity.max to find it)"},
		{result.Capacity{Outcome: result.CapacityBudget, Holds: 80, Breaks: 113.1}, "80 req/s [80, 113)",
			"the budget of 8 probes ran out before the interval narrowed to 5%: the capacity is in the interval reached"},
		{result.Capacity{Outcome: result.CapacityBudget, Holds: 1280}, "≥ 1,280 req/s",
			"the budget of 8 probes ran out before the interval narrowed to 5%: no probe broke, the capacity is at least 1,280 req/s"},
		{result.Capacity{Outcome: result.CapacityBudget, Breaks: 10.5}, "< 10.5 req/s",
			"the budget of 8 probes ran out before the interval narrowed to 5%: no probe held, the capacity is below 10.5 req/s"},
		// client_limited: Breaks is 0 (the server was not shown to break);
		// the load perfgate fell behind at is the last probe's.
		{result.Capacity{Outcome: result.CapacityClientLimited, Holds: 320, Probes: probes(80, 160, 320, 640)}, "≥ 320 req/s",
			"perfgate fell behind its schedule at 640 req/s (an open loop with no max_in_flight cap): the capacity is at least 320 req/s, and the server was not shown to break"},
		{result.Capacity{Outcome: result.CapacityClientLimited, Probes: probes(80)}, "not found (no probe held)",
			"no probe held before perfgate fell behind its schedule at 80 req/s (an open loop with no max_in_flight cap): the capacity was not found, and the server was not shown to break"},
		{result.Capacity{Outcome: "odd", Holds: 5}, "≥ 5 req/s", "odd"},
	} {
		c.c.Search = search
		if got := capacityInterval(&c.c, "req/s"); got != c.interval {
			t.Errorf("capacityInterval(%s) = %q, want %q", c.c.Outcome, got, c.interval)
		}
		if got := capacityOutcome(&c.c, "req/s").raw(); got != c.sentence {
			t.Errorf("capacityOutcome(%s) = %q, want %q", c.c.Outcome, got, c.sentence)
		}
	}
	odd := capacityOutcome(&result.Capacity{Outcome: "odd"}, "req/s")
	assert.Equal(t, untrusted("odd"), odd, "an outcome perfgate does not write is untrusted text")
	assert.Equal(t, "users", capacityUnit(result.CapacitySearch{Metric: "concurrency"}))
}

// A capacity scenario's section opens with its search: what was searched,
// the table of both sides, the chart (HTML) and the probes (a fold), then
// its gate table. Its figures are the search's.
func TestCapacityView(t *testing.T) {
	d := fixtureDocument(t)
	v := buildView([]*reportfile.Document{d})
	var sec *section
	for _, b := range v.Docs[0].Blocks {
		if b.Section != nil && b.Section.Name == "chat-capacity" {
			sec = b.Section
		}
	}
	require.NotNil(t, sec)
	var order []string
	for _, b := range sec.Blocks {
		switch {
		case b.Table != nil:
			order = append(order, "table "+b.Table.Kind)
		case b.Fold != nil:
			order = append(order, "fold "+b.Fold.Summary.raw())
		case b.Charts != nil:
			order = append(order, "charts "+b.Charts.Charts[0].Kind)
		case b.Para != nil:
			order = append(order, "para")
		}
	}
	assert.Equal(t, []string{"para", "table capacity", "charts capacity", "fold Capacity probes", "table gates"}, order[:5])
	assert.Equal(t, "SLO tpot.p99 ≤ 3 ms, ttft.p99 ≤ 25 ms · holds: every · 6 repetitions a probe · 10 to 640 req/s, to 5%",
		sec.Blocks[0].Para.Text.raw())

	c := d.Scenarios[len(d.Scenarios)-1].Capacity
	rows := sec.Blocks[1].Table.Rows
	require.Len(t, rows, 2)
	for i, side := range []*result.Capacity{c.Baseline, c.Candidate} {
		cells := rows[i].Cells
		assert.Equal(t, []string{"129 req/s [129, 135)", "73.4 req/s [73.4, 76.6)"}[i], cells[1].Text.raw(), "%v", side.Holds)
		assert.Equal(t, cellSummary, cells[2].Kind, "the capacity gate's summary of the samples")
		assert.Equal(t, verdictValue(*side.CostPerMTok, ""), cells[4].Text.raw())
		assert.Equal(t, []string{"6 of 8 probes", "6 of 8 probes + 1 closing"}[i], cells[6].Text.raw(),
			"the candidate's start broke on one repetition: a closing probe at 160 gave the others a crossing")
	}
	assert.Greater(t, c.Baseline.Holds, c.Candidate.Holds, "the candidate's capacity is lower")

	probes := sec.Blocks[3].Fold.Blocks[0].Table
	assert.Len(t, probes.Rows, len(c.Baseline.Probes)+len(c.Candidate.Probes))
}

// A report file is untrusted: a capacity whose figures make no sense
// renders without a panic.
func TestCapacityViewOfNonsense(t *testing.T) {
	d := fixtureDocument(t)
	sd := &d.Scenarios[len(d.Scenarios)-1]
	sd.Capacity = &reportfile.CapacityData{Candidate: &result.Capacity{At: 7, Probes: []result.CapacityProbe{{Load: -1, Margin: map[string]float64{"x": -2}}}}}
	d.Sweeps = append(d.Sweeps, reportfile.SweepData{Of: "empty"}, reportfile.SweepData{Of: "negative", Param: "rate", Points: []reportfile.SweepPointData{{Value: -1, Candidate: &reportfile.PointStats{}}}})
	for _, w := range []func() error{
		func() error { return emitMarkdown(&bytes.Buffer{}, []*reportfile.Document{d}, MarkdownOptions{}) },
		func() error { return emitText(&bytes.Buffer{}, []*reportfile.Document{d}) },
		func() error { return emitHTML(&bytes.Buffer{}, []*reportfile.Document{d}) },
	} {
		require.NoError(t, w())
	}
}

// The pull request comment of 3 sweeps of 16 points and 2 capacity
// searches fits GitHub's comment limit with every table and chart in it.
func TestCapacityMarkdownFitsComment(t *testing.T) {
	rates := []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160}
	sweeps, searches := []string{"chat", "batch", "long-context"}, []string{"chat-capacity", "batch-capacity"}
	base := capacityResult(fixtureModel{Slow: 1, Seed: 3}, sweeps, rates, 0, searches)
	cand := capacityResult(fixtureModel{Slow: 1.3, Seed: 4}, sweeps, rates, 0, searches)
	d := capacityDocument(t, base, cand)
	var buf bytes.Buffer
	require.NoError(t, emitMarkdown(&buf, []*reportfile.Document{d}, MarkdownOptions{Marker: "<!-- perfgate:capacity.yaml -->"}))
	out := buf.String()
	t.Logf("%d bytes", len(out))
	assert.LessOrEqual(t, len(out), commentLimit, "the whole report fits, uncut")
	assert.Equal(t, 6, strings.Count(out, "p99 (ms) by offered rate (req/s): baseline bars, candidate line"), "two charts a sweep")
	assert.Equal(t, 2, strings.Count(out, "<details><summary>Capacity probes</summary>"))
	for _, of := range sweeps {
		for _, r := range rates {
			assert.Contains(t, out, "| "+verdictMD(of)+".rate-"+strconv.FormatFloat(r, 'f', -1, 64)+" |")
		}
	}
}

// The report of the capacity fixtures in each medium: the view, the pull
// request comment, the terminal and the HTML page's outline; the page's
// charts are the sweep's two curves, the gated point's and the capacity
// gate's repetitions, and the search.
func TestCapacityReportGolden(t *testing.T) {
	d := fixtureDocument(t)
	viewGolden(t, "report-capacity", buildView([]*reportfile.Document{d}))
	var md, text bytes.Buffer
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{Limit: commentLimit, Marker: "<!-- perfgate:capacity.yaml -->"}))
	golden(t, filepath.Join("render", "report-capacity.md"), md.Bytes())
	require.NoError(t, emitText(&text, []*reportfile.Document{d}))
	golden(t, filepath.Join("render", "report-capacity.txt"), text.Bytes())
	page := renderHTML(t, d)
	golden(t, filepath.Join("render", "report-capacity.html.outline"), []byte(htmlOutline(t, page)))
	charts, _ := htmlCharts(buildView([]*reportfile.Document{d}))
	var kinds []string
	for _, c := range charts {
		kinds = append(kinds, c.Kind)
	}
	assert.Equal(t, []string{"curve", "curve", "reps", "capacity", "reps"}, kinds)
}

// The probes a search made count against its budget, the closing probes
// (beyond the budget) apart: never "10 of 8".
func TestProbesText(t *testing.T) {
	phases := func(ps ...string) []result.CapacityProbe {
		var out []result.CapacityProbe
		for _, p := range ps {
			out = append(out, result.CapacityProbe{Phase: p})
		}
		return out
	}
	for _, tc := range []struct {
		probes []result.CapacityProbe
		budget int
		want   string
	}{
		{phases("bracket", "bracket", "bisect"), 8, "3 of 8 probes"},
		{phases("bracket", "bracket", "bisect", "bisect", "close", "close"), 4, "4 of 4 probes + 2 closing"},
		{phases("bracket", "close"), 1, "1 of 1 probe + 1 closing"},
		{nil, 8, "0 of 8 probes"},
	} {
		c := result.Capacity{Probes: tc.probes, Search: result.CapacitySearch{Budget: tc.budget}}
		assert.Equal(t, tc.want, probesText(&c))
	}
	// The load perfgate fell behind at is never a closing probe's.
	c := result.Capacity{Probes: append(phases("bracket", "bracket"), phases("close")...)}
	c.Probes[0].Load, c.Probes[1].Load, c.Probes[2].Load = 80, 160, 320
	assert.Equal(t, 160.0, clientLimitedAt(&c))
	assert.True(t, math.IsNaN(clientLimitedAt(&result.Capacity{})))
}

// loadText is the one way a load is written: whole from 100 up and when
// whole, else 3 significant digits; thousands grouped.
func TestLoadText(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{{1280, "1,280"}, {148.2, "148"}, {56.55, "56.6"}, {0.70711, "0.707"}, {25, "25"}, {0.5, "0.5"},
		{12345.6, "12,346"}, {0, "0"}, {math.NaN(), "—"}, {math.Inf(1), "—"}, {-1, "-1"}} {
		assert.Equal(t, tc.want, loadText(tc.x), "loadText(%v)", tc.x)
	}
	assert.Equal(t, "1 user", loadWithUnit(1, "users"))
	assert.Equal(t, "2 users", loadWithUnit(2, "users"))
	assert.Equal(t, "1 req/s", loadWithUnit(1, "req/s"))
}

// scenarioNamed is r's scenario called name, or nil.
func scenarioNamed(r *result.Result, name string) *result.ScenarioResult {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}
