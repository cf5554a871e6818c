package telemetry

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
)

// llamacppCapture is a page captured from a real llama-server (see
// testdata/captures/README.md at the repository root). The other engines' pages under testdata/ are
// written to follow their documented names.
const llamacppCapture = "../../testdata/captures/llamacpp/metrics.prom"

var t0 = time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)

func fixturePath(name string) string {
	if name == "llamacpp" {
		return llamacppCapture
	}
	return filepath.Join("testdata", name+".prom")
}

// readPage parses a fixture; a missing fixture fails the test.
func readPage(t *testing.T, name string, at time.Time) *Page {
	t.Helper()
	f, err := os.Open(fixturePath(name))
	require.NoError(t, err, "fixture %s is missing", name)
	defer f.Close()
	p, err := ParsePage(f, at)
	require.NoError(t, err, "ParsePage(%s)", name)
	return p
}

func parseText(t *testing.T, text string) *Page {
	t.Helper()
	p, err := ParsePage(strings.NewReader(text), t0)
	require.NoError(t, err)
	return p
}

// window folds pages with the adapter Detect picks from the first.
func window(t *testing.T, pages ...*Page) *EngineWindow {
	t.Helper()
	a, ok := Detect(pages[0])
	require.True(t, ok, "Detect found no engine")
	w := NewEngineWindow(a)
	for _, p := range pages {
		w.Add(p)
	}
	return w
}

func ptr(v float64) *float64 { return &v }

// assertFigure checks an optional figure: want nil means absent.
func assertFigure(t *testing.T, name string, want, got *float64) {
	t.Helper()
	if want == nil {
		assert.Nil(t, got, "%s = %v, want absent", name, got)
		return
	}
	if assert.NotNil(t, got, "%s absent, want %v", name, *want) {
		assert.InDelta(t, *want, *got, 1e-9, "%s = %v, want %v", name, *got, *want)
	}
}

func assertLatency(t *testing.T, name string, want, got *result.ServerLatency) {
	t.Helper()
	if want == nil {
		assert.Nil(t, got, "%s = %+v, want absent", name, got)
		return
	}
	if !assert.NotNil(t, got, "%s absent, want %+v", name, *want) {
		return
	}
	assert.InDelta(t, want.Count, got.Count, 1e-9, "%s count", name)
	assert.InDelta(t, want.Mean, got.Mean, 1e-6, "%s mean", name)
	assert.InDelta(t, want.P50, got.P50, 1e-6, "%s p50", name)
	assert.InDelta(t, want.P90, got.P90, 1e-6, "%s p90", name)
	assert.InDelta(t, want.P99, got.P99, 1e-6, "%s p99", name)
}

func TestParsePageFixturesAndDetect(t *testing.T) {
	for _, tc := range []struct {
		fixture, adapter string
		// family is one the page must have, with its type.
		family string
		typ    dto.MetricType
	}{
		{"vllm-metrics-1", "vllm", "vllm:num_preemptions_total", dto.MetricType_COUNTER},
		{"vllm-metrics-2", "vllm", "vllm:time_to_first_token_seconds", dto.MetricType_HISTOGRAM},
		{"sglang-metrics-1", "sglang", "sglang:token_usage", dto.MetricType_GAUGE},
		{"sglang-metrics-2", "sglang", "sglang:num_retracted_requests_total", dto.MetricType_COUNTER},
		{"tgi-metrics-1", "tgi", "tgi_request_mean_time_per_token_duration", dto.MetricType_HISTOGRAM},
		{"tgi-metrics-2", "tgi", "tgi_queue_size", dto.MetricType_GAUGE},
		{"llamacpp", "llamacpp", "llamacpp:requests_processing", dto.MetricType_GAUGE},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			p := readPage(t, tc.fixture, t0)
			assert.Equal(t, t0, p.At)
			f := p.Families[tc.family]
			require.NotNil(t, f, "page has no family %s", tc.family)
			assert.Equal(t, tc.typ, f.GetType(), "%s type", tc.family)
			a, ok := Detect(p)
			require.True(t, ok, "Detect(%s) found no engine", tc.fixture)
			assert.Equal(t, tc.adapter, a.Name, "Detect(%s)", tc.fixture)
		})
	}
}

