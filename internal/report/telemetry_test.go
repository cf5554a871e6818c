package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/result/resulttest"
	"github.com/perfgate/perfgate/internal/stat"
)

func fptr(v float64) *float64 { return &v }

// withTelemetry adds to r what a vLLM engine, NVML and the price said in
// it, every figure growing with k, so that a median is the figure of the
// middle k.
func withTelemetry(r result.Repetition, k float64) result.Repetition {
	return resulttest.WithTelemetry(r, k)
}

func TestSummaryTelemetry(t *testing.T) {
	// Repetitions out of order of their figures: the median is k=1's.
	r := &result.Result{
		Schema:    result.Schema,
		Identity:  result.Identity{PerfgateVersion: "v0.1.0", Target: result.Target{BaseURL: "http://127.0.0.1:8000", Model: "llama"}},
		Telemetry: &result.TelemetryInfo{Engine: result.SourceInfo{Source: "vllm http://127.0.0.1:8000/metrics"}, GPU: result.SourceInfo{Source: "nvml"}},
		Cost:      &result.Price{USDPerGPUHour: 2.5, GPUs: 1},
		Scenarios: []result.ScenarioResult{{Name: "chat", Workload: "synth", Load: result.Load{Type: config.LoadClosed, Concurrency: 16},
			Repetitions: []result.Repetition{withTelemetry(rep(1, 30), 2), withTelemetry(rep(2, 31), 0), withTelemetry(rep(3, 32), 1)}}},
	}
	var buf bytes.Buffer
	require.NoError(t, Summary(&buf, r))
	out := buf.String()
	_, block, ok := strings.Cut(out, "\ntelemetry (median over 3 repetitions)\n")
	require.True(t, ok, "no telemetry block:\n%s", out)
	want := "" +
		"  engine (vllm)  KV-cache peak 82.0% · KV-cache mean 61.0% · prefix-cache hit rate 45.0%\n" +
		"                 running peak 16 · waiting peak 4 · preemptions 3 · server TTFT mean 29.00 ms\n" +
		"                 TTFT overhead 3.50 ms\n" +
		"  GPU (nvml)     memory peak 40500 of 81559 MiB · utilisation 91.0% · power 610 W · 0.410 J/token\n" +
		"                 2.45 tokens/J\n" +
		"  cost           at $2.50 per GPU-hour × 1 GPU · $0.360 per M output tokens\n" +
		"                 $0.125 per M input tokens · $0.410 per M good output tokens\n" +
		"                 $0.155 per M good input tokens\n"
	assert.Equal(t, want, block)
	assert.NotContains(t, out, "unavailable", "every source was read")

	// A repetition without a source: the others' median, saying over how
	// many; the sources that were not read, once per result.
	r.Scenarios[0].Repetitions[0].GPU = nil
	r.Scenarios = append(r.Scenarios, r.Scenarios[0])
	r.Scenarios[1].Name = "chat-2"
	r.Telemetry.GPU = result.SourceInfo{Unavailable: "nvidia-smi: exit status 9\x1b[31m"}
	r.Telemetry.Engine = result.SourceInfo{Unavailable: "off (telemetry.metrics: off)"}
	buf.Reset()
	require.NoError(t, Summary(&buf, r))
	out = buf.String()
	// Repetitions k=0 and k=1 are left: the median is k=0.5's.
	assert.Contains(t, out, "  GPU (nvml)     memory peak 40250 of 81559 MiB (2 of 3) · utilisation 90.5% (2 of 3)")
	assert.Equal(t, 1, strings.Count(out, "GPU telemetry: unavailable (nvidia-smi: exit status 9 [31m)\n"), out)
	assert.True(t, strings.HasSuffix(out, "\n\nengine telemetry: off (telemetry.metrics: off)\nGPU telemetry: unavailable (nvidia-smi: exit status 9 [31m)\n"), out)
	assert.NotContains(t, out, "\x1b")

	// No telemetry, no block and no lines.
	for i := range r.Scenarios {
		for j := range r.Scenarios[i].Repetitions {
			rp := &r.Scenarios[i].Repetitions[j]
			rp.Engine, rp.GPU, rp.Cost = nil, nil, nil
		}
	}
	r.Telemetry, r.Cost = nil, nil
	buf.Reset()
	require.NoError(t, Summary(&buf, r))
	assert.NotContains(t, buf.String(), "telemetry")
	assert.NotContains(t, buf.String(), "GPU")
}

