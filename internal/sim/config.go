package sim

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Config holds every knob of the simulator. Zero values are not defaults:
// start from DefaultConfig.
type Config struct {
	// Model is the served model name (/v1/models, the "model" of responses,
	// the model_name label of /metrics).
	Model string
	// Version is reported by /version; the CLI passes perfgate's version.
	Version string
	// MaxBatch is the largest number of running sequences.
	MaxBatch int
	// KVCacheTokens is the KV-cache capacity in tokens, counted token by
	// token (no blocks). How requests share it is KVPolicy's; a request
	// whose context (prompt + max_tokens) is longer than the whole cache is
	// refused with HTTP 400 under either policy, so that a sequence always
	// fits alone.
	KVCacheTokens int
	// KVPolicy is how requests share the KV cache (--kv-policy):
	//
	//   - KVReserve ("reserve", the default; "" reads as it): a request
	//     reserves its whole context, prompt + max_tokens, when it is
	//     admitted, and waits while that does not fit. Nothing is ever
	//     preempted.
	//   - KVPreempt ("preempt"), vLLM's: a request is admitted when the
	//     tokens it holds now fit in the free cache (its prompt, or prompt
	//     and output so far for a preempted one resumed); every sequence
	//     then holds one token more for every token it generates: its
	//     prompt and its output but the newest token, whose KV is written
	//     by the step that reads it. When a step's growth would not fit,
	//     the most recently admitted running sequences are preempted, one
	//     after another, until the rest fits: recompute mode, as vLLM
	//     V1's, which frees a sequence's KV and puts it back at the head of
	//     the queue; readmitted, it prefills its prompt and its output so
	//     far again (paying that prefill again, without the prefix cache)
	//     and goes on from where it was, sending the client nothing twice.
	//     Each preemption counts in vllm:num_preemptions_total, and in the
	//     request's TruthRecord.Preemptions.
	KVPolicy string
	// MaxModelLen is the longest context, prompt + max_tokens, a request may
	// ask for (--max-model-len, as vLLM's): a longer one is refused with
	// HTTP 400 and vLLM's message. 0 is no limit but the KV cache's.
	MaxModelLen int
	// OOMTokens stands for a CUDA out-of-memory crash (--oom-tokens): when
	// the step loop schedules prefill for a request whose context (prompt +
	// max_tokens) is more than OOMTokens, the engine dies as a crashed one
	// does: every connection is cut, nothing is served any more, and
	// Server.Crashed is closed with an *OOMError. A context of exactly
	// OOMTokens runs. 0 is never.
	OOMTokens int
	// StepBase is the fixed time of one engine step.
	StepBase time.Duration
	// PerSeq is added to a step per running sequence.
	PerSeq time.Duration
	// PerPrefillToken is added to a step per prompt token prefilled in it.
	PerPrefillToken time.Duration
	// PrefillBudget is the most prompt tokens scheduled in one step (chunked
	// prefill).
	PrefillBudget int
	// PrefixCache enables the block prefix cache: 16-token blocks of a prompt
	// that an earlier prompt already computed skip prefill.
	PrefixCache bool
	// Seed seeds jitter, stalls, injected errors, the output text and which
	// Answers items are answered right (unless AnswerSeed says).
	Seed int64
	// AnswerSeed, when not 0, seeds which Answers items are answered right
	// in Seed's place: simulators of one model whose timing differs (a seed
	// each, as a benchmark's runs take) answer alike, as one model decoding
	// greedily does; and a slower simulator still answers as the faster.
	AnswerSeed int64
	// Slowdown multiplies step time.
	Slowdown float64
	// ConstrainedSlowdown multiplies the time of a step whose batch holds a
	// constrained sequence (a response_format of JSON, or a tool call): the
	// grammar masks of constrained decoding cost every token of the batch.
	ConstrainedSlowdown float64
	// ReasoningTokens makes the sim a reasoning model: every chat answer
	// of text first streams this many tokens of thinking
	// (delta.reasoning_content), within max_tokens, and its usage counts
	// them in completion_tokens_details.reasoning_tokens. Eval items
	// (Answers) are answered without thinking.
	ReasoningTokens int
	// Loras are the LoRA adapters served beside Model, by name: a request
	// may name one as its model. Empty serves Model alone and takes any
	// model name as it (as before adapters). With adapters, another name
	// is a 404, as vLLM answers.
	Loras []string
	// MaxLoras is how many adapters fit on the GPU at once (vLLM's
	// --max-loras): an adapter that is not resident is loaded into a free
	// slot, or the least recently used one that no running request uses;
	// a request whose adapter finds no slot waits while later requests
	// are admitted.
	MaxLoras int
	// LoraLoad is what loading an adapter costs: the step that admits it
	// takes this much longer, for every sequence in the batch.
	LoraLoad time.Duration
	// StructuredErrorRate is the share of structured answers (JSON, tool
	// calls) the sim gets wrong: cut before their end, so not valid JSON.
	// Each request is drawn once from Seed and its prompt.
	StructuredErrorRate float64
	// APIKey, when set, is the key the /v1 endpoints demand, as
	// "Authorization: Bearer <key>"; any other answers 401, as vLLM's
	// --api-key does. /health, /version and /metrics stay open. It exists to
	// try perfgate's ${VAR} headers and its refused-credentials message.
	APIKey string
	// NoHealth makes /health answer 404, as hosted APIs have none: perfgate
	// then takes a 200 from /v1/models as ready.
	NoHealth bool
	// Jitter is the relative standard deviation of the seeded multiplicative
	// noise on step time.
	Jitter float64
	// StallEvery: every this much engine time, one step takes Stall longer
	// (0 = never).
	StallEvery time.Duration
	Stall      time.Duration
	// ErrorRate is the share of requests that fail (seeded): half answer
	// HTTP 500 with an OpenAI-style JSON error before any stream, half end
	// with a mid-stream error event and no [DONE].
	ErrorRate float64
	// ColdStart: /health and the completion endpoints answer 503 until this
	// long after Start.
	ColdStart time.Duration
	// UnhealthyAfter: /health answers 503 from this long after Start (0 =
	// never), while completions go on being served: an engine whose health
	// check fails mid-run.
	UnhealthyAfter time.Duration
	// WarmUp: for this long from the engine's first step, step time is
	// multiplied by a factor that decays linearly from WarmUpFactor to 1.
	// It starts with the first request, as a real engine's graph captures
	// and cache fills do, not with the process: a client that starts late
	// still meets the whole transient.
	WarmUp       time.Duration
	WarmUpFactor float64
	// Drift makes step time grow with wall-clock time, as heat or a noisy
	// neighbour would: step time is multiplied by 1 + Drift×m, m the minutes
	// of wall-clock time since DriftEpoch (0 before it), capped at
	// maxDriftFactor. A rate per minute: 0.3 is +30% a minute; 0 is off.
	// It exists to show why an A/B measures its arms interleaved.
	Drift float64
	// DriftEpoch is the wall-clock instant Drift counts from; the zero time
	// means this simulator's Start. The factor is a function of wall-clock
	// time and DriftEpoch alone, so every simulator given the same epoch
	// (both arms of an A/B, or one stopped and started again) sees the same
	// factor at the same instant: a test or an A/B must give them all one
	// epoch, or each starts its own ramp at 1.
	DriftEpoch time.Time
	// Answers are eval suites whose items the sim answers (--answers): a
	// request whose prompt text (chat: the messages' contents joined by
	// newlines; completions: the prompt) is an item's gets the item's right
	// answer or a wrong one, streamed as the output; every other request gets
	// filler. None (nil) answers nothing. It exists to test perfgate's
	// quality gates, not models.
	Answers []*AnswerSuite
	// Accuracy is the share of Answers' items answered right, in [0,1]. Each
	// item is drawn once from Seed, its ID and its prompt text: item right iff
	// draw < Accuracy, so the same item always gets the same text, and with
	// one seed the items right at a lower accuracy are a subset of those right
	// at a higher one (a lower accuracy only turns right answers wrong).
	Accuracy float64
	// AutoscaleMax, when above 1, makes the sim autoscale as a serving
	// deployment behind a router does, up to this many replicas: it starts
	// with one, and when AutoscaleQueue requests or more are waiting it
	// starts another, ready AutoscaleColdStart later (a GPU replica's cold
	// start: pull, load, warm), one at a time. A replica is modelled as a
	// share of one batch: n replicas admit n × MaxBatch sequences and n ×
	// KVCacheTokens, and a step costs what a replica's share of the batch
	// and the prefill costs. After AutoscaleIdle with nothing running or
	// waiting it is back to one replica (0: never), as a deployment scales
	// down between bursts: a pause between repetitions gives each the
	// same start.
	AutoscaleMax       int
	AutoscaleQueue     int
	AutoscaleColdStart time.Duration
	AutoscaleIdle      time.Duration
	// Truth, if non-nil, receives one JSON line (TruthRecord) per finished
	// request. It is written under a lock through a buffer, flushed on Close.
	Truth io.Writer

	// recordSteps makes the step loop keep every step's modelled duration
	// (engine.plan), for this package's tests: the same seed must give the
	// same steps whatever the test machine's scheduler does to wall time.
	recordSteps bool
	// holdStart, when not nil, makes the step loop take in no request
	// until it is closed, for this package's tests: the requests sent
	// meanwhile are then admitted in one step, in the order they were
	// submitted.
	holdStart <-chan struct{}
}

