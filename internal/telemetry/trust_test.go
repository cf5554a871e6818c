package telemetry

// Tests of issue 14 for telemetry: nothing a server sends panics, hangs or
// exhausts perfgate; a redirect is refused; a figure that cannot be true is
// refused, not averaged.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/hostile"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
)

// noPanic runs f and fails the test if it panics.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s panicked: %v", what, r)
		}
	}()
	f()
}

// TestParsePageNeverPanics: every shape that crashed or fooled Prometheus's
// text parser (a line that begins with "{" and names no metric) is an error
// that names the line; the UTF-8 form that names its metric inside the
// braces is read. On main "{}" panicked (nil pointer in expfmt's
// startLabelName), and "x 1\n{} 2" rewrote x to 2.
func TestParsePageNeverPanics(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		wantErr    string // "" for a page that parses
		family     string // for a page that parses, the family it has
		value      float64
	}{
		{"json object", "{}", "line 1", "", 0},
		{"json object, newline", "{}\n", "line 1", "", 0},
		{"blank braces", " \t{ }\n", "line 1", "", 0},
		{"after TYPE", "# TYPE x gauge\n{}\n", "line 2", "", 0},
		{"after a sample", "x 1\n{} 2\n", "line 2", "", 0},
		{"labels with no name", "{a=\"b\"} 1\n", "line 1", "", 0},
		{"labels with no name after a sample", "x{a=\"1\"} 1\n{b=\"2\"} 2\n", "line 2", "", 0},
		{"quoted label first", "x 1\n{\"a\"=\"b\"} 2\n", "line 2", "", 0},
		{"json", `{"vllm:num_requests_running": 1}`, "line 1", "", 0},
		{"json array", "[1, 2]", "line 1", "", 0},
		{"unterminated quote", "{\"x} 1\n", "line 1", "", 0},
		{"quoted name", "{\"vllm:num_requests_running\"} 3\n", "", "vllm:num_requests_running", 3},
		{"quoted name and labels", "{\"vllm:num_requests_running\",model_name=\"m\"} 4\n", "", "vllm:num_requests_running", 4},
		{"plain name in braces", "{x_total} 5\n", "", "x_total", 5},
		{"escaped quote in name", "{\"a\\\"b\"} 6\n", "", "a\"b", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p *Page
			var err error
			noPanic(t, "ParsePage", func() { p, err = ParsePage(strings.NewReader(tc.text), t0) })
			if tc.wantErr != "" {
				require.Error(t, err, "ParsePage(%q) = %v, want an error", tc.text, p)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.NotContains(t, err.Error(), "%!", "a sentence, not Go syntax")
				return
			}
			require.NoError(t, err)
			f := p.Families[tc.family]
			require.NotNil(t, f, "ParsePage(%q) has no family %s: %v", tc.text, tc.family, p.Families)
			assert.Equal(t, tc.value, f.GetMetric()[0].GetUntyped().GetValue())
		})
	}
	// The DCGM page goes through the same guard.
	noPanic(t, "parseDCGM", func() {
		_, err := parseDCGM([]byte("{}"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "line 1")
	})
}

// TestParsePageBounds: a page past 16 MiB or past maxPageSamples is an
// error that says so, never read in part.
func TestParsePageBounds(t *testing.T) {
	big := strings.Repeat("# padding\n", (maxPageBytes/10)+1)
	_, err := ParsePage(strings.NewReader(big), t0)
	var tooLarge *safeio.TooLargeError
	require.ErrorAs(t, err, &tooLarge, "ParsePage(17 MiB) = %v", err)
	assert.Contains(t, err.Error(), "larger than 16 MiB")

	var b strings.Builder
	for i := range maxPageSamples + 1 {
		fmt.Fprintf(&b, "x{i=\"%d\"} 1\n", i)
	}
	_, err = ParsePage(strings.NewReader(b.String()), t0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("more than %d samples", maxPageSamples))
}

// metricsAt starts a hostile server in mode m for /metrics only, and
// returns it and its page's URL.
func metricsAt(t *testing.T, m hostile.Mode) (*hostile.Server, string) {
	t.Helper()
	s := hostile.Start(t, hostile.Options{Mode: m, Paths: []string{"/metrics"}, CapTime: 10 * time.Second})
	return s, s.URL + "/metrics"
}

