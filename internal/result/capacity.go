package result

// The outcomes of a capacity search (Capacity.Outcome).
const (
	// CapacityBracketed: a load that held and a load above it that broke
	// were found, and bisection narrowed them to the resolution.
	CapacityBracketed = "bracketed"
	// CapacityBelowMin: the SLOs broke at capacity.min, so the capacity is
	// below the searched range: Holds is 0 and Breaks is Min.
	CapacityBelowMin = "below_min"
	// CapacityAboveMax: the SLOs held at capacity.max, so the capacity is at
	// least Max: Holds is Max and Breaks is 0.
	CapacityAboveMax = "above_max"
	// CapacityBudget: the probe budget ran out before the interval reached
	// the resolution; [Holds, Breaks) is the interval reached.
	CapacityBudget = "budget"
	// CapacityClientLimited: perfgate itself could not send at the offered
	// rate (an open loop fell behind with no max_in_flight cap), so the
	// search stopped: the capacity is at least Holds, and the server was not
	// shown to break.
	CapacityClientLimited = "client_limited"
)

// The censoring of a capacity sample (CapacitySample.Censored).
const (
	// CensoredAbove marks a sample that held at every probe: the capacity is
	// at least its Load (a lower bound).
	CensoredAbove = "above"
	// CensoredBelow marks a sample that broke at every probe: the capacity
	// is at most its Load (an upper bound).
	CensoredBelow = "below"
)

// SweepPoint says which point of a swept scenario a scenario result is: a
// scenario whose load lists several rates or concurrencies is measured as one
// scenario per value, each named by config.PointName ("chat.rate-25").
type SweepPoint struct {
	// Of is the swept scenario's name as configured ("chat").
	Of string `json:"of"`
	// Param is what the sweep varies: rate (requests per second, open loop)
	// or concurrency (users, closed loop).
	Param string `json:"param"`
	// Value is this point's rate or concurrency.
	Value float64 `json:"value"`
	// Index is the point's 0-based place in the sweep, and Points how many
	// points the sweep has.
	Index  int `json:"index"`
	Points int `json:"points"`
}

// CapacitySearch is what a capacity search looked for and how: part of what
// was measured, so two results whose searches differ are not compared.
type CapacitySearch struct {
	// Metric is request_rate (the offered rate of an open loop, req/s) or
	// concurrency (closed-loop users).
	Metric string `json:"metric"`
	// SLO maps each latency statistic of a repetition ("ttft.p99") to its
	// limit in milliseconds.
	SLO map[string]float64 `json:"slo_ms"`
	// Min and Max bound the searched loads, Start is the first probe.
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Start float64 `json:"start"`
	// Resolution is the relative width at which bisection stops: 0.05 stops
	// once Breaks/Holds <= 1.05.
	Resolution float64 `json:"resolution"`
	// Rule is the holds rule: every (every repetition meets every SLO) or
	// bound (a one-sided Student-t bound on the repetitions meets it).
	Rule string `json:"rule"`
	// Confidence is the bound rule's one-sided confidence; 0 for every.
	Confidence float64 `json:"confidence,omitempty"`
	// Repetitions is how many repetitions each probe measures.
	Repetitions int `json:"repetitions"`
	// Budget is the most probes the search may make to bracket and
	// bisect; up to 2 closing probes (Phase close) come on top.
	Budget int `json:"budget"`
	// Headroom is set when the search is a headroom search (a scenario's
	// headroom section): how close to the wall of memory the server runs,
	// searched in context tokens (Metric context) or users (Metric
	// concurrency) with the limits a probe must stay within besides its
	// SLOs. nil for a capacity search.
	Headroom *HeadroomSearch `json:"headroom,omitempty"`
}

// The metric of a headroom search over context (CapacitySearch.Metric):
// the longest context, prompt plus output tokens, at a number of users.
const HeadroomContext = "context"

// HeadroomSearch is what a headroom search holds fixed and the limits a
// probe must stay within, besides its SLOs: no request failed (refused for
// its length, cut by a crash, out of memory), every answer as long as asked
// (an engine that truncates at its context says so only by stopping early),
// the engine's preemptions and KV-cache usage within their limits.
type HeadroomSearch struct {
	// Users is the number of closed-loop users when the search is over
	// context; 0 when it is over users.
	Users int `json:"users,omitempty"`
	// Context is the context in tokens (prompt plus output) of every
	// request when the search is over users; 0 when it is over context.
	Context int `json:"context,omitempty"`
	// OutputTokens is the output every request asks for (max_tokens, with
	// min_tokens and ignore_eos), part of its context.
	OutputTokens int `json:"output_tokens"`
	// MaxPreemptions is the most preemptions the engine may report in a
	// repetition (0: none); MaxKVCache the highest KV-cache usage, 0..1, at
	// any scrape (0: no limit). Both need the engine's metrics page.
	MaxPreemptions float64 `json:"max_preemptions"`
	MaxKVCache     float64 `json:"max_kv_cache,omitempty"`
}

