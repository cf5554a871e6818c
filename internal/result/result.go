package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/safeio"
)

// Schema names the version of the result format perfgate writes. Read also
// reads every earlier version (SchemaV1), converting it to this one, and
// refuses any other value: a baseline committed years ago still compares.
const Schema = "perfgate/result/v2"

// SchemaV1 is the first version of the result format, written until the
// result had types of its own: the same fields, but its SLOs in nanoseconds
// ("slo": {"ttft": 250000000}) where v2 has milliseconds ({"ttft_ms": 250}).
const SchemaV1 = "perfgate/result/v1"

// KnownSchema reports whether s names a version of the result format that
// Read reads.
func KnownSchema(s string) bool { return s == Schema || s == SchemaV1 }

// Result is the content of result.json.
type Result struct {
	Schema     string           `json:"schema"`
	Identity   Identity         `json:"identity"`
	StartedAt  time.Time        `json:"started_at"`
	FinishedAt time.Time        `json:"finished_at"`
	Scenarios  []ScenarioResult `json:"scenarios"`
	// Compare is the comparison settings of the config that ran, so that
	// `perfgate compare` needs no config.
	Compare *CompareSettings `json:"compare,omitempty"`
	// Telemetry says where the repetitions' engine and GPU telemetry came
	// from, or why there was none; nil in results from before telemetry.
	Telemetry *TelemetryInfo `json:"telemetry,omitempty"`
	// Utilization is what the repetitions' MBU and MFU rest on; nil when
	// perfgate could not compute them (no model size, no GPU peaks).
	Utilization *UtilizationBasis `json:"utilization,omitempty"`
	// Cost is the price the repetitions' cost figures were computed at;
	// nil when the config set none.
	Cost *Price `json:"cost,omitempty"`
	// AB is set when the result is one arm of an A/B (perfgate ab): its
	// repetition r was measured in round r, beside the other arm's.
	AB *ABArm `json:"ab,omitempty"`
	// Percentiles are the latency percentiles the run measured of each
	// latency distribution, ascending (the config's percentiles key); nil
	// is metric.DefaultPercentiles, as in results from before the key. Use
	// PercentileNames.
	Percentiles []string `json:"percentiles,omitempty"`
	// Incomplete is set on a result written by a run that did not finish:
	// an interrupted or failed perfgate ab writes each arm's results so far
	// (as <name>.partial.json). What it holds was measured, but it is not a
	// whole run, so whatever judges or records results refuses it
	// (CheckComplete). Nil on every finished run's result.
	Incomplete *Incomplete `json:"incomplete,omitempty"`
}

// Incomplete says why a result is not a whole run's.
type Incomplete struct {
	// Reason is the first line of the error the run stopped with
	// ("interrupted: ...", "round 4, the base arm: ...").
	Reason string `json:"reason"`
	// Rounds is how many rounds of the A/B both arms had measured when it
	// stopped. The arm that went first in the round it stopped in may hold
	// one repetition more.
	Rounds int `json:"rounds"`
}

// IncompleteError is CheckComplete's refusal of an incomplete result. It
// wraps ErrInvalid: such a file is bad input to a comparison or a
// baseline, exit 2.
type IncompleteError struct {
	Incomplete Incomplete
}

// Error says the result is incomplete, why, and what may be done with it.
func (e *IncompleteError) Error() string {
	rounds := "rounds"
	if e.Incomplete.Rounds == 1 {
		rounds = "round"
	}
	return fmt.Sprintf("an incomplete result: the run stopped after %d complete %s (%s); it holds what was measured before it stopped, which no comparison or baseline takes: measure again",
		e.Incomplete.Rounds, rounds, e.Incomplete.Reason)
}

// Unwrap makes an IncompleteError an ErrInvalid.
func (e *IncompleteError) Unwrap() error { return ErrInvalid }

// CheckComplete refuses a result that Incomplete marks (an *IncompleteError),
// for compare, gate, baseline promote and record, and export: a run that
// did not finish is never a verdict's evidence nor a baseline.
func (r *Result) CheckComplete() error {
	if r.Incomplete == nil {
		return nil
	}
	return &IncompleteError{Incomplete: *r.Incomplete}
}

