package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/perfgate/perfgate/internal/workload"
)

// Config is the whole of perfgate.yaml.
type Config struct {
	// Target is the OpenAI-compatible server under test.
	Target Target `yaml:"target" json:"target"`
	// Stack is how the server under test is started, watched and stopped.
	Stack Stack `yaml:"stack" json:"stack"`
	// Warmup brings each scenario to steady state before it is measured.
	Warmup Warmup `yaml:"warmup" json:"warmup"`
	// Scenarios are measured in order, each for every repetition.
	Scenarios []Scenario `yaml:"scenarios" json:"scenarios"`
	// Repetitions is how many times each scenario is measured (one sample
	// per repetition): a number, or a range for sequential gating.
	Repetitions Repetitions `yaml:"repetitions" json:"repetitions"`
	// Cooldown is an idle pause before each repetition, the first too
	// (after the warm-up's drain), so that one phase's tail does not load
	// the next.
	Cooldown time.Duration `yaml:"cooldown" json:"cooldown,omitempty"`
	// Gates changes the default gates (DefaultGates) for every scenario:
	// metric name to tolerance (`ttft.p99: +15%`), or off.
	Gates map[string]string `yaml:"gates" json:"gates,omitempty"`
	// Percentiles are the latency percentiles measured of every latency
	// distribution (`[p50, p90, p99, p99.99]`): any metric.ParsePercentile
	// accepts, p50 to p99.99. Empty is metric.DefaultPercentiles; use
	// MeasuredPercentiles. The defaults are measured and gated whatever it
	// lists. Not hashed: which figures are taken of the requests does not
	// change what is sent, nor which gates apply.
	Percentiles []string `yaml:"percentiles" json:"percentiles,omitempty"`
	// Compare configures the comparison with the baselines.
	Compare Compare `yaml:"compare" json:"compare"`
	// Quality configures the eval suites answered alongside the
	// measurement.
	Quality Quality `yaml:"quality" json:"quality,omitzero"`
	// Telemetry says what is sampled beside the measurement: the engine's
	// metrics page and the GPUs.
	Telemetry Telemetry `yaml:"telemetry" json:"telemetry"`
	// AB configures perfgate ab when this config is its candidate.
	AB AB `yaml:"ab" json:"ab,omitzero"`
	// Cost prices the serving GPUs; nil leaves cost out of results.
	Cost *Cost `yaml:"cost" json:"cost,omitempty"`
	// Utilization gives what MBU and MFU need that perfgate cannot find
	// itself: the model's size and shape, the GPUs' peaks.
	Utilization Utilization `yaml:"utilization" json:"utilization,omitzero"`
	// Seed makes every random choice of a run (arrivals, synthetic workloads) repeatable.
	Seed int64 `yaml:"seed" json:"seed"`
	// Salt, when not false, starts each pass over a workload (each
	// repetition, the warm-up, each cycle of a workload shorter than the
	// run) with a short seeded prefix at the start of its first message or
	// prompt, so that no measured request is served from a prompt cache an
	// earlier pass filled. nil is the default, true; a scenario's own salt
	// wins over it. Use SaltOf for the value that applies to a scenario.
	Salt *bool `yaml:"salt" json:"salt,omitempty"`

	// Dir is the directory of the config file; relative paths resolve against it.
	Dir string `yaml:"-" json:"-"`
	// Path is the file the config was loaded from.
	Path string `yaml:"-" json:"-"`
	// Warnings are things that are allowed but probably not meant, found
	// while loading (a percentile beyond what a repetition's requests can
	// show, say); the CLI shows them. They are not part of the config.
	// Whether the gates can decide at the configured repetitions is not a
	// matter of the file alone but of how it is compared: internal/gate's
	// Check says it.
	Warnings []Problem `yaml:"-" json:"-"`

	// src is where the file put each field, for problems found after
	// loading (ProblemAt); nil for a config built in code.
	src *source
}

