package result

import (
	"math"
	"time"
)

// What a result records of the config that ran it: the load shape, the
// SLOs, the gates, the comparison settings and the price. These are the result
// file's own types, not the config's: a baseline lives in a repository for
// years, and must read the same when the config's Go types, or the metric
// catalogue, have changed. The config converts to them when a result is
// written (config.Load.Result and the like); nothing here is read through
// the config or checked against today's metrics.

// Load is the load shape a scenario ran under, as the config set it.
type Load struct {
	// Type is closed, poisson, gamma or trace.
	Type string `json:"type"`
	// Concurrency is the number of closed-loop users.
	Concurrency int `json:"concurrency,omitempty"`
	// Rate is the open-loop target in requests per second.
	Rate float64 `json:"rate,omitempty"`
	// Burstiness is the gamma shape parameter: 1 is Poisson, < 1 burstier,
	// > 1 smoother.
	Burstiness float64 `json:"burstiness,omitempty"`
	// MaxInFlight caps open-loop requests in flight; 0 means no cap.
	MaxInFlight int `json:"max_in_flight,omitempty"`
	// Speedup divides trace arrival times (2 replays twice as fast).
	Speedup float64 `json:"speedup,omitempty"`
	// ThinkTime is the distribution (milliseconds) of the pause before a
	// session's later turn that gives no think_ms; empty for none.
	ThinkTime string `json:"think_time,omitempty"`
	// Overload is "measure" (OverloadMeasure) when the scenario declares
	// that it measures a server past the load it can sustain; empty
	// otherwise, and an overloaded scenario then fails the run.
	Overload string `json:"overload,omitempty"`
	// Arrivals is "fresh" when each repetition of an open loop drew
	// arrivals of its own; empty when every repetition replayed one seeded
	// schedule (the default since load.arrivals; results measured before it
	// drew fresh arrivals and do not say so).
	Arrivals string `json:"arrivals,omitempty"`
	// Steps are a step load's rates in requests per second, in order; At
	// when each step after the first began, in nanoseconds from the start
	// of a repetition; RecoveryWindow the window its recovery was looked
	// for in, in nanoseconds (as the config's JSON writes durations). Empty
	// for other loads.
	Steps          []float64       `json:"steps,omitempty"`
	At             []time.Duration `json:"at,omitempty"`
	RecoveryWindow time.Duration   `json:"recovery_window,omitempty"`
}

// SLO are the per-request objectives a scenario's goodput was counted
// against, in milliseconds as every latency of a result is; 0 means not
// set. (Results of schema v1 stored them in nanoseconds; Read converts.)
type SLO struct {
	// TTFT is the longest time to first token a good request may take.
	TTFT float64 `json:"ttft_ms,omitempty"`
	// TPOT is the longest time per output token (after the first).
	TPOT float64 `json:"tpot_ms,omitempty"`
	// E2E is the longest a good request may take from send to end of stream.
	E2E float64 `json:"e2e_ms,omitempty"`
}

// msDuration is a number of milliseconds as a duration, rounded to the
// nanosecond: exactly the duration a config wrote, whose milliseconds are
// a nanosecond count divided by 10⁶.
func msDuration(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

// Gate is one gate as the config set it when the result was measured: the
// metric's name and its tolerance as written ("+10%", "-100 tok/s"). It is
// kept as text: a comparison turns it into a gate with today's metric
// catalogue, and a metric this perfgate no longer knows is then left
// ungated with a warning rather than making the result unreadable.
type Gate struct {
	// Metric is the metric's name in configs and reports (ttft.p99).
	Metric string `json:"metric"`
	// Tolerance is how much worse the metric may get, as written.
	Tolerance string `json:"tolerance"`
}

// CompareSettings are the comparison settings of the config that ran, so
// that `perfgate compare` needs no config.
type CompareSettings struct {
	// Alpha is the false-regression rate over all gates of a run.
	Alpha float64 `json:"alpha"`
	// OnInconclusive is fail or pass: the exit code of a gate still
	// inconclusive when the repetition budget ran out.
	OnInconclusive string `json:"on_inconclusive"`
	// Baselines is the directory of promoted baselines, relative to the
	// config file.
	Baselines string `json:"baselines"`
	// Tail is the lowest latency percentile whose gates get a tail test
	// (p99), or off; "" in results from before the tail test, which
	// compare as the default does.
	Tail string `json:"tail,omitempty"`
	// Estimator is how a gate takes a latency percentile of each
	// repetition: harrell-davis or sample; "" in results from before the
	// setting, which compare as the default does.
	Estimator string `json:"estimator,omitempty"`
}

// Price is what the deployment measured costs: the price each repetition's
// cost figures (Repetition.Cost) were computed at.
type Price struct {
	// USDPerGPUHour is what one GPU costs an hour, in US dollars.
	USDPerGPUHour float64 `json:"usd_per_gpu_hour"`
	// GPUs is how many GPUs are paid for while the model is served.
	GPUs int `json:"gpus"`
}

// USDPerSecond is what the deployment costs a second.
func (p Price) USDPerSecond() float64 { return p.USDPerGPUHour * float64(p.GPUs) / 3600 }
