package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/result"

	"github.com/perfgate/perfgate/internal/stat"
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
	// Limit, when set, is a condition a repetition of a probe at load must
	// meet besides its SLOs: it says why the repetition is past it ("" when
	// it is not), and such a repetition breaks its probe as a broken one
	// does. A headroom search sets it (no refusal, no cut answer, every
	// user running at once, preemptions and KV-cache usage within their
	// limits); with it, SLO may be empty.
	Limit func(load float64, r *result.Repetition) string
	// Headroom is recorded as the result's Search.Headroom: what a headroom
	// search held fixed. nil for a capacity search.
	Headroom *result.HeadroomSearch
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

// The phases of a search (result.CapacityProbe.Phase).
const (
	// PhaseBracket probes double (or halve) the last load until one holds
	// and one breaks.
	PhaseBracket = "bracket"
	// PhaseBisect probes the geometric midpoint of the bracket.
	PhaseBisect = "bisect"
	// PhaseClose probes come after the bracket and bisection, beyond the
	// budget (MaxClosing at most): at twice the highest load probed
	// (clamped to Max) while some repetition held at every probe, so that
	// every repetition's capacity sample is a crossing, not a bound. The
	// holds rule breaks a probe on its worst repetition, so the bracket's
	// top can be a load where only one repetition broke; without these
	// probes the others' samples would be lower bounds, which the gate
	// cannot decide on.
	PhaseClose = "close"
)

// MaxClosing is the most closing probes (PhaseClose) a search makes beyond
// its budget: two doublings reach four times the bracket's top, past which
// a repetition that still holds is rarer than the overload such a probe
// puts on a real engine is worth; its sample stays a bound.
const MaxClosing = 2

// The rules and metrics a Spec names; config's constants spell the same
// words (config.HoldsEvery, config.CapacityRequestRate ...), which this
// package, imported by config's users, does not import.
const (
	ruleEvery     = "every"
	ruleBound     = "bound"
	metricRate    = "request_rate"
	metricUsers   = "concurrency"
	metricContext = result.HeadroomContext
)

// maxWarnings bounds Capacity.Warnings: a search of many repetitions that
// all misbehave says so in a few lines, not hundreds.
const maxWarnings = 16

// Check says what is wrong with s, if anything: Search refuses a spec that
// could not give an honest answer (a minimum that is not positive, a start
// outside the range, an unknown statistic).
func (s Spec) Check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch {
	case s.Metric == metricContext && s.Limit == nil:
		bad("metric: %s is a headroom search's, which needs its limits", s.Metric)
	case s.Metric != metricRate && s.Metric != metricUsers && s.Metric != metricContext:
		bad("metric: want %s or %s, got %q", metricRate, metricUsers, s.Metric)
	}
	if len(s.SLO) == 0 && s.Limit == nil {
		bad("slo: at least one objective is needed")
	}
	for _, o := range s.SLO {
		var r result.Repetition
		if _, err := r.Value(o.Metric); err != nil || !strings.Contains(o.Metric, ".") {
			bad("slo: %q is not a latency statistic of a repetition", o.Metric)
		}
		if !(o.LimitMS > 0) || math.IsInf(o.LimitMS, 0) {
			bad("slo.%s: want a limit > 0 ms, got %g", o.Metric, o.LimitMS)
		}
	}
	if !(s.Min > 0) || math.IsInf(s.Max, 0) || !(s.Max > s.Min) {
		bad("min, max: want 0 < min < max, got %g and %g", s.Min, s.Max)
	}
	if !(s.Start >= s.Min && s.Start <= s.Max) {
		bad("start: want from min (%g) to max (%g), got %g", s.Min, s.Max, s.Start)
	}
	if s.Integer && (s.Min != math.Round(s.Min) || s.Max != math.Round(s.Max) || s.Start != math.Round(s.Start)) {
		bad("min, max, start: a number of users is an integer, got %g, %g, %g", s.Min, s.Max, s.Start)
	}
	if !(s.Resolution > 0) || math.IsInf(s.Resolution, 0) {
		bad("resolution: want > 0, got %g", s.Resolution)
	}
	switch s.Rule {
	case ruleEvery:
	case ruleBound:
		if !(s.Confidence > 0.5 && s.Confidence < 1) {
			bad("confidence: want from 0.5 to 1 (exclusive), got %g", s.Confidence)
		}
		if s.Repetitions < 3 {
			bad("repetitions: the bound rule needs at least 3 (a t bound on 2 has one degree of freedom), got %d", s.Repetitions)
		}
	default:
		bad("rule: want %s or %s, got %q", ruleEvery, ruleBound, s.Rule)
	}
	if s.Repetitions < 1 {
		bad("repetitions: want at least 1, got %d", s.Repetitions)
	}
	if s.Budget < 1 {
		bad("budget: want at least 1 probe, got %d", s.Budget)
	}
	if !(s.MaxErrorRate >= 0 && s.MaxErrorRate <= 1) {
		bad("max error rate: want a fraction from 0 to 1, got %g", s.MaxErrorRate)
	}
	return errors.Join(errs...)
}