// The KV-cache policies (Config.KVPolicy).
const (
	// KVReserve reserves a request's whole context when it is admitted;
	// nothing is ever preempted.
	KVReserve = "reserve"
	// KVPreempt admits a request on the tokens it holds now, grows every
	// sequence's KV token by token, and preempts the most recently
	// admitted when the growth does not fit, as vLLM does.
	KVPreempt = "preempt"
)

// preempts says whether the policy is KVPreempt.
func (c Config) preempts() bool { return c.KVPolicy == KVPreempt }

// maxContext is the longest context, prompt + max_tokens, a request may ask
// for: KVCacheTokens (a sequence must fit alone), or MaxModelLen when that
// is set and shorter.
func (c Config) maxContext() int {
	if c.MaxModelLen > 0 && c.MaxModelLen < c.KVCacheTokens {
		return c.MaxModelLen
	}
	return c.KVCacheTokens
}

// maxReplicas bounds --autoscale-max: a spike's test needs a few; more is
// a typo.
const maxReplicas = 64

// DefaultConfig returns the defaults: roughly a 7-8B model in bf16 served by
// vLLM on one H100.
//
//   - StepBase 12ms: a decode step must read all ~16 GB of weights from HBM
//     (3.35 TB/s, ~5 ms) plus kernel launches, sampling and scheduling; vLLM
//     decodes an 8B model at small batch at roughly 10-15 ms per token.
//   - PerSeq 80µs: KV reads and per-sequence work grow with the batch; at
//     batch 64 a step is ~17 ms, at 256 ~32 ms, near measured decode curves.
//   - PerPrefillToken 60µs: ~16 GFLOP per token for 8B parameters at a few
//     hundred TFLOP/s achieved, plus attention: a 100-word prompt adds 6 ms, so
//     short prompts see tens of ms TTFT, a 2048-token chunk ~120 ms.
//   - PrefillBudget 2048: vLLM's long-standing max_num_batched_tokens for
//     chunked prefill.
//   - MaxBatch 256: vLLM's classic max_num_seqs.
//   - KVCacheTokens 262144: an 8B Llama's KV is 128 KiB per token (32 layers ×
//     8 KV heads × 128 dims × K and V × 2 bytes); 32 GiB of the ~55 GiB left
//     after weights on an 80 GB card, a conservative round number.
//   - KVPolicy reserve, MaxModelLen 0, OOMTokens 0: requests wait for KV
//     rather than being preempted, no context limit but the cache's, no
//     out-of-memory crash; a headroom test opts into preempt and the
//     limits.
//   - PrefixCache on: vLLM V1 enables automatic prefix caching by default.
//   - Jitter 0.02: step times of a real engine vary by a few percent.
//   - Slowdown 1, ConstrainedSlowdown 1, ErrorRate 0, StructuredErrorRate
//     0, no stalls, no cold start, no warm-up: a healthy engine;
//     regressions are opted into.
//   - Drift 0: no drift; DriftEpoch zero: when set, drift counts from
//     the simulator's own start.
//   - Accuracy 1: with --answers, every item is answered right.
//   - WarmUpFactor 2: first steps after start (CUDA graphs, allocator,
//     caches) are about twice as slow when a WarmUp period is set.
func DefaultConfig() Config {
	return Config{
		Model:               "perfgate-sim-8b",
		Version:             "dev",
		MaxBatch:            256,
		KVCacheTokens:       262144,
		KVPolicy:            KVReserve,
		StepBase:            12 * time.Millisecond,
		PerSeq:              80 * time.Microsecond,
		PerPrefillToken:     60 * time.Microsecond,
		PrefillBudget:       2048,
		PrefixCache:         true,
		Seed:                1,
		Slowdown:            1,
		ConstrainedSlowdown: 1,
		MaxLoras:            1,
		LoraLoad:            50 * time.Millisecond,
		Jitter:              0.02,
		WarmUpFactor:        2,
		Accuracy:            1,
	}
}

