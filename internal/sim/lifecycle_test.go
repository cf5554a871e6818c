package sim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

func scrape(t *testing.T, s *Server) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, s.URL()+"/metrics")
	require.Equal(t, http.StatusOK, code)
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err)
	return mfs
}

// value sums a family's samples (counter, gauge) whose labels include want.
func value(mfs map[string]*dto.MetricFamily, name string, want ...string) float64 {
	mf, ok := mfs[name]
	if !ok {
		return -1
	}
	var sum float64
next:
	for _, m := range mf.GetMetric() {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == want[i] && l.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		}
	}
	return sum
}

func gauge(mfs map[string]*dto.MetricFamily, name string) float64 { return value(mfs, name) }

func histCount(t *testing.T, mfs map[string]*dto.MetricFamily, name string) (uint64, float64) {
	t.Helper()
	mf, ok := mfs[name]
	require.True(t, ok, "metric %s", name)
	require.Equal(t, dto.MetricType_HISTOGRAM, mf.GetType(), name)
	h := mf.GetMetric()[0].GetHistogram()
	return h.GetSampleCount(), h.GetSampleSum()
}

func TestMetrics(t *testing.T) {
	cfg := testConfig()
	cfg.Model = "metric-model"
	s := startSim(t, cfg)
	const n, words, tokens = 3, 5, 6
	for i := range n {
		streamChat(t, s.Server, fmt.Sprint(i), words, tokens)
	}
	waitIdle(t, s.Server)
	mfs := scrape(t, s.Server)

	for name, typ := range map[string]dto.MetricType{
		"vllm:num_requests_running":        dto.MetricType_GAUGE,
		"vllm:num_requests_waiting":        dto.MetricType_GAUGE,
		"vllm:gpu_cache_usage_perc":        dto.MetricType_GAUGE,
		"vllm:kv_cache_usage_perc":         dto.MetricType_GAUGE,
		"vllm:prompt_tokens_total":         dto.MetricType_COUNTER,
		"vllm:generation_tokens_total":     dto.MetricType_COUNTER,
		"vllm:request_success_total":       dto.MetricType_COUNTER,
		"vllm:num_preemptions_total":       dto.MetricType_COUNTER,
		"vllm:prefix_cache_queries_total":  dto.MetricType_COUNTER,
		"vllm:prefix_cache_hits_total":     dto.MetricType_COUNTER,
		"vllm:time_to_first_token_seconds": dto.MetricType_HISTOGRAM,
		"vllm:inter_token_latency_seconds": dto.MetricType_HISTOGRAM,
		"vllm:e2e_request_latency_seconds": dto.MetricType_HISTOGRAM,
		"vllm:request_prompt_tokens":       dto.MetricType_HISTOGRAM,
		"vllm:request_generation_tokens":   dto.MetricType_HISTOGRAM,
	} {
		mf, ok := mfs[name]
		require.True(t, ok, "metric %s missing", name)
		require.Equal(t, typ, mf.GetType(), name)
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			require.Equal(t, "metric-model", labels["model_name"], name)
		}
	}
	require.Zero(t, gauge(mfs, "vllm:num_requests_running"))
	require.Zero(t, gauge(mfs, "vllm:num_requests_waiting"))
	require.Zero(t, gauge(mfs, "vllm:kv_cache_usage_perc"))
	require.Equal(t, float64(n*words), value(mfs, "vllm:prompt_tokens_total"))
	require.Equal(t, float64(n*tokens), value(mfs, "vllm:generation_tokens_total"))
	require.Equal(t, float64(n), value(mfs, "vllm:request_success_total", "finished_reason", "length"))
	require.Zero(t, value(mfs, "vllm:request_success_total", "finished_reason", "stop"))
	require.Zero(t, value(mfs, "vllm:num_preemptions_total"))
	require.Equal(t, float64(n*words), value(mfs, "vllm:prefix_cache_queries_total"))
	require.Zero(t, value(mfs, "vllm:prefix_cache_hits_total"), "5-word prompts fill no 16-token block")

	c, sum := histCount(t, mfs, "vllm:time_to_first_token_seconds")
	require.EqualValues(t, n, c)
	require.Greater(t, sum/n, 0.0015, "mean TTFT of one 2ms step")
	c, sum = histCount(t, mfs, "vllm:inter_token_latency_seconds")
	require.EqualValues(t, n*(tokens-1), c)
	require.InDelta(t, 0.002, sum/float64(c), 0.0015, "mean ITL of 2ms steps (loose: five gaps per request on a shared machine)")
	c, _ = histCount(t, mfs, "vllm:e2e_request_latency_seconds")
	require.EqualValues(t, n, c)
	c, sum = histCount(t, mfs, "vllm:request_prompt_tokens")
	require.EqualValues(t, n, c)
	require.Equal(t, float64(n*words), sum)
	_, sum = histCount(t, mfs, "vllm:request_generation_tokens")
	require.Equal(t, float64(n*tokens), sum)

	// While a request runs, the gauges show it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := post(t, ctx, s.URL()+"/v1/completions", "", map[string]any{"prompt": "a b", "max_tokens": 100000, "stream": true})
	defer resp.Body.Close()
	readUntilContent(t, resp.Body)
	mfs = scrape(t, s.Server)
	require.Equal(t, 1.0, gauge(mfs, "vllm:num_requests_running"))
	require.InDelta(t, 100002.0/float64(cfg.KVCacheTokens), gauge(mfs, "vllm:kv_cache_usage_perc"), 1e-9)
	require.Equal(t, gauge(mfs, "vllm:kv_cache_usage_perc"), gauge(mfs, "vllm:gpu_cache_usage_perc"))
}

