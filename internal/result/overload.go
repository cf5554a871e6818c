package result

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/stat"
)

// OverloadMeasure is the value of Load.Overload (config load.overload) of a
// scenario that declares it measures a server past what it can sustain:
// its overloaded repetitions are measured and labelled, not a failed run.
const OverloadMeasure = "measure"

// Overload is one open-loop repetition's evidence of whether the server
// kept up with the rate offered to it (see run's overload detector and
// docs/gating.md, "Sustainable load"). Closed loops have none: their users
// wait for each answer, so the load follows the server.
type Overload struct {
	// Requests is how many sent requests the evidence rests on.
	Requests int `json:"requests"`
	// OfferedRate is the rate the schedule offered: (sent - 1) over the
	// span of the scheduled send times, requests/s.
	OfferedRate float64 `json:"offered_rate"`
	// ServedRate is the completed requests over the span of the scheduled
	// sends plus the backlog time, requests/s.
	ServedRate float64 `json:"served_rate"`
	// BacklogS is that backlog time, in seconds: from the last scheduled
	// send to the last first token (or, for a request that failed before
	// one, its end): the time the server took to take up the backlog left
	// when sending stopped. (Not warm-up's drain_s, which is the time
	// warm-up's requests and the engine's queue took to end.)
	BacklogS Seconds `json:"backlog_s"`
	// TTFTFirstMS and TTFTLastMS are the median TTFT, measured from the
	// scheduled send time (so that a queue in the client counts too), of
	// the completed requests scheduled in the first and the last third of
	// the send span, in milliseconds.
	TTFTFirstMS float64 `json:"ttft_first_ms"`
	TTFTLastMS  float64 `json:"ttft_last_ms"`
	// InFlightFirst and InFlightLast are the mean number of requests in
	// flight (sent and not yet answered: the queue the server holds, as
	// the client sees it) at the scheduled sends of the first and the
	// last third.
	InFlightFirst float64 `json:"in_flight_first"`
	InFlightLast  float64 `json:"in_flight_last"`
	// TrendP is the one-sided p-value of a Mann-Kendall test for TTFT (from
	// the scheduled send) rising with the scheduled send time.
	TrendP float64 `json:"trend_p"`
	// Overloaded is the verdict: the server served under the offered rate
	// by more than the tolerance, and TTFT rose through the repetition.
	Overloaded bool `json:"overloaded"`
}

// Sentence is the repetition's evidence in words: "offered 12.0 req/s,
// served 8.6 req/s; TTFT 0.97 → 17.8 s, in flight 10 → 52".
func (o *Overload) Sentence() string {
	return fmt.Sprintf("offered %.1f req/s, served %.1f req/s; TTFT %s → %s, in flight %.0f → %.0f",
		o.OfferedRate, o.ServedRate, fmtLatency(o.TTFTFirstMS), fmtLatency(o.TTFTLastMS), o.InFlightFirst, o.InFlightLast)
}

// fmtLatency writes milliseconds as ms below a second, s above.
func fmtLatency(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.2f s", ms/1000)
}

// OverloadVerdict is a scenario's account of sustainable load over its
// repetitions.
type OverloadVerdict struct {
	// Overloaded is how many of the Judged repetitions the server could
	// not keep up with.
	Overloaded int `json:"overloaded"`
	Judged     int `json:"judged"`
	// Declared is true when the scenario measures overload on purpose
	// (load.overload: measure).
	Declared bool `json:"declared,omitempty"`
	// Warmup is true when the warm-up's requests showed the server could
	// not keep up (result.Warmup.Overload): it counts as one more judged
	// and overloaded vote, so that an overload is told even when the
	// repetitions are too short for the detector.
	Warmup bool `json:"warmup,omitempty"`
	// OfferedRate and ServedRate are the medians over the overloaded
	// repetitions, requests/s.
	OfferedRate float64 `json:"offered_rate"`
	ServedRate  float64 `json:"served_rate"`
}

// Failed reports whether the scenario is overloaded and did not declare it:
// the run fails (exit 3).
func (v OverloadVerdict) Failed() bool { return v.Any() && !v.Declared }

// Any reports whether the server could not keep up in at least half of the
// judged repetitions, the warm-up counted as one more when it showed it:
// one repetition that fell behind among many is noise at the edge of
// capacity, not a scenario the server cannot serve.
func (v OverloadVerdict) Any() bool {
	n, judged := v.Overloaded, v.Judged
	if v.Warmup {
		n, judged = n+1, judged+1
	}
	return OverloadedShare(n, judged)
}

// OverloadedShare is the rule by which a scenario, or a capacity probe, is
// overloaded: at least one of its judged repetitions was, and at least half.
func OverloadedShare(overloaded, judged int) bool {
	return overloaded > 0 && 2*overloaded >= judged
}

// Label is the verdict in a report's words: "overloaded", "overloaded
// (declared)", or "" when the server kept up.
func (v OverloadVerdict) Label() string {
	switch {
	case !v.Any():
		return ""
	case v.Declared:
		return "overloaded (declared)"
	}
	return "overloaded"
}

