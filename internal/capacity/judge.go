package capacity

import (
	"math"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// floorMS is the least latency a margin is computed from: a statistic of 0
// (a TPOT of one-token answers) would have no logarithm.
const floorMS = 1e-6

// Judge applies s's holds rule to the repetitions of a probe at load. margin maps each
// objective to the rule's statistic over its limit, over the repetitions
// that are not broken: under every, the largest repetition's value; under
// bound, exp of the one-sided Student-t bound (at s.Confidence) on the
// mean of the values' logarithms. broken counts the repetitions that
// failed past s.MaxErrorRate or completed nothing. The probe held when no
// repetition broke, it was not overloaded (the server could not keep up
// with the offered rate in at least half its judged repetitions, the rule
// by which an ordinary run's scenario is: result.OverloadedShare, over
// result.Repetition.Overload from the same detector) and every margin is at
// most 1. An overloaded repetition's latencies still count in the margins.
//
// A broken repetition's latencies describe only its survivors, so they are
// left out of the margins; it breaks the probe by itself. With every
// repetition broken the margins are empty.
func Judge(s Spec, load float64, reps []result.Repetition) (held bool, margin map[string]float64, broken int) {
	var ok []*result.Repetition
	for i := range reps {
		if isBroken(s, load, &reps[i]) {
			broken++
		} else {
			ok = append(ok, &reps[i])
		}
	}
	margin = make(map[string]float64, len(s.SLO))
	held = broken == 0 && len(ok) > 0 && !probeOverloaded(reps, nil)
	if len(ok) == 0 {
		return false, margin, broken
	}
	for _, o := range s.SLO {
		logs := make([]float64, 0, len(ok))
		for _, r := range ok {
			v, err := r.Value(o.Metric)
			if err != nil || math.IsNaN(v) {
				v = math.Inf(1) // Check refuses such a metric: never here
			}
			logs = append(logs, math.Log(max(v, floorMS)))
		}
		m := math.Exp(ruleStat(s, logs)) / o.LimitMS
		margin[o.Metric] = m
		if !(m <= 1) {
			held = false
		}
	}
	return held, margin, broken
}

// ruleStat is the rule's statistic of the logarithms of one objective's
// values: their largest (every), or the one-sided t bound on their mean
// (bound; the largest when there is only one).
func ruleStat(s Spec, logs []float64) float64 {
	n := len(logs)
	top := math.Inf(-1)
	for _, x := range logs {
		top = max(top, x)
	}
	if s.Rule != ruleBound || n < 2 {
		return top
	}
	mean := 0.0
	for _, x := range logs {
		mean += x
	}
	mean /= float64(n)
	ss := 0.0
	for _, x := range logs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	return mean + stat.TQuantile(s.Confidence, float64(n-1))*sd/math.Sqrt(float64(n))
}

// isBroken reports whether a repetition at load does not count: it failed
// past the spec's max error rate, completed nothing, or is past the spec's
// Limit.
func isBroken(s Spec, load float64, r *result.Repetition) bool {
	return r.Completed == 0 || r.ErrorRate > s.MaxErrorRate || (s.Limit != nil && s.Limit(load, r) != "")
}

// isOverloaded reports whether the server could not keep up with a
// repetition's offered rate: over capacity, whatever its latencies.
func isOverloaded(r *result.Repetition) bool { return r.Overload != nil && r.Overload.Overloaded }

// probeOverloaded reports whether a probe is overloaded by the rule of a
// scenario (result.OverloadedShare): at least half of its judged
// repetitions were, its warm-up counted as one more when the warm-up's
// requests showed the server could not keep up (w may be nil).
func probeOverloaded(reps []result.Repetition, w *result.Warmup) bool {
	n, judged := 0, 0
	if warmupOverloaded(w) {
		n, judged = 1, 1
	}
	for i := range reps {
		if reps[i].Overload != nil {
			judged++
			if reps[i].Overload.Overloaded {
				n++
			}
		}
	}
	return result.OverloadedShare(n, judged)
}

// warmupOverloaded reports whether a warm-up's requests showed the server
// could not keep up.
func warmupOverloaded(w *result.Warmup) bool {
	return w != nil && w.Overload != nil && w.Overload.Overloaded
}

// overloaded is the first overloaded repetition of reps, or nil.
func overloaded(reps []result.Repetition) *result.Repetition {
	for i := range reps {
		if isOverloaded(&reps[i]) {
			return &reps[i]
		}
	}
	return nil
}

// worstMargin is a repetition's largest value over its limit across the
// objectives: above 1 it broke an SLO; +Inf when the repetition is broken
// or overloaded (its crossing is then the geometric midpoint below).
func worstMargin(s Spec, load float64, r *result.Repetition) float64 {
	if isBroken(s, load, r) || isOverloaded(r) {
		return math.Inf(1)
	}
	m := 0.0
	for _, o := range s.SLO {
		v, err := r.Value(o.Metric)
		if err != nil || math.IsNaN(v) {
			return math.Inf(1)
		}
		m = max(m, max(v, floorMS)/o.LimitMS)
	}
	return m
}