// RegisterFlags binds every knob of c to a kebab-case flag whose default is
// c's current value. Truth (--truth FILE), Answers (--answers FILE, see
// LoadAnswers), Version and the listen address are the CLI's to handle.
func RegisterFlags(fs *pflag.FlagSet, c *Config) {
	fs.StringVar(&c.Model, "model", c.Model, "served model name, reported by /v1/models and in responses")
	fs.IntVar(&c.MaxBatch, "max-batch", c.MaxBatch, "maximum number of running sequences (count)")
	fs.IntVar(&c.KVCacheTokens, "kv-cache-tokens", c.KVCacheTokens, "KV-cache capacity in tokens; how requests share it is --kv-policy's, and a request whose prompt+max_tokens is more is refused (400)")
	fs.StringVar(&c.KVPolicy, "kv-policy", c.KVPolicy, "how requests share the KV cache: reserve (prompt+max_tokens at admission; requests wait, nothing is preempted) or preempt (vLLM's: admit on the prompt, grow a token a step, and when the cache is full preempt the most recently admitted, which recompute)")
	fs.IntVar(&c.MaxModelLen, "max-model-len", c.MaxModelLen, "refuse (400, vLLM's message) a request whose prompt+max_tokens is more than this (tokens; 0 = no limit but --kv-cache-tokens)")
	fs.IntVar(&c.OOMTokens, "oom-tokens", c.OOMTokens, "crash as on a CUDA out-of-memory (connections cut, exit status 1) when prefill is scheduled for a request whose prompt+max_tokens is more than this (tokens; 0 = never)")
	fs.DurationVar(&c.StepBase, "step-base", c.StepBase, "base time of one engine step (duration, e.g. 12ms)")
	fs.DurationVar(&c.PerSeq, "per-seq", c.PerSeq, "step time added per running sequence (duration, e.g. 80us)")
	fs.DurationVar(&c.PerPrefillToken, "per-prefill-token", c.PerPrefillToken, "step time added per prompt token prefilled in the step (duration, e.g. 60us)")
	fs.IntVar(&c.PrefillBudget, "prefill-budget", c.PrefillBudget, "chunked prefill: maximum prompt tokens scheduled per step (tokens)")
	fs.BoolVar(&c.PrefixCache, "prefix-cache", c.PrefixCache, "cache 16-token prompt blocks so repeated prefixes skip prefill")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed for jitter, stalls, injected errors, output text and which --answers items are right (unless --answer-seed)")
	fs.Int64Var(&c.AnswerSeed, "answer-seed", c.AnswerSeed, "seed for which --answers items are right, in --seed's place (0: --seed): simulators of one model whose timing differs answer alike")
	fs.BoolVar(&c.NoHealth, "no-health", c.NoHealth, "answer 404 on /health, as a hosted API that has none")
	fs.StringVar(&c.APIKey, "api-key", c.APIKey, "demand \"Authorization: Bearer KEY\" on /v1 (401 otherwise), as vLLM's --api-key does; /health stays open")
	fs.Float64Var(&c.Slowdown, "slowdown", c.Slowdown, "multiplies step time (factor, > 0; 1.2 = 20% slower)")
	fs.Float64Var(&c.ConstrainedSlowdown, "constrained-slowdown", c.ConstrainedSlowdown, "multiplies the time of a step whose batch holds a constrained request (response_format JSON, or tools) (factor, > 0)")
	fs.Float64Var(&c.StructuredErrorRate, "structured-error-rate", c.StructuredErrorRate, "share of structured answers (JSON, tool calls) cut short so that they are not valid JSON, each request drawn once from --seed and its prompt (fraction in [0,1])")
	fs.StringSliceVar(&c.Loras, "loras", c.Loras, "LoRA adapters served beside --model, by name, comma-separated: a request may name one as its model, another name is a 404 (none: every model name is --model)")
	fs.IntVar(&c.MaxLoras, "max-loras", c.MaxLoras, "adapters resident at once, as vLLM's --max-loras: one not resident is loaded into a free or least recently used idle slot, or waits (count, >= 1)")
	fs.DurationVar(&c.LoraLoad, "lora-load", c.LoraLoad, "what loading an adapter costs: the step that admits it takes this much longer (duration)")
	fs.IntVar(&c.ReasoningTokens, "reasoning-tokens", c.ReasoningTokens, "think this many tokens (delta.reasoning_content) before every chat answer of text but an --answers item's, within max_tokens: a reasoning model (count; 0 = none)")
	fs.Float64Var(&c.Jitter, "jitter", c.Jitter, "relative standard deviation of seeded noise on step time (fraction, 0.02 = 2%)")
	fs.DurationVar(&c.StallEvery, "stall-every", c.StallEvery, "every this much engine time one step stalls (duration; 0 = never)")
	fs.DurationVar(&c.Stall, "stall", c.Stall, "extra time a stalled step takes (duration)")
	fs.Float64Var(&c.ErrorRate, "error-rate", c.ErrorRate, "share of requests that fail, half HTTP 500, half mid-stream (fraction in [0,1])")
	fs.DurationVar(&c.ColdStart, "cold-start", c.ColdStart, "/health and completions answer 503 until this long after start (duration)")
	fs.DurationVar(&c.UnhealthyAfter, "unhealthy-after", c.UnhealthyAfter, "/health answers 503 from this long after start, completions still served (duration; 0 = never)")
	fs.DurationVar(&c.WarmUp, "warm-up", c.WarmUp, "from the first request, step time is inflated for this long, decaying linearly (duration; 0 = none)")
	fs.Float64Var(&c.WarmUpFactor, "warm-up-factor", c.WarmUpFactor, "step time multiplier at the start of warm-up (factor, >= 1)")
	fs.Float64Var(&c.Drift, "drift", c.Drift, "step time is multiplied by 1 + R*m, m the minutes of wall-clock time since --drift-epoch: a drift like heat or a noisy neighbour, the same for every simulator given that epoch (rate `R` per minute, in [0,1000]; 0.3 = +30% a minute; 0 = off)")
	fs.Var((*epochValue)(&c.DriftEpoch), "drift-epoch", "the wall-clock instant --drift counts from, as Unix seconds (integer or decimal) or RFC 3339; give every simulator of a test or an A/B the same `T`, and the same again to one restarted (default: this simulator's start)")
	fs.IntVar(&c.AutoscaleMax, "autoscale-max", c.AutoscaleMax, "autoscale up to this many replicas, starting with one: a spike's queue starts another (count; 0 or 1 = one replica, no autoscaling)")
	fs.IntVar(&c.AutoscaleQueue, "autoscale-queue", c.AutoscaleQueue, "with --autoscale-max: this many waiting requests start another replica (count, >= 1)")
	fs.DurationVar(&c.AutoscaleColdStart, "autoscale-cold-start", c.AutoscaleColdStart, "with --autoscale-max: how long a new replica takes to be ready (duration)")
	fs.DurationVar(&c.AutoscaleIdle, "autoscale-idle", c.AutoscaleIdle, "with --autoscale-max: back to one replica after this long with nothing running or waiting (duration; 0 = never)")
	fs.Float64Var(&c.Accuracy, "accuracy", c.Accuracy, "share of --answers items answered right, each drawn once from --seed; a lower accuracy only turns right answers wrong (fraction in [0,1]; for testing perfgate's quality gates, not models)")
}