func TestDetectUnrelatedPage(t *testing.T) {
	for name, text := range map[string]string{
		"empty": "",
		"go process": `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 12
# HELP process_open_fds Number of open file descriptors.
# TYPE process_open_fds gauge
process_open_fds 9
`,
		"dcgm": `# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} 87
`,
	} {
		t.Run(name, func(t *testing.T) {
			a, ok := Detect(parseText(t, text))
			assert.False(t, ok, "Detect = %v, want none", a)
			assert.Nil(t, a)
		})
	}
}

func TestParsePageWithoutFinalNewline(t *testing.T) {
	p := parseText(t, "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 2")
	f := p.Families["llamacpp:requests_processing"]
	require.NotNil(t, f)
	assert.Equal(t, 2.0, f.GetMetric()[0].GetGauge().GetValue())
}

func TestDetectPrefersTheEngineWithMostMetrics(t *testing.T) {
	// A page that passes one vllm: gauge through beside SGLang's own.
	p := parseText(t, `vllm:num_requests_running 1
sglang:num_running_reqs 3
sglang:num_queue_reqs 0
`)
	a, ok := Detect(p)
	require.True(t, ok)
	assert.Equal(t, "sglang", a.Name)
}

func TestParsePageMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{
			name: "value not a number",
			text: "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 1\nvllm:num_requests_waiting{model_name=\"m\"} many\n",
			want: []string{"line 3", `vllm:num_requests_waiting{model_name=\"m\"} many`},
		},
		{
			name: "unterminated label value",
			text: "# HELP x An x.\n# TYPE x gauge\nx{a=\"b} 1\n",
			want: []string{"parse metrics page", "line 3", `x{a=\"b} 1`},
		},
		{
			name: "second TYPE line",
			text: "# TYPE x gauge\nx 1\n# TYPE x counter\nx 2\n",
			want: []string{"line 3", "# TYPE x counter"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePage(strings.NewReader(tc.text), t0)
			require.Error(t, err, "ParsePage = %v, want an error", p)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestEngineWindowVLLM(t *testing.T) {
	p1 := readPage(t, "vllm-metrics-1", t0)
	p2 := readPage(t, "vllm-metrics-2", t0.Add(5*time.Second))
	got := window(t, p1, p2).Summary(95.5, true)
	require.NotNil(t, got)

	// Worked by hand from the two pages (data parallel: engine 0 and 1).
	assert.Equal(t, "vllm", got.Adapter)
	assert.Equal(t, 2, got.Scrapes)
	// KV: the fuller engine at each page, 0.31 then 0.62.
	assertFigure(t, "KVCachePeak", ptr(0.62), got.KVCachePeak)
	assertFigure(t, "KVCacheMean", ptr((0.31+0.62)/2), got.KVCacheMean)
	// Running 12+10 then 30+28; waiting 0+1 then 4+3.
	assertFigure(t, "RunningPeak", ptr(58), got.RunningPeak)
	assertFigure(t, "WaitingPeak", ptr(7), got.WaitingPeak)
	// Preemptions 3→7 and 2→2.
	assertFigure(t, "Preemptions", ptr(4), got.Preemptions)
	// Hits (63000-48000)+(52000-40000) = 27000 over queries
	// (152000-120000)+(128000-100000) = 60000.
	assertFigure(t, "PrefixCacheHitRate", ptr(27000.0/60000), got.PrefixCacheHitRate)
	// TTFT: 21+19 = 40 requests, sum (42.89-41.37)+(39.40-38.02) = 2.9 s.
	// The window's requests by bucket: (0.02,0.04] 4, (0.04,0.06] 10,
	// (0.06,0.08] 12, (0.08,0.1] 8, (0.1,0.25] 6.
	// p50: rank 20 in (0.06,0.08]: 60 + 20*(20-14)/12 = 70 ms.
	// p90: rank 36 in (0.1,0.25]: 100 + 150*(36-34)/6 = 150 ms.
	// p99: rank 39.6 in (0.1,0.25]: 100 + 150*(39.6-34)/6 = 240 ms.
	assertLatency(t, "ServerTTFT", &result.ServerLatency{Count: 40, Mean: 72.5, P50: 70, P90: 150, P99: 240}, got.ServerTTFT)
	assertFigure(t, "TTFTOverheadMS", ptr(95.5-72.5), got.TTFTOverheadMS)
	// ITL: 1000+900 gaps, sum (1721.75-1702.25)+(1665.6-1648.5) = 36.6 s;
	// 1300 in (0.01,0.025], 600 in (0.025,0.05].
	// p90: rank 1710 in (0.025,0.05]: 25 + 25*(1710-1300)/600.
	assertLatency(t, "ServerITL", &result.ServerLatency{
		Count: 1900, Mean: 36.6 / 1900 * 1000,
		P50: 10 + 15*950.0/1300, P90: 25 + 25*410.0/600, P99: 25 + 25*(1881-1300.0)/600,
	}, got.ServerITL)
}

func TestEngineWindowOtherEngines(t *testing.T) {
	for _, tc := range []struct {
		engine string
		want   result.EngineTelemetry
	}{
		{
			engine: "sglang",
			want: result.EngineTelemetry{
				Adapter: "sglang", Scrapes: 2,
				KVCachePeak: ptr(0.78), KVCacheMean: ptr((0.52 + 0.78) / 2),
				RunningPeak: ptr(64), WaitingPeak: ptr(9),
				// Cached tokens 561200-505200 over prompt tokens
				// 922000-842000, not the gauge (0.61, 0.67).
				PrefixCacheHitRate: ptr(56000.0 / 80000),
				// The retraction counter 6→9, not the pid-labelled gauge.
				Preemptions: ptr(3),
				// 20 requests, +6 s: 5 in (0.1,0.2], 10 in (0.2,0.4], 5 in
				// (0.4,0.6]; p50 rank 10: 200 + 200*5/10; p90 rank 18:
				// 400 + 200*3/5; p99 rank 19.8: 400 + 200*4.8/5.
				ServerTTFT: &result.ServerLatency{Count: 20, Mean: 300, P50: 300, P90: 520, P99: 592},
				// 2000 tokens, +38 s: 1500 in (0.015,0.02], 500 in
				// (0.02,0.025].
				ServerITL: &result.ServerLatency{
					Count: 2000, Mean: 19,
					P50: 15 + 5*1000.0/1500, P90: 20 + 5*300.0/500, P99: 20 + 5*480.0/500,
				},
				TTFTOverheadMS: ptr(320 - 300),
			},
		},
		{
			engine: "tgi",
			want: result.EngineTelemetry{
				Adapter: "tgi", Scrapes: 2,
				RunningPeak: ptr(24), WaitingPeak: ptr(5),
				// 10 requests' mean time per token, +0.25 s: 6 in
				// (b12, b13], 4 in (b13, b14], b_k = 0.1 ms * 1.5^(k+1).
				ServerITL: &result.ServerLatency{
					Count: 10, Mean: 25,
					P50: tgiBound(12) + (tgiBound(13)-tgiBound(12))*5/6,
					P90: tgiBound(13) + (tgiBound(14)-tgiBound(13))*3/4,
					P99: tgiBound(13) + (tgiBound(14)-tgiBound(13))*3.9/4,
				},
				// No TTFT histogram, so no overhead either.
			},
		},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			p1 := readPage(t, tc.engine+"-metrics-1", t0)
			p2 := readPage(t, tc.engine+"-metrics-2", t0.Add(5*time.Second))
			got := window(t, p1, p2).Summary(320, true)
			require.NotNil(t, got)
			assertTelemetry(t, &tc.want, got)
		})
	}
}