// telemetryVerdict passes, with gates on the GPU memory peak and the cost
// per million output tokens beside the latency gates.
func telemetryVerdict() *compare.Verdict {
	v := passVerdict()
	s := &v.Scenarios[0]
	s.Name = "chat"
	s.Gates = append(s.Gates,
		compare.Gate{
			Metric: "gpu_memory_peak", Title: "GPU memory peak", Unit: "MiB", Better: "lower", Tolerance: "+2 GiB",
			Baseline:  verdictSide(40500, 40000, 41000, 40000, 40500, 41000),
			Candidate: verdictSide(42525, 42000, 43050, 42000, 42525, 43050),
			Shift:     compare.Interval{Estimate: 2025, Lo: 1000, Hi: 3050}, Change: compare.Interval{Estimate: 0.05, Lo: 0.025, Hi: 0.075},
			Confidence: 0.9, P: 0.05, PAdjusted: 0.2, Level: 0.05, Outcome: stat.Pass, Reason: "the 90% interval rules out worse than +2 GiB",
		},
		compare.Gate{
			Metric: "cost_per_mtok", Title: "$ per M output tokens", Unit: "$/Mtok", Better: "lower", Tolerance: "+10%",
			Baseline:  verdictSide(0.36, 0.35, 0.37, 0.35, 0.36, 0.37),
			Candidate: verdictSide(0.378, 0.3675, 0.3885, 0.3675, 0.378, 0.3885),
			Shift:     compare.Interval{Estimate: 0.018, Lo: 0.005, Hi: 0.03}, Change: compare.Interval{Estimate: 0.05, Lo: 0.014, Hi: 0.083},
			Confidence: 0.9, P: 0.05, PAdjusted: 0.2, Level: 0.05, Outcome: stat.Pass, Reason: "the 90% interval rules out worse than +10%",
		})
	v.Scenarios = append(v.Scenarios, compare.Scenario{Name: "batch", NoBaseline: true, CandidateN: 3})
	return v
}

// telemetryResults are a baseline and a candidate whose repetitions carry
// engine, GPU and cost telemetry; the candidate's figures are scale times
// the baseline's, and its scenario batch is new.
func telemetryResults(scale float64) (base, cand *result.Result) {
	mk := func(s float64) *result.Result {
		var reps []result.Repetition
		for i, k := range []float64{2, 0, 1} {
			r := withTelemetry(rep(i+1, 30*s), k)
			r.Engine.KVCachePeak = fptr(*r.Engine.KVCachePeak * s)
			r.Engine.Preemptions = fptr(0)
			r.GPU.MemoryPeakMiB *= s
			r.GPU.PowerMeanW = fptr(*r.GPU.PowerMeanW * s)
			r.Cost.USDPerMOutput *= s
			reps = append(reps, r)
		}
		return &result.Result{Schema: result.Schema,
			Telemetry: &result.TelemetryInfo{Engine: result.SourceInfo{Source: "vllm http://127.0.0.1:8000/metrics"}, GPU: result.SourceInfo{Source: "nvml"}},
			Cost:      &result.Price{USDPerGPUHour: 2.5, GPUs: 1},
			Scenarios: []result.ScenarioResult{{Name: "chat", Repetitions: reps}}}
	}
	base, cand = mk(1), mk(scale)
	cand.Scenarios[0].Repetitions[1].Engine.Preemptions = fptr(2)
	cand.Scenarios[0].Repetitions[2].Engine.Preemptions = fptr(3) // 0, 2, 3: median 2, from 0
	batch := cand.Scenarios[0]
	batch.Name = "batch"
	cand.Scenarios = append(cand.Scenarios, batch)
	return base, cand
}

func telemetryDocument(t *testing.T, v *compare.Verdict, base, cand *result.Result) *reportfile.Document {
	t.Helper()
	d, err := reportfile.New(v, []*result.Result{base}, cand, nil)
	require.NoError(t, err)
	d.Key = "perfgate.yaml"
	return d
}

