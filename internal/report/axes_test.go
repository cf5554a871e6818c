package report

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/reportfile"
)

// Honest value axes: a 0.3% change does not fill a chart, bars start at
// zero, a share stays within 0-100% and never goes below zero.
func TestValueAxis(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []float64
		kind   axisKind
		lo, hi float64
	}{
		{"a 0.3% change spans half the axis's top at least", []float64{3862, 3850}, axisLine, 1500, 4000},
		{"a 30% change from a low floor starts at zero", []float64{100, 40}, axisLine, 0, 120},
		{"bars start at zero", []float64{3862, 3850}, axisZero, 0, 4500},
		{"an error rate of zero stays within 0-1%", []float64{0, 0, 0}, axisShare, 0, 1},
		{"a share is never above 100%", []float64{99.5, 100}, axisShare, 0, 100},
		{"a share without values", nil, axisShare, 0, 1},
		{"all zero", []float64{0, 0}, axisLine, 0, 1},
		{"NaN left out", []float64{math.NaN(), 10, 9.9}, axisLine, 5, 11},
	} {
		r, ok := valueAxis(c.values, c.kind)
		require.True(t, ok, c.name)
		assert.Equal(t, axisRange{c.lo, c.hi}, r, c.name)
		var hi float64
		for _, v := range c.values {
			if finite(v) {
				hi = math.Max(hi, v)
				assert.True(t, v >= r.Lo && v <= r.Hi, "%s: %v outside %v", c.name, v, r)
			}
		}
		assert.GreaterOrEqual(t, r.Hi-r.Lo, minAxisShare*hi, "%s: the axis spans at least half its top", c.name)
		assert.GreaterOrEqual(t, r.Lo, 0.0, c.name)
	}
	_, ok := valueAxis([]float64{math.NaN()}, axisLine)
	assert.False(t, ok, "nothing to place")
}

// mermaidYAxis matches a mermaid chart's y axis with its range.
var mermaidYAxis = regexp.MustCompile(`(?m)^    y-axis "[^"]*" (\S+) --> (\S+)$`)

// Every mermaid chart of the comment has a y range (bars from zero), and a
// legend line after it, saying which series is which, and where the axis
// starts when not at zero.
func TestMermaidAxesAndLegends(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, emitMarkdown(&buf, []*reportfile.Document{documentCases[1].doc()}, MarkdownOptions{}))
	out := buf.String()
	charts := strings.Count(out, "```mermaid\n")
	require.Equal(t, 8, charts)
	axes := mermaidYAxis.FindAllStringSubmatch(out, -1)
	require.Len(t, axes, charts, "every chart has a y range")
	for _, chart := range strings.Split(out, "```mermaid\n")[1:] {
		body, rest, _ := strings.Cut(chart, "```\n")
		legend, _, _ := strings.Cut(strings.TrimPrefix(rest, "\n"), "\n")
		assert.True(t, strings.HasPrefix(legend, "<sub>") && strings.HasSuffix(legend, "</sub>"), "a legend after the chart: %q", legend)
		m := mermaidYAxis.FindStringSubmatch(body)
		require.NotNil(t, m)
		lo, _ := strconv.ParseFloat(m[1], 64)
		if strings.Contains(body, "    bar [") {
			assert.Equal(t, 0.0, lo, "bars start at zero:\n%s", body)
			assert.Contains(t, legend, "bars: baseline · line: candidate")
		}
		if lo > 0 {
			assert.Contains(t, legend, "y axis from "+m[1]+", not 0")
		}
	}
}

// The HTML's per-repetition and history charts have the same honest axes:
// an error rate's from 0 to at most 100%, never below zero; one that does
// not start at zero says so.
func TestHTMLValueAxes(t *testing.T) {
	d := measuredDocument(t, "m")
	charts := htmlChartData(t, renderHTML(t, d)).Charts
	seen := 0
	for _, c := range charts {
		if c.Kind != "reps" && c.Kind != "trend" {
			continue
		}
		seen++
		require.NotNil(t, c.YAxis, "%s %s", c.Kind, c.Metric)
		assert.GreaterOrEqual(t, c.YAxis.Lo, 0.0, c.Metric)
		if c.Metric == "error_rate" {
			assert.Equal(t, axisRange{0, 1}, *c.YAxis, "an error rate of 0%")
		}
		if c.YAxis.Lo > 0 {
			assert.Equal(t, "y axis from "+axisNumber(c.YAxis.Lo)+", not 0", c.YNote)
		}
	}
	assert.Positive(t, seen)
}

// A log axis's ticks are few and far enough apart that their labels do not
// run into each other: E2E from 70 ms to 2 s had 1,000, 1,500 and 2,000
// side by side; ITL from 1 µs to 50 ms had a label per step.
func TestLogTicksStayApart(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []float64
	}{
		{70, 2000, []float64{100, 200, 500, 1000, 2000}},
		{0.001, 50, []float64{0.001, 0.01, 0.1, 1, 10}},
		{1.35, 4.16, []float64{1.35, 2, 3, 4.16}},
		{2, 150, []float64{2, 5, 10, 20, 50, 100}},
		{1e-3, 1e9, []float64{1e-3, 1e-1, 10, 1e3, 1e5, 1e7, 1e9}},
	} {
		got := logTicks(c.lo, c.hi)
		assert.Equal(t, c.want, got, "logTicks(%v, %v)", c.lo, c.hi)
		assert.LessOrEqual(t, len(got), maxLogTicks)
		span := math.Log(c.hi / c.lo)
		for i := 1; i < len(got); i++ {
			assert.GreaterOrEqual(t, math.Log(got[i]/got[i-1]), 0.1*span, "ticks %v and %v of %v", got[i-1], got[i], got)
		}
	}
	// The HTML's CDFs carry their ticks and range.
	for _, c := range htmlChartData(t, renderHTML(t, htmlDocument())).Charts {
		if c.Kind == "cdf" {
			assert.NotEmpty(t, c.XTicks, c.Metric)
			require.NotNil(t, c.XAxis, c.Metric)
		}
	}
}

// Every history chart ends at this run's candidate, gated or not: the
// TTFT p50 chart had no candidate point, for no gate measured ttft.p50.
func TestHistoryChartsEndAtTheCandidate(t *testing.T) {
	d := measuredDocument(t, "m")
	sd := &d.Scenarios[0]
	require.NotEmpty(t, sd.History)
	for _, name := range baseline.Headline {
		require.Contains(t, sd.Current, name, "the candidate's summary of %s", name)
	}
	var trend int
	for _, c := range htmlChartData(t, renderHTML(t, d)).Charts {
		if c.Kind != "trend" {
			continue
		}
		trend++
		last := c.Series[len(c.Series)-1]
		assert.Equal(t, "candidate", last.Role, "%s ends at the candidate", c.Metric)
		assert.Equal(t, "this PR", c.Labels[len(c.Labels)-1][0], c.Metric)
	}
	assert.Equal(t, len(baseline.Headline), trend)
}