// Calibration is how a headroom search sized its prompts: a prompt of n
// words came to OverheadTokens + TokensPerWord×n tokens on the server's
// tokenizer (and chat template), from two calibration requests. It is a
// measurement of the server, not part of what was searched.
type Calibration struct {
	TokensPerWord  float64 `json:"tokens_per_word"`
	OverheadTokens float64 `json:"overhead_tokens"`
	// Measured says the figures came from the server's usage; false when
	// it reported none and one token a word was assumed (Note says why).
	Measured bool   `json:"measured"`
	Note     string `json:"note,omitempty"`
}

// Capacity is the outcome of a capacity search: the highest load at which a
// scenario's SLOs held, as an interval, with every probe that found it and
// one capacity sample per repetition for the capacity gate.
type Capacity struct {
	// Search is what was searched.
	Search CapacitySearch `json:"search"`
	// Outcome is bracketed, below_min, above_max, budget or client_limited.
	Outcome string `json:"outcome"`
	// Holds is the highest load judged to hold (0 when below_min), and
	// Breaks the lowest load above it judged to break (0 when none did):
	// the capacity lies in [Holds, Breaks).
	Holds  float64 `json:"holds"`
	Breaks float64 `json:"breaks,omitempty"`
	// At is the index in Probes of the capacity point, whose repetitions are
	// the scenario result's Repetitions: the probe at Holds (at Min when
	// below_min).
	At int `json:"at"`
	// RequestRate and OutputThroughput are the medians over the capacity
	// point's repetitions of the achieved request rate (req/s) and output
	// throughput (tok/s).
	RequestRate      float64 `json:"request_rate"`
	OutputThroughput float64 `json:"output_throughput"`
	// CostPerMTok is the median over the capacity point's repetitions of the
	// dollars per million output tokens: what a GPU-hour buys while the SLOs
	// hold. nil when the config set no price.
	CostPerMTok *float64 `json:"cost_per_mtok,omitempty"`
	// Probes are the probes in the order they were made.
	Probes []CapacityProbe `json:"probes"`
	// Samples are one capacity estimate per repetition index: the samples
	// the capacity and capacity_tokens gates test.
	Samples []CapacitySample `json:"samples"`
	// Warnings are things the search noticed and the report shows (a
	// repetition that held above a load where it broke, say).
	Warnings []string `json:"warnings,omitempty"`
	// Boundary is why the probe at Breaks did not hold, as the server said
	// it where it did: "rep 1: 4 of 8 requests failed: http 400: request
	// (278 tokens) exceeds the available context size (256 tokens)". Set
	// by a headroom search, whose answer is often this message.
	Boundary string `json:"boundary,omitempty"`
	// Calibration is how a headroom search sized its prompts; nil for a
	// capacity search.
	Calibration *Calibration `json:"calibration,omitempty"`
}

// CapacityProbe is one load a capacity search measured.
type CapacityProbe struct {
	// Load is the offered rate (req/s) or concurrency probed.
	Load float64 `json:"load"`
	// Phase is bracket, bisect, or close: a closing probe, at twice (then
	// four times) the highest load probed, made after the search when some
	// repetition held at every probe, so that its sample is a crossing.
	Phase string `json:"phase"`
	// Held is the holds rule's verdict on the probe.
	Held bool `json:"held"`
	// Margin is, for each SLO statistic, the rule's statistic over its limit
	// (the largest repetition's for every, the bound for bound): the probe
	// held when every margin is at most 1 and no repetition broke.
	Margin map[string]float64 `json:"margin"`
	// Broken counts the repetitions that failed past max_error_rate or
	// completed nothing: each breaks the probe.
	Broken int `json:"broken,omitempty"`
	// Warmup is how the probe's load was brought to steady state.
	Warmup *Warmup `json:"warmup,omitempty"`
	// Why is what broke the probe beyond its SLOs (a headroom search's
	// limits: a refusal, a crash, a preemption, a cut answer) in words; empty
	// when nothing did.
	Why string `json:"why,omitempty"`
	// Restarted says the stack died during the probe and perfgate started
	// it again before the next (a headroom search on a stack it starts).
	Restarted bool `json:"restarted,omitempty"`
	// Repetitions are the probe's repetitions, without their histograms
	// (the capacity point's are kept whole in the scenario's Repetitions).
	Repetitions []Repetition `json:"repetitions"`
}

// CapacitySample is one repetition index's capacity: repetition r of every
// probe replays the same seeded arrivals, so it is one arrival sequence
// measured at several loads, and its capacity is where its SLO margin crosses
// 1, interpolated between the probes either side.
type CapacitySample struct {
	// Repetition is the 1-based repetition index, shared by every probe.
	Repetition int `json:"repetition"`
	// Load is the crossing in the search's unit (req/s or users).
	Load float64 `json:"load"`
	// RequestRate and OutputThroughput are the achieved request rate and
	// output throughput at the crossing, interpolated like Load.
	RequestRate      float64 `json:"request_rate"`
	OutputThroughput float64 `json:"output_throughput"`
	// Censored is empty for a crossing, above when the repetition held at
	// every probe (Load is a lower bound) and below when it broke at every
	// probe (Load is an upper bound).
	Censored string `json:"censored,omitempty"`
}