// ProblemAt is a problem with the field at path (repetitions,
// scenarios[1].capacity.repetitions), placed at the line and column the
// file gives it (or its nearest parent) when the config was loaded from a
// file: for the checks made outside this package, on a config already
// loaded (internal/gate's decidability rule).
func (c *Config) ProblemAt(path, format string, args ...any) Problem {
	src := c.src
	if src == nil {
		src = newSource(c.Path)
	}
	return src.problem(path, format, args...)
}

// Target says where and how to send requests.
type Target struct {
	// BaseURL is the server root, e.g. http://127.0.0.1:8000. With
	// BaseURLs it is their first (set one or the other).
	BaseURL string `yaml:"base_url" json:"base_url"`
	// BaseURLs are the roots of several replicas of one server, which
	// perfgate spreads requests over itself, round-robin, leaving out a
	// replica that refused a connection until its health check answers
	// again: a process stack starts one replica per URL, and a scenario's
	// fault can kill one (docs/faults.md). Empty: one server, BaseURL.
	BaseURLs []string `yaml:"base_urls" json:"base_urls,omitempty"`
	// API is "chat" (/v1/chat/completions) or "completions" (/v1/completions).
	API string `yaml:"api" json:"api"`
	// Model is the model name to send, or "auto" to take the first of /v1/models.
	Model string `yaml:"model" json:"model"`
	// Revision is the model's revision (a commit or tag of its weights),
	// recorded in the result's identity; empty takes --revision from the
	// stack's command line, if any.
	Revision string `yaml:"revision" json:"revision,omitempty"`
	// Quantization is the model's quantisation (fp8, awq, int4...),
	// recorded in the result's identity; empty takes --quantization (or
	// TGI's --quantize) from the stack's command line, if any.
	Quantization string `yaml:"quantization" json:"quantization,omitempty"`
	// Headers are sent with every request (e.g. Authorization: Bearer ...).
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
	// Timeout bounds one request, connect to end of stream.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// Adapters are the LoRA adapters the server can load at run time, by
	// name, each with its path as the engine's load endpoint takes it
	// (vLLM's /v1/load_lora_adapter lora_path). A scenario with
	// cold_adapters reloads each adapter its workload names before every
	// repetition.
	Adapters map[string]string `yaml:"adapters" json:"adapters,omitempty"`
}

// Scenario is one workload replayed at one load shape.
type Scenario struct {
	// Name identifies the scenario in results, reports and file names
	// (baselines/<name>.json), so it is letters, digits, '.', '_' and '-'.
	Name string `yaml:"name" json:"name"`
	// Workload is a JSONL file, relative to the config file. Exactly one of
	// Workload and Synth is set.
	Workload string `yaml:"workload" json:"workload,omitempty"`
	// Synth generates the workload in memory from length distributions.
	Synth *workload.SynthSpec `yaml:"synth" json:"synth,omitempty"`
	Load  Load                `yaml:"load" json:"load"`
	// SLO are the per-request objectives that define goodput.
	SLO SLO `yaml:"slo" json:"slo"`
	// Requests per repetition; 0 means no request limit. The workload is
	// replayed in order and wraps around when Requests is larger than it.
	Requests int `yaml:"requests" json:"requests,omitempty"`
	// Gates changes the gates for this scenario, over the top-level gates.
	Gates map[string]string `yaml:"gates" json:"gates,omitempty"`
	// ColdAdapters reloads every adapter the workload names
	// (target.adapters) before each repetition, so that the first request
	// to each is served by a freshly loaded adapter: the repetition's
	// cold-adapter subset is those first requests, its warm-adapter subset
	// the adapters' others.
	ColdAdapters bool `yaml:"cold_adapters" json:"cold_adapters,omitempty"`
	// FreshStack starts a stack of its own for this scenario (stopping the
	// one before it), rather than sharing the running one.
	FreshStack bool `yaml:"fresh_stack" json:"fresh_stack,omitempty"`
	// MaxErrorRate is the largest share of failed requests a repetition may
	// have before the run counts as broken (exit 3).
	MaxErrorRate float64 `yaml:"max_error_rate" json:"max_error_rate"`
	// Duration per repetition; 0 means no time limit. When both Requests and
	// Duration are set, whichever comes first ends the repetition. When both
	// are 0 (the default), one repetition is one pass over the workload: every
	// request of the workload file (or of the synthetic workload) once.
	Duration time.Duration `yaml:"duration" json:"duration,omitempty"`
	// Salt overrides the top-level salt for this scenario; nil takes it.
	// Use Config.SaltOf for the value that applies.
	Salt *bool `yaml:"salt" json:"salt,omitempty"`
	// Capacity, when set, measures the scenario by a capacity search rather
	// than at one load: load gives only the shape (type, burstiness), the
	// search the rate or concurrency.
	Capacity *Capacity `yaml:"capacity" json:"capacity,omitempty"`
	// Headroom, when set, measures the scenario by a headroom search: the
	// longest context its users can hold, or the most users at a context,
	// before the server refuses, cuts, preempts or falls over.
	Headroom *Headroom `yaml:"headroom" json:"headroom,omitempty"`
	// Fault, when set, disturbs every repetition of the scenario on
	// purpose (a replica killed at a set time), to measure the errors, the
	// capacity left and the recovery.
	Fault *Fault `yaml:"fault" json:"fault,omitempty"`
	// Point is set on the scenarios Config.Measured expands from a sweep;
	// nil on scenarios as written.
	Point *SweepPoint `yaml:"-" json:"-"`
}

