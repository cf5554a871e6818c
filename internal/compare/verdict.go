package compare

import (
	"encoding/json"
	"math"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/stat"
)

// Verdict is the outcome of one comparison: the product perfgate exists for.
type Verdict struct {
	// Outcome is regression when any gate regressed, else inconclusive when
	// any gate is inconclusive, else pass.
	Outcome stat.Outcome `json:"outcome"`
	// OnInconclusive is what an inconclusive verdict does to the exit code
	// (fail or pass); it never changes the outcome shown.
	OnInconclusive string `json:"on_inconclusive"`
	// Alpha is the false-regression rate over the whole run.
	Alpha float64 `json:"alpha"`
	// Sequential is true when the verdict came from a sequential gate (with
	// alpha spent over looks).
	Sequential bool `json:"sequential,omitempty"`
	// AB is set when the verdict is an A/B (perfgate ab): the two sides
	// were measured interleaved on one runner and compared pair by pair;
	// nil for a comparison with a stored baseline.
	AB *AB `json:"ab,omitempty"`
	// Estimator is how the gates took each repetition's latency
	// percentiles: harrell-davis or sample (compare.estimator).
	Estimator string `json:"estimator,omitempty"`
	// Scenarios holds one comparison per scenario of the candidate.
	Scenarios []Scenario `json:"scenarios"`
	// Changes lists identity differences that a pull request is expected to
	// make (engine version, model, flags, image): shown, not refused.
	Changes []Difference `json:"changes,omitempty"`
	// Mismatches lists differences that make the comparison unfair
	// (hardware, workload, load shape), when --allow-mismatch let it go on.
	Mismatches []Difference `json:"mismatches,omitempty"`
	// Warnings are about the run as a whole.
	Warnings []string `json:"warnings,omitempty"`
}

// Scenario is one scenario's comparison.
type Scenario struct {
	Name string `json:"name"`
	// NoBaseline is set when the baseline has no such scenario: nothing was
	// compared.
	NoBaseline bool `json:"no_baseline,omitempty"`
	// BaselineN and CandidateN are the repetitions of each side.
	BaselineN  int `json:"baseline_n"`
	CandidateN int `json:"candidate_n"`
	// Level is the significance level the scenario's gates were tested at,
	// after alpha spending (sequential gates); Holm divides it further.
	Level float64 `json:"level"`
	// Gates are the gated metrics, regressions first.
	Gates []Gate `json:"gates"`
	// NotGated are configured gates that could not be tested, with why.
	NotGated []NotGated `json:"not_gated,omitempty"`
	// Quality holds the eval suites' comparisons, whose gates are in the
	// same Holm family as Gates.
	Quality []Suite `json:"quality,omitempty"`
	// Warnings are about this scenario (unsteady warm-up, missed schedule).
	Warnings []string `json:"warnings,omitempty"`
}

// Outcome of the scenario: its worst gate.
func (s Scenario) Outcome() stat.Outcome { return worst(s.outcomes) }

// outcomes yields the outcome of every gate of the scenario, latency and
// quality.
//
// A tail gate that is inconclusive is left out: it can add a regression,
// but the pass or inconclusive of its metric is its per-repetition gate's
// to give (docs/gating.md, "The tail test").
func (s Scenario) outcomes(yield func(stat.Outcome) bool) {
	for _, g := range s.Gates {
		if g.Tail != nil && g.Outcome == stat.Inconclusive {
			continue
		}
		if !yield(g.Outcome) {
			return
		}
	}
	for _, q := range s.Quality {
		for _, g := range q.Gates {
			if !yield(g.Outcome) {
				return
			}
		}
	}
}

