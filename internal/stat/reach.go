package stat

import "math"

// Reach is which outcomes a gate can reach at all, whatever its data: what
// a config's repetitions and gate count allow before anything is measured.
type Reach struct {
	// Regression is true when a candidate far beyond the tolerance, every
	// value of it worse than every baseline value, would be a regression.
	Regression bool
	// Pass is true when a candidate equal to the baseline, with a spread far
	// inside the tolerance, would pass.
	Pass bool
}

// Decides reports whether both outcomes are within reach.
func (r Reach) Decides() bool { return r.Regression && r.Pass }

// Reachable says which outcomes one gate of a family of m gates, tested at
// level with n1 baseline and n2 candidate values (two independent samples:
// Decide's U test and Hodges-Lehmann interval), can reach. It does not
// re-derive Decide's rules: it runs Decide on the two extreme cases, a
// family whose probed gate is as clearly a regression as n1 and n2 values
// can show (the sides do not overlap, and the shift is a hundred times the
// tolerance) and one whose probed gate is as clearly a pass (both sides the
// same, spread a millionth of the tolerance), the other m−1 gates of each
// family counting in Holm's m as gates that could not be tested. Whatever
// Decide's rules become, what it says here is what it would say of real
// data.
//
// The answers do not depend on the data otherwise: a family of m gates can
// show a regression only when MinP(n1, n2)·m < level, and a pass only then
// and when the Hodges-Lehmann interval at 1 − 2·level is finite.
func Reachable(n1, n2, m int, level float64) Reach {
	return reach(n1, n2, m, level, false)
}

// ReachablePairs is Reachable for a gate of n pairs (Gate.Paired: the
// signed-rank test and the Walsh-average interval), probed the same way: a
// family of m gates at level can show a regression only when 2^−n·m <
// level, and a pass only then and when the interval at 1 − 2·level is
// finite (n >= 5 at 90%).
func ReachablePairs(n, m int, level float64) Reach {
	return reach(n, n, m, level, true)
}

// reach is Reachable, and with paired ReachablePairs (n1 == n2 pairs).
func reach(n1, n2, m int, level float64, paired bool) Reach {
	if n1 <= 0 || n2 <= 0 || m <= 0 {
		return Reach{}
	}
	probe := func(base, cand []float64) Outcome {
		gates := make([]Gate, m) // gates[1:] have no samples: untestable, counted in m
		gates[0] = Gate{Baseline: base, Candidate: cand, Relative: true, Tolerance: 0.1, Paired: paired}
		return Decide(gates, level)[0].Outcome
	}
	// Baseline values 1000, 1000+ε, ...; the worse candidate is 100 times
	// the tolerance above every one of them; the equal candidate the same
	// values (a shift of 0 with an interval of width about n·ε; as pairs,
	// every difference ε/2).
	const baseAt, eps = 1000.0, 1e-4
	base := make([]float64, n1)
	for i := range base {
		base[i] = baseAt + eps*float64(i)
	}
	worse := make([]float64, n2)
	same := make([]float64, n2)
	for j := range n2 {
		worse[j] = baseAt*11 + eps*float64(j)
		same[j] = baseAt + eps*(float64(j)+0.5) // no ties with the baseline
	}
	return Reach{
		Regression: probe(base, worse) == Regression,
		Pass:       probe(base, same) == Pass,
	}
}

// SamplesToDecide returns the smallest n >= from for which a gate of a
// family of m gates at level, with n values a side, can reach both a
// regression and a pass (Reachable(n, n, m, level).Decides()), searching
// up to limit; limit+1 when none up to limit does. Reachability grows with
// n, so the search doubles and then bisects.
func SamplesToDecide(from, limit, m int, level float64) int {
	return toDecide(from, limit, func(n int) bool { return Reachable(n, n, m, level).Decides() })
}

// PairsToDecide is SamplesToDecide for pairs: the smallest n >= from for
// which a gate of n pairs in a family of m gates at level can reach both
// outcomes (ReachablePairs(n, m, level).Decides()), searching up to limit;
// limit+1 when none up to limit does.
func PairsToDecide(from, limit, m int, level float64) int {
	return toDecide(from, limit, func(n int) bool { return ReachablePairs(n, m, level).Decides() })
}

// toDecide returns the smallest n in [max(1, from), limit] for which ok
// holds, limit+1 when none does; ok must stay true once it is, so the
// search doubles and then bisects.
func toDecide(from, limit int, ok func(int) bool) int {
	from = max(1, from)
	if from > limit {
		return limit + 1
	}
	if ok(from) {
		return from
	}
	lo, hi := from, from // ok(lo) is false
	for {
		if hi >= limit {
			if !ok(limit) {
				return limit + 1
			}
			hi = limit
			break
		}
		hi = min(limit, max(hi+1, 2*hi))
		if ok(hi) {
			break
		}
		lo = hi
	}
	for hi-lo > 1 { // ok(hi), !ok(lo)
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// MaxLooks is the most looks a sequential gate takes: at repetitions.min and
// then in even steps to repetitions.max. Every look spends alpha, so fewer
// looks leave each more of it (a look at every repetition would leave the
// later ones almost none).
const MaxLooks = 4

// Looks returns the repetition counts at which a sequential gate with
// repetitions {min, max} compares: min, then steps of ceil((max−min)/3),
// and max.
func Looks(min, max int) []int {
	if max <= min {
		return []int{max}
	}
	step := (max - min + MaxLooks - 2) / (MaxLooks - 1)
	var out []int
	for n := min; n < max; n += step {
		out = append(out, n)
	}
	return append(out, max)
}

// LookLevels returns the level of each of Looks(min, max) for a scenario
// whose share of alpha is share: the Pocock-type spending of that share
// over the information fractions look/max (LookLevel). A fixed count is one
// look at the whole share.
func LookLevels(share float64, min, max int) []float64 {
	looks := Looks(min, max)
	out := make([]float64, len(looks))
	prev := 0.0
	for i, n := range looks {
		t := math.Min(1, float64(n)/float64(max))
		out[i] = LookLevel(share, prev, t)
		prev = t
	}
	return out
}
