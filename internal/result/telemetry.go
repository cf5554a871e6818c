package result

import "strings"

// Telemetry in a result: what the serving engine and the GPUs said while a
// repetition was measured, and what the repetition cost. Every figure that a
// source may not provide is a pointer, so "not measured" (absent) is never
// confused with zero.

// TelemetryInfo says where a run's telemetry came from, or why there was none.
// It is said once per run, not per repetition.
type TelemetryInfo struct {
	// Engine is the engine's metrics page.
	Engine SourceInfo `json:"engine"`
	// GPU is the GPU source.
	GPU SourceInfo `json:"gpu"`
}

// SourceInfo is one telemetry source: what was read, or why nothing was.
type SourceInfo struct {
	// Source names what was read: "vllm http://127.0.0.1:8000/metrics",
	// "nvml", "nvidia-smi", "nvidia-smi in container perfgate-1a2b",
	// "dcgm http://gpu-host:9400/metrics".
	Source string `json:"source,omitempty"`
	// Unavailable is why there is no telemetry from this source ("no GPU
	// tool: NVML: ...; nvidia-smi: not on PATH"), or "off (why)" when it
	// was turned off. Empty when Source was read.
	Unavailable string `json:"unavailable,omitempty"`
}

// Available reports whether the source was read.
func (s SourceInfo) Available() bool { return s.Source != "" && s.Unavailable == "" }

// Off reports whether the source was turned off rather than unreadable:
// its Unavailable reads "off (why)".
func (s SourceInfo) Off() bool { return strings.HasPrefix(s.Unavailable, "off") }

// EngineTelemetry is the serving engine's own account of one repetition, read
// from its Prometheus /metrics page during the measured window: gauges are
// sampled at every scrape, counters and histograms are taken as their
// increase from the first scrape (at the window's start) to the last (after
// its last response).
type EngineTelemetry struct {
	// Adapter is the metric dialect read: vllm, tgi, sglang or llamacpp
	// (the simulator speaks vllm's).
	Adapter string `json:"adapter"`
	// Scrapes is how many pages were read in the window.
	Scrapes int `json:"scrapes"`
	// KVCachePeak and KVCacheMean are the KV-cache usage, 0..1, over the
	// scrapes.
	KVCachePeak *float64 `json:"kv_cache_peak,omitempty"`
	KVCacheMean *float64 `json:"kv_cache_mean,omitempty"`
	// PrefixCacheHitRate is prefix-cache hits over queries in the window
	// (token counters' increase), or the engine's own hit-rate gauge, mean
	// over the scrapes, for an engine that only has that; 0..1.
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate,omitempty"`
	// RunningPeak and WaitingPeak are the most requests running (in the
	// batch) and waiting (queued) at any scrape.
	RunningPeak *float64 `json:"running_peak,omitempty"`
	WaitingPeak *float64 `json:"waiting_peak,omitempty"`
	// Preemptions is how many requests the engine preempted in the window.
	Preemptions *float64 `json:"preemptions,omitempty"`
	// ServerTTFT and ServerITL are the engine's own TTFT and inter-token
	// latency histograms over the window.
	ServerTTFT *ServerLatency `json:"server_ttft_ms,omitempty"`
	ServerITL  *ServerLatency `json:"server_itl_ms,omitempty"`
	// TTFTOverheadMS is perfgate's mean client-side TTFT minus the engine's
	// mean server-side TTFT, in milliseconds: the time a request spends in
	// the client, the network, the HTTP server and the tokenizer before
	// the engine's clock starts. Set when ServerTTFT is.
	TTFTOverheadMS *float64 `json:"ttft_overhead_ms,omitempty"`
	// LoRA is the engine's LoRA adapters over the window (vLLM's
	// vllm:lora_requests_info); nil when its page has no such gauge.
	LoRA *LoRATelemetry `json:"lora,omitempty"`
}