// Validate reports every invalid knob, each message naming its flag.
func (c Config) Validate() error {
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, args...)))
	}
	if c.Model == "" {
		bad("model", "must not be empty")
	}
	if c.MaxBatch < 1 {
		bad("max-batch", "must be >= 1, got %d", c.MaxBatch)
	}
	if c.KVCacheTokens < 1 {
		bad("kv-cache-tokens", "must be >= 1, got %d", c.KVCacheTokens)
	}
	if c.KVPolicy != "" && c.KVPolicy != KVReserve && c.KVPolicy != KVPreempt {
		bad("kv-policy", "must be %s or %s, got %q", KVReserve, KVPreempt, c.KVPolicy)
	}
	if c.MaxModelLen < 0 {
		bad("max-model-len", "must be >= 0 (0: no limit), got %d", c.MaxModelLen)
	}
	if c.OOMTokens < 0 {
		bad("oom-tokens", "must be >= 0 (0: never), got %d", c.OOMTokens)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"step-base", c.StepBase}, {"per-seq", c.PerSeq}, {"per-prefill-token", c.PerPrefillToken},
		{"stall-every", c.StallEvery}, {"stall", c.Stall}, {"cold-start", c.ColdStart}, {"warm-up", c.WarmUp},
		{"unhealthy-after", c.UnhealthyAfter}, {"lora-load", c.LoraLoad}, {"autoscale-cold-start", c.AutoscaleColdStart}, {"autoscale-idle", c.AutoscaleIdle},
	} {
		if d.v < 0 {
			bad(d.flag, "must be >= 0, got %s", d.v)
		}
	}
	if c.PrefillBudget < 1 {
		bad("prefill-budget", "must be >= 1, got %d", c.PrefillBudget)
	}
	switch {
	case c.AutoscaleMax < 0 || c.AutoscaleMax > maxReplicas:
		bad("autoscale-max", "must be from 0 to %d, got %d", maxReplicas, c.AutoscaleMax)
	case c.AutoscaleMax > 1 && c.AutoscaleQueue < 1:
		bad("autoscale-queue", "must be >= 1 with --autoscale-max, got %d", c.AutoscaleQueue)
	case c.AutoscaleMax <= 1 && (c.AutoscaleQueue != 0 || c.AutoscaleColdStart != 0 || c.AutoscaleIdle != 0):
		bad("autoscale-max", "--autoscale-queue, --autoscale-cold-start and --autoscale-idle need --autoscale-max 2 or more")
	}
	if !(c.Slowdown > 0) || c.Slowdown > 1e6 {
		bad("slowdown", "must be in (0,1e6], got %g", c.Slowdown)
	}
	if !(c.ConstrainedSlowdown > 0) || c.ConstrainedSlowdown > 1e6 {
		bad("constrained-slowdown", "must be in (0,1e6], got %g", c.ConstrainedSlowdown)
	}
	if c.MaxLoras < 1 || c.MaxLoras > 1024 {
		bad("max-loras", "must be in [1,1024], got %d", c.MaxLoras)
	}
	seen := map[string]bool{c.Model: true}
	for _, name := range c.Loras {
		if name == "" || strings.ContainsAny(name, " \t\n\"") {
			bad("loras", "want adapter names without spaces or quotes, got %q", name)
		} else if seen[name] {
			bad("loras", "%q is named twice (or is --model)", name)
		}
		seen[name] = true
	}
	if !(c.StructuredErrorRate >= 0 && c.StructuredErrorRate <= 1) {
		bad("structured-error-rate", "must be in [0,1], got %g", c.StructuredErrorRate)
	}
	if c.ReasoningTokens < 0 || c.ReasoningTokens > 1<<20 {
		bad("reasoning-tokens", "must be in [0,%d], got %d", 1<<20, c.ReasoningTokens)
	}
	if !(c.Jitter >= 0 && c.Jitter <= 1) {
		bad("jitter", "must be in [0,1], got %g", c.Jitter)
	}
	if !(c.ErrorRate >= 0 && c.ErrorRate <= 1) {
		bad("error-rate", "must be in [0,1], got %g", c.ErrorRate)
	}
	if !(c.WarmUpFactor >= 1) || c.WarmUpFactor > 1e6 {
		bad("warm-up-factor", "must be in [1,1e6], got %g", c.WarmUpFactor)
	}
	if !(c.Drift >= 0 && c.Drift <= maxDrift) { // NaN fails both
		bad("drift", "must be a rate per minute in [0,%g] (0.3 = +30%% a minute), got %g", float64(maxDrift), c.Drift)
	}
	if !c.DriftEpoch.IsZero() && (c.DriftEpoch.Before(minEpoch) || !c.DriftEpoch.Before(maxEpoch)) {
		bad("drift-epoch", "must be from %d to %d in Unix seconds (years 1970 to 2199; milliseconds? divide by 1000), got %s",
			minEpoch.Unix(), maxEpoch.Unix()-1, formatEpoch(c.DriftEpoch))
	}
	if !(c.Accuracy >= 0 && c.Accuracy <= 1) {
		bad("accuracy", "must be in [0,1], got %g", c.Accuracy)
	} else if len(c.Answers) == 0 && c.Accuracy != 1 {
		bad("accuracy", "needs --answers (the eval suites to answer)")
	}
	if len(c.Answers) > 0 {
		_, err := newAnswerer(c.Answers, c.answerSeed(), c.Accuracy, filler{})
		if many, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range many.Unwrap() {
				bad("answers", "%v", e)
			}
		} else if err != nil {
			bad("answers", "%v", err)
		}
	}
	return errors.Join(errs...)
}

// answerSeed is the seed of which Answers items are answered right:
// AnswerSeed, else Seed.
func (c Config) answerSeed() int64 {
	if c.AnswerSeed != 0 {
		return c.AnswerSeed
	}
	return c.Seed
}