// ABArm says which arm of an A/B a result is, and how the A/B ran.
type ABArm struct {
	// Arm is base or candidate.
	Arm string `json:"arm"`
	// Mode is co-resident or swap.
	Mode string `json:"mode"`
	// First lists, for each round, whether this arm went first in it.
	First []bool `json:"first"`
}

// Identity says exactly what was measured, so that two results that differ in
// what matters are never silently compared.
type Identity struct {
	PerfgateVersion string `json:"perfgate_version"`
	ConfigHash      string `json:"config_hash"`
	Target          Target `json:"target"`
	// Server is what the server says of itself (its identity endpoint and /v1/models).
	Server Server `json:"server"`
	// Stack is how the server was started: its kind and its command line or image.
	Stack Stack `json:"stack"`
	Host  Host  `json:"host"`
	// GPUs are the accelerators the stack ran on, when known; two results
	// measured on different GPU models or counts are not compared.
	GPUs []GPU `json:"gpus,omitempty"`
	// Simulated is true when the target is perfgate's own simulator: nothing
	// measured on it is a GPU figure.
	Simulated bool `json:"simulated,omitempty"`
}

// Target is where requests went.
type Target struct {
	BaseURL string `json:"base_url"`
	API     string `json:"api"`
	Model   string `json:"model"`
	// Revision and Quantization are the model's revision and quantisation
	// as configured (target.revision, target.quantization), or as read from
	// the stack's command line (--revision, --quantization, --quantize);
	// empty when neither says.
	Revision     string `json:"revision,omitempty"`
	Quantization string `json:"quantization,omitempty"`
}

