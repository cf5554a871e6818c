package sim

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Buckets as vLLM (v1) defines them.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	e2eBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
		40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// buckets125 is vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to max.
func buckets125(maxV int) []float64 {
	var out []float64
	for exp := 1.0; ; exp *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * exp
			if v > float64(maxV) {
				return out
			}
			out = append(out, v)
		}
	}
}

// metrics are one Server's vLLM-named Prometheus metrics, in its own registry.
type metrics struct {
	reg *prometheus.Registry

	running, waiting      prometheus.Gauge
	gpuCache, kvCache     prometheus.Gauge
	promptTokens          prometheus.Counter
	generationTokens      prometheus.Counter
	success               *prometheus.CounterVec
	preemptions           prometheus.Counter
	prefixQueries         prometheus.Counter
	prefixHits            prometheus.Counter
	ttft, itl, e2e        prometheus.Observer
	reqPrompt, reqGenToks prometheus.Observer
	// loraInfo is vLLM's vllm:lora_requests_info: one series whose labels
	// name the adapters of the running and waiting requests; nil without
	// adapters (Config.Loras).
	loraInfo *prometheus.GaugeVec
	maxLoras string
	// replicas is the replicas ready (Config.AutoscaleMax), on the page
	// only with autoscaling: what a cluster's deployment would say.
	replicas prometheus.Gauge
}

func newMetrics(cfg Config) *metrics {
	reg := prometheus.NewRegistry()
	labels := prometheus.Labels{"model_name": cfg.Model}
	f := func(c prometheus.Collector) prometheus.Collector { reg.MustRegister(c); return c }
	gauge := func(name, help string) prometheus.Gauge {
		return f(prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})).(prometheus.Gauge)
	}
	counter := func(name, help string) prometheus.Counter {
		return f(prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})).(prometheus.Counter)
	}
	hist := func(name, help string, b []float64) prometheus.Observer {
		return f(prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: b, ConstLabels: labels})).(prometheus.Histogram)
	}
	m := &metrics{reg: reg}
	m.running = gauge("vllm:num_requests_running", "Number of requests in the model execution batch.")
	m.waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
	m.gpuCache = gauge("vllm:gpu_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage (deprecated name).")
	m.kvCache = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
	m.promptTokens = counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	m.generationTokens = counter("vllm:generation_tokens_total", "Number of generation tokens processed.")
	m.success = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vllm:request_success_total", Help: "Count of successfully processed requests.", ConstLabels: labels,
	}, []string{"finished_reason"})
	reg.MustRegister(m.success)
	for _, r := range []string{"stop", "length", "abort"} {
		m.success.WithLabelValues(r)
	}
	m.preemptions = counter("vllm:num_preemptions_total", "Cumulative number of preemptions from the engine (the simulator preempts only with --kv-policy preempt; by default it reserves KV up front and never does).")
	m.prefixQueries = counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.")
	m.prefixHits = counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.")
	m.ttft = hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets)
	m.itl = hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itlBuckets)
	m.e2e = hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", e2eBuckets)
	b := buckets125(cfg.KVCacheTokens)
	m.reqPrompt = hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", b)
	m.reqGenToks = hist("vllm:request_generation_tokens", "Number of generation tokens processed.", b)
	m.replicas = prometheus.NewGauge(prometheus.GaugeOpts{Name: "perfgate_sim_replicas", Help: "Replicas ready (the simulator's --autoscale-max).", ConstLabels: labels})
	if cfg.AutoscaleMax > 1 {
		reg.MustRegister(m.replicas)
		m.replicas.Set(1)
	}
	if len(cfg.Loras) > 0 {
		m.loraInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "vllm:lora_requests_info", Help: "Running stats on lora requests.",
		}, []string{"max_lora", "running_lora_adapters", "waiting_lora_adapters"})
		reg.MustRegister(m.loraInfo)
		m.maxLoras = strconv.Itoa(cfg.MaxLoras)
		m.lora("", "")
	}
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// lora sets vllm:lora_requests_info to one series naming the adapters of
// the running and waiting requests (comma-separated), valued the time,
// as vLLM does.
func (m *metrics) lora(running, waiting string) {
	if m.loraInfo == nil {
		return
	}
	m.loraInfo.Reset()
	m.loraInfo.WithLabelValues(m.maxLoras, running, waiting).Set(float64(time.Now().UnixNano()) / 1e9)
}