// tgiBound is TGI's k-th histogram bound in milliseconds, computed as TGI
// does: 0.1 ms times 1.5, k+1 times.
func tgiBound(k int) float64 {
	v := 0.0001
	for range k + 1 {
		v *= 1.5
	}
	return v * 1000
}

func assertTelemetry(t *testing.T, want, got *result.EngineTelemetry) {
	t.Helper()
	assert.Equal(t, want.Adapter, got.Adapter, "Adapter")
	assert.Equal(t, want.Scrapes, got.Scrapes, "Scrapes")
	assertFigure(t, "KVCachePeak", want.KVCachePeak, got.KVCachePeak)
	assertFigure(t, "KVCacheMean", want.KVCacheMean, got.KVCacheMean)
	assertFigure(t, "RunningPeak", want.RunningPeak, got.RunningPeak)
	assertFigure(t, "WaitingPeak", want.WaitingPeak, got.WaitingPeak)
	assertFigure(t, "PrefixCacheHitRate", want.PrefixCacheHitRate, got.PrefixCacheHitRate)
	assertFigure(t, "Preemptions", want.Preemptions, got.Preemptions)
	assertLatency(t, "ServerTTFT", want.ServerTTFT, got.ServerTTFT)
	assertLatency(t, "ServerITL", want.ServerITL, got.ServerITL)
	assertFigure(t, "TTFTOverheadMS", want.TTFTOverheadMS, got.TTFTOverheadMS)
}

