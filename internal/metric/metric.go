package metric

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/suggest"
)

// Kind says what a metric's values are, which decides its unit and the units
// an absolute tolerance may be written in.
type Kind int

const (
	// Latency values are milliseconds; an absolute tolerance is a Go
	// duration (`+20ms`).
	Latency Kind = iota
	// TokenRate values are tokens per second (`-100 tok/s`).
	TokenRate
	// RequestRate values are requests per second (`-0.5 req/s`).
	RequestRate
	// Fraction values are shares in [0,1]; a tolerance is in percentage
	// points (`+1 points`), never a percentage (Info.Points).
	Fraction
	// Count values are numbers of things (requests waiting, preemptions);
	// an absolute tolerance is a plain number (`+4`).
	Count
	// Memory values are MiB (`+512 MiB`, `+2 GiB`).
	Memory
	// Power values are watts (`+20 W`).
	Power
	// Energy values are joules per output token (`+0.05 J/tok`).
	Energy
	// Efficiency values are output tokens per joule (`-1 tok/J`).
	Efficiency
	// Money values are US dollars per million tokens (`+0.05 $/Mtok`).
	Money
)

// Groups: where a metric comes from, which decides where reports list it.
const (
	GroupLatency = "latency" // client-side latency distributions and cold start
	GroupTraffic = "traffic" // throughput, goodput, errors
	GroupEngine  = "engine"  // the engine's own metrics page
	GroupGPU     = "gpu"     // GPU memory, utilisation, power, energy
	GroupCost    = "cost"    // dollars per million tokens
	GroupQuality = "quality" // eval suites
	// GroupCapacity metrics come from a capacity search: one estimate per
	// repetition index of the highest load at which the SLOs held.
	GroupCapacity = "capacity"
)

// Info describes one metric.
type Info struct {
	// Name is the metric's name in configs and reports.
	Name string
	// Kind decides the unit.
	Kind Kind
	// HigherIsBetter is true for throughputs and goodput, false for
	// latencies and the error rate.
	HigherIsBetter bool
	// Title is a short human label ("TTFT p99").
	Title string
	// PerStart is true for a metric measured once per stack start (cold
	// start) rather than once per repetition.
	PerStart bool
	// Quality is true for an eval suite's metric (accuracy, score,
	// identical): compared item by item, gated under quality.gates, with a
	// tolerance in points.
	Quality bool
	// Group is where the metric comes from (GroupLatency ...).
	Group string
	// Doc says what the metric is, for docs and --help.
	Doc string
	// Subset is the subset of requests a subset metric is of
	// ("structured", "model:sql-lora"); empty for the whole.
	Subset string
}

// RecoveryOnly reports whether metric name is measured only by a scenario
// disturbed on purpose, a step load (load.type step) or a fault: its
// recovery and the requests over the SLO meanwhile.
func RecoveryOnly(name string) bool { return name == "recovery" || name == "recovery_breaches" }

// Telemetry reports whether the metric comes from telemetry or cost (the
// engine's page, the GPUs, the price), which a run may not have.
func (i Info) Telemetry() bool {
	return i.Group == GroupEngine || i.Group == GroupGPU || i.Group == GroupCost
}

// Unit is the unit of the metric's values as reports print it.
func (i Info) Unit() string {
	switch i.Kind {
	case Latency:
		return "ms"
	case TokenRate:
		return "tok/s"
	case RequestRate:
		return "req/s"
	case Count:
		return "count"
	case Memory:
		return "MiB"
	case Power:
		return "W"
	case Energy:
		return "J/tok"
	case Efficiency:
		return "tok/J"
	case Money:
		return "$/Mtok"
	default:
		return "%"
	}
}

// Points reports whether the metric is a share (the error rate, KV-cache
// use, GPU utilisation, an eval suite's accuracy): its values are in [0, 1]
// and shown as percentages, and its changes and absolute tolerances are in
// percentage points (0.02 → 0.04 is +2 points), never relative to the
// baseline, which for an error rate is often 0.
func (i Info) Points() bool { return i.Kind == Fraction }