// Server is the server's own account of itself.
type Server struct {
	// Engine is vllm, tgi, sglang, llamacpp or perfgate-sim; empty when the
	// server answered no identity endpoint perfgate knows.
	Engine  string   `json:"engine,omitempty"`
	Version string   `json:"version,omitempty"`
	Models  []string `json:"models,omitempty"`
	// Endpoint is the path the identity came from (/version, /info, ...).
	Endpoint string `json:"endpoint,omitempty"`
	// Raw is that endpoint's body as the server sent it (JSON), when it had one.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// Stack is how the stack under test was started: part of what was measured.
type Stack struct {
	// Kind is external, process, docker or kubernetes.
	Kind string `json:"kind"`
	// Command is a process stack's argv.
	Command []string `json:"command,omitempty"`
	// Replicas is how many replicas a process stack started (one per
	// target.base_urls entry), or a kubernetes stack's ready pods; absent
	// for one process.
	Replicas int `json:"replicas,omitempty"`
	// Image is a docker stack's image as configured, ImageID the image the
	// engine resolved it to (sha256:...), and Args its arguments.
	Image   string   `json:"image,omitempty"`
	ImageID string   `json:"image_id,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Namespace is a kubernetes stack's namespace (of the run's own);
	// Images its ready pods' images, by digest where the cluster said;
	// GPUProducts the GPU products of their nodes
	// (nvidia.com/gpu.product), GPUs the GPUs they asked for; Replicas
	// then counts its ready pods.
	Namespace   string   `json:"namespace,omitempty"`
	Images      []string `json:"images,omitempty"`
	GPUProducts []string `json:"gpu_products,omitempty"`
	GPUs        int      `json:"gpus,omitempty"`
	// PodStartsS are a kubernetes stack's ready pods' starts, scheduled to
	// ready, in seconds (each replica's cold start on the cluster, image
	// pulls included; the API server's clock, to the second).
	PodStartsS []float64 `json:"pod_starts_s,omitempty"`
}

// GPU is one accelerator of the serving machine.
type GPU struct {
	// Index is the GPU's index as the driver numbers them.
	Index       int    `json:"index"`
	Model       string `json:"model"`
	UUID        string `json:"uuid,omitempty"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	Driver      string `json:"driver,omitempty"`
	CUDA        string `json:"cuda,omitempty"`
}

// Host describes the machine perfgate ran on (the client side).
type Host struct {
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	CPUModel    string `json:"cpu_model,omitempty"`
	CPUs        int    `json:"cpus"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	GoVersion   string `json:"go_version"`
}

// ScenarioResult is one scenario measured over its repetitions.
type ScenarioResult struct {
	Name         string `json:"name"`
	Workload     string `json:"workload"` // file path, or "synth"
	WorkloadHash string `json:"workload_hash"`
	Load         Load   `json:"load"`
	SLO          SLO    `json:"slo"`
	// ColdStartMS is start → ready of the stack this scenario ran on, in
	// milliseconds; 0 for an external stack. Scenarios that share one stack
	// start repeat its value.
	ColdStartMS float64 `json:"cold_start_ms,omitempty"`
	// ColdStartsMS are the cold starts of every start of the stack the
	// scenario's repetitions ran on, in order, when there was more than one
	// (an A/B in swap mode restarts its stacks at every change of arm): the
	// cold_start gate's samples. Empty otherwise.
	ColdStartsMS []float64 `json:"cold_starts_ms,omitempty"`
	// Warmup is how the scenario was brought to steady state. On an arm of
	// an A/B, which warms each scenario up in every round, it is the first
	// full warm-up, or the first full one that was not steady (Warmups
	// holds every round's).
	Warmup *Warmup `json:"warmup,omitempty"`
	// Warmups are every warm-up of the scenario on one arm of an A/B
	// (perfgate ab), in round order, each with its round and its kind: a
	// full warm-up to steady state, or a short re-warm of a stack that
	// stayed up since its last warm-up. Empty outside an A/B.
	Warmups []RoundWarmup `json:"warmups,omitempty"`
	// Gates are the gates configured for the scenario when it was run, so
	// that `perfgate compare` needs no config.
	// An empty list (every gate off) is kept apart from a missing one
	// (a result from before gates were recorded: the defaults).
	Gates []Gate `json:"gates"`
	// Sampling lists the sampling parameters the workload's requests set,
	// each with its distinct values ("temperature": "0, 0.7"); a parameter
	// no request sets is left out (the server's default applied).
	Sampling map[string]string `json:"sampling,omitempty"`
	// WorkloadShape summarises the workload replayed (lengths, arrivals,
	// prefix sharing, sessions); nil in results from before it was kept.
	WorkloadShape *WorkloadShape `json:"workload_shape,omitempty"`
	// Seed is the config's seed the scenario ran with, which draws its
	// arrivals, its salts and a synthetic workload without a seed of its
	// own: two results of a scenario that recorded the same seed (and the
	// same workload, load and capacity search, which a comparison checks)
	// sent the same requests at the same times, repetition r on one side
	// as repetition r on the other. Under load.arrivals: fresh a capacity
	// gate then compares their samples pair by pair; under same, every
	// repetition replayed one schedule, and two seeds are two schedules
	// (a comparison warns). nil in results from before it was recorded:
	// unknown.
	Seed *int64 `json:"seed,omitempty"`
	// Salt is "per-pass" when every pass over the workload was salted so
	// that no prompt cache could serve it from an earlier pass, "off" when
	// the config turned salting off; empty in results from before perfgate
	// salted.
	Salt        string       `json:"salt,omitempty"`
	Repetitions []Repetition `json:"repetitions"`
	// Sweep is set on each point of a swept scenario (load.rate or
	// load.concurrency a list); nil otherwise and in results from before
	// sweeps.
	Sweep *SweepPoint `json:"sweep,omitempty"`
	// Capacity is a capacity search's outcome; nil otherwise and in results
	// from before capacity. Repetitions then holds the repetitions at the
	// capacity point (Capacity.At), and Load the configured shape with no
	// rate or concurrency: the search chose them.
	Capacity *Capacity `json:"capacity,omitempty"`
	// Quality holds the eval suites this scenario's run answered.
	Quality []SuiteResult `json:"quality,omitempty"`
}

// Warmup records a scenario's warm-up: never measured, but the evidence that
// measurement began at steady state.
type Warmup struct {
	// Method is windows, mser5 or none; short for a short re-warm of an
	// A/B's round (see RoundWarmup).
	Method string `json:"method"`
	// Duration is how long warm-up ran.
	Duration Seconds `json:"duration_s"`
	// Requests is how many warm-up requests completed (and Failed failed).
	Requests int `json:"requests"`
	Failed   int `json:"failed"`
	// Steady is false when warm-up reached its maximum without steady state
	// (and warmup.on_unsteady let the run go on).
	Steady bool `json:"steady"`
	// Windows is the windowed series steadiness was judged on.
	Windows []WarmupWindow `json:"windows,omitempty"`
	// SteadyFrom is the index in Windows of the first window judged steady:
	// the first of the agreeing windows (windows), or the MSER-5 truncation
	// point (mser5).
	SteadyFrom int `json:"steady_from"`
	// Errors counts the failed warm-up requests by kind (as
	// Repetition.Errors); FirstError is the message of the first.
	Errors     map[string]int `json:"errors,omitempty"`
	FirstError string         `json:"first_error,omitempty"`
	// Drain is how long warm-up took, after it stopped sending, for its
	// requests in flight to end and, where the engine's metrics page shows
	// them, for the engine's running and waiting requests to reach zero:
	// the gap between warm-up's last request and the first repetition
	// (before any cooldown). Absent in results from before it.
	Drain *Seconds `json:"drain_s,omitempty"`
	// DrainCut is how many warm-up requests were still in flight when the
	// drain's bound (target.timeout) passed, and were cancelled.
	DrainCut int `json:"drain_cut,omitempty"`
	// DrainQueue is what the engine still had running or waiting when the
	// drain's bound passed (nil: it reached zero, or the engine shows no
	// queue).
	DrainQueue *float64 `json:"drain_queue,omitempty"`
	// Overload is the overload detector's evidence over the warm-up's
	// requests, for an open loop that was not steady (nil otherwise, or
	// with fewer than 50 requests sent). When Overloaded, the server could
	// not keep up: warm-up could never be steady, the run measured anyway,
	// and the scenario's overload verdict counts it (see
	// ScenarioResult.Overload).
	Overload *Overload `json:"overload,omitempty"`
}

// The kinds of warm-up a round of an A/B gives a scenario
// (RoundWarmup.Kind).
const (
	// WarmupFull is a warm-up to steady state, as a run's: the first of a
	// stack's after every start.
	WarmupFull = "full"
	// WarmupShort is a short re-warm of a stack that has not been
	// restarted since its last warm-up of the scenario: one
	// warmup.window of the scenario's load, not judged, then the drain
	// (config.RewarmShort). It is also the Method of its record.
	WarmupShort = "short"
)

// RoundWarmup is one round's warm-up of a scenario on one arm of an A/B.
type RoundWarmup struct {
	// Round is the round whose repetition it preceded, from 1.
	Round int `json:"round"`
	// Kind is full or short (WarmupFull, WarmupShort).
	Kind string `json:"kind"`
	// Warmup is its record. A short re-warm's has Method short, Steady
	// false (it is not judged) and at most one window.
	Warmup *Warmup `json:"warmup"`
}

// WarmupWindow is one window of the warm-up series.
type WarmupWindow struct {
	// End is the window's end, from the start of warm-up.
	End Seconds `json:"end_s"`
	// Requests is the number of requests whose first token came in the window.
	Requests int `json:"requests"`
	// OutputThroughput is the output tokens that arrived in the window, per
	// second (a request's tokens are spread over its chunks' arrival times).
	OutputThroughput float64 `json:"output_throughput"`
	// TTFT is the median TTFT of the requests whose first token came in the
	// window, in milliseconds.
	TTFT float64 `json:"ttft_ms"`
	// Failed is the number of requests that failed in the window (by the
	// time they ended).
	Failed int `json:"failed,omitempty"`
	// Waiting is the engine's count of waiting requests at the window's
	// end, from its metrics page; nil where that page shows none.
	Waiting *float64 `json:"waiting,omitempty"`
}

// ReadyReplicas is how many replicas were ready from AtS, in seconds from
// the start of the repetition, on.
type ReadyReplicas struct {
	AtS   float64 `json:"at_s"`
	Ready int     `json:"ready"`
}

// MaxReadyReplicas bounds a repetition's Replicas: a count that changed at
// every look of an hour's repetition.
const MaxReadyReplicas = 4000

// Repetition summarises one measured repetition of a scenario.
type Repetition struct {
	Index int `json:"index"` // 1-based
	// Duration is the measured window: the repetition's start to the last response's end.
	Duration Seconds `json:"duration_s"`

	Sent      int            `json:"sent"`
	Completed int            `json:"completed"` // succeeded
	Failed    int            `json:"failed"`
	Errors    map[string]int `json:"errors,omitempty"` // failed requests by kind (connect, http, stream, timeout, canceled, no_output, request, session)
	ErrorRate float64        `json:"error_rate"`       // failed / sent
	// FirstError is the message of the repetition's first failed request,
	// so that a broken run says what went wrong.
	FirstError string `json:"first_error,omitempty"`

	PromptTokens int `json:"prompt_tokens"` // of completed requests
	OutputTokens int `json:"output_tokens"`
	// TokensFrom is "usage" when every completed request's counts came from the
	// server's usage, "chunks" when none did, "mixed" otherwise.
	TokensFrom string `json:"tokens_from"`
	// UsageRefused counts the completed requests whose usage perfgate did
	// not believe (a negative count, one past max_tokens, one far from the
	// chunks that arrived): their tokens are counted from the stream.
	UsageRefused int `json:"usage_refused,omitempty"`
	// Structured counts the completed requests that asked for structured
	// output (Record.Structured); StructuredErrors those whose answer was
	// not what they asked for, StructuredErrorRate their share (0 when
	// there were none), and FirstStructuredError says what was wrong with
	// the first. The wrong answers are kept out of the latency statistics
	// and goodput.
	Structured           int     `json:"structured,omitempty"`
	StructuredErrors     int     `json:"structured_errors,omitempty"`
	StructuredErrorRate  float64 `json:"structured_error_rate,omitempty"`
	FirstStructuredError string  `json:"first_structured_error,omitempty"`
	// Reasoning summarises the completed requests that reasoned (a
	// reasoning model's thinking before its answer); nil when none did.
	Reasoning *ReasoningStats `json:"reasoning,omitempty"`
	// Retries counts the requests sent a second time, on a new connection,
	// because the server had closed the reused one before answering (as
	// llama.cpp's server does after every stream): no server error.
	Retries int `json:"retries,omitempty"`

	RequestThroughput float64 `json:"request_throughput"` // completed requests / s
	OutputThroughput  float64 `json:"output_throughput"`  // output tokens / s
	InputThroughput   float64 `json:"input_throughput"`   // prompt tokens / s
	// PrefillThroughput is the prompt tokens of the completed requests per
	// second of their TTFT (the sums' ratio): how fast a request's prompt
	// got through to its first token, queueing included. Beside
	// DecodeThroughput it shows a change that helps one phase and hurts the
	// other. nil in results from before it, and when no completed request
	// had a first token.
	PrefillThroughput *float64 `json:"prefill_throughput,omitempty"`
	// DecodeThroughput is the output tokens after the first per second of
	// the time after the first token (the sums' ratio over the completed
	// requests with two or more output tokens): a request's own decode
	// speed, 1/TPOT weighted by tokens. nil in results from before it, and
	// when no request had two tokens.
	DecodeThroughput *float64 `json:"decode_throughput,omitempty"`
	// Goodput is completed requests per second that met every SLO of the scenario.
	Goodput      float64 `json:"goodput"`
	GoodRequests int     `json:"good_requests"`
	// GoodPromptTokens and GoodOutputTokens are the tokens of the requests
	// that met every SLO.
	GoodPromptTokens int `json:"good_prompt_tokens"`
	GoodOutputTokens int `json:"good_output_tokens"`
	// Concurrency is the mean number of requests in flight over the window.
	Concurrency float64 `json:"concurrency"`

	TTFT Stats `json:"ttft_ms"`
	TPOT Stats `json:"tpot_ms"`
	ITL  Stats `json:"itl_ms"`
	E2E  Stats `json:"e2e_ms"`

	// Open-loop only: what the schedule asked for and what was achieved.
	Schedule *ScheduleStats `json:"schedule,omitempty"`
	// Overload is whether the server kept up with the open loop's offered
	// rate (see Overload); nil for a closed loop, in results from before
	// it, and when the repetition sent too few requests to judge.
	Overload *Overload `json:"overload,omitempty"`

	// Sessions summarises the workload's sessions as replayed; nil when
	// the workload has none.
	Sessions *SessionStats `json:"sessions,omitempty"`

	// Recovery is how a step load's repetition came back from its step,
	// or a fault scenario's from its fault; nil for others.
	Recovery *Recovery `json:"recovery,omitempty"`

	// Fault is what the scenario's fault did in this repetition; nil
	// without one. Its recovery is Recovery, counted from the fault.
	Fault *Fault `json:"fault,omitempty"`

	// Replicas are a kubernetes stack's ready pods behind its Service
	// from the repetition's start until it was measured (a fault's
	// replacement waited for included): the count at its start and each
	// change after (an autoscaler's new pods, a deleted pod and its
	// replacement), as perfgate's watch of the cluster saw them, about
	// once a second, at seconds from the start. Nil on other stacks.
	Replicas []ReadyReplicas `json:"replicas,omitempty"`

	// Histograms holds each metric's HDR histogram (microseconds), V2-compressed,
	// so later stages can pool repetitions or draw distributions.
	Histograms map[string][]byte `json:"histograms,omitempty"`

	// Subsets are subsets of the requests measured apart, by name
	// (SubsetStructured, SubsetFree, metric.ModelSubset): structured and
	// free requests where the repetition had both, each model where it
	// sent to two or more. Nil when it had neither, and in results from
	// before them. SubsetsCut counts the requests to models past
	// MaxModelSubsets, measured in the whole only.
	Subsets    map[string]*Subset `json:"subsets,omitempty"`
	SubsetsCut int                `json:"subsets_cut,omitempty"`

	// Engine is what the engine's metrics page said during the window;
	// nil when it was not read (see Result.Telemetry).
	Engine *EngineTelemetry `json:"engine,omitempty"`
	// GPU is what the GPUs did during the window; nil when no GPU source
	// was available.
	GPU *GPUTelemetry `json:"gpu,omitempty"`
	// Cost is what the window's tokens cost; nil when the config sets no
	// price.
	Cost *Cost `json:"cost,omitempty"`
	// Utilization is the window's MBU and MFU; nil when the run has no
	// basis for them (Result.Utilization).
	Utilization *Utilization `json:"utilization,omitempty"`
}

// ScheduleStats reports how well an open-loop repetition kept to its schedule.
// Latency measured from the scheduled send time includes any time the client
// fell behind, so a slow client cannot hide the tail (coordinated omission).
type ScheduleStats struct {
	// OfferedRate is the configured target rate (requests/s).
	OfferedRate float64 `json:"offered_rate"`
	// ScheduledRate is the rate of the schedule actually drawn: (n-1) / span of scheduled times.
	ScheduledRate float64 `json:"scheduled_rate"`
	// AchievedRate is (n-1) / span of actual send times.
	AchievedRate float64 `json:"achieved_rate"`
	// SendLag is actual minus scheduled send time.
	SendLag Stats `json:"send_lag_ms"`
	// Achieved is false when the client fell behind: achieved rate under 98% of the
	// schedule's, or p99 send lag over 10 ms.
	Achieved bool `json:"achieved"`
	// TTFT and E2E measured from the scheduled send time.
	TTFTFromSchedule Stats `json:"ttft_from_schedule_ms"`
	E2EFromSchedule  Stats `json:"e2e_from_schedule_ms"`
}

// ReasoningStats is what a repetition's reasoning requests did: TTFT is
// their time to the first thought, TTFA (time to first answer) to the
// first word of the answer the user waits for.
type ReasoningStats struct {
	// Requests is the completed requests that reasoned; Truncated those of
	// them that never reached an answer because max_tokens cut them
	// (finish reason length), so they have no TTFA.
	Requests  int `json:"requests"`
	Truncated int `json:"truncated,omitempty"`
	// ReasoningTokens and AnswerTokens split those requests' output
	// tokens: thinking, and the rest.
	ReasoningTokens int `json:"reasoning_tokens"`
	AnswerTokens    int `json:"answer_tokens"`
	// TTFA is the time from send to the first answer chunk of those that
	// reached one, in milliseconds.
	TTFA Stats `json:"ttfa_ms"`
}

// Stats summarise one latency distribution, in milliseconds.
type Stats struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
	// Percentiles are the percentiles measured beside the five above, by
	// name ("p75", "p99.99"): those of the config's percentiles key that
	// have no field here. Nil when it lists none, and in results from
	// before the key. Use Percentile to read any of them.
	Percentiles map[string]float64 `json:"percentiles,omitempty"`
}

// Seconds is a duration that encodes as a number of seconds.
type Seconds float64

// Dur converts it to a time.Duration.
func (s Seconds) Dur() time.Duration { return time.Duration(float64(s) * float64(time.Second)) }

// Write writes r as indented JSON to path, atomically (safeio.WriteFile):
// a write that fails midway, on a full disk say, leaves the file that was
// at path, or none, never part of r.
func Write(path string, r *Result) error {
	// What Read would refuse is never written: a figure that cannot be true
	// (a negative count, an infinite throughput) is perfgate's own bug, and
	// must not become a baseline.
	if err := r.Validate(); err != nil {
		return fmt.Errorf("perfgate measured a figure that cannot be true, so it writes no result (a bug in perfgate; please report it): %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if err := safeio.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

// MaxFileBytes is the largest result file Read reads: 64 MiB. A result of
// eight repetitions with their histograms is about 100 KB; eval outputs add
// a few KB an item. A result file may come from a fork's pull request, and
// it is decoded whole.
const MaxFileBytes = 64 << 20

// Read loads a result file of any version perfgate wrote (KnownSchema),
// converted to this version's types. It reads only a regular file of at
// most MaxFileBytes, and refuses, with an error that names the file and the
// line or field, one that is not JSON, of another schema, or whose numbers
// cannot be true (Validate). Errors about the content wrap ErrInvalid.
func Read(path string) (*Result, error) {
	data, err := safeio.ReadFile(path, MaxFileBytes)
	var tooLarge *safeio.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("read result: %w", Invalid(Problem{File: path, Msg: fmt.Sprintf(
			"the file is larger than %s, the most perfgate reads for a result", safeio.FormatBytes(MaxFileBytes))}))
	}
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	return Decode(data, path)
}

// Decode reads a result from the content of a result file; file names it in
// errors. It refuses what Read refuses.
func Decode(data []byte, file string) (*Result, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte-order mark is read as one
	var probe struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("read result: %w", JSONError(file, data, err))
	}
	switch {
	case probe.Schema == nil:
		return nil, fmt.Errorf("read result: %w", Invalid(Problem{File: file, Path: "schema", Msg: "missing: this is not a perfgate result file"}))
	case !KnownSchema(*probe.Schema):
		return nil, fmt.Errorf("read result: %w", Invalid(Problem{File: file, Path: "schema",
			Msg: fmt.Sprintf("%s, want %s or an earlier version (%s)", quote(*probe.Schema), Schema, SchemaV1)}))
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read result: %w", JSONError(file, data, err))
	}
	if *probe.Schema == SchemaV1 {
		if err := fromV1(&r, data); err != nil {
			return nil, fmt.Errorf("read result: %w", JSONError(file, data, err))
		}
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("read result: %w", inFile(err, file))
	}
	return &r, nil
}