// LoRATelemetry is what an engine said of its LoRA adapters during a
// window: how many had requests running or waiting at once, and which ran.
type LoRATelemetry struct {
	// MaxLoras is the adapters the engine holds at once (--max-loras), as
	// it said; nil when it did not.
	MaxLoras *int `json:"max_loras,omitempty"`
	// RunningPeak and WaitingPeak are the most adapters with requests
	// running, and with requests waiting, at any scrape.
	RunningPeak int `json:"running_peak"`
	WaitingPeak int `json:"waiting_peak"`
	// Adapters are the adapters seen running, in the order met, at most
	// 64 (AdaptersCut says there were more), each at most 256 bytes.
	Adapters    []string `json:"adapters,omitempty"`
	AdaptersCut bool     `json:"adapters_cut,omitempty"`
}

// ServerLatency summarises an engine latency histogram's increase over a
// window, in milliseconds. The mean is exact (sum over count); percentiles
// are interpolated within buckets as Prometheus's histogram_quantile does,
// so they are only as fine as the engine's buckets.
type ServerLatency struct {
	Count float64 `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
}

// GPUTelemetry is what the GPUs did during one repetition, sampled every
// Interval from the window's start to its end.
type GPUTelemetry struct {
	// Source is nvml, nvidia-smi or dcgm.
	Source string `json:"source"`
	// Interval is the time between samples asked for.
	Interval Seconds `json:"interval_s"`
	// Samples is how many samples fell in the window.
	Samples int `json:"samples"`
	// MemoryPeakMiB is the most memory used on any one GPU at any sample:
	// headroom is per GPU, since one full GPU is enough to fail the engine.
	MemoryPeakMiB float64 `json:"memory_peak_mib"`
	// MemoryTotalMiB is the memory of that GPU.
	MemoryTotalMiB float64 `json:"memory_total_mib,omitempty"`
	// UtilizationMean is the GPUs' utilisation (the share of time a kernel
	// ran), 0..1, averaged over samples and GPUs; nil when no GPU reported
	// it (MIG instances do not).
	UtilizationMean *float64 `json:"utilization_mean,omitempty"`
	// PowerMeanW is the GPUs' total power draw, time-weighted over the
	// samples, in watts; nil when the source reported no power.
	PowerMeanW *float64 `json:"power_mean_w,omitempty"`
	// EnergyJ is PowerMeanW times the window's duration, in joules.
	EnergyJ *float64 `json:"energy_j,omitempty"`
	// EnergyPerToken is EnergyJ over the window's output tokens (J/token),
	// and TokensPerJoule its inverse: output tokens per second per watt.
	EnergyPerToken *float64 `json:"energy_per_token_j,omitempty"`
	TokensPerJoule *float64 `json:"tokens_per_joule,omitempty"`
	// PerGPU is each GPU's figures, in index order.
	PerGPU []GPUWindow `json:"per_gpu,omitempty"`
}

// GPUWindow is one GPU's figures over a window.
type GPUWindow struct {
	Index           int      `json:"index"`
	MemoryPeakMiB   float64  `json:"memory_peak_mib"`
	MemoryTotalMiB  float64  `json:"memory_total_mib,omitempty"`
	UtilizationMean *float64 `json:"utilization_mean,omitempty"`
	PowerMeanW      *float64 `json:"power_mean_w,omitempty"`
}

// Cost is what a repetition's tokens cost at the configured price of the
// serving GPUs (config cost): the window's GPU time, priced per GPU-hour,
// over its tokens, per million. Each figure charges the whole GPU time to
// one kind of token, as a price list per token does, so output and input
// figures are alternatives, not parts of one bill.
type Cost struct {
	// USDPerMOutput and USDPerMInput are at the measured throughput.
	// USDPerMInput is nil when the prompt tokens are unknown (a server
	// that sends no usage: perfgate counts output chunks, not prompts).
	USDPerMOutput float64  `json:"usd_per_m_output"`
	USDPerMInput  *float64 `json:"usd_per_m_input,omitempty"`
	// USDPerMOutputGoodput and USDPerMInputGoodput count only the tokens
	// of requests that met every SLO; nil when none did (the cost of a
	// good token was then unbounded).
	USDPerMOutputGoodput *float64 `json:"usd_per_m_output_goodput,omitempty"`
	USDPerMInputGoodput  *float64 `json:"usd_per_m_input_goodput,omitempty"`
}
