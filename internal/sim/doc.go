// Package sim is perfgate's simulated serving engine, the server behind
// `perfgate sim`.
//
// It is a test double for perfgate itself: the engine of perfgate's own tests
// and of its own perf gate, the default target of the examples, and a way to
// try a perfgate.yaml without a GPU. Nothing measured on it is a GPU figure,
// and perfgate never reports it as one.
//
// It speaks the OpenAI-compatible HTTP API the way vLLM does
// (POST /v1/chat/completions and /v1/completions, streaming or not,
// GET /v1/models, /health, /version and a vLLM-style Prometheus /metrics),
// and behind it runs a model of a GPU engine with continuous batching:
//
//   - One step loop goroutine. Each step admits waiting requests first come
//     first served while the batch has room (MaxBatch) and the request's KV
//     fits in KVCacheTokens (counted token by token, no blocks); requests
//     that do not fit wait. It schedules up to PrefillBudget prompt tokens
//     (chunked prefill: a long prompt takes several steps), then every
//     sequence whose prefill is done emits one token at the end of the step.
//   - KV policy (--kv-policy). By default (reserve) a request reserves its
//     whole context, prompt + max_tokens, at admission, and nothing is ever
//     preempted. With preempt, vLLM's, a request is admitted on the tokens
//     it holds now (its prompt), and a step first gives every decoding
//     sequence the KV of the token it reads, so a sequence holds its prompt
//     and its output but the newest token; when that does not fit, the most
//     recently admitted running sequences are preempted until it does
//     (vllm:num_preemptions_total): recompute, as vLLM V1 does, their KV
//     freed, back at the head of the queue, and once readmitted they prefill
//     prompt and output so far again, paying for it, and go on without
//     sending the client anything twice (the truth record counts the
//     preemptions). vllm:kv_cache_usage_perc is the tokens held (reserved,
//     under reserve) over KVCacheTokens.
//   - Limits. A request whose context (prompt + max_tokens) is longer than
//     KVCacheTokens, or than MaxModelLen (--max-model-len) when set, is
//     refused with HTTP 400 and vLLM's message. With OOMTokens
//     (--oom-tokens), the step that schedules prefill for a context longer
//     than it crashes the engine, as a CUDA out-of-memory would: the server
//     cuts every connection and serves nothing more, Server.Crashed is
//     closed with an *OOMError, and perfgate sim exits with status 1.
//   - Ground truth for a headroom search: Config.HeadroomContext (the
//     longest context N users can hold) and Config.HeadroomUsers (the most
//     users at a context) are exact for these rules, in the lockstep worst
//     case. Config.Declared is what the simulator stands for (an 8B model in
//     bf16 on one H100), for bandwidth figures; GET /v1/models serves it in
//     each model's llama.cpp-style "meta".
//   - Step time = (StepBase + PerSeq×running + PerPrefillToken×prefill tokens)
//     × Slowdown × warm-up factor × drift factor × seeded jitter, plus Stall
//     when one is due. Steps are scheduled by absolute deadlines on the
//     monotonic clock, so timer lateness does not accumulate.
//   - Drift (--drift R) stands for heat or a noisy neighbour: the drift
//     factor is 1 + R×m, m the minutes of wall-clock time since DriftEpoch
//     (--drift-epoch; by default the simulator's own Start), taken when a
//     step starts. It is a function of the wall clock and the epoch alone,
//     so every simulator given one epoch sees one factor at one instant:
//     the two arms of an A/B drift together, and a simulator stopped and
//     started again (an A/B in swap mode) goes on up the same ramp instead
//     of starting over at 1. A test or an A/B must therefore give all its
//     simulators the same epoch; Server.DriftEpoch says which one a
//     simulator uses, Server.DriftFactor and the truth records'
//     drift_factor the factor in force.
//   - Tokens: one prompt token per whitespace-separated word (chat: all
//     messages' contents), at least one; one output word per token, each its
//     own SSE chunk; output length is max_tokens (finish_reason "length").
//   - With Answers (--answers, eval suites loaded by package quality), a
//     request whose prompt text is an eval item's gets the item's right
//     answer with probability Accuracy and a wrong one otherwise, one word
//     (with its leading space) per token, cut at max_tokens ("length") or
//     whole ("stop"); other requests get filler as above. Right or wrong is
//     drawn once per item from Seed, the item's ID and its prompt text, so
//     the same item always gets the same text, two sims with one seed answer
//     alike, and lowering Accuracy only turns right answers wrong. It exists
//     to test perfgate's quality gates, not models.
//   - Requests are read as vLLM reads them: unknown fields are ignored,
//     ignore_eos and min_tokens are accepted, max_tokens defaults to 16; the
//     request's "model" is not checked against the served name.
//   - A block prefix cache (16-token blocks keyed by their whole prefix, as in
//     vLLM's automatic prefix caching): cached blocks skip prefill.
//   - Knobs inject regressions: Slowdown, Jitter, stalls, ErrorRate, ColdStart,
//     a warm-up period, Drift and an out-of-memory crash (OOMTokens). Jitter, stalls and errors draw from one
//     seeded source in the step loop, so the same seed and the same arrivals
//     give the same behaviour. Drift draws nothing from that source, so it
//     does not change the draws, only scales the steps they apply to; it
//     depends on where Start falls after the drift epoch, so the promise
//     with drift is: the same seed, the same arrivals (since Start) and the
//     same offset of Start from the epoch give the same behaviour. With the
//     default epoch (Start itself) the offset is always 0 and the promise is
//     as without drift; with a shared epoch a simulator started later is
//     further up the ramp, which is the point.
//
// With the defaults it approximates a 7-8B model in bf16 on one H100 at small
// batch: tens of milliseconds to the first token for short prompts and about
// 12-20 ms per output token, rising with batch size. See DefaultConfig for the
// reasoning behind each default.
//
// Every finished request can be written as one JSON line of ground truth
// (TruthRecord) with the server-side time each chunk was written and flushed,
// so that a client's measurements can be checked against it to within a
// millisecond.
//
// Use:
//
//	cfg := sim.DefaultConfig()
//	cfg.StepBase = 2 * time.Millisecond
//	srv, err := sim.Start(ctx, "127.0.0.1:0", cfg)
//	if err != nil { ... }
//	defer srv.Close()
//	// point a client at srv.URL()
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package sim