// The ways perfgate ab holds its two stacks (AB.Mode).
const (
	// ABCoResident keeps both stacks up at once, on different ports, and
	// switches the load between them without restarts.
	ABCoResident = "co-resident"
	// ABSwap runs one stack at a time, stopping one and starting the other
	// at every change of arm: every start is a cold-start sample.
	ABSwap = "swap"
)

// How perfgate ab warms a scenario up in a round when its arm's stack has
// not been restarted since its last warm-up of the scenario (AB.Rewarm).
// An arm whose stack was (re)started always gets a full warm-up.
const (
	// RewarmShort sends the scenario's load for one warmup.window, judges
	// nothing, and drains: the stack was steady at that load and stayed up.
	RewarmShort = "short"
	// RewarmFull warms up to steady state again, as after a start.
	RewarmFull = "full"
)

// AB configures perfgate ab: base and candidate measured interleaved on one
// runner.
type AB struct {
	// Mode is co-resident (the default) or swap; --mode overrides it.
	Mode string `yaml:"mode" json:"mode"`
	// Rewarm is short (the default) or full: how a round warms up a
	// scenario on an arm whose stack stayed up since its last warm-up of
	// it (co-resident mode after round 1; swap mode where ABBA leaves an
	// arm running across a round's boundary). --rewarm overrides it.
	Rewarm string `yaml:"rewarm" json:"rewarm"`
	// Rounds are the A/B's rounds, as repetitions are a gate's: a number,
	// or a range whose looks stop at the first that decides every gate.
	// A paired test needs more rounds than two samples need repetitions
	// (its smallest p-value with n pairs is 2^−n), so they are a key of
	// their own (DefaultABRounds).
	Rounds Repetitions `yaml:"rounds" json:"rounds"`
}

// Load shape types.
const (
	LoadClosed  = "closed"  // Concurrency users, each sends its next request when the last ends
	LoadPoisson = "poisson" // open loop, exponential inter-arrival times at Rate
	LoadGamma   = "gamma"   // open loop, gamma inter-arrival times at Rate with Burstiness
	LoadTrace   = "trace"   // each request at its arrival_ms, divided by Speedup
	LoadStep    = "step"    // open loop at Steps[0], then each next rate of Steps from its At: a spike
)