// Better is "lower" or "higher", as benchfmt's better= metadata spells it.
func (i Info) Better() string {
	if i.HigherIsBetter {
		return "higher"
	}
	return "lower"
}

// Latency families and the statistics each has.
var (
	latencyFamilies = []struct{ name, title string }{
		{"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2e", "E2E"},
	}
	// LatencyStats are the statistics of a latency distribution the
	// catalogue (All) lists, in the order reports list them: the
	// DefaultPercentiles and the mean. Lookup knows every other percentile
	// ParsePercentile accepts too ("ttft.p99.99"); AllWith lists a
	// result's own.
	LatencyStats = slices.Concat(DefaultPercentiles, []string{"mean"})
)

var catalogue = build()

func build() []Info {
	var all []Info
	for _, f := range latencyFamilies {
		for _, s := range LatencyStats {
			all = append(all, latencyInfo(f.name, f.title, s))
		}
	}
	return append(all,
		Info{Name: "output_throughput", Kind: TokenRate, HigherIsBetter: true, Title: "output throughput", Group: GroupTraffic,
			Doc: "output tokens per second over the measured window"},
		Info{Name: "input_throughput", Kind: TokenRate, HigherIsBetter: true, Title: "input throughput", Group: GroupTraffic,
			Doc: "prompt tokens per second over the measured window"},
		Info{Name: "prefill_throughput", Kind: TokenRate, HigherIsBetter: true, Title: "prefill throughput", Group: GroupTraffic,
			Doc: "prompt tokens per second of TTFT, over the completed requests"},
		Info{Name: "decode_throughput", Kind: TokenRate, HigherIsBetter: true, Title: "decode throughput", Group: GroupTraffic,
			Doc: "output tokens after the first per second after the first token, over the completed requests"},
		Info{Name: "request_throughput", Kind: RequestRate, HigherIsBetter: true, Title: "request throughput", Group: GroupTraffic,
			Doc: "completed requests per second"},
		Info{Name: "goodput", Kind: RequestRate, HigherIsBetter: true, Title: "goodput", Group: GroupTraffic,
			Doc: "completed requests per second that met every SLO"},
		Info{Name: "error_rate", Kind: Fraction, Title: "error rate", Group: GroupTraffic,
			Doc: "failed requests over sent requests"},
		Info{Name: "ttfa.p50", Kind: Latency, Title: "time to first answer p50", Group: GroupLatency,
			Doc: "of the requests that reasoned: send to the first chunk of the answer, past the thinking (reasoning models only)"},
		Info{Name: "ttfa.p95", Kind: Latency, Title: "time to first answer p95", Group: GroupLatency,
			Doc: "of the requests that reasoned: send to the first chunk of the answer, past the thinking (reasoning models only)"},
		Info{Name: "ttfa.p99", Kind: Latency, Title: "time to first answer p99", Group: GroupLatency,
			Doc: "of the requests that reasoned: send to the first chunk of the answer, past the thinking (reasoning models only)"},
		Info{Name: "reasoning_tokens", Kind: Count, Title: "reasoning tokens a request", Group: GroupTraffic,
			Doc: "reasoning tokens per request that reasoned, mean: a model that thinks longer costs more and answers later"},
		Info{Name: "structured_error_rate", Kind: Fraction, Title: "structured error rate", Group: GroupTraffic,
			Doc: "answers that were not the JSON or the tool call their request asked for, over the structured requests answered"},
		Info{Name: "recovery", Kind: Latency, Title: "recovery", Group: GroupLatency,
			Doc: "step loads and faults: from the first step, or the fault, until TTFT p95 is back within slo.ttft for good (a lower bound when it never is)"},
		Info{Name: "recovery_breaches", Kind: Count, Title: "requests over the SLO while recovering", Group: GroupTraffic,
			Doc: "step loads and faults: requests sent from the first step, or the fault, until the recovery that broke slo.ttft, failed ones included"},
		Info{Name: "cold_start", Kind: Latency, Title: "cold start", PerStart: true, Group: GroupLatency,
			Doc: "stack start to ready, once per start"},

		Info{Name: "capacity", Kind: RequestRate, HigherIsBetter: true, Title: "capacity", Group: GroupCapacity,
			Doc: "the highest request rate at which the capacity search's SLOs held, one estimate per repetition (capacity scenarios only)"},
		Info{Name: "capacity_tokens", Kind: TokenRate, HigherIsBetter: true, Title: "capacity (output tok/s)", Group: GroupCapacity,
			Doc: "the output throughput at capacity, one estimate per repetition (capacity scenarios only)"},
		Info{Name: "headroom", Kind: Count, HigherIsBetter: true, Title: "headroom", Group: GroupCapacity,
			Doc: "the longest context (tokens) the users held, or the most users at a context, before a refusal, a cut answer, a preemption, a crash or an SLO broke; one estimate per repetition (headroom scenarios only)"},

		Info{Name: "kv_cache_peak", Kind: Fraction, Title: "KV-cache peak", Group: GroupEngine,
			Doc: "the engine's highest KV-cache usage at any scrape"},
		Info{Name: "kv_cache_mean", Kind: Fraction, Title: "KV-cache mean", Group: GroupEngine,
			Doc: "the engine's KV-cache usage, mean over the scrapes"},
		Info{Name: "prefix_cache_hit_rate", Kind: Fraction, HigherIsBetter: true, Title: "prefix-cache hit rate", Group: GroupEngine,
			Doc: "prefix-cache hit tokens over queried tokens in the window"},
		Info{Name: "waiting_peak", Kind: Count, Title: "waiting peak", Group: GroupEngine,
			Doc: "the most requests queued in the engine at any scrape"},
		Info{Name: "preemptions", Kind: Count, Title: "preemptions", Group: GroupEngine,
			Doc: "requests the engine preempted in the window"},
		Info{Name: "server_ttft", Kind: Latency, Title: "server TTFT mean", Group: GroupEngine,
			Doc: "the engine's own mean TTFT (its histogram's sum over count)"},
		Info{Name: "ttft_overhead", Kind: Latency, Title: "TTFT overhead", Group: GroupEngine,
			Doc: "client mean TTFT minus server mean TTFT: client, network and HTTP time"},

		Info{Name: "gpu_memory_peak", Kind: Memory, Title: "GPU memory peak", Group: GroupGPU,
			Doc: "the most memory used on any one GPU at any sample"},
		Info{Name: "gpu_utilization", Kind: Fraction, Title: "GPU utilisation", Group: GroupGPU,
			Doc: "mean GPU utilisation; lower serves the same load with less of the GPU"},
		Info{Name: "mbu", Kind: Fraction, HigherIsBetter: true, Title: "MBU", Group: GroupGPU,
			Doc: "model-bandwidth utilisation: decode's bytes a second (weights once a step, each sequence's KV cache) over the GPUs' peak bandwidth"},
		Info{Name: "mfu", Kind: Fraction, HigherIsBetter: true, Title: "MFU", Group: GroupGPU,
			Doc: "model-FLOPs utilisation of prefill: 2 × parameters × prompt tokens a second over the GPUs' peak FLOPs"},
		Info{Name: "gpu_power", Kind: Power, Title: "GPU power", Group: GroupGPU,
			Doc: "the GPUs' total power draw, time-weighted mean"},
		Info{Name: "energy_per_token", Kind: Energy, Title: "energy per token", Group: GroupGPU,
			Doc: "GPU energy over the window divided by its output tokens"},
		Info{Name: "tokens_per_joule", Kind: Efficiency, HigherIsBetter: true, Title: "tokens per joule", Group: GroupGPU,
			Doc: "output tokens per joule: performance per watt"},

		Info{Name: "cost_per_mtok", Kind: Money, Title: "$ per M output tokens", Group: GroupCost,
			Doc: "GPU cost of a million output tokens at the measured output throughput"},
		Info{Name: "cost_per_mtok_input", Kind: Money, Title: "$ per M input tokens", Group: GroupCost,
			Doc: "GPU cost of a million prompt tokens at the measured input throughput"},
		Info{Name: "cost_per_mtok_goodput", Kind: Money, Title: "$ per M good output tokens", Group: GroupCost,
			Doc: "GPU cost of a million output tokens of requests that met every SLO"},
		Info{Name: "cost_per_mtok_input_goodput", Kind: Money, Title: "$ per M good input tokens", Group: GroupCost,
			Doc: "GPU cost of a million prompt tokens of requests that met every SLO"},
	)
}