// Gate is one gate's evidence and outcome.
type Gate struct {
	Metric string `json:"metric"`
	// Title ("TTFT p99"), Unit ("ms") and Better ("lower") describe the metric.
	Title     string `json:"title"`
	Unit      string `json:"unit"`
	Better    string `json:"better"`
	Tolerance string `json:"tolerance"`

	Baseline  Summary `json:"baseline"`
	Candidate Summary `json:"candidate"`

	// Shift is the Hodges-Lehmann estimate of candidate − baseline in the
	// metric's unit, with its interval.
	Shift Interval `json:"shift"`
	// Change is Shift relative to the baseline median (0.12 is +12%); its
	// fields are null when the baseline median is 0, and for a share (unit
	// "%": the error rate), whose change is ChangePoints instead.
	Change Interval `json:"change"`
	// ChangePoints is set for a share (unit "%": the error rate, KV-cache
	// use), in place of Change: Shift in percentage points, the unit of its
	// tolerance (2 is +2 points: 2.00% → 4.00%), never relative to the
	// baseline (which for an error rate is often 0).
	ChangePoints *Interval `json:"change_points,omitempty"`
	// Confidence is the interval's actual two-sided coverage: each bound is
	// a one-sided bound at (1+Confidence)/2.
	Confidence Num `json:"confidence"`
	// IntervalNeeds is set when the repetitions (an A/B's rounds) are too
	// few for an interval of the change at the gate's confidence: the
	// bounds of Shift, Change and ChangePoints are then unbounded (null)
	// and this is how many a side an interval needs.
	IntervalNeeds int `json:"interval_needs,omitempty"`

	// Detectable is the change this gate can tell apart from its own
	// noise at its samples and level (stat.DetectableChange): the
	// smallest tolerance at which an unchanged candidate would pass it in
	// all but 5% over the run's gates of comparisons. A fraction for a
	// relative tolerance, else in the metric's unit (a fraction for
	// points); +Inf (null) when the samples cannot decide at all; absent
	// (nil) at a sequential gate's looks and for tail and per-start gates.
	Detectable *Num `json:"detectable,omitempty"`

	// Paired is true when the two sides' values were tested pair by pair
	// (the signed-rank test on the pairs, Shift and Change from the Walsh
	// averages): an A/B's rounds, and a capacity gate's samples when both
	// sides drew fresh arrivals for each repetition with the same seed
	// (repetition r replayed the same arrivals on each, and no other
	// repetition did); its reason then ends "paired by repetition (fresh
	// arrivals of the same seed 42)", and a capacity gate tested unpaired
	// says why. False: two independent samples (the U test, the
	// Hodges-Lehmann interval).
	Paired bool `json:"paired,omitempty"`

	// P is the one-sided p-value in the bad direction; PAdjusted is after
	// Holm's correction; Level is what PAdjusted is compared with.
	P         Num `json:"p"`
	PAdjusted Num `json:"p_adjusted"`
	Level     Num `json:"level"`

	Outcome  stat.Outcome `json:"outcome"`
	Reason   string       `json:"reason"`
	Warnings []string     `json:"warnings,omitempty"`

	// Drift is, in an A/B, the baseline arm's own trend across the rounds:
	// the Theil-Sen slope of its values against the round, times the rounds
	// less one, relative to its median (0.24 is +24% from the first round
	// to the last). It is the drift the pairing cancelled, which a stored
	// baseline would have counted as a change. Zero (absent) outside an
	// A/B; NaN (null) with fewer than 2 rounds.
	Drift Num `json:"drift,omitempty"`

	// Tail is set on a tail gate (Metric ends in TailSuffix): the
	// request-level test beside a latency percentile gate, its evidence.
	// Its Shift, Change and Confidence are null: it has no interval.
	Tail *Tail `json:"tail,omitempty"`
}

// AB says how an A/B verdict was measured.
type AB struct {
	// Mode is how the two stacks were held: co-resident (both up at once)
	// or swap (one at a time, restarted at every change of arm).
	Mode string `json:"mode"`
	// Rounds is the most rounds any scenario measured: round r measured one
	// repetition of the scenario on each arm, and the pair is compared.
	Rounds int `json:"rounds"`
	// Order is the arms' order in each round, "AB" (base first) or "BA":
	// ABBA across rounds, so a drift in time favours neither arm.
	Order []string `json:"order"`
	// Base and Candidate name the arms' configs as the user gave them.
	Base      string `json:"base"`
	Candidate string `json:"candidate"`
}