func TestNewDocumentTelemetry(t *testing.T) {
	base, cand := telemetryResults(1.05)
	d := telemetryDocument(t, telemetryVerdict(), base, cand)
	require.Equal(t, cand.Telemetry, d.TelemetrySources)
	rows := d.Scenarios[0].Telemetry
	byMetric := map[string]reportfile.TelemetryRow{}
	var order []string
	for _, r := range rows {
		byMetric[r.Metric] = r
		order = append(order, r.Metric)
	}
	assert.Equal(t, []string{"kv_cache_peak", "kv_cache_mean", "prefix_cache_hit_rate", "waiting_peak", "preemptions", "server_ttft", "ttft_overhead",
		"gpu_memory_peak", "gpu_utilization", "gpu_power", "energy_per_token", "tokens_per_joule",
		"cost_per_mtok", "cost_per_mtok_input", "cost_per_mtok_goodput", "cost_per_mtok_input_goodput"}, order, "catalogue order")
	mem := byMetric["gpu_memory_peak"]
	assert.Equal(t, reportfile.TelemetryRow{Metric: "gpu_memory_peak", Title: "GPU memory peak", Unit: "MiB", Group: "gpu",
		Baseline: fptr(40500), Candidate: fptr(40500 * 1.05), Gated: true}, mem)
	assert.InDelta(t, 0.82, *byMetric["kv_cache_peak"].Baseline, 1e-12)
	assert.InDelta(t, 0.82*1.05, *byMetric["kv_cache_peak"].Candidate, 1e-12)
	assert.False(t, byMetric["kv_cache_peak"].Gated)
	assert.True(t, byMetric["cost_per_mtok"].Gated)
	assert.Equal(t, 0.0, *byMetric["preemptions"].Baseline)
	assert.Equal(t, 2.0, *byMetric["preemptions"].Candidate, "median of 0, 2, 3")

	// The new scenario has the candidate's side alone.
	for _, r := range d.Scenarios[1].Telemetry {
		assert.Nil(t, r.Baseline, r.Metric)
		assert.NotNil(t, r.Candidate, r.Metric)
		assert.False(t, r.Gated)
	}

	// A source measured in some repetitions: the median of those; in none:
	// no row.
	cand.Scenarios[0].Repetitions[0].GPU = nil
	for i := range base.Scenarios[0].Repetitions {
		base.Scenarios[0].Repetitions[i].Cost = nil
	}
	for i := range cand.Scenarios[0].Repetitions {
		cand.Scenarios[0].Repetitions[i].Cost = nil
	}
	d = telemetryDocument(t, telemetryVerdict(), base, cand)
	byMetric = map[string]reportfile.TelemetryRow{}
	for _, r := range d.Scenarios[0].Telemetry {
		byMetric[r.Metric] = r
	}
	assert.InDelta(t, 40250*1.05, *byMetric["gpu_memory_peak"].Candidate, 1e-9, "k = 0 and 1 left")
	assert.NotContains(t, byMetric, "cost_per_mtok", "no side has a cost")

	// Results from before telemetry: nothing, and the JSON is as before.
	plain := &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{{Name: "chat", Repetitions: []result.Repetition{rep(1, 30)}}}}
	d, err := reportfile.New(telemetryVerdict(), []*result.Result{plain}, plain, nil)
	require.NoError(t, err)
	assert.Nil(t, d.TelemetrySources)
	assert.Empty(t, d.Scenarios[0].Telemetry)
}

// telemetryCases are the reports of a run with telemetry on both sides, and
// of one whose candidate had no GPU source.
var telemetryCases = []struct {
	name string
	doc  func(t *testing.T) *reportfile.Document
}{
	{"telemetry", func(t *testing.T) *reportfile.Document {
		base, cand := telemetryResults(1.05)
		return telemetryDocument(t, telemetryVerdict(), base, cand)
	}},
	{"telemetry-nogpu", func(t *testing.T) *reportfile.Document {
		base, cand := telemetryResults(1.05)
		for i := range cand.Scenarios {
			for j := range cand.Scenarios[i].Repetitions {
				cand.Scenarios[i].Repetitions[j].GPU = nil
			}
		}
		cand.Telemetry.GPU = result.SourceInfo{Unavailable: "no GPU tool: NVML: libnvidia-ml.so.1 not found; nvidia-smi: not on PATH <b>|</b>"}
		// Without a GPU source no gate can test GPU memory.
		v := telemetryVerdict()
		gates := v.Scenarios[0].Gates
		v.Scenarios[0].Gates = slices.DeleteFunc(gates, func(g compare.Gate) bool { return g.Metric == "gpu_memory_peak" })
		return telemetryDocument(t, v, base, cand)
	}},
}

func TestTelemetryReport(t *testing.T) {
	for _, c := range telemetryCases {
		t.Run(c.name, func(t *testing.T) {
			d := c.doc(t)
			var md, text bytes.Buffer
			require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{Limit: commentLimit}))
			require.NoError(t, emitText(&text, []*reportfile.Document{d}))
			out := md.String()
			assert.Equal(t, 2, strings.Count(out, "<details><summary>Engine, GPU and cost</summary>"), "one table per scenario")
			assert.Equal(t, strings.Count(out, "<details>"), strings.Count(out, "</details>"))
			if c.name == "telemetry-nogpu" {
				assert.Equal(t, 1, strings.Count(out, "GPU telemetry: unavailable"), "said once, not per scenario")
				assert.Equal(t, 1, strings.Count(text.String(), "GPU telemetry: unavailable"), "said once, not per scenario")
				assert.NotContains(t, out, "<b>", "the reason is escaped")
			} else {
				assert.NotContains(t, out, "unavailable")
			}
		})
	}
}

