package sim

import "math"

// HeadroomContext is the ground truth of a headroom search over context:
// the longest context, prompt plus output tokens, that users closed-loop
// users can each hold, every request asking for output tokens
// (max_tokens, ignore_eos), without a request being refused, the engine
// crashing (OOMTokens) or, under KVPreempt, a sequence being preempted.
// It is the least of:
//
//   - the longest context a request may ask for: KVCacheTokens (a request
//     longer than the whole cache is refused), and MaxModelLen when set; a
//     context of exactly either is served;
//   - OOMTokens when set: a context of exactly OOMTokens is served, one
//     more crashes the engine;
//   - under KVPreempt, KVCacheTokens / min(users, MaxBatch) + 1, rounded
//     down. That is the lockstep worst case: every running user's sequence
//     at its longest at once, when it holds its context but the newest
//     token (a token's KV is written by the step that reads it, so the
//     last token of an answer never takes any). KV is counted token by
//     token (the simulator allocates no blocks), a prompt's prefix-cache
//     hits included; users past MaxBatch wait for a place in the batch, so
//     they hold nothing.
//
// At or below it no arrival pattern preempts. Above it a preemption can
// happen, and does when every user's request is admitted in one step
// (their prompts fit together); a search whose users arrive spread out
// may hold a little past it. Under KVReserve nothing is ever preempted:
// past KVCacheTokens / users tokens requests wait for their reservation
// instead (vllm:num_requests_waiting), which this figure does not count.
//
// It assumes one replica (AutoscaleMax 0 or 1; more replicas only add
// room), and that the requests' answers are output tokens long, as filler
// is (an --answers item's may stop short). It is 0 when no context holds,
// not even output + 1 tokens (one prompt token), and for users or output
// below 1.
func (c Config) HeadroomContext(users, output int) int {
	if users < 1 || output < 1 {
		return 0
	}
	limit := c.maxContext()
	if c.OOMTokens > 0 {
		limit = min(limit, c.OOMTokens)
	}
	if c.preempts() {
		limit = min(limit, c.KVCacheTokens/min(users, c.MaxBatch)+1)
	}
	if limit <= output {
		return 0
	}
	return limit
}

// HeadroomUsers is the ground truth of a headroom search over users: the
// most closed-loop users that can each hold context tokens (prompt plus
// output, every request asking for output tokens) without a refusal, a
// crash or a preemption, under HeadroomContext's assumptions: the most
// users at which HeadroomContext(users, output) is context or more.
//
// Under KVPreempt it is KVCacheTokens / (context - 1), rounded down. When
// MaxBatch such sequences fit at once, no number of users preempts (those
// past MaxBatch wait their turn, holding nothing), and it is math.MaxInt;
// so it always is under KVReserve. It is 0 when the context itself is
// refused or crashes the engine, or holds no prompt token (context <=
// output), and for output below 1.
func (c Config) HeadroomUsers(context, output int) int {
	if output < 1 || context <= output || c.HeadroomContext(1, output) < context {
		return 0
	}
	if !c.preempts() {
		return math.MaxInt
	}
	users := c.KVCacheTokens / (context - 1) // context >= 2: output >= 1
	if users >= c.MaxBatch {
		return math.MaxInt
	}
	return users
}