// TestScrapeHostilePages: each hostile /metrics makes the engine source
// unavailable at Open with a reason, promptly, and no redirect is followed.
func TestScrapeHostilePages(t *testing.T) {
	short := &http.Client{Timeout: 300 * time.Millisecond}
	for _, tc := range []struct {
		mode   hostile.Mode
		client *http.Client
		want   []string
	}{
		// On main: a panic.
		{hostile.MetricsNotProm, nil, []string{"line 1", `"{}"`, "JSON"}},
		// On main: read up to the cap and refused with another message.
		{hostile.MetricsEndless, nil, []string{"larger than 16 MiB"}},
		// On main: followed, and the page of another server read.
		{hostile.Redirect, nil, []string{"307", "never follows redirects"}},
		{hostile.HugeHeaders, nil, []string{"header"}},
		{hostile.NoHeaders, short, []string{"Timeout"}},
		{hostile.TrickleBody, short, []string{"Timeout"}},
		{hostile.HugeErrorBody, nil, []string{"500"}},
		{hostile.Status, nil, []string{"400"}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			s, url := metricsAt(t, tc.mode)
			var c *Collector
			var info result.TelemetryInfo
			noPanic(t, "Open", func() {
				c, info, _ = Open(t.Context(), Options{MetricsURL: url, Client: tc.client,
					GPU: GPUOptions{Mode: config.TelemetryOff}, Interval: time.Second})
			})
			assert.False(t, c.Active(), "a hostile page is no source")
			assert.False(t, info.Engine.Available())
			for _, w := range tc.want {
				assert.Contains(t, info.Engine.Unavailable, w)
			}
			if tc.mode == hostile.Redirect {
				assert.Contains(t, info.Engine.Unavailable, "to "+s.Elsewhere.URL+"/metrics")
				assert.Zero(t, s.Elsewhere.Requests(""), "the redirect was followed to %s", s.Elsewhere.URL)
			}
		})
	}
}

// TestDCGMHostilePages: the DCGM source is refused the same way.
func TestDCGMHostilePages(t *testing.T) {
	for _, tc := range []struct {
		mode hostile.Mode
		want []string
	}{
		{hostile.MetricsNotProm, []string{"line 1"}},
		{hostile.MetricsEndless, []string{"larger than 32 MiB"}},
		{hostile.Redirect, []string{"307", "never follows redirects"}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			s, url := metricsAt(t, tc.mode)
			src, devices, why := OpenGPU(t.Context(), GPUOptions{Mode: config.GPUDCGM, DCGMURL: url})
			assert.Nil(t, src)
			assert.Empty(t, devices)
			for _, w := range tc.want {
				assert.Contains(t, why, w)
			}
			if tc.mode == hostile.Redirect {
				assert.Contains(t, why, "to "+s.Elsewhere.URL+"/metrics")
				assert.Zero(t, s.Elsewhere.Requests(""), "the redirect was followed")
			}
		})
	}
}

// TestGuardClient: whatever client a caller gives, a scrape follows no
// redirect and has a timeout; the caller's client is left as it was.
func TestGuardClient(t *testing.T) {
	assert.Equal(t, scrapeTimeout, guardClient(nil).Timeout)
	assert.NotNil(t, guardClient(nil).CheckRedirect)
	mine := &http.Client{}
	g := guardClient(mine)
	assert.Equal(t, scrapeTimeout, g.Timeout, "a client without a timeout gets one")
	require.NotNil(t, g.CheckRedirect)
	assert.ErrorIs(t, g.CheckRedirect(nil, nil), http.ErrUseLastResponse)
	assert.Nil(t, mine.CheckRedirect, "the caller's client is not changed")
	assert.Zero(t, mine.Timeout)
	assert.Equal(t, time.Second, guardClient(&http.Client{Timeout: time.Second}).Timeout, "a client's own timeout is kept")

	// A caller's client that would follow is made not to.
	s, url := metricsAt(t, hostile.Redirect)
	_, err := (&EngineScraper{URL: url, Client: &http.Client{}}).Scrape(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "307")
	assert.Zero(t, s.Elsewhere.Requests(""))
}