// Load is the load shape of a scenario.
type Load struct {
	// Type is one of closed, poisson, gamma, trace, step.
	Type string `yaml:"type" json:"type"`
	// Concurrency is the number of closed-loop users.
	Concurrency int `yaml:"concurrency" json:"concurrency,omitempty" perfgate:"sweepable"`
	// Rate is the open-loop target in requests per second.
	Rate float64 `yaml:"rate" json:"rate,omitempty" perfgate:"sweepable"`
	// Burstiness is the gamma shape parameter: 1 is Poisson, < 1 burstier, > 1 smoother.
	Burstiness float64 `yaml:"burstiness" json:"burstiness,omitempty"`
	// MaxInFlight caps open-loop requests in flight; 0 means no cap.
	MaxInFlight int `yaml:"max_in_flight" json:"max_in_flight,omitempty"`
	// Speedup divides trace arrival times (2 replays twice as fast).
	Speedup float64 `yaml:"speedup" json:"speedup,omitempty"`
	// ThinkTime is the pause, in milliseconds, between a session turn's
	// response and the next turn's send when the workload gives the turn no
	// think_ms: a distribution in the syntax workload.ParseDist reads
	// ("lognormal:mean=3000,stddev=2000"), each draw a whole number of
	// milliseconds from 1 to 1,048,576 (about 17 minutes), as lengths are.
	// Empty is no pause. A workload without sessions refuses it.
	ThinkTime string `yaml:"think_time" json:"think_time,omitempty"`
	// Overload is what an open-loop scenario the server cannot keep up
	// with does: fail the run (OverloadFail, the default, also written as
	// empty) or be measured and labelled so (OverloadMeasure).
	Overload string `yaml:"overload" json:"overload,omitempty"`
	// Arrivals is which arrivals an open loop draws for each repetition:
	// one seeded schedule replayed in every repetition (ArrivalsSame, the
	// default, also written as empty) or a draw of its own for each
	// (ArrivalsFresh).
	Arrivals string `yaml:"arrivals" json:"arrivals,omitempty"`
	// Sweep holds the values when rate or concurrency is a list in YAML
	// (`rate: [1, 2, 4]`): the scenario is measured once per value, as
	// Config.Measured expands it, and Rate and Concurrency stay 0. nil for
	// a load at one rate or concurrency.
	Sweep []float64 `yaml:"-" json:"sweep,omitempty"`
	// SweepParam is what Sweep varies: rate or concurrency; empty without a
	// sweep.
	SweepParam string `yaml:"-" json:"sweep_param,omitempty"`
	// Steps are a step load's rates in requests per second, in order: the
	// list given to rate (`rate: [4, 16]`). The first holds from the start
	// of the repetition, each next one from its At. nil for other loads.
	Steps []float64 `yaml:"-" json:"steps,omitempty"`
	// At is when each step after the first begins, from the start of the
	// repetition: one duration per step after the first (`at: 60s`, or
	// `at: [60s, 120s]` for three rates).
	At StepTimes `yaml:"at" json:"at,omitempty"`
	// RecoveryWindow is the span of send times over which a step load
	// takes TTFT p95 when it looks for the recovery (DefaultRecoveryWindow
	// when not set): shorter resolves the moment better, longer has more
	// requests in each window.
	RecoveryWindow time.Duration `yaml:"recovery_window" json:"recovery_window,omitempty"`
}

// StepTimes are a step load's step times: one duration in YAML, or a
// list of them.
type StepTimes []time.Duration

// UnmarshalYAML reads one duration ("60s") or a list of them.
func (st *StepTimes) UnmarshalYAML(b []byte) error {
	var one string
	if err := yaml.Unmarshal(b, &one); err == nil {
		d, err := parseStepTime(one)
		if err != nil {
			return err
		}
		*st = StepTimes{d}
		return nil
	}
	var list []string
	if err := yaml.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("want a duration (60s) or a list of durations ([60s, 120s])")
	}
	out := make(StepTimes, len(list))
	for i, x := range list {
		d, err := parseStepTime(x)
		if err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = d
	}
	*st = out
	return nil
}

// parseStepTime reads one step time, a Go duration ("60s", "1m30s").
func parseStepTime(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 60s, got %q", s)
	}
	return d, nil
}

// The parameters a sweep can vary (Load.SweepParam, SweepPoint.Param).
const (
	SweepRate        = "rate"
	SweepConcurrency = "concurrency"
)