func TestEngineWindowOnePage(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    result.EngineTelemetry
	}{
		{
			// Gauges only; counters and histograms need two pages.
			fixture: "vllm-metrics-1",
			want: result.EngineTelemetry{
				Adapter: "vllm", Scrapes: 1,
				KVCachePeak: ptr(0.31), KVCacheMean: ptr(0.31),
				RunningPeak: ptr(22), WaitingPeak: ptr(1),
			},
		},
		{
			// One page: the hit-rate gauge stands in for the counters.
			fixture: "sglang-metrics-1",
			want: result.EngineTelemetry{
				Adapter: "sglang", Scrapes: 1,
				KVCachePeak: ptr(0.52), KVCacheMean: ptr(0.52),
				RunningPeak: ptr(40), WaitingPeak: ptr(2),
				PrefixCacheHitRate: ptr(0.61),
			},
		},
		{
			// The real capture: this build has no KV-cache gauge.
			fixture: "llamacpp",
			want: result.EngineTelemetry{
				Adapter: "llamacpp", Scrapes: 1,
				RunningPeak: ptr(0), WaitingPeak: ptr(0),
			},
		},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			got := window(t, readPage(t, tc.fixture, t0)).Summary(80, true)
			require.NotNil(t, got)
			assertTelemetry(t, &tc.want, got)
		})
	}
}

func TestEngineWindowLlamaCppTwoPages(t *testing.T) {
	p := readPage(t, "llamacpp", t0)
	got := window(t, p, p).Summary(80, true)
	require.NotNil(t, got)
	assertTelemetry(t, &result.EngineTelemetry{
		Adapter: "llamacpp", Scrapes: 2, RunningPeak: ptr(0), WaitingPeak: ptr(0),
	}, got)
}

func TestEngineWindowNoPages(t *testing.T) {
	a, ok := Detect(readPage(t, "vllm-metrics-1", t0))
	require.True(t, ok)
	w := NewEngineWindow(a)
	assert.Nil(t, w.Summary(80, true))
	w.Add(nil)
	assert.Nil(t, w.Summary(80, true), "a nil page is not a page")
}

func TestEngineWindowWithoutClientTTFT(t *testing.T) {
	got := window(t, readPage(t, "vllm-metrics-1", t0), readPage(t, "vllm-metrics-2", t0)).Summary(0, false)
	require.NotNil(t, got)
	assert.NotNil(t, got.ServerTTFT)
	assert.Nil(t, got.TTFTOverheadMS, "overhead without a client TTFT")
}