// TestCollectorMalformedPageMidRun: a page that turns malformed during the
// run is warned about once, its scrapes skipped, and the windows go on with
// the pages that could be read.
func TestCollectorMalformedPageMidRun(t *testing.T) {
	s := hostile.Start(t, hostile.Options{})
	c, info, _ := Open(t.Context(), Options{MetricsURL: s.URL + "/metrics",
		GPU: GPUOptions{Mode: config.TelemetryOff}, Interval: time.Second})
	require.True(t, info.Engine.Available(), info.Engine.Unavailable)
	require.Equal(t, 1, s.Requests("/metrics"))
	var warnings []string
	c.Warn = func(msg string) { warnings = append(warnings, msg) }
	ticks := &manualTicks{}
	c.Ticks = ticks.make

	waitScrapes := func(n int) {
		t.Helper()
		require.Eventually(t, func() bool { return s.Requests("/metrics") >= n }, 10*time.Second, time.Millisecond)
	}
	end := c.Begin(t.Context())
	waitScrapes(2) // the window's first page, well formed
	s.SetMode(hostile.MetricsNotProm)
	require.Eventually(t, func() bool { ticks.mu.Lock(); defer ticks.mu.Unlock(); return len(ticks.chans) == 1 }, 10*time.Second, time.Millisecond)
	ticks.chans[0] <- time.Time{}
	waitScrapes(3)
	rep := &result.Repetition{Index: 1, Duration: 1, TTFT: result.Stats{Count: 1, Mean: 5}}
	noPanic(t, "the window's end", func() { end(rep) })
	require.NotNil(t, rep.Engine, "the well-formed page is kept")
	assert.Equal(t, 1, rep.Engine.Scrapes)
	require.Len(t, warnings, 1, "warnings: %q", warnings)
	assert.Contains(t, warnings[0], "engine telemetry:")
	assert.Contains(t, warnings[0], "line 1")

	// The next window: every scrape fails, no figure, no second warning.
	end = c.Begin(t.Context())
	waitScrapes(5)
	rep = &result.Repetition{Index: 2, Duration: 1}
	end(rep)
	assert.Nil(t, rep.Engine)
	assert.Len(t, warnings, 1, "warned once for the run: %q", warnings)
}

// impossiblePage is a vLLM page with the given gauges and counters.
func impossiblePage(t *testing.T, kv, running, preempt, queries, hits string) *Page {
	t.Helper()
	return parseText(t, "# TYPE vllm:kv_cache_usage_perc gauge\n"+
		"vllm:kv_cache_usage_perc{engine=\"0\"} "+kv+"\n"+
		"vllm:kv_cache_usage_perc{engine=\"1\"} 0.25\n"+
		"# TYPE vllm:num_requests_running gauge\n"+
		"vllm:num_requests_running{engine=\"0\"} "+running+"\n"+
		"# TYPE vllm:num_preemptions_total counter\n"+
		"vllm:num_preemptions_total{engine=\"0\"} "+preempt+"\n"+
		"# TYPE vllm:prefix_cache_queries_total counter\n"+
		"vllm:prefix_cache_queries_total{engine=\"0\"} "+queries+"\n"+
		"# TYPE vllm:prefix_cache_hits_total counter\n"+
		"vllm:prefix_cache_hits_total{engine=\"0\"} "+hits+"\n")
}

