package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
)

// GitHub's limits on a comment and a step summary (internal/github's
// commentLimit and summaryLimit, which report does not import).
const (
	commentLimit = 65536
	summaryLimit = 1 << 20
)

// docPercentiles is a distribution whose percentiles grow from p50 by the
// given factor and whose CDF has a few points.
func docPercentiles(p50, tail float64) *reportfile.Distribution {
	d := &reportfile.Distribution{}
	for i, n := range []string{"p50", "p90", "p95", "p99", "p99.9"} {
		d.Percentiles = append(d.Percentiles, reportfile.Percentile{Name: n, Value: roundSig(p50*(1+tail*float64(i)), 4)})
	}
	for i, q := range []float64{0.1, 0.5, 0.9, 0.99, 1} {
		d.CDF = append(d.CDF, reportfile.CDFPoint{Value: roundSig(p50*(0.6+tail*float64(i)), 4), Fraction: q})
	}
	return d
}

// testDocument wraps v with chart data for each scenario: a candidate
// scale times the baseline, and history entries when history > 0.
func testDocument(v *compare.Verdict, scale float64, history int) *reportfile.Document {
	d := &reportfile.Document{Schema: reportfile.Schema, Key: "perfgate.yaml", Verdict: v}
	for _, s := range v.Scenarios {
		sd := reportfile.ScenarioData{Name: s.Name}
		for i, m := range []struct{ hist, title string }{{"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2e", "E2E"}} {
			base := 20 * float64(i+1)
			ld := reportfile.LatencyData{Metric: m.hist, Title: m.title, Candidate: docPercentiles(base*scale, 0.5)}
			if !s.NoBaseline {
				ld.Baseline = docPercentiles(base, 0.5)
			}
			sd.Latency = append(sd.Latency, ld)
		}
		start := time.Date(2026, 10, 1, 3, 0, 0, 0, time.UTC)
		for i := range history {
			ttft := 50 + float64(i%3)
			sd.History = append(sd.History, baseline.Entry{
				Scenario: s.Name, Commit: fmt.Sprintf("%07x0000000000", 0xa1b2c3+i), Date: start.AddDate(0, 0, i), Repetitions: 7,
				Metrics: map[string]baseline.Summary{"ttft.p99": {Median: ttft, N: 7}, "tpot.p99": {Median: 100 + float64(i%2), N: 7}},
			})
		}
		d.Scenarios = append(d.Scenarios, sd)
	}
	return d
}

// identityVerdict is a pass whose candidate changed the engine, the model's
// quantisation, the flags and the image, with the notes that go with them.
func identityVerdict() *compare.Verdict {
	v := passVerdict()
	v.Changes = []compare.Difference{
		{Field: "engine version", Baseline: "v0.6.3", Candidate: "v0.7.0"},
		{Field: "model", Baseline: "meta-llama/Llama-3.1-8B-Instruct", Candidate: "neuralmagic/Llama-3.1-8B-Instruct-FP8"},
		{Field: "stack args", Baseline: "--enable-prefix-caching", Candidate: "--quantization fp8 --max-num-seqs 128"},
		{Field: "image", Baseline: "vllm/vllm-openai:v0.6.3", Candidate: "vllm/vllm-openai:v0.7.0"},
		{Field: "image id", Baseline: "sha256:1111111111111111", Candidate: "sha256:2222222222222222"},
	}
	v.Warnings = []string{"the model changed: the quality suites tell whether its answers did"}
	return v
}

var documentCases = []struct {
	name  string
	doc   func() *reportfile.Document
	first string
}{
	{"pass", func() *reportfile.Document { return testDocument(passVerdict(), 1.01, 0) }, "### ✅ perfgate: pass (2 gates)"},
	{"regression", func() *reportfile.Document {
		d := testDocument(regressionVerdict(), 1.3, 12)
		d.Source = reportfile.Source{Repository: "acme/serving", Commit: "0123456789abcdef", PullRequest: 42, RunURL: "https://github.com/acme/serving/actions/runs/99"}
		measuredAt := time.Date(2026, 10, 16, 3, 0, 0, 0, time.UTC)
		d.Measured = &reportfile.Measured{Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: "vllm", EngineVersion: "0.6.3",
			GPUs: []reportfile.GPUCount{{Model: "NVIDIA H100 80GB HBM3", Count: 8}}, At: measuredAt}
		for i := range d.Scenarios {
			d.Scenarios[i].WorkloadHash = "sha256:320f730695f1aa"
			if h := d.Scenarios[i].History; len(h) > 0 {
				d.Scenarios[i].Baseline = &reportfile.BaselineRef{Commit: h[len(h)-1].Commit, Date: h[len(h)-1].Date}
			}
		}
		return d
	}, "### ❌ perfgate: regression (1 of 5 gates regressed)"},
	{"inconclusive", func() *reportfile.Document { return testDocument(inconclusiveVerdict(), 1.08, 0) }, "### ⚠️ perfgate: inconclusive"},
	{"quality", func() *reportfile.Document { return testDocument(qualityVerdict(), 1, 0) }, "### ❌ perfgate: regression"},
	{"identity", func() *reportfile.Document { return testDocument(identityVerdict(), 1, 3) }, "### ✅ perfgate: pass"},
	{"ab", abDocument, "### ❌ perfgate: regression (1 of 6 gates regressed)"},
}