// qualityMetrics are the metrics of an eval suite, compared item by item
// with the baseline's outcomes for the same items.
var qualityMetrics = []Info{
	// accuracy: the share of items whose output passed its scorer.
	{Name: "accuracy", Kind: Fraction, HigherIsBetter: true, Title: "accuracy", Quality: true, Group: GroupQuality},
	// score: the mean score (suites with a continuous scorer, reference).
	{Name: "score", Kind: Fraction, HigherIsBetter: true, Title: "mean score", Quality: true, Group: GroupQuality},
	// identical: the share of items whose output is identical to the
	// baseline's (output drift).
	{Name: "identical", Kind: Fraction, HigherIsBetter: true, Title: "identical outputs", Quality: true, Group: GroupQuality},
	// eval_error_rate: the share of items whose request failed (HTTP error,
	// timeout, broken or empty stream): no answer, so neither right nor
	// wrong, and kept out of the others.
	{Name: "eval_error_rate", Kind: Fraction, Title: "error rate", Quality: true, Group: GroupQuality},
}

// QualityMetrics returns the metrics of an eval suite, in report order.
func QualityMetrics() []Info { return slices.Clone(qualityMetrics) }

// All returns every metric, in report order.
func All() []Info { return slices.Clone(catalogue) }

// Lookup returns the metric called name, or an error that lists the close
// names. A latency percentile is any ParsePercentile accepts, of any family
// ("ttft.p75", "e2e.p99.99"), not only the catalogue's: whether a run
// measures it is the config's percentiles key.
func Lookup(name string) (Info, error) {
	if m, ok, err := subsetInfo(name); ok {
		return m, err
	}
	for _, m := range slices.Concat(catalogue, qualityMetrics) {
		if m.Name == name {
			return m, nil
		}
	}
	if m, ok := percentileInfo(name); ok {
		return m, nil
	}
	if family, p, ok := strings.Cut(name, "."); ok && slices.Contains(LatencyFamilies(), family) && strings.HasPrefix(strings.ToLower(p), "p") {
		if _, err := ParsePercentile(p); err != nil {
			return Info{}, fmt.Errorf("unknown metric %q: %w", name, err)
		}
	}
	var names []string
	for _, m := range slices.Concat(catalogue, qualityMetrics) {
		names = append(names, m.Name)
	}
	if s, ok := suggest.Closest(name, names); ok {
		return Info{}, fmt.Errorf("unknown metric %q (did you mean %q?)", name, s)
	}
	return Info{}, fmt.Errorf("unknown metric %q (known: %s)", name, strings.Join(names, ", "))
}

// orderStep spaces the catalogue's positions in Order, so that a latency
// percentile outside it fits between its neighbours.
const orderStep = 100000

// Order is a metric's position in report order, for sorting: a latency
// percentile outside the catalogue ("ttft.p75") comes among its family's,
// by value.
func Order(name string) int {
	if base, _, ok := Subset(name); ok {
		return Order(base) + 1 // after the whole's
	}
	all := slices.Concat(catalogue, qualityMetrics)
	for i, m := range all {
		if m.Name == name {
			return i * orderStep
		}
	}
	if family, p, ok := LatencyPercentile(name); ok {
		h, _ := parseHundredths(p)
		// Before the first of its family's statistics that is higher (or
		// the mean), by 10000 less its hundredths: distinct percentiles
		// get distinct positions, all after the statistic before.
		for i, m := range all {
			f, st, _ := strings.Cut(m.Name, ".")
			if f != family {
				continue
			}
			if sh, err := parseHundredths(st); err != nil || sh > h {
				return i*orderStep - (10000 - h)
			}
		}
	}
	return len(all) * orderStep
}