// readUntilContent reads a stream until its first content chunk.
func readUntilContent(t *testing.T, r io.Reader) *bufio.Reader {
	t.Helper()
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok && parseChunk(t, data).contentText() != "" {
			return br
		}
	}
}

func TestPrefixCache(t *testing.T) {
	cfg := testConfig()
	cfg.PerPrefillToken = 100 * time.Microsecond
	cfg.PrefillBudget = 16
	s := startSim(t, cfg)
	prompt := nWords(40) // 2 full blocks + 8 tokens
	ask := func(id string) {
		resp := post(t, context.Background(), s.URL()+"/v1/completions", id, map[string]any{"prompt": prompt, "max_tokens": 2, "stream": true})
		defer resp.Body.Close()
		readSSE(t, resp.Body)
	}
	ask("cold")
	ask("warm")
	waitIdle(t, s.Server)
	mfs := scrape(t, s.Server)
	require.Equal(t, 80.0, value(mfs, "vllm:prefix_cache_queries_total"))
	require.Equal(t, 32.0, value(mfs, "vllm:prefix_cache_hits_total"))
	recs := s.records(t)
	// Cold: 3 prefill steps (16, 16, 8 tokens) = 6ms + 4ms×1.6 ... warm: one step of 8.
	cold := time.Duration(recs["cold"].FirstTokenNS - recs["cold"].ArrivalNS)
	warm := time.Duration(recs["warm"].FirstTokenNS - recs["warm"].ArrivalNS)
	// Steps are never shorter than modelled, so the lower bounds are tight; a
	// VM can stall a timer by several ms, so the upper bounds are loose and
	// the cache's effect is asserted by the difference.
	within(t, "cold TTFT", cold, 3*cfg.StepBase+40*cfg.PerPrefillToken, 200*time.Microsecond, 20*time.Millisecond)
	within(t, "warm TTFT", warm, cfg.StepBase+8*cfg.PerPrefillToken, 200*time.Microsecond, 20*time.Millisecond)
	if cold-warm < cfg.StepBase {
		t.Errorf("warm TTFT %v is not at least one step (%v) shorter than cold %v: the prefix cache saved no prefill", warm, cfg.StepBase, cold)
	}
}

func TestColdStart(t *testing.T) {
	cfg := testConfig()
	cfg.ColdStart = 200 * time.Millisecond
	s := startSim(t, cfg)
	code, _ := get(t, s.URL()+"/health")
	require.Equal(t, http.StatusServiceUnavailable, code)
	resp := post(t, context.Background(), s.URL()+"/v1/chat/completions", "", chatBody(2, 2, true))
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Eventually(t, func() bool {
		code, _ := get(t, s.URL()+"/health")
		return code == http.StatusOK
	}, 5*time.Second, 5*time.Millisecond)
	require.GreaterOrEqual(t, time.Since(s.start), cfg.ColdStart)
	streamChat(t, s.Server, "after", 2, 2)
}