// Each document's markdown starts with the sticky comment's marker and its
// verdict, and fits under the comment's limit uncut; what it says is the
// view's golden (TestReportViewGolden).
func TestMarkdownDocuments(t *testing.T) {
	for _, c := range documentCases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, emitMarkdown(&buf, []*reportfile.Document{c.doc()}, MarkdownOptions{Limit: commentLimit, Marker: "<!-- perfgate:perfgate.yaml -->"}))
			lines := strings.SplitN(buf.String(), "\n", 3)
			assert.Equal(t, "<!-- perfgate:perfgate.yaml -->", lines[0])
			assert.True(t, strings.HasPrefix(lines[1], c.first), "first line %q", lines[1])
			assert.NotContains(t, buf.String(), cutNote, "nothing cut under the limit")
		})
	}
}

func TestMarkdownCharts(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, emitMarkdown(&buf, []*reportfile.Document{documentCases[1].doc()}, MarkdownOptions{}))
	out := buf.String()
	// Two percentile charts and two history charts per compared scenario.
	assert.Equal(t, 8, strings.Count(out, "```mermaid\nxychart-beta\n"))
	assert.Contains(t, out, `    x-axis ["p50", "p90", "p95", "p99", "p99.9"]`)
	assert.Contains(t, out, "    bar [20, 30, 40, 50, 60]\n    line [26, 39, 52, 65, 78]\n", "TTFT: baseline bars, candidate line")
	assert.Contains(t, out, `"0a1b2ce", "this run"]`, "history ends at this run")
	assert.Contains(t, out, "line [50, 51, 52, 50, 51, 52, 50, 51, 52, 50, 51, 52, 65]", "TTFT p99 history, then the candidate's")
	assert.Contains(t, out, "| TTFT | 20.0 → 26.0 (+30.0%) |", "the percentile table")
	assert.Contains(t, out, "[workflow run](https://github.com/acme/serving/actions/runs/99) · commit 0123456")
}

func TestMarkdownMerged(t *testing.T) {
	docs := mergedDocuments()
	a := docs[0]
	var buf bytes.Buffer
	require.NoError(t, emitMarkdown(&buf, docs, MarkdownOptions{Limit: commentLimit}))
	out := buf.String()
	first, _, _ := strings.Cut(out, "\n")
	assert.Equal(t, "### ❌ perfgate: regression in 1 of 3 jobs (exit 1) — worst: llama-3.1-70b · 4×H100 · chat-c16 TTFT p99 +31.2% [+25.0%, +38.1%]", first)
	assert.Equal(t, 3, strings.Count(out, "\n---\n"), "one section per job")
	assert.Contains(t, out, "| ✅ llama-3.1-8b · H100 | pass (2 gates) |")

	buf.Reset()
	require.NoError(t, emitMarkdown(&buf, []*reportfile.Document{a, a}, MarkdownOptions{}))
	assert.True(t, strings.HasPrefix(buf.String(), "### ✅ perfgate: pass (2 jobs)\n"))
}

// bigDocument has so many scenarios that its full report is far over a
// comment's limit.
func bigDocument(scenarios int) *reportfile.Document {
	v := regressionVerdict()
	base := v.Scenarios
	v.Scenarios = nil
	for i := range scenarios {
		s := base[i%len(base)]
		s.Name = fmt.Sprintf("%s-%03d", s.Name, i)
		v.Scenarios = append(v.Scenarios, s)
	}
	return testDocument(v, 1.3, 20)
}