// TestEngineWindowRefusesImpossibleFigures: a value that cannot be true is
// left out of the figure (which then comes from the other series, or is
// absent) and named in Refused; on main each was averaged into the result
// (KV-cache use of -50%, a running peak of +Inf that no result can even be
// written with).
func TestEngineWindowRefusesImpossibleFigures(t *testing.T) {
	ok := func(t *testing.T) *Page { return impossiblePage(t, "0.5", "3", "1", "100", "40") }
	for _, tc := range []struct {
		name        string
		first, last func(t *testing.T) *Page
		check       func(t *testing.T, got *result.EngineTelemetry)
		refused     string // in Refused; "" for none
	}{
		{"negative KV use", ok, func(t *testing.T) *Page { return impossiblePage(t, "-0.5", "3", "2", "200", "80") },
			func(t *testing.T, got *result.EngineTelemetry) {
				assertFigure(t, "KVCachePeak", ptr(0.5), got.KVCachePeak)
				assertFigure(t, "KVCacheMean", ptr((0.5+0.25)/2), got.KVCacheMean) // page 1 max 0.5, page 2 only 0.25
			}, `vllm:kv_cache_usage_perc{engine="0"} is -0.5`},
		{"KV use above 1", ok, func(t *testing.T) *Page { return impossiblePage(t, "7", "3", "2", "200", "80") },
			func(t *testing.T, got *result.EngineTelemetry) {
				assertFigure(t, "KVCachePeak", ptr(0.5), got.KVCachePeak)
			},
			"is 7, which cannot be true (a fraction"},
		{"+Inf running", ok, func(t *testing.T) *Page { return impossiblePage(t, "0.5", "+Inf", "2", "200", "80") },
			func(t *testing.T, got *result.EngineTelemetry) {
				assertFigure(t, "RunningPeak", ptr(3), got.RunningPeak)
			},
			"vllm:num_requests_running{engine=\"0\"} is +Inf"},
		{"negative running", ok, func(t *testing.T) *Page { return impossiblePage(t, "0.5", "-4", "2", "200", "80") },
			func(t *testing.T, got *result.EngineTelemetry) {
				assertFigure(t, "RunningPeak", ptr(3), got.RunningPeak)
			},
			"is -4"},
		{"NaN running is no value", ok, func(t *testing.T) *Page { return impossiblePage(t, "0.5", "NaN", "2", "200", "80") },
			func(t *testing.T, got *result.EngineTelemetry) {
				assertFigure(t, "RunningPeak", ptr(3), got.RunningPeak)
			},
			""},
		{"negative counter", ok, func(t *testing.T) *Page { return impossiblePage(t, "0.5", "3", "-10", "200", "80") },
			func(t *testing.T, got *result.EngineTelemetry) { assert.Nil(t, got.Preemptions) },
			"vllm:num_preemptions_total{engine=\"0\"} is -10"},
		{"overflowing counter", ok, func(t *testing.T) *Page { return impossiblePage(t, "0.5", "3", "1e30", "200", "80") },
			func(t *testing.T, got *result.EngineTelemetry) { assert.Nil(t, got.Preemptions) },
			"is 1e+30"},
		{"impossible counter on the first page", func(t *testing.T) *Page { return impossiblePage(t, "0.5", "3", "-5", "100", "40") },
			func(t *testing.T) *Page { return impossiblePage(t, "0.5", "3", "2", "200", "80") },
			func(t *testing.T, got *result.EngineTelemetry) { assert.Nil(t, got.Preemptions) },
			"is -5"},
		// A counter that went backwards is an engine that restarted: its
		// last value is its increase, never a negative one.
		{"counter backwards", func(t *testing.T) *Page { return impossiblePage(t, "0.5", "3", "50", "100", "40") },
			func(t *testing.T) *Page { return impossiblePage(t, "0.5", "3", "7", "200", "80") },
			func(t *testing.T, got *result.EngineTelemetry) {
				assertFigure(t, "Preemptions", ptr(7), got.Preemptions)
			},
			""},
		{"more hits than lookups", ok, func(t *testing.T) *Page { return impossiblePage(t, "0.5", "3", "2", "110", "90") },
			func(t *testing.T, got *result.EngineTelemetry) { assert.Nil(t, got.PrefixCacheHitRate) },
			"more hits than lookups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := window(t, tc.first(t), tc.last(t))
			got := w.Summary(0, false)
			require.NotNil(t, got)
			tc.check(t, got)
			assertWritable(t, got)
			if tc.refused == "" {
				assert.Empty(t, w.Refused())
				return
			}
			require.Len(t, w.Refused(), 1, "Refused() = %q", w.Refused())
			assert.Contains(t, w.Refused()[0], tc.refused)
			assert.Contains(t, w.Refused()[0], "cannot be true")
		})
	}
}

