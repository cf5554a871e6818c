// Package capacity finds the highest load at which a scenario's SLOs hold:
// it brackets the capacity (doubling or halving from a start), then bisects
// the bracket to a resolution, judging each probe on its own repetitions by
// an explicit rule (every repetition, or a one-sided bound), and reports an
// interval with one capacity sample per repetition for the capacity gate.
//
// The package is pure: it measures nothing itself. The caller (the session)
// gives it a Probe that warms the stack up at a load and measures its
// repetitions, so the search is tested against fake probes with a known
// boundary and run for real against any stack.
package capacity

import (
	"context"
	"errors"

	"github.com/perfgate/perfgate/internal/result"
)

// Spec is a capacity search, with every default applied.
type Spec struct {
	// Metric is request_rate or concurrency (config.CapacityRequestRate...).
	Metric string
	// SLO are the objectives a repetition must meet, in a fixed order.
	SLO []Objective
	// Min, Max bound the search; Start is the first probe.
	Min, Max, Start float64
	// Resolution stops bisection once Breaks/Holds <= 1+Resolution.
	Resolution float64
	// Rule is every or bound (config.HoldsEvery, config.HoldsBound), and
	// Confidence the bound's one-sided confidence.
	Rule       string
	Confidence float64
	// Repetitions is how many repetitions each probe measures, and Budget
	// the most probes the search may make.
	Repetitions, Budget int
	// Integer is true when the load is a number of users: probes are
	// rounded, and bisection stops when no integer lies between.
	Integer bool
	// MaxErrorRate is the largest share of failed requests a repetition may
	// have and still count; past it the repetition is broken and breaks
	// the probe.
	MaxErrorRate float64
	// Capped is true when the open loop has a max_in_flight cap: a
	// repetition that fell behind its schedule then shows the server held
	// requests back (the probe breaks), not that perfgate could not send.
	Capped bool
}

// Objective is one SLO: a latency statistic of a repetition ("ttft.p99",
// as result.Repetition.Value names it) and its limit in milliseconds.
type Objective struct {
	Metric  string
	LimitMS float64
}

// Probe measures one load: it warms the stack up at it, then measures
// Spec.Repetitions repetitions, repetition r replaying the same seeded
// arrivals at every load. A broken repetition (too many errors, nothing
// completed) is returned among reps, not as err; err aborts the search (a
// crash, a signal).
type Probe func(ctx context.Context, load float64, phase string) (reps []result.Repetition, w *result.Warmup, err error)

// Search runs the search: it returns the outcome, and the full repetitions
// (with histograms) of the capacity point, which become the scenario
// result's repetitions. log, when not nil, gets one line per probe.
func Search(ctx context.Context, s Spec, probe Probe, log func(format string, args ...any)) (*result.Capacity, []result.Repetition, error) {
	return nil, nil, errors.New("capacity search: not implemented")
}