func TestWarmUpSlowsFirstSteps(t *testing.T) {
	cfg := testConfig()
	cfg.WarmUp = time.Hour // the factor stays ~3 for this test
	cfg.WarmUpFactor = 3
	s := startSim(t, cfg)
	streamChat(t, s.Server, "w", 2, 20)
	r := s.records(t)["w"]
	within(t, "median gap in warm-up", median(gaps(r.TokenNS)), 3*cfg.StepBase, 500*time.Microsecond, time.Millisecond)
}

func TestSlowdown(t *testing.T) {
	cfg := testConfig()
	cfg.Slowdown = 2
	s := startSim(t, cfg)
	streamChat(t, s.Server, "s", 2, 20)
	r := s.records(t)["s"]
	within(t, "median gap slowed down", median(gaps(r.TokenNS)), 2*cfg.StepBase, 500*time.Microsecond, time.Millisecond)
}

// TestClientDisconnect: a client that goes away frees its sequence and KV;
// other requests carry on.
func TestClientDisconnect(t *testing.T) {
	cfg := testConfig()
	cfg.KVCacheTokens = 2000
	s := startSim(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, s.URL()+"/v1/chat/completions", "gone", chatBody(3, 1990, true))
	readUntilContent(t, resp.Body)
	cancel()
	resp.Body.Close()
	waitIdle(t, s.Server)
	mfs := scrape(t, s.Server)
	require.Zero(t, gauge(mfs, "vllm:kv_cache_usage_perc"))
	require.Equal(t, 1.0, value(mfs, "vllm:request_success_total", "finished_reason", "abort"))
	// The KV is free again: a request that needs nearly all of it runs.
	streamChat(t, s.Server, "next", 3, 1990/200)
	recs := s.records(t)
	require.Equal(t, "client disconnected", recs["gone"].Error)
	require.Less(t, recs["gone"].OutputTokens, 1990)
	require.Equal(t, "length", recs["next"].FinishReason)
}

// TestCloseWithStreamsInFlight: Close ends open streams, returns, and leaves
// no step loop, handler or server goroutine behind.
func TestCloseWithStreamsInFlight(t *testing.T) {
	s := startSim(t, testConfig())
	var wg sync.WaitGroup
	started := make(chan struct{}, 4)
	for i := range 4 {
		wg.Go(func() {
			resp := post(t, context.Background(), s.URL()+"/v1/chat/completions", fmt.Sprint(i), chatBody(3, 50000, true)) // four fit in the KV cache
			defer resp.Body.Close()
			br := readUntilContent(t, resp.Body)
			started <- struct{}{}
			rest := readSSE(t, br)
			last := parseChunk(t, rest[len(rest)-1].data)
			require.NotNil(t, last.Error, "stream ends with an error event")
			require.Contains(t, last.Error.Message, "shutting down")
		})
	}
	for range 4 {
		<-started
	}
	done := make(chan error)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	wg.Wait()
	select {
	case <-s.eng.done:
	default:
		t.Fatal("step loop still running after Close")
	}
	require.NoError(t, s.Close(), "Close is idempotent")
	recs := s.records(t)
	require.Len(t, recs, 4)
	for _, r := range recs {
		require.Equal(t, errShutdown, r.Error)
		require.NotZero(t, r.EndNS)
	}
	// No goroutine of this package is left (the test itself is not a method).
	httpClient.CloseIdleConnections()
	require.Eventually(t, func() bool { return !strings.Contains(stacks(), "internal/sim.(*") }, 5*time.Second, 5*time.Millisecond,
		"goroutines left:\n%s", stacks())

	_, err := httpClient.Get(s.URL() + "/health")
	require.Error(t, err, "closed server still answers")
}

func stacks() string {
	b := make([]byte, 1<<20)
	return string(b[:runtime.Stack(b, true)])
}

func TestStartContextCancelCloses(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, "127.0.0.1:0", testConfig())
	require.NoError(t, err)
	cancel()
	select {
	case <-s.eng.done:
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling Start's context did not close the server")
	}
	require.NoError(t, s.Close())
}

func TestStartInvalid(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ErrorRate = 2
	_, err := Start(context.Background(), "127.0.0.1:0", cfg)
	require.ErrorContains(t, err, "--error-rate")
	_, err = Start(context.Background(), "256.0.0.1:0", DefaultConfig())
	require.Error(t, err)
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTruthWriteErrorReportedByClose(t *testing.T) {
	cfg := testConfig()
	cfg.Truth = errWriter{}
	s, err := Start(context.Background(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	streamChat(t, s, "x", 1, 1)
	require.ErrorContains(t, s.Close(), "disk full")
}