// histogramPage is a vLLM TTFT histogram: buckets at 0.1, 0.2 and +Inf,
// with the count and the sum.
func histogramPage(t *testing.T, b1, b2, inf, count, sum string) *Page {
	t.Helper()
	return parseText(t, "# TYPE vllm:time_to_first_token_seconds histogram\n"+
		"vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} "+b1+"\n"+
		"vllm:time_to_first_token_seconds_bucket{le=\"0.2\"} "+b2+"\n"+
		"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} "+inf+"\n"+
		"vllm:time_to_first_token_seconds_sum "+sum+"\n"+
		"vllm:time_to_first_token_seconds_count "+count+"\n")
}

// TestEngineWindowImpossibleHistograms: a histogram whose buckets decrease,
// whose counts are negative (which the text parser wraps to 1.8e19), or
// whose sum is negative is refused, on either page, as is an increase over
// the window that is not a histogram. On main these gave quantiles and
// means from garbage (decreasing buckets were quietly "fixed").
func TestEngineWindowImpossibleHistograms(t *testing.T) {
	good := func(t *testing.T) *Page { return histogramPage(t, "10", "20", "30", "30", "3") }
	for _, tc := range []struct {
		name        string
		first, last func(t *testing.T) *Page
		refused     string
	}{
		{"decreasing buckets", good, func(t *testing.T) *Page { return histogramPage(t, "40", "25", "50", "50", "5") }, "its buckets decrease"},
		{"negative bucket", good, func(t *testing.T) *Page { return histogramPage(t, "-3", "25", "50", "50", "5") }, "observations at most 0.1"},
		{"negative count", good, func(t *testing.T) *Page { return histogramPage(t, "10", "25", "50", "-50", "5") }, "counts"},
		{"negative sum", good, func(t *testing.T) *Page { return histogramPage(t, "10", "25", "50", "50", "-5") }, "sums its observations to -5"},
		{"infinite sum", good, func(t *testing.T) *Page { return histogramPage(t, "10", "25", "50", "50", "+Inf") }, "+Inf seconds"},
		{"impossible first page", func(t *testing.T) *Page { return histogramPage(t, "30", "20", "30", "30", "3") }, good, "on the window's first page"},
		// The count rose but a bucket fell: no histogram increases so.
		{"bucket fell while the count rose", good, func(t *testing.T) *Page { return histogramPage(t, "5", "25", "50", "50", "5") }, "rose by something that is not a histogram"},
		{"sum fell while the count rose", good, func(t *testing.T) *Page { return histogramPage(t, "15", "25", "50", "50", "1") }, "rose by something that is not a histogram"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := Detect(parseText(t, "vllm:num_requests_running 1\n"))
			require.True(t, ok)
			w := NewEngineWindow(a)
			w.Add(tc.first(t))
			w.Add(tc.last(t))
			got := w.Summary(100, true)
			require.NotNil(t, got)
			assert.Nil(t, got.ServerTTFT, "ServerTTFT = %+v, want it refused", got.ServerTTFT)
			assert.Nil(t, got.TTFTOverheadMS)
			require.Len(t, w.Refused(), 1, "Refused() = %q", w.Refused())
			assert.Contains(t, w.Refused()[0], tc.refused)
			assertWritable(t, got)
		})
	}
	// The well-formed case, for contrast: 20 more observations, 2 s more.
	a, _ := Detect(parseText(t, "vllm:num_requests_running 1\n"))
	w := NewEngineWindow(a)
	w.Add(good(t))
	w.Add(histogramPage(t, "15", "35", "50", "50", "5"))
	got := w.Summary(150, true)
	require.NotNil(t, got.ServerTTFT)
	assert.InDelta(t, 100.0, got.ServerTTFT.Mean, 1e-9)
	assertFigure(t, "TTFTOverheadMS", ptr(50), got.TTFTOverheadMS)
	assert.Empty(t, w.Refused())

	// perfgate's mean TTFT below the engine's cannot be for the same
	// requests: the overhead is refused rather than written negative.
	w = NewEngineWindow(a)
	w.Add(good(t))
	w.Add(histogramPage(t, "15", "35", "50", "50", "5"))
	got = w.Summary(60, true)
	assert.Nil(t, got.TTFTOverheadMS)
	require.Len(t, w.Refused(), 1)
	assert.Contains(t, w.Refused()[0], "longer than perfgate's")
}