// Summary is one side's samples of a metric: the median with its 95%
// interval (benchmath's, distribution-free) and the values themselves.
type Summary struct {
	N      int `json:"n"`
	Median Num `json:"median"`
	// Lo and Hi bound the median at MedianConfidence; either is null (in
	// memory, -Inf or +Inf) when the side has too few values to bound it
	// on that side, and IntervalNeeds then says how many it needs.
	Lo     Num   `json:"lo"`
	Hi     Num   `json:"hi"`
	Values []Num `json:"values"`
	// IntervalNeeds is set when the side has too few values for a 95%
	// interval of its median (Lo or Hi unbounded): the values it needs
	// (6 at 95%).
	IntervalNeeds int `json:"interval_needs,omitempty"`
	// Warnings are about the summary ("no samples").
	Warnings []string `json:"warnings,omitempty"`
}

// Interval is an estimate with its bounds.
type Interval struct {
	Estimate Num `json:"estimate"`
	Lo       Num `json:"lo"`
	Hi       Num `json:"hi"`
}

// NotGated is a configured gate that could not be tested.
type NotGated struct {
	Metric    string `json:"metric"`
	Title     string `json:"title"`
	Unit      string `json:"unit"`
	Baseline  []Num  `json:"baseline,omitempty"`
	Candidate []Num  `json:"candidate,omitempty"`
	Reason    string `json:"reason"`
}

// Difference is one way the two results' identities differ.
type Difference struct {
	// Scenario is empty for a difference of the whole result.
	Scenario  string `json:"scenario,omitempty"`
	Field     string `json:"field"`
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
}

// Num is a float64 that encodes NaN and ±Inf (no estimate, an unbounded
// interval) as JSON null.
type Num float64

// MarshalJSON writes null for NaN and infinities.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// UnmarshalJSON reads an interval; a null bound beside a known estimate is
// an unbounded one (JSON has no infinity, and Num writes ±Inf as null), so a
// verdict read back renders as it was written.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	type plain Interval
	if err := json.Unmarshal(b, (*plain)(iv)); err != nil {
		return err
	}
	iv.Lo, iv.Hi = unbounded(iv.Estimate, iv.Lo, iv.Hi)
	return nil
}

// UnmarshalJSON reads a summary, its null bounds beside a known median
// unbounded, as Interval's are.
func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	s.Lo, s.Hi = unbounded(s.Median, s.Lo, s.Hi)
	return nil
}

// unbounded turns NaN bounds of a finite estimate into -Inf and +Inf.
func unbounded(estimate, lo, hi Num) (Num, Num) {
	if !estimate.Finite() {
		return lo, hi
	}
	if math.IsNaN(float64(lo)) {
		lo = Num(math.Inf(-1))
	}
	if math.IsNaN(float64(hi)) {
		hi = Num(math.Inf(1))
	}
	return lo, hi
}

// Finite reports whether n is a number (not NaN or infinite).
func (n Num) Finite() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// ExitCode is the process's exit code for the verdict under its own
// on_inconclusive (exit.ForOutcome with --fail-on config): 1 for a
// regression, 1 for an inconclusive verdict with on_inconclusive fail, else 0.
func (v *Verdict) ExitCode() int {
	return exit.ForOutcome(string(v.Outcome), exit.Policy{FailOn: exit.FailOnConfig, OnInconclusive: v.OnInconclusive})
}

// Undecided reports whether some gate is still inconclusive: what makes a
// sequential gate measure another repetition.
func (v *Verdict) Undecided() bool { return v.Outcome == stat.Inconclusive }

// worst is the overall outcome of several: any regression, else any
// inconclusive, else pass. No outcomes at all is inconclusive: nothing was
// shown to pass.
func worst(outcomes func(yield func(stat.Outcome) bool)) stat.Outcome {
	seen, inconclusive := false, false
	for o := range outcomes {
		seen = true
		switch o {
		case stat.Regression:
			return stat.Regression
		case stat.Inconclusive:
			inconclusive = true
		}
	}
	if !seen || inconclusive {
		return stat.Inconclusive
	}
	return stat.Pass
}

func nums(xs []float64) []Num {
	out := make([]Num, len(xs))
	for i, x := range xs {
		out[i] = Num(x)
	}
	return out
}