// vllmPage is a small vLLM page with one engine's counters and a TTFT
// histogram with buckets 0.1, 0.2 and +Inf.
func vllmPage(t *testing.T, extra string, preempt, queries, hits float64, b1, b2, count, sum float64) *Page {
	t.Helper()
	var b strings.Builder
	b.WriteString("# TYPE vllm:num_preemptions_total counter\n")
	b.WriteString(fmtLine("vllm:num_preemptions_total", `engine="0"`, preempt))
	b.WriteString("# TYPE vllm:prefix_cache_queries_total counter\n")
	b.WriteString(fmtLine("vllm:prefix_cache_queries_total", `engine="0"`, queries))
	b.WriteString("# TYPE vllm:prefix_cache_hits_total counter\n")
	b.WriteString(fmtLine("vllm:prefix_cache_hits_total", `engine="0"`, hits))
	b.WriteString("# TYPE vllm:time_to_first_token_seconds histogram\n")
	b.WriteString(fmtLine("vllm:time_to_first_token_seconds_bucket", `engine="0",le="0.1"`, b1))
	b.WriteString(fmtLine("vllm:time_to_first_token_seconds_bucket", `engine="0",le="0.2"`, b2))
	b.WriteString(fmtLine("vllm:time_to_first_token_seconds_bucket", `engine="0",le="+Inf"`, count))
	b.WriteString(fmtLine("vllm:time_to_first_token_seconds_sum", `engine="0"`, sum))
	b.WriteString(fmtLine("vllm:time_to_first_token_seconds_count", `engine="0"`, count))
	b.WriteString(extra)
	return parseText(t, b.String())
}

func fmtLine(name, labels string, v float64) string {
	return name + "{" + labels + "} " + num(v) + "\n"
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func TestEngineWindowCounterReset(t *testing.T) {
	before := vllmPage(t, "", 50, 1000, 400, 60, 90, 100, 12)
	// The engine restarted between the pages: every counter is lower.
	after := vllmPage(t, "", 2, 300, 150, 1, 3, 4, 0.5)
	got := window(t, before, after).Summary(0, false)
	require.NotNil(t, got)
	assertFigure(t, "Preemptions", ptr(2), got.Preemptions)
	assertFigure(t, "PrefixCacheHitRate", ptr(150.0/300), got.PrefixCacheHitRate)
	// 1 in (0,0.1], 2 in (0.1,0.2], 1 above; p50 rank 2: 100 + 100*1/2;
	// p90 rank 3.6 falls in +Inf: the last finite bound.
	assertLatency(t, "ServerTTFT", &result.ServerLatency{Count: 4, Mean: 125, P50: 150, P90: 200, P99: 200}, got.ServerTTFT)
}

func TestEngineWindowSeriesCreatedInWindow(t *testing.T) {
	before := vllmPage(t, "", 5, 1000, 400, 60, 90, 100, 12)
	// A second engine's series appear only on the later page.
	after := vllmPage(t, `vllm:num_preemptions_total{engine="1"} 3
vllm:prefix_cache_queries_total{engine="1"} 200
vllm:prefix_cache_hits_total{engine="1"} 100
`, 6, 1300, 450, 60, 90, 100, 12)
	got := window(t, before, after).Summary(0, false)
	require.NotNil(t, got)
	assertFigure(t, "Preemptions", ptr(1+3), got.Preemptions)
	assertFigure(t, "PrefixCacheHitRate", ptr((50.0+100)/(300+200)), got.PrefixCacheHitRate)
	assert.Nil(t, got.ServerTTFT, "no request finished its first token in the window")
}

func TestEngineWindowNoPrefixLookups(t *testing.T) {
	p := vllmPage(t, "", 5, 1000, 400, 60, 90, 100, 12)
	got := window(t, p, p).Summary(0, false)
	require.NotNil(t, got)
	assert.Nil(t, got.PrefixCacheHitRate, "no lookups in the window: no rate")
	assertFigure(t, "Preemptions", ptr(0), got.Preemptions)
}

func TestEngineWindowOlderVLLMNames(t *testing.T) {
	page := func(kv, rate, itlCount, itlSum float64) *Page {
		return parseText(t, `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 3
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="m"} `+num(kv)+`
# TYPE vllm:gpu_prefix_cache_hit_rate gauge
vllm:gpu_prefix_cache_hit_rate{model_name="m"} `+num(rate)+`
# TYPE vllm:time_per_output_token_seconds histogram
vllm:time_per_output_token_seconds_bucket{model_name="m",le="0.01"} 0
vllm:time_per_output_token_seconds_bucket{model_name="m",le="0.05"} `+num(itlCount)+`
vllm:time_per_output_token_seconds_bucket{model_name="m",le="+Inf"} `+num(itlCount)+`
vllm:time_per_output_token_seconds_sum{model_name="m"} `+num(itlSum)+`
vllm:time_per_output_token_seconds_count{model_name="m"} `+num(itlCount)+`
`)
	}
	got := window(t, page(0.2, 0.5, 10, 0.2), page(0.4, 0.7, 30, 0.8)).Summary(0, false)
	require.NotNil(t, got)
	assertTelemetry(t, &result.EngineTelemetry{
		Adapter: "vllm", Scrapes: 2,
		KVCachePeak: ptr(0.4), KVCacheMean: ptr(0.3),
		RunningPeak:        ptr(3),
		PrefixCacheHitRate: ptr(0.6),
		// 20 gaps in (10, 50] ms, +0.6 s.
		ServerITL: &result.ServerLatency{Count: 20, Mean: 30, P50: 30, P90: 46, P99: 49.6},
	}, got)
}

func TestEngineBucketQuantile(t *testing.T) {
	inf := math.Inf(1)
	b := []bucket{{0.1, 10}, {0.2, 30}, {0.5, 40}, {inf, 50}}
	for _, tc := range []struct {
		name    string
		q       float64
		buckets []bucket
		want    float64
	}{
		{"first bucket from 0", 0.05, b, 0.1 * 2.5 / 10},
		{"edge of first bucket", 0.2, b, 0.1},
		{"middle bucket", 0.5, b, 0.1 + 0.1*15/20},
		{"third bucket", 0.7, b, 0.2 + 0.3*5/10},
		{"in +Inf: last finite bound", 0.9, b, 0.5},
		{"q=1 in +Inf", 1, b, 0.5},
		{"all in +Inf", 0.5, []bucket{{0.1, 0}, {inf, 4}}, 0.1},
		{"negative first bound", 0.5, []bucket{{-1, 5}, {0, 8}, {inf, 8}}, -1},
		{"empty buckets skipped", 0.5, []bucket{{1, 0}, {2, 0}, {3, 4}, {inf, 4}}, 2.5},
		{"no observations", 0.5, []bucket{{0.1, 0}, {inf, 0}}, math.NaN()},
		{"no finite bucket", 0.5, []bucket{{inf, 4}}, math.NaN()},
		{"no +Inf bucket", 0.5, []bucket{{0.1, 2}, {0.2, 4}}, math.NaN()},
		{"q below 0", -0.1, b, math.Inf(-1)},
		{"q above 1", 1.1, b, inf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := bucketQuantile(tc.q, tc.buckets)
			if math.IsNaN(tc.want) {
				assert.True(t, math.IsNaN(got), "bucketQuantile(%v) = %v, want NaN", tc.q, got)
				return
			}
			if math.IsInf(tc.want, 0) {
				assert.Equal(t, tc.want, got, "bucketQuantile(%v)", tc.q)
				return
			}
			assert.InDelta(t, tc.want, got, 1e-12, "bucketQuantile(%v) = %v, want %v", tc.q, got, tc.want)
		})
	}
}