// assertWritable checks every figure of an engine summary is finite and
// not negative, and that the summary can be written as JSON.
func assertWritable(t *testing.T, e *result.EngineTelemetry) {
	t.Helper()
	if err := checkEngineFigures(e); err != nil {
		t.Error(err)
	}
	_, err := json.Marshal(e)
	assert.NoError(t, err, "the summary cannot be written")
}

// checkEngineFigures says which figure of e is NaN, infinite, negative, or
// a fraction above 1.
func checkEngineFigures(e *result.EngineTelemetry) error {
	if e == nil {
		return nil
	}
	var bad []string
	check := func(name string, v *float64, most float64) {
		if v != nil && !(*v >= 0 && *v <= most) {
			bad = append(bad, fmt.Sprintf("%s = %v", name, *v))
		}
	}
	inf := math.Inf(1)
	check("KVCachePeak", e.KVCachePeak, 1)
	check("KVCacheMean", e.KVCacheMean, 1)
	check("PrefixCacheHitRate", e.PrefixCacheHitRate, 1)
	check("RunningPeak", e.RunningPeak, math.MaxFloat64)
	check("WaitingPeak", e.WaitingPeak, math.MaxFloat64)
	check("Preemptions", e.Preemptions, math.MaxFloat64)
	check("TTFTOverheadMS", e.TTFTOverheadMS, math.MaxFloat64)
	for name, l := range map[string]*result.ServerLatency{"ServerTTFT": e.ServerTTFT, "ServerITL": e.ServerITL} {
		if l == nil {
			continue
		}
		for i, v := range []float64{l.Count, l.Mean, l.P50, l.P90, l.P99} {
			if !(v >= 0 && v < inf) {
				bad = append(bad, fmt.Sprintf("%s[%d] = %v", name, i, v))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("figures that cannot be written: %s", strings.Join(bad, ", "))
	}
	return nil
}

// TestGPUFiguresRefused: nvidia-smi's and DCGM's figures that cannot be true
// are an error naming the figure, the sample refused; on main a power draw
// of 1e30 W was averaged into the result's energy.
func TestGPUFiguresRefused(t *testing.T) {
	line := func(used, total, util, power string) string {
		return "0, NVIDIA H100 80GB HBM3, GPU-1, " + used + ", " + total + ", " + util + ", " + power + ", 550.54.15\n"
	}
	for _, tc := range []struct {
		name, out, want string
	}{
		{"power 1e30 W", line("40000", "81559", "75", "1e30"), "power draw of 1e+30 W cannot be true"},
		{"negative power", line("40000", "81559", "75", "-3"), "power draw of -3 W"},
		{"negative memory", line("-1", "81559", "75", "300"), "memory in use of -1 MiB"},
		{"memory of an exabyte", line("1e12", "81559", "75", "300"), "memory in use of 1e+12 MiB"},
		{"total memory", line("1", "-81559", "75", "300"), "total memory of -81559 MiB"},
		{"utilisation 150%", line("40000", "81559", "150", "300"), "utilisation of 150%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSMI([]byte(tc.out))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "line 1")
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	page := "# TYPE DCGM_FI_DEV_FB_USED gauge\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 1000\n" +
		"# TYPE DCGM_FI_DEV_FB_FREE gauge\nDCGM_FI_DEV_FB_FREE{gpu=\"0\"} 79000\n" +
		"# TYPE DCGM_FI_DEV_POWER_USAGE gauge\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} %s\n" +
		"# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} %s\n"
	for _, tc := range []struct{ power, util, want string }{
		{"1e30", "50", "power draw of 1e+30 W"},
		{"-1", "50", "power draw of -1 W"},
		{"300", "-7", "utilisation of -7%"},
	} {
		_, err := parseDCGM(fmt.Appendf(nil, page, tc.power, tc.util))
		if assert.Error(t, err, "DCGM power %s util %s", tc.power, tc.util) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
	// DCGM's blank sentinels are "no value", not figures to refuse.
	for _, blank := range []string{"140737488355328", "140737488355330", "2147483632", "9223372036854775792"} {
		gpus, err := parseDCGM(fmt.Appendf(nil, page, blank, "50"))
		require.NoError(t, err, "power %s", blank)
		assert.Nil(t, gpus[0].sample.PowerW, "power %s", blank)
	}
}

// TestCollectorRefusesImpossibleGPUSample: any source's sample with a
// figure that cannot be true is skipped and warned about once; the energy
// comes from the samples that can be true.
func TestCollectorRefusesImpossibleGPUSample(t *testing.T) {
	gpu := &fakeGPU{powers: []float64{100, 1e30, 300}, sampled: make(chan int, 10)}
	c, _, _ := Open(t.Context(), Options{
		Interval: time.Second,
		GPU:      GPUOptions{Mode: config.GPUNVML, OpenNVML: func() (GPUSource, error) { return gpu, nil }},
	})
	var warnings []string
	c.Warn = func(msg string) { warnings = append(warnings, msg) }
	ticks := &manualTicks{}
	c.Ticks = ticks.make
	end := c.Begin(t.Context())
	require.Equal(t, 0, <-gpu.sampled)
	require.Eventually(t, func() bool { ticks.mu.Lock(); defer ticks.mu.Unlock(); return len(ticks.chans) == 1 }, 10*time.Second, time.Millisecond)
	ticks.chans[0] <- time.Time{}
	require.Equal(t, 1, <-gpu.sampled)
	rep := &result.Repetition{Index: 1, Duration: 2, OutputTokens: 100}
	end(rep)
	require.Equal(t, 2, <-gpu.sampled)
	require.NotNil(t, rep.GPU)
	assert.Equal(t, 2, rep.GPU.Samples, "the 1e30 W sample is skipped")
	require.NotNil(t, rep.GPU.PowerMeanW)
	assert.LessOrEqual(t, *rep.GPU.PowerMeanW, 300.0)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "power draw of 1e+30 W cannot be true")
}

// TestNvidiaSMIBounded: every run of nvidia-smi has a deadline, and output
// past 4 MiB is an error, from any runner.
func TestNvidiaSMIBounded(t *testing.T) {
	var deadline time.Time
	var hasDeadline bool
	src := NewNvidiaSMI(func(ctx context.Context, argv []string) ([]byte, error) {
		deadline, hasDeadline = ctx.Deadline()
		return []byte("0, GPU, GPU-1, 1, 2, 3, 4, 5\n"), nil
	}, nil, "")
	_, err := src.Sample(context.Background())
	require.NoError(t, err)
	require.True(t, hasDeadline, "nvidia-smi ran with no deadline")
	assert.WithinDuration(t, time.Now().Add(smiTimeout), deadline, smiTimeout)

	huge := NewNvidiaSMI(func(context.Context, []string) ([]byte, error) {
		return []byte(strings.Repeat("0, GPU, GPU-1, 1, 2, 3, 4, 5\n", smiOutputLimit/20)), nil
	}, nil, "in container c")
	_, err = huge.Sample(context.Background())
	var tooLarge *safeio.TooLargeError
	require.ErrorAs(t, err, &tooLarge)
	assert.Contains(t, err.Error(), "larger than 4 MiB")
}

// TestLocalCommandBounded: a command that writes without end is stopped at
// 4 MiB with an error, not read into memory whole (on main: unbounded).
func TestLocalCommandBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := LocalCommand(ctx, []string{"yes"})
	var tooLarge *safeio.TooLargeError
	require.ErrorAs(t, err, &tooLarge, "LocalCommand(yes) = %d bytes, %v", len(out), err)
	assert.Nil(t, out)
	assert.NoError(t, ctx.Err(), "stopped by the limit, not the deadline")

	// Standard error is cut quietly: only its first line is shown.
	_, err = LocalCommand(ctx, []string{"sh", "-c", "yes oops | head -c 1000000 >&2; exit 3"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exit status 3: oops")
	assert.False(t, errors.As(err, &tooLarge))
}

// TestScrapePageTooLarge: a page past the cap is an error that names the
// cap, never parsed in part (on main the read stopped at the cap).
func TestScrapePageTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := []byte("vllm:num_requests_running 1\n")
		for n := 0; n <= maxPageBytes; n += len(line) {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	_, err := (&EngineScraper{URL: srv.URL + "/metrics"}).Scrape(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than 16 MiB")
	assert.Contains(t, err.Error(), srv.URL)
}