func TestMarkdownLimits(t *testing.T) {
	full := func(d *reportfile.Document) string {
		var buf bytes.Buffer
		require.NoError(t, emitMarkdown(&buf, []*reportfile.Document{d}, MarkdownOptions{}))
		return buf.String()
	}
	marker := "<!-- perfgate:x -->"
	for _, c := range []struct {
		name      string
		doc       *reportfile.Document
		limit     int
		details   bool // the collapsed details survive
		charts    bool // the charts survive
		hardCut   bool
		headlines int // scenario headings that must survive
	}{
		{"details go first", bigDocument(2), len(full(bigDocument(2))) - 1, false, true, false, 2},
		{"then charts", bigDocument(8), 19000, false, false, false, 8},
		{"then examples and charts", bigDocument(60), commentLimit, false, false, false, 60},
		{"then all but the tables", bigDocument(100), commentLimit, false, false, false, 100},
		{"then a cut", bigDocument(400), commentLimit, false, false, true, 1},
		{"tiny", bigDocument(2), 40, false, false, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, emitMarkdown(&buf, []*reportfile.Document{c.doc}, MarkdownOptions{Limit: c.limit, Marker: marker}))
			out := buf.String()
			assert.LessOrEqual(t, len(out), c.limit)
			assert.True(t, strings.HasPrefix(out, marker), "the marker is never cut")
			if c.limit > 200 {
				lines := strings.Split(out, "\n")
				assert.True(t, strings.HasPrefix(lines[1], "### ❌ perfgate: regression"), "the verdict is never cut: %q", lines[1])
				assert.Contains(t, out, cutNote)
			}
			assert.Equal(t, c.details, strings.Contains(out, "<details><summary>All percentiles"))
			assert.Equal(t, c.charts, strings.Contains(out, "```mermaid"))
			assert.GreaterOrEqual(t, strings.Count(out, "#### Scenario"), c.headlines)
			assert.Equal(t, strings.Count(out, "<details>"), strings.Count(out, "</details>"), "no block left open")
			notes := strings.Contains(out, "- **TTFT p99**: significant")
			assert.Equal(t, c.headlines < 100 && c.headlines > 1, notes, "notes are left out only at the last level")
			if c.hardCut {
				assert.Less(t, strings.Count(out, "#### Scenario"), len(c.doc.Verdict.Scenarios))
			}
		})
	}
	var buf bytes.Buffer
	require.NoError(t, emitMarkdown(&buf, []*reportfile.Document{bigDocument(400)}, MarkdownOptions{Limit: summaryLimit}))
	assert.LessOrEqual(t, buf.Len(), summaryLimit)
}

func TestMarkdownEscapesTitlesAndMentions(t *testing.T) {
	d := testDocument(passVerdict(), 1, 0)
	d.Title = "</details><img src=x onerror=alert(1)> @octocat #12"
	d.Verdict.Scenarios[0].Name = "@admin</details>"
	d.Scenarios[0].Name = d.Verdict.Scenarios[0].Name
	d.Verdict.Warnings = []string{"ping @team and close #1 <script>x</script>"}
	var buf bytes.Buffer
	require.NoError(t, emitMarkdown(&buf, []*reportfile.Document{d, d}, MarkdownOptions{}))
	out := buf.String()
	assert.NotRegexp(t, `(^|[^\\])<(img|script)`, out, "HTML only escaped")
	assert.Equal(t, strings.Count(out, "<details>"), strings.Count(out, "</details>"), "only the report's own details blocks close")
	for _, mention := range []string{"@octocat", "@admin", "@team", "#12", "#1 "} {
		assert.NotContains(t, out, mention, "GitHub would link or notify %s", mention)
	}
	assert.Contains(t, out, "\\@\u2060octocat")
	// Mermaid titles keep only plain characters.
	assert.NotContains(t, out, `title "@`)
}

func TestMarkdownNoDocuments(t *testing.T) {
	assert.ErrorIs(t, emitMarkdown(&bytes.Buffer{}, nil, MarkdownOptions{}), errNoDocuments)
}

// unescapedTag is an HTML tag that markdown would read as one: not after a
// backslash.
var unescapedTag = regexp.MustCompile(`(^|[^\\])<img`)

// A unit, an on_inconclusive setting and a percentile's name come from the
// report file like every other text: a change shown in a metric's unit, a
// telemetry change from a baseline of 0, the inconclusive headline, the
// percentile table's header and a chart's axis escape them too.
func TestMarkdownEscapesFigureText(t *testing.T) {
	const evil = "<img src=x onerror=alert(1)>"
	v := inconclusiveVerdict()
	v.OnInconclusive = "fail" + evil
	g := &v.Scenarios[0].Gates[0]
	g.Unit = "ms" + evil
	g.Change = compare.Interval{Estimate: verdictNaN, Lo: verdictNaN, Hi: verdictNaN} // the shift is shown, in its unit
	d := testDocument(v, 1.1, 0)
	d.Scenarios[0].Telemetry = []reportfile.TelemetryRow{{Metric: "gpu_power", Title: "GPU power", Unit: "W" + evil, Baseline: fptr(0), Candidate: fptr(3)}}
	d.Scenarios[0].Latency[0].Candidate.Percentiles[0].Name = "p50" + evil
	d.Scenarios[0].Latency[0].Baseline.Percentiles[0].Name = "p50" + evil

	var doc, verdict bytes.Buffer
	require.NoError(t, emitMarkdown(&doc, []*reportfile.Document{d}, MarkdownOptions{}))
	require.NoError(t, emitVerdictMarkdown(&verdict, v))
	for name, out := range map[string]string{"emitMarkdown": doc.String(), "emitVerdictMarkdown": verdict.String()} {
		if loc := unescapedTag.FindStringIndex(out); loc != nil {
			t.Errorf("%s: unescaped HTML from the report file: …%s…", name, out[max(0, loc[0]-60):min(len(out), loc[1]+40)])
		}
	}
	assert.Contains(t, doc.String(), `on_inconclusive: fail\<img src=x onerror=alert(1)\> → exit 1`, "the setting is shown, escaped")
	assert.Contains(t, doc.String(), `+3.30 [+2.48, +5.80] ms\<img`, "the change keeps its unit, escaped")
}