// Sentence is the verdict in words: "offered 12.0 req/s, served 8.6 req/s;
// the queue grew through every repetition" ("in 4 of 6 repetitions").
func (v OverloadVerdict) Sentence() string {
	where := "through every repetition"
	switch {
	case v.Warmup && v.Judged == 0:
		where = "through warm-up (the repetitions were too short to judge)"
	case v.Warmup && v.Overloaded == v.Judged:
		where = "through warm-up and every repetition"
	case v.Warmup:
		where = fmt.Sprintf("through warm-up and in %d of %d repetitions", v.Overloaded, v.Judged)
	case v.Overloaded < v.Judged:
		where = fmt.Sprintf("in %d of %d repetitions", v.Overloaded, v.Judged)
	}
	return fmt.Sprintf("offered %.1f req/s, served %.1f req/s; the queue grew %s", v.OfferedRate, v.ServedRate, where)
}

// Overload is the scenario's verdict on sustainable load from its
// repetitions' evidence and its warm-up's (see OverloadVerdict.Warmup).
// A capacity search judges each probe itself (an
// overloaded probe is over capacity), so its scenario has none.
func (s *ScenarioResult) Overload() OverloadVerdict {
	v := OverloadVerdict{Declared: s.Load.Overload == OverloadMeasure}
	if s.Capacity != nil {
		return v
	}
	var offered, served []float64
	if w := s.Warmup; w != nil && w.Overload != nil && w.Overload.Overloaded {
		v.Warmup = true
		offered, served = append(offered, w.Overload.OfferedRate), append(served, w.Overload.ServedRate)
	}
	for i := range s.Repetitions {
		o := s.Repetitions[i].Overload
		if o == nil {
			continue
		}
		v.Judged++
		if o.Overloaded {
			v.Overloaded++
			offered, served = append(offered, o.OfferedRate), append(served, o.ServedRate)
		}
	}
	if len(offered) > 0 { // else none was overloaded: no rates to show
		v.OfferedRate, v.ServedRate = stat.Median(offered), stat.Median(served)
	}
	return v
}

// OverloadError says which scenarios of a run the server could not keep up
// with, and did not declare so: the run fails (exit 3), its result written.
type OverloadError struct {
	// Scenarios are "name: sentence" for each such scenario.
	Scenarios []string
}

func (e *OverloadError) Error() string {
	return fmt.Sprintf("the server could not keep up with the load offered: %s (the result is written; a scenario that measures overload on purpose declares load.overload: measure)",
		strings.Join(e.Scenarios, "; "))
}

// CheckOverload returns an *OverloadError naming the scenarios of r the
// server could not keep up with and that did not declare it, or nil.
func (r *Result) CheckOverload() error {
	var bad []string
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if v := s.Overload(); v.Failed() {
			bad = append(bad, fmt.Sprintf("scenario %s: %s", s.Name, v.Sentence()))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &OverloadError{Scenarios: bad}
}

// overload checks a repetition's overload evidence.
func (v *checker) overload(p string, o *Overload) {
	if o == nil {
		return
	}
	v.count(p+".requests", o.Requests)
	for _, f := range []struct {
		name string
		x    float64
	}{{"offered_rate", o.OfferedRate}, {"served_rate", o.ServedRate}, {"backlog_s", float64(o.BacklogS)},
		{"ttft_first_ms", o.TTFTFirstMS}, {"ttft_last_ms", o.TTFTLastMS},
		{"in_flight_first", o.InFlightFirst}, {"in_flight_last", o.InFlightLast}} {
		v.nonNegative(p+"."+f.name, f.x)
	}
	v.fraction(p+".trend_p", o.TrendP)
}

// loadOverload checks a scenario's load.overload, and its load.arrivals.
func (v *checker) loadOverload(p string, l Load) {
	if l.Overload != "" && l.Overload != OverloadMeasure {
		v.add(p+".load.overload", "want %s or nothing, got %s", OverloadMeasure, quote(l.Overload))
	}
	if l.Arrivals != "" && l.Arrivals != "fresh" {
		v.add(p+".load.arrivals", "want fresh or nothing, got %s", quote(l.Arrivals))
	}
}

// BacklogCut says whether the warm-up's drain cancelled its requests in
// flight at once, as a backlog the server could not clear (its warm-up was
// judged overloaded), rather than at the drain's bound.
func (w *Warmup) BacklogCut() bool {
	return w.Overload != nil && w.Overload.Overloaded
}

// FailureKinds are the warm-up's failed requests by kind, in the kinds'
// order: "http 60, stream 44"; "" when none failed or their kinds were not
// kept.
func (w *Warmup) FailureKinds() string {
	kinds := make([]string, 0, len(w.Errors))
	for _, k := range slices.Sorted(maps.Keys(w.Errors)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, w.Errors[k]))
	}
	return strings.Join(kinds, ", ")
}