func TestTelemetryMarkdownLimits(t *testing.T) {
	d := telemetryCases[0].doc(t)
	var full bytes.Buffer
	require.NoError(t, emitMarkdown(&full, []*reportfile.Document{d}, MarkdownOptions{}))
	require.Contains(t, full.String(), "<details><summary>Engine, GPU and cost</summary>")
	var cut bytes.Buffer
	require.NoError(t, emitMarkdown(&cut, []*reportfile.Document{d}, MarkdownOptions{Limit: full.Len() - 1}))
	assert.NotContains(t, cut.String(), "Engine, GPU and cost", "dropped with the other collapsed details")
	assert.Contains(t, cut.String(), "```mermaid", "the charts stay")
}

func TestTelemetryDocumentRoundTrip(t *testing.T) {
	dir := t.TempDir()
	d := telemetryCases[1].doc(t)
	first := filepath.Join(dir, "a.json")
	require.NoError(t, reportfile.Write(first, d))
	back, err := reportfile.Read(first)
	require.NoError(t, err)
	assert.Equal(t, d.TelemetrySources, back.TelemetrySources)
	assert.Equal(t, d.Scenarios[0].Telemetry, back.Scenarios[0].Telemetry)
	second := filepath.Join(dir, "b.json")
	require.NoError(t, reportfile.Write(second, back))
	a, err := os.ReadFile(first)
	require.NoError(t, err)
	b, err := os.ReadFile(second)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b), "a report read back writes the same bytes")
	assert.Contains(t, string(a), `"telemetry_sources": {`)
	assert.Contains(t, string(a), `"telemetry": [`)
}

func TestTelemetryHTML(t *testing.T) {
	d := telemetryCases[1].doc(t)
	page := renderHTML(t, d)
	htmlHas(t, page, "<h4>Engine, GPU and cost</h4>")
	htmlHas(t, page, "<tr><td>GPU memory peak (MiB)</td><td class=\"num\">40500</td><td class=\"num\">—</td><td class=\"num\">—</td><td></td></tr>")
	htmlHas(t, page, "<tr><td>$ per M output tokens ($/Mtok)</td><td class=\"num\">0.360</td><td class=\"num\">0.378</td><td class=\"num\">&#43;5.0%</td><td>gated</td></tr>")
	assert.Equal(t, 1, strings.Count(page, "GPU telemetry: unavailable"))
	htmlHas(t, page, "not on PATH &lt;b&gt;|&lt;/b&gt;")
	htmlHasNot(t, page, "<b>|")
}

func TestTelemetryNumbers(t *testing.T) {
	for _, c := range []struct {
		x    float64
		unit string
		want string
	}{
		{71234.4, "MiB", "71234"},
		{0.0352, "$/Mtok", "0.0352"},
		{1.2345, "$/Mtok", "1.23"},
		{4, "count", "4"},
		{2.5, "count", "2.50"},
		{612.3, "W", "612"},
		{0.4123, "J/tok", "0.412"},
		{0.825, "%", "82.50%"},
	} {
		if got := verdictValue(c.x, c.unit); got != c.want {
			t.Errorf("verdictValue(%v, %q) = %q, want %q", c.x, c.unit, got, c.want)
		}
	}
	for _, c := range []struct {
		base, cand float64
		unit, want string
	}{
		{0, 3, "count", "+3"},
		{0, 0.005, "%", "+0.50 pts"},
		{0.8, 0.85, "%", "+5.00 pts"},
		{0.5, 0.5, "%", "+0.00 pts"},
		{0, 12.5, "MiB", "+12.5 MiB"},
		{0.36, 0.378, "$/Mtok", "+5.0%"},
		{-2, -1, "ms", "+50.0%"},
		{0, 0, "count", "+0.0%"},
	} {
		r := reportfile.TelemetryRow{Unit: c.unit, Baseline: fptr(c.base), Candidate: fptr(c.cand)}
		if got := telemetryChange(r).raw(); got != c.want {
			t.Errorf("telemetryChange(%v → %v %s) = %q, want %q", c.base, c.cand, c.unit, got, c.want)
		}
	}
	assert.Equal(t, "—", telemetryChange(reportfile.TelemetryRow{Unit: "MiB", Candidate: fptr(1)}).raw())
}