// Result is what s searches, as the result file records it.
func (s Spec) Result() result.CapacitySearch {
	slo := make(map[string]float64, len(s.SLO))
	for _, o := range s.SLO {
		slo[o.Metric] = o.LimitMS
	}
	cs := result.CapacitySearch{Metric: s.Metric, SLO: slo, Min: s.Min, Max: s.Max, Start: s.Start,
		Resolution: s.Resolution, Rule: s.Rule, Repetitions: s.Repetitions, Budget: s.Budget, Headroom: s.Headroom}
	if s.Rule == ruleBound {
		cs.Confidence = s.Confidence
	}
	return cs
}

// Search runs the search: it returns the outcome, and the full repetitions
// (with histograms) of the capacity point, which become the scenario
// result's repetitions. log, when not nil, gets one line per probe.
//
// It never guesses: a search whose minimum breaks says below_min, one whose
// maximum holds says above_max, one that ran out of probes says budget with
// the interval it reached, and one whose open loop fell behind its schedule
// (perfgate could not send at the rate) stops with client_limited.
func Search(ctx context.Context, s Spec, probe Probe, log func(format string, args ...any)) (*result.Capacity, []result.Repetition, error) {
	if err := s.Check(); err != nil {
		return nil, nil, fmt.Errorf("capacity search: %w", err)
	}
	if log == nil {
		log = func(string, ...any) {}
	}
	c := &result.Capacity{Search: s.Result(), Probes: []result.CapacityProbe{}}
	var full [][]result.Repetition  // each probe's repetitions, histograms kept
	var kept []result.CapacityProbe // the probes the samples come from
	// measure makes one probe and records it; behind says how perfgate
	// itself fell behind the probe's open loop ("" when it kept up): such a
	// probe never holds, and tells nothing of the server, so no sample
	// comes from it.
	measure := func(load float64, phase string) (p result.CapacityProbe, reps []result.Repetition, behind string, err error) {
		if err := context.Cause(ctx); err != nil {
			return p, nil, "", fmt.Errorf("capacity search: %w", err)
		}
		reps, w, err := probe(ctx, load, phase)
		if err != nil {
			return p, nil, "", fmt.Errorf("capacity search: %s probe at %s %s: %w", phase, FormatLoad(load), s.unit(), err)
		}
		if len(reps) == 0 {
			return p, nil, "", fmt.Errorf("capacity search: %s probe at %s %s measured no repetitions", phase, FormatLoad(load), s.unit())
		}
		held, margin, broken := Judge(s, load, reps)
		if held && warmupOverloaded(w) && probeOverloaded(reps, w) {
			held = false // the warm-up's vote tips the half
		}
		p = result.CapacityProbe{Load: load, Phase: phase, Held: held, Margin: margin, Broken: broken, Warmup: w,
			Repetitions: withoutHistograms(reps), Why: s.why(load, reps)}
		if behind = s.clientBehind(reps); behind != "" {
			p.Held = false
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s probe at %s %s: %s", phase, FormatLoad(load), s.unit(), behind))
		} else {
			kept = append(kept, p)
		}
		c.Probes = append(c.Probes, p)
		full = append(full, reps)
		return p, reps, behind, nil
	}
	st := newState(s)
	for {
		load, phase, outcome := st.next()
		if outcome == "" && len(c.Probes) >= s.Budget {
			outcome = result.CapacityBudget
		}
		if outcome != "" {
			c.Outcome = outcome
			break
		}
		p, reps, behind, err := measure(load, phase)
		if err != nil {
			return nil, nil, err
		}
		if behind != "" {
			c.Outcome = result.CapacityClientLimited
			log("probe %d/%d (%s) %s %s: %s; the search stops: capacity >= %s", len(c.Probes), s.Budget, phase,
				FormatLoad(load), s.unit(), behind, FormatLoad(st.holds))
			break
		}
		st.record(load, p.Held)
		log("probe %d/%d (%s) %s %s: %s; %s", len(c.Probes), s.Budget, phase, FormatLoad(load), s.unit(),
			verdict(s, p, reps), st.interval())
	}
	for closed := 0; closed < MaxClosing; closed++ {
		load, ok := closingLoad(s, c)
		if !ok {
			break
		}
		p, reps, behind, err := measure(load, PhaseClose)
		if err != nil {
			return nil, nil, err
		}
		if behind != "" {
			log("closing probe (%d) %s %s: %s; the samples that never broke stay bounds", len(c.Probes), FormatLoad(load), s.unit(), behind)
			break
		}
		log("closing probe (%d) %s %s, for the repetitions that never broke: %s", len(c.Probes), FormatLoad(load), s.unit(), verdict(s, p, reps))
	}
	c.Holds, c.Breaks = st.holds, st.breaks
	if c.Outcome == result.CapacityClientLimited {
		c.Breaks = 0 // the server was not shown to break
	}
	for _, p := range c.Probes {
		if c.Breaks > 0 && p.Load == c.Breaks && !p.Held {
			c.Boundary = p.Why
			break
		}
	}
	c.At = capacityPoint(c)
	at := full[c.At]
	c.RequestRate, c.OutputThroughput, c.CostPerMTok = medians(at)
	var warnings []string
	c.Samples, warnings = samples(s, kept)
	c.Warnings = append(c.Warnings, warnings...)
	if c.Outcome == result.CapacityClientLimited && c.Holds == 0 {
		c.Warnings = append(c.Warnings, "no probe held before perfgate fell behind: the capacity point is the probe where it did")
	}
	if len(c.Warnings) > maxWarnings {
		n := len(c.Warnings) - maxWarnings + 1
		c.Warnings = append(c.Warnings[:maxWarnings-1], fmt.Sprintf("... and %d more warnings", n))
	}
	return c, at, nil
}