// SweepPoint marks a scenario expanded from a sweep: one of its values.
type SweepPoint struct {
	// Of is the swept scenario's name as configured.
	Of string
	// Param is rate or concurrency, Value this point's value of it.
	Param string
	Value float64
	// Index is the point's 0-based place in the sweep, and Points how many
	// points the sweep has.
	Index  int
	Points int
}

// The capacity search's metrics (Capacity.Metric).
const (
	// CapacityRequestRate searches the offered rate of an open loop.
	CapacityRequestRate = "request_rate"
	// CapacityConcurrency searches the number of closed-loop users.
	CapacityConcurrency = "concurrency"
)

// The capacity search's rules for "a probe holds" (Capacity.Holds).
const (
	// HoldsEvery: every repetition of the probe meets every SLO.
	HoldsEvery = "every"
	// HoldsBound: a one-sided Student-t bound (at Confidence) on the mean
	// over repetitions of each SLO statistic's logarithm is within its
	// limit.
	HoldsBound = "bound"
)

// Capacity configures a capacity search: the highest offered rate (open
// loop) or concurrency (closed loop) at which the SLOs hold, found by
// bracketing then bisecting, each probe judged on its own repetitions.
type Capacity struct {
	// SLO maps a latency statistic of a repetition (ttft.p99, tpot.p99,
	// itl.p95, e2e.mean, ...) to its limit.
	SLO map[string]time.Duration `yaml:"slo" json:"slo"`
	// Metric is request_rate or concurrency; the default follows load.type
	// (closed searches concurrency).
	Metric string `yaml:"metric" json:"metric"`
	// Min and Max bound the search, in requests per second or users.
	Min float64 `yaml:"min" json:"min"`
	Max float64 `yaml:"max" json:"max"`
	// Start is the first probe; the default is the geometric mean of Min
	// and Max (rounded for users).
	Start float64 `yaml:"start" json:"start"`
	// Resolution is the relative width at which bisection stops.
	Resolution float64 `yaml:"resolution" json:"resolution"`
	// Holds is the rule for a probe that holds: every or bound.
	Holds string `yaml:"holds" json:"holds"`
	// Confidence is the bound rule's one-sided confidence.
	Confidence float64 `yaml:"confidence" json:"confidence,omitempty"`
	// Repetitions is how many repetitions each probe measures; the default
	// is the config's repetitions (its max, for a range).
	Repetitions int `yaml:"repetitions" json:"repetitions"`
	// Probes is the budget: the most probes the search may make; the
	// default is the worst case for Min, Max and Resolution.
	Probes int `yaml:"probes" json:"probes"`
}

// SLO are per-request service-level objectives; zero means not set. A request
// counts towards goodput when it succeeded and met every objective that is set.
type SLO struct {
	TTFT time.Duration `yaml:"ttft" json:"ttft,omitempty"`
	TPOT time.Duration `yaml:"tpot" json:"tpot,omitempty"`
	E2E  time.Duration `yaml:"e2e" json:"e2e,omitempty"`
}

// DefaultSalt is whether passes over a workload are salted when the config
// does not say; see Config.Salt.
const DefaultSalt = true

// SaltOf reports whether the passes of scenario s over its workload are
// salted: the scenario's salt, else the top-level salt, else DefaultSalt
// (true). Eval items are never salted, whatever it says.
func (c *Config) SaltOf(s Scenario) bool {
	switch {
	case s.Salt != nil:
		return *s.Salt
	case c.Salt != nil:
		return *c.Salt
	}
	return DefaultSalt
}

// ThinkDist parses ThinkTime: nil when it is empty. An empirical
// distribution is refused (a think time is drawn from parameters, not from a
// file of lengths).
func (l Load) ThinkDist() (*workload.Dist, error) {
	if l.ThinkTime == "" {
		return nil, nil
	}
	d, err := workload.ParseDist(l.ThinkTime)
	if err != nil {
		return nil, fmt.Errorf("want a distribution of milliseconds like lognormal:mean=3000,stddev=2000: %w", err)
	}
	if d.Type == workload.DistEmpirical {
		return nil, fmt.Errorf("empirical is not supported for a think time; want fixed, uniform, normal or lognormal")
	}
	return &d, nil
}