func TestEngineMergeBuckets(t *testing.T) {
	inf := math.Inf(1)
	got := mergeBuckets([][]bucket{
		{{0.1, 1}, {0.5, 4}, {inf, 5}},
		{{0.2, 2}, {0.5, 3}, {inf, 3}},
	})
	assert.Equal(t, []bucket{{0.1, 1}, {0.2, 3}, {0.5, 7}, {inf, 8}}, got)
	// A count that fell (a reset inside one series) is made monotonic.
	got = mergeBuckets([][]bucket{{{0.1, 5}, {0.2, 3}, {inf, 6}}})
	assert.Equal(t, []bucket{{0.1, 5}, {0.2, 5}, {inf, 6}}, got)
}

func TestEngineScraper(t *testing.T) {
	page, err := os.ReadFile(fixturePath("vllm-metrics-1"))
	require.NoError(t, err)
	var accept string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		accept = r.Header.Get("Accept")
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(page)
	})
	mux.HandleFunc("GET /llama/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotImplemented)
		_, _ = w.Write([]byte(`{"error":{"code":501,"message":"This server does not support metrics endpoint. Start it with ` + "`--metrics`" + `","type":"not_supported_error"}}`))
	})
	mux.HandleFunc("GET /busy/metrics", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "loading model", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("GET /bad/metrics", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("vllm:num_requests_running 1\nvllm:num_requests_waiting ?\n"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	at := t0.Add(time.Minute)
	now := func() time.Time { return at }

	t.Run("200", func(t *testing.T) {
		s := &EngineScraper{URL: srv.URL + "/metrics", Client: srv.Client(), Now: now}
		p, err := s.Scrape(context.Background())
		require.NoError(t, err)
		assert.Equal(t, at, p.At)
		assert.True(t, strings.HasPrefix(accept, "text/plain"), "Accept = %q, want the text format", accept)
		a, ok := Detect(p)
		require.True(t, ok)
		assert.Equal(t, "vllm", a.Name)
	})
	t.Run("default client and clock", func(t *testing.T) {
		s := &EngineScraper{URL: srv.URL + "/metrics"}
		before := time.Now()
		p, err := s.Scrape(context.Background())
		require.NoError(t, err)
		assert.False(t, p.At.Before(before), "At = %v, before the scrape began (%v)", p.At, before)
	})
	for _, tc := range []struct {
		name, path string
		want       []string
		notWant    []string
	}{
		{"404", "/nothing/metrics", []string{srv.URL + "/nothing/metrics", "404", "--metrics", "--enable-metrics", "by default"}, nil},
		{"llama.cpp without --metrics", "/llama/metrics", []string{"501", "does not support metrics endpoint", "--enable-metrics"}, nil},
		{"503", "/busy/metrics", []string{srv.URL + "/busy/metrics", "503", "loading model"}, []string{"--enable-metrics"}},
		{"malformed page", "/bad/metrics", []string{srv.URL + "/bad/metrics", "line 2", "vllm:num_requests_waiting ?"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &EngineScraper{URL: srv.URL + tc.path, Client: srv.Client(), Now: now}
			p, err := s.Scrape(context.Background())
			require.Error(t, err, "Scrape = %v, want an error", p)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			for _, w := range tc.notWant {
				assert.NotContains(t, err.Error(), w)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s := &EngineScraper{URL: srv.URL + "/metrics", Client: srv.Client()}
		_, err := s.Scrape(ctx)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestEngineScraperSimulator(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.StepBase = 2 * time.Millisecond
	cfg.PerSeq = 0
	cfg.PerPrefillToken = 0
	cfg.Jitter = 0
	s, err := sim.Start(context.Background(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	sc := &EngineScraper{URL: s.URL() + "/metrics"}

	first, err := sc.Scrape(context.Background())
	require.NoError(t, err)
	a, ok := Detect(first)
	require.True(t, ok)
	assert.Equal(t, "vllm", a.Name)

	for range 2 {
		resp, err := http.Post(s.URL()+"/v1/completions", "application/json",
			strings.NewReader(`{"prompt":"`+strings.Repeat("lorem ipsum ", 24)+`","max_tokens":3}`))
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	last, err := sc.Scrape(context.Background())
	require.NoError(t, err)

	w := NewEngineWindow(a)
	w.Add(first)
	w.Add(last)
	got := w.Summary(50, true)
	require.NotNil(t, got)
	assert.Equal(t, "vllm", got.Adapter)
	assert.NotNil(t, got.KVCachePeak, "the simulator's KV-cache gauge")
	assert.NotNil(t, got.RunningPeak)
	assertFigure(t, "Preemptions", ptr(0), got.Preemptions) // the simulator never preempts
	require.NotNil(t, got.ServerTTFT)
	assert.Equal(t, 2.0, got.ServerTTFT.Count, "one first token per request")
	require.NotNil(t, got.ServerITL)
	assert.Equal(t, 4.0, got.ServerITL.Count, "two gaps per three-token request")
	require.NotNil(t, got.PrefixCacheHitRate)
	assert.Greater(t, *got.PrefixCacheHitRate, 0.0, "the second prompt repeats the first")
	require.NotNil(t, got.TTFTOverheadMS)
	assert.InDelta(t, 50-got.ServerTTFT.Mean, *got.TTFTOverheadMS, 1e-9)
}