// closingLoad is the load of the next closing probe (PhaseClose), and
// whether the search makes one: only a search that bracketed the capacity
// (or ran out of budget with a bracket), where some repetition held at
// every probe and the highest load probed is below Max. The probe is at
// twice that load, clamped to Max (rounded, for users); it does not move
// the interval, which the holds rule has decided.
func closingLoad(s Spec, c *result.Capacity) (float64, bool) {
	if c.Outcome != result.CapacityBracketed && c.Outcome != result.CapacityBudget || !brokeAny(c.Probes) {
		return 0, false // nothing broke yet: no bracket to close
	}
	top := 0.0
	broke := map[int]bool{}
	for _, p := range c.Probes {
		top = max(top, p.Load)
		for i := range p.Repetitions {
			if r := &p.Repetitions[i]; isBroken(s, p.Load, r) || !(worstMargin(s, p.Load, r) <= 1) {
				broke[r.Index] = true
			}
		}
	}
	if top >= s.Max {
		return 0, false
	}
	for _, p := range c.Probes {
		for i := range p.Repetitions {
			if !broke[p.Repetitions[i].Index] {
				load := min(2*top, s.Max)
				if s.Integer {
					load = math.Round(load)
				}
				return load, true
			}
		}
	}
	return 0, false
}

// brokeAny reports whether some probe broke.
func brokeAny(probes []result.CapacityProbe) bool {
	for _, p := range probes {
		if !p.Held {
			return true
		}
	}
	return false
}

// capacityPoint is the index of the probe whose repetitions stand for the
// capacity: the probe at Holds, else (nothing held) the lowest probe.
func capacityPoint(c *result.Capacity) int {
	at := -1
	for i, p := range c.Probes {
		if c.Holds > 0 && p.Load == c.Holds && p.Held {
			return i
		}
		if at < 0 || p.Load < c.Probes[at].Load {
			at = i
		}
	}
	return at
}

// unit is the unit of a load in log lines.
func (s Spec) unit() string {
	switch s.Metric {
	case metricUsers:
		return "users"
	case metricContext:
		return "tokens"
	}
	return "req/s"
}

// maxWhy bounds a probe's Why (result's maxBoundary): a server's message is
// untrusted, and a repetition's first error is bounded already.
const maxWhy = 2048

// why is what broke a probe's repetitions beyond their SLOs (Spec.Limit),
// the first repetition's that did; "" when none did or there is no Limit.
func (s Spec) why(load float64, reps []result.Repetition) string {
	if s.Limit == nil {
		return ""
	}
	for i := range reps {
		if w := s.Limit(load, &reps[i]); w != "" {
			if len(w) > maxWhy {
				w = strings.ToValidUTF8(w[:maxWhy-3], "") + "..."
			}
			return w
		}
	}
	return ""
}

