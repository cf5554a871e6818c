package telemetry

import (
	"math"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Adapter maps one engine's metric names to perfgate's figures. Each figure
// lists the names that may carry it, newest first: the first name a page
// has is read, so one adapter covers an engine's releases before and after a
// rename. A figure with no names is one the engine does not expose, and its
// result stays nil.
type Adapter struct {
	// Name is the dialect: vllm, sglang, tgi or llamacpp
	// (result.EngineTelemetry.Adapter).
	Name string

	// prefix marks the engine's own metrics on a page, for Detect.
	prefix string
	// running and waiting are gauges of requests in the batch and queued.
	running, waiting []string
	// kvUsage is a gauge of the KV cache in use, 0..1.
	kvUsage []string
	// prefixCounters are counters of prefix-cache lookups and hits, in
	// tokens; hitRate is a hit-rate gauge, 0..1, for an engine without them.
	prefixCounters []counterPair
	hitRate        []string
	// preemptions is a counter of requests preempted (evicted from the
	// batch to free KV cache, to be recomputed later).
	preemptions []string
	// ttft and itl are latency histograms in seconds.
	ttft, itl []string
}

// counterPair is a counter of lookups and a counter of the lookups that hit.
type counterPair struct{ queries, hits string }

// The adapters, in the order Detect prefers them on a tie. Sources:
// vLLM: docs.vllm.ai/en/stable/usage/metrics and vllm/v1/metrics/loggers.py;
// SGLang: docs.sglang.io/references/production_metrics and
// python/sglang/srt/metrics/collector.py; TGI:
// huggingface.co/docs/text-generation-inference/reference/metrics;
// llama.cpp: tools/server/README.md and a capture from a real server
// (testdata/captures/llamacpp/metrics.prom).
var adapters = []*Adapter{
	{
		Name:    "vllm",
		prefix:  "vllm:",
		running: []string{"vllm:num_requests_running"},
		waiting: []string{"vllm:num_requests_waiting"},
		// gpu_cache_usage_perc: the older name, deprecated in V1.
		kvUsage: []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
		prefixCounters: []counterPair{
			{"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"},
			// The older names, deprecated in 0.9.
			{"vllm:gpu_prefix_cache_queries_total", "vllm:gpu_prefix_cache_hits_total"},
		},
		// V0's gauge.
		hitRate:     []string{"vllm:gpu_prefix_cache_hit_rate"},
		preemptions: []string{"vllm:num_preemptions_total"},
		ttft:        []string{"vllm:time_to_first_token_seconds"},
		// time_per_output_token_seconds: the same gaps under the older name.
		itl: []string{"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"},
	},
	{
		Name:    "sglang",
		prefix:  "sglang:",
		running: []string{"sglang:num_running_reqs"},
		waiting: []string{"sglang:num_queue_reqs"},
		// The share of the KV pool's tokens in use.
		kvUsage: []string{"sglang:token_usage"},
		// Cached prompt tokens over prompt tokens, both counted as each
		// request finishes. The cached counter only appears once a request
		// has hit, and older releases lack it: then the gauge, which is the
		// hit rate of the latest prefill batch.
		prefixCounters: []counterPair{{"sglang:prompt_tokens_total", "sglang:cached_tokens_total"}},
		hitRate:        []string{"sglang:cache_hit_rate"},
		// Not sglang:num_retracted_reqs: that gauge is the latest batch's.
		preemptions: []string{"sglang:num_retracted_requests_total"},
		ttft:        []string{"sglang:time_to_first_token_seconds"},
		itl:         []string{"sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"},
	},
	{
		Name:    "tgi",
		prefix:  "tgi_",
		running: []string{"tgi_batch_current_size"},
		waiting: []string{"tgi_queue_size"},
		// One observation per request: the request's mean time per token.
		// TGI has no KV-cache gauge, no prefix-cache counters, no
		// preemption counter and no TTFT histogram.
		itl: []string{"tgi_request_mean_time_per_token_duration"},
	},
	{
		Name:    "llamacpp",
		prefix:  "llamacpp:",
		running: []string{"llamacpp:requests_processing"},
		waiting: []string{"llamacpp:requests_deferred"},
		// Only in older builds: the captured build has no KV-cache gauge.
		kvUsage: []string{"llamacpp:kv_cache_usage_ratio"},
	},
}

// Detect picks the adapter whose metrics the page has: the one with the
// most metric families under its prefix (vllm:, sglang:, tgi_, llamacpp:).
// ok is false when the page has none of them: not an engine perfgate knows,
// or an engine whose metrics are off.
func Detect(p *Page) (a *Adapter, ok bool) {
	var best *Adapter
	most := 0
	for _, ad := range adapters {
		n := 0
		for name := range p.Families {
			if strings.HasPrefix(name, ad.prefix) {
				n++
			}
		}
		if n > most {
			best, most = ad, n
		}
	}
	if best == nil {
		return nil, false
	}
	c := *best // callers may not change the shared mapping
	return &c, true
}

// family returns the first of names the page has with at least one series.
func (p *Page) family(names []string) *dto.MetricFamily {
	for _, n := range names {
		if f := p.Families[n]; f != nil && len(f.GetMetric()) > 0 {
			return f
		}
	}
	return nil
}

// sampleValue is a counter's, gauge's or untyped sample's value; ok is false for
// a histogram or summary, and for NaN.
func sampleValue(m *dto.Metric) (v float64, ok bool) {
	switch {
	case m.GetCounter() != nil:
		v = m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		v = m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		v = m.GetUntyped().GetValue()
	default:
		return 0, false
	}
	return v, !math.IsNaN(v)
}

// gaugeFold says how a gauge's series (several engines, ranks or models)
// make one figure.
type gaugeFold int

const (
	// foldSum is for counts: requests running, requests waiting.
	foldSum gaugeFold = iota
	// foldMax is for a usage fraction: the fullest of several KV caches,
	// since the first one full is the one that preempts.
	foldMax
	// foldMean is for a rate: a hit rate over several engines.
	foldMean
)

// gauge folds the series of the first of names the page has; ok is false
// when it has none of them, or none whose value is a number in r. A series
// outside r is handed to refuse and left out.
func (p *Page) gauge(names []string, how gaugeFold, r valueRange, refuse func(*dto.MetricFamily, *dto.Metric, float64, valueRange)) (v float64, ok bool) {
	f := p.family(names)
	if f == nil {
		return 0, false
	}
	var acc float64
	n := 0
	for _, m := range f.GetMetric() {
		x, ok := sampleValue(m)
		if !ok {
			continue
		}
		if !r.holds(x) {
			refuse(f, m, x, r)
			continue
		}
		switch {
		case how == foldMax && n > 0:
			acc = math.Max(acc, x)
		default:
			acc += x
		}
		n++
	}
	if n == 0 {
		return 0, false
	}
	if how == foldMean {
		acc /= float64(n)
	}
	return acc, true
}

// counterNames are the metrics an EngineWindow reads from its first and
// last page: counters and histograms.
func (a *Adapter) counterNames() []string {
	names := slices.Concat(a.preemptions, a.ttft, a.itl)
	for _, c := range a.prefixCounters {
		names = append(names, c.queries, c.hits)
	}
	return names
}

// only is p with only the families called names.
func (p *Page) only(names []string) *Page {
	kept := &Page{At: p.At, Families: make(map[string]*dto.MetricFamily, len(names))}
	for _, n := range names {
		if f := p.Families[n]; f != nil {
			kept.Families[n] = f
		}
	}
	return kept
}
