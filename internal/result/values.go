package result

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfgate/perfgate/internal/metric"

	"errors"
)

// Values returns the samples of a metric, named as the metric catalogue
// (internal/metric) names it, for the scenario: one value per repetition, in
// repetition order, in the metric's unit (milliseconds, tokens or requests
// per second, or a fraction for the error rate). Cold start has one value
// per stack start, so a scenario has one (none for an external stack), or
// one per start where the stack was restarted (ColdStartsMS). Which field holds which metric is the result's own knowledge: it
// does not consult the catalogue.
func (s *ScenarioResult) Values(name string) ([]float64, error) {
	if name == "capacity" || name == "capacity_tokens" || name == "headroom" {
		headroom := s.Capacity != nil && s.Capacity.Search.Headroom != nil
		switch {
		case name == "headroom" && !headroom:
			return nil, &NotMeasuredError{Metric: name, Repetition: 0,
				Why: "the scenario has no headroom search (a headroom: section)"}
		case name != "headroom" && (s.Capacity == nil || headroom):
			return nil, &NotMeasuredError{Metric: name, Repetition: 0,
				Why: "the scenario has no capacity search (a capacity: section)"}
		}
		out := make([]float64, 0, len(s.Capacity.Samples))
		for _, c := range s.Capacity.Samples {
			if name == "headroom" {
				out = append(out, c.Load)
				continue
			}
			if name == "capacity" {
				out = append(out, c.RequestRate)
			} else {
				out = append(out, c.OutputThroughput)
			}
		}
		return out, nil
	}
	if name == "cold_start" {
		if len(s.ColdStartsMS) > 0 {
			return s.ColdStartsMS, nil
		}
		if s.ColdStartMS <= 0 {
			return nil, nil
		}
		return []float64{s.ColdStartMS}, nil
	}
	out := make([]float64, 0, len(s.Repetitions))
	for i := range s.Repetitions {
		v, err := s.Repetitions[i].Value(name)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Value is the repetition's value of a per-repetition metric (not cold
// start, which is per stack start), or a *NotMeasuredError when the
// repetition has no figure for it.
func (r *Repetition) Value(name string) (float64, error) {
	return repValue(r, name)
}

// repValue is one repetition's value of a per-repetition metric.
func repValue(r *Repetition, name string) (float64, error) {
	if base, subset, ok := metric.Subset(name); ok {
		v, err := r.View(subset)
		if err != nil {
			return 0, &NotMeasuredError{Metric: name, Repetition: r.Index, Why: subsetMissing(subset)}
		}
		// A subset none of whose requests was timed (each failed, or
		// answered what its request did not ask for) has no latency: not
		// a latency of 0, which would read as the fastest ever.
		if family, _, ok := strings.Cut(base, "."); ok && v.latency(family) != nil && v.latency(family).Count == 0 {
			return 0, &NotMeasuredError{Metric: name, Repetition: r.Index,
				Why: "no request of the subset was timed: each failed, or answered what it did not ask for"}
		}
		return repValue(v, base)
	}
	switch name {
	case "recovery", "recovery_breaches":
		rc := r.Recovery
		if rc == nil {
			return 0, &NotMeasuredError{Metric: name, Repetition: r.Index, Why: "not a step load or a fault, or no window after its step or fault"}
		}
		if name == "recovery" {
			return rc.Seconds * 1000, nil
		}
		return float64(rc.Breaches), nil
	case "output_throughput":
		return r.OutputThroughput, nil
	case "input_throughput":
		return r.InputThroughput, nil
	case "request_throughput":
		return r.RequestThroughput, nil
	case "goodput":
		return r.Goodput, nil
	case "error_rate":
		return r.ErrorRate, nil
	case "ttfa.p50", "ttfa.p95", "ttfa.p99", "reasoning_tokens":
		rs := r.Reasoning
		if rs == nil || rs.Requests <= 0 || (name != "reasoning_tokens" && rs.TTFA.Count == 0) {
			return 0, &NotMeasuredError{Metric: name, Repetition: r.Index, Why: "no completed request of the repetition reasoned and reached its answer"}
		}
		switch name {
		case "ttfa.p50":
			return rs.TTFA.P50, nil
		case "ttfa.p95":
			return rs.TTFA.P95, nil
		case "ttfa.p99":
			return rs.TTFA.P99, nil
		}
		return float64(rs.ReasoningTokens) / float64(rs.Requests), nil
	case "structured_error_rate":
		if r.Structured == 0 {
			return 0, &NotMeasuredError{Metric: name, Repetition: r.Index, Why: "no request of the repetition asked for structured output (response_format JSON, or tools)"}
		}
		return r.StructuredErrorRate, nil
	case "prefill_throughput", "decode_throughput":
		p := r.PrefillThroughput
		if name == "decode_throughput" {
			p = r.DecodeThroughput
		}
		if p == nil {
			return 0, &NotMeasuredError{Metric: name, Repetition: r.Index,
				Why: "the result is from a perfgate before it, or no completed request had a first token (two, for decode)"}
		}
		return *p, nil
	}
	if v, ok, err := telemetryValue(r, name); ok || err != nil {
		return v, err
	}
	family, stat, ok := strings.Cut(name, ".")
	if !ok {
		return 0, fmt.Errorf("metric %s has no per-repetition value", name)
	}
	var st *Stats
	switch family {
	case "ttft":
		st = &r.TTFT
	case "tpot":
		st = &r.TPOT
	case "itl":
		st = &r.ITL
	case "e2e":
		st = &r.E2E
	default:
		return 0, fmt.Errorf("metric %s has no per-repetition value", name)
	}
	if stat == "mean" {
		return st.Mean, nil
	}
	if metric.IsPercentile(stat) {
		return percentileValue(r, st, family, stat)
	}
	return 0, fmt.Errorf("metric %s has no per-repetition value", name)
}

// NotMeasuredError says a repetition has no value for a telemetry or cost
// metric: its source was unavailable, the engine does not expose it, or the
// config set no price.
type NotMeasuredError struct {
	Metric     string
	Repetition int
	// Why names what was missing.
	Why string
}

func (e *NotMeasuredError) Error() string {
	if e.Repetition == 0 {
		return fmt.Sprintf("%s was not measured: %s", e.Metric, e.Why)
	}
	return fmt.Sprintf("%s was not measured in repetition %d: %s", e.Metric, e.Repetition, e.Why)
}

// telemetryValue is a repetition's value of an engine, GPU or cost metric;
// ok is false for a metric that is none of these.
func telemetryValue(r *Repetition, name string) (v float64, ok bool, err error) {
	missing := func(why string) (float64, bool, error) {
		return 0, true, &NotMeasuredError{Metric: name, Repetition: r.Index, Why: why}
	}
	ptr := func(p *float64, why string) (float64, bool, error) {
		if p == nil {
			return missing(why)
		}
		return *p, true, nil
	}
	e, g, c := r.Engine, r.GPU, r.Cost
	const (
		noEngine = "no engine telemetry (the engine's metrics page was not read)"
		noGPU    = "no GPU telemetry (no GPU source was available)"
		noCost   = "no cost (the config sets no cost section)"
	)
	switch name {
	case "kv_cache_peak", "kv_cache_mean", "prefix_cache_hit_rate", "waiting_peak", "preemptions", "server_ttft", "ttft_overhead":
		if e == nil {
			return missing(noEngine)
		}
		lacks := "the " + e.Adapter + " metrics page has no "
		switch name {
		case "kv_cache_peak":
			return ptr(e.KVCachePeak, lacks+"KV-cache usage")
		case "kv_cache_mean":
			return ptr(e.KVCacheMean, lacks+"KV-cache usage")
		case "prefix_cache_hit_rate":
			return ptr(e.PrefixCacheHitRate, lacks+"prefix-cache counters")
		case "waiting_peak":
			return ptr(e.WaitingPeak, lacks+"waiting-requests gauge")
		case "preemptions":
			return ptr(e.Preemptions, lacks+"preemption counter")
		case "server_ttft":
			if e.ServerTTFT == nil {
				return missing(lacks + "TTFT histogram")
			}
			return e.ServerTTFT.Mean, true, nil
		default:
			return ptr(e.TTFTOverheadMS, lacks+"TTFT histogram")
		}
	case "gpu_memory_peak", "gpu_utilization", "gpu_power", "energy_per_token", "tokens_per_joule":
		if g == nil {
			return missing(noGPU)
		}
		noPower := "the " + g.Source + " source reported no power"
		switch name {
		case "gpu_memory_peak":
			return g.MemoryPeakMiB, true, nil
		case "gpu_utilization":
			return ptr(g.UtilizationMean, "the "+g.Source+" source reported no utilisation")
		case "gpu_power":
			return ptr(g.PowerMeanW, noPower)
		case "energy_per_token":
			return ptr(g.EnergyPerToken, noPower+", or the window had no output tokens")
		default:
			return ptr(g.TokensPerJoule, noPower+", or the window used no energy")
		}
	case "mbu", "mfu":
		u := r.Utilization
		if u == nil {
			return missing("no MBU or MFU (the run knew no model size or GPU peaks: the utilization section)")
		}
		if name == "mbu" {
			return ptr(u.MBU, "no MBU: no decode of two tokens or more, or no weights and bandwidth")
		}
		return ptr(u.MFU, "no MFU: no prompt tokens, or no parameters and FLOPs")
	case "cost_per_mtok", "cost_per_mtok_input", "cost_per_mtok_goodput", "cost_per_mtok_input_goodput":
		if c == nil {
			return missing(noCost)
		}
		switch name {
		case "cost_per_mtok":
			return c.USDPerMOutput, true, nil
		case "cost_per_mtok_input":
			return ptr(c.USDPerMInput, "the prompt tokens are unknown (the server sent no usage)")
		case "cost_per_mtok_goodput":
			return ptr(c.USDPerMOutputGoodput, "no request met every SLO")
		default:
			return ptr(c.USDPerMInputGoodput, "no request met every SLO")
		}
	}
	return 0, false, nil
}

// RepetitionValues is metric name's value in each repetition of s, and
// whether the repetition measured it (a telemetry metric a repetition had
// no source for is not measured, not an error); other errors are returned.
// Reports and exports show what was measured, each repetition in its
// column.
func (s *ScenarioResult) RepetitionValues(name string) (values []float64, measured []bool, err error) {
	values = make([]float64, len(s.Repetitions))
	measured = make([]bool, len(s.Repetitions))
	for i := range s.Repetitions {
		v, err := s.Repetitions[i].Value(name)
		var nm *NotMeasuredError
		switch {
		case errors.As(err, &nm):
			continue
		case err != nil:
			return nil, nil, err
		}
		values[i], measured[i] = v, true
	}
	return values, measured, nil
}

// MeasuredValues is metric name's finite values over the repetitions of s
// that measured it, in repetition order: what a report's median of a
// telemetry metric is taken over.
func (s *ScenarioResult) MeasuredValues(name string) ([]float64, error) {
	values, measured, err := s.RepetitionValues(name)
	if err != nil {
		return nil, err
	}
	var out []float64
	for i, v := range values {
		if measured[i] && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out, nil
}

// latency is the repetition's distribution of latency family ("ttft"), nil
// for another name.
func (r *Repetition) latency(family string) *Stats {
	switch family {
	case "ttft":
		return &r.TTFT
	case "tpot":
		return &r.TPOT
	case "itl":
		return &r.ITL
	case "e2e":
		return &r.E2E
	}
	return nil
}