// clientBehind says how an open-loop probe's client fell behind its
// schedule with no max_in_flight cap (perfgate could not send at the rate,
// so the probe says nothing of the server); "" when it kept up, or when a
// cap explains it (the probe then breaks on its latencies or schedule).
func (s Spec) clientBehind(reps []result.Repetition) string {
	if s.Metric != metricRate || s.Capped {
		return ""
	}
	for _, r := range reps {
		if sc := r.Schedule; sc != nil && !sc.Achieved {
			return fmt.Sprintf("perfgate fell behind its schedule in repetition %d (sent %s of %s req/s, p99 send lag %.1f ms): the client, not the server, is the limit",
				r.Index, FormatLoad(sc.AchievedRate), FormatLoad(sc.ScheduledRate), sc.SendLag.P99)
		}
	}
	return ""
}

// withoutHistograms copies reps without their histograms: a probe keeps its
// repetitions' figures, the scenario's repetitions the capacity point's
// histograms.
func withoutHistograms(reps []result.Repetition) []result.Repetition {
	out := slices.Clone(reps)
	for i := range out {
		out[i].Histograms = nil
	}
	return out
}

// medians are the capacity point's medians over its repetitions: achieved
// request rate, output throughput, and the cost per million output tokens
// (nil when no repetition has a cost).
func medians(reps []result.Repetition) (rate, output float64, cost *float64) {
	var rs, os, cs []float64
	for _, r := range reps {
		rs = append(rs, r.RequestThroughput)
		os = append(os, r.OutputThroughput)
		if r.Cost != nil {
			cs = append(cs, r.Cost.USDPerMOutput)
		}
	}
	if len(reps) == 0 {
		return 0, 0, nil
	}
	rate, output = stat.Median(rs), stat.Median(os)
	if len(cs) > 0 {
		m := stat.Median(cs)
		cost = &m
	}
	return rate, output, cost
}

// verdict is a probe's outcome in words for its log line: "holds
// (tpot.p99 0.83x its SLO)", "breaks (tpot.p99 1.21x its SLO, rep 3)",
// "breaks (rep 2 failed 12 of 16 requests)".
func verdict(s Spec, p result.CapacityProbe, reps []result.Repetition) string {
	word := "breaks"
	if p.Held {
		word = "holds"
	}
	if p.Why != "" {
		return fmt.Sprintf("%s (%s)", word, p.Why)
	}
	if p.Broken > 0 {
		for _, r := range reps {
			if isBroken(s, p.Load, &r) {
				if r.Completed == 0 {
					return fmt.Sprintf("%s (rep %d completed none of %d requests)", word, r.Index, r.Sent)
				}
				return fmt.Sprintf("%s (rep %d failed %d of %d requests)", word, r.Index, r.Failed, r.Sent)
			}
		}
	}
	if r := overloaded(reps); r != nil && !p.Held {
		return fmt.Sprintf("%s (rep %d could not keep up: %s)", word, r.Index, r.Overload.Sentence())
	}
	if !p.Held && p.Warmup != nil && warmupOverloaded(p.Warmup) {
		return fmt.Sprintf("%s (its warm-up could not keep up: %s)", word, p.Warmup.Overload.Sentence())
	}
	// The objective with the largest margin, and (for a break) the
	// repetition with its largest value.
	worst, wm := "", math.Inf(-1)
	for _, o := range s.SLO {
		if m, ok := p.Margin[o.Metric]; ok && m > wm {
			worst, wm = o.Metric, m
		}
	}
	if worst == "" {
		return word
	}
	if p.Held {
		return fmt.Sprintf("%s (%s %.2fx its SLO)", word, worst, wm)
	}
	rep, top := 0, math.Inf(-1)
	for _, r := range reps {
		if v, err := r.Value(worst); err == nil && v > top {
			rep, top = r.Index, v
		}
	}
	return fmt.Sprintf("%s (%s %.2fx its SLO, rep %d)", word, worst, wm, rep)
}

// FormatLoad writes a load to three significant digits, whole numbers from
// 100 up: 113, 56.6, 7.07, 0.707. Every line about a search (its log, the
// gate's reasons) writes loads with it, so they read alike.
func FormatLoad(x float64) string {
	if !(x > 0) || math.IsInf(x, 0) {
		return fmt.Sprint(x)
	}
	decimals := max(0, 2-int(math.Floor(math.Log10(x))))
	out := fmt.Sprintf("%.*f", decimals, x)
	if strings.Contains(out, ".") {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	return out
}
