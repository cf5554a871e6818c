package stat

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/aclements/go-moremath/stats"
)

// The paired statistics of an A/B (perfgate ab). Both sides are measured
// on one runner, interleaved: round r measures one repetition of each, so
// Baseline[r] and Candidate[r] are a pair that shared the runner's state at
// that time (its temperature, its neighbours, a drift), and the difference
// within the pair cancels what they shared. The test is Wilcoxon's
// signed-rank test on the pairs, the size the Hodges-Lehmann estimate of
// the paired differences (the median of the Walsh averages) with Tukey's
// distribution-free interval, both from the same null distribution.

// SignedRankShift returns the Hodges-Lehmann estimate of the centre of
// paired differences (candidate − baseline, one per pair) and its
// distribution-free confidence interval. The estimate is the median of the
// n(n+1)/2 Walsh averages (d_i + d_j)/2, i <= j; the interval (Tukey's) is
// the k-th smallest and k-th largest Walsh average, with k the largest rank
// for which P(W+ <= k−1) <= (1−confidence)/2 under the null distribution of
// the signed-rank statistic W+ with no ties. It is the set of centres that
// the two-sided signed-rank test would not reject, and it assumes only that
// the differences are symmetric about their centre. For continuous data the
// coverage is exactly Shift.Confidence, which is >= confidence.
//
// Up to 50 differences the null distribution is exact (the dynamic
// programme WilcoxonSignedRank uses, over the plain ranks 1..n); beyond 50
// the cut-off comes from the normal approximation of W+, and the coverage
// is approximate. The n(n+1)/2 averages are held in memory: 5000 pairs take
// 100 MB.
//
// With no differences, or a NaN or infinite one, the estimate is NaN and
// the interval unbounded. With too few differences for the confidence
// (fewer than 5 at 90%: even the widest interval, the smallest to the
// largest average, covers 1 − 2^(1−n)), OK is false and the bounds are −Inf
// and +Inf, as they are for a confidence >= 1 or NaN.
func SignedRankShift(diffs []float64, confidence float64) Shift {
	s := Shift{Estimate: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	n := len(diffs)
	if n == 0 || slices.ContainsFunc(diffs, notFinite) {
		return s
	}
	w := make([]float64, 0, n*(n+1)/2)
	for i, a := range diffs {
		for _, b := range diffs[i:] {
			// Halved before the sum, so that two values near the float64
			// limit do not overflow; the same as (a+b)/2 otherwise.
			w = append(w, a/2+b/2)
		}
	}
	k, coverage, ok := signedRankCutoff(n, confidence)
	s.fromOrder(w, k, coverage, ok)
	return s
}

// signedRankCDFs caches signedRankCDF by n.
var signedRankCDFs sync.Map // int -> []float64

// signedRankCDF returns P(W+ <= w) for w = 0..n(n+1)/2 under the null with
// no ties: each of the ranks 1..n counted in W+ with probability 1/2. n
// must be at most wilcoxonExactLimit, so that every value is exact.
func signedRankCDF(n int) []float64 {
	if t, ok := signedRankCDFs.Load(n); ok {
		return t.([]float64)
	}
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = i + 1
	}
	cdf := signedRankDist(ranks)
	for w := 1; w < len(cdf); w++ {
		cdf[w] += cdf[w-1]
	}
	signedRankCDFs.Store(n, cdf)
	return cdf
}

// signedRankCutoff returns the 1-based rank k such that the k-th smallest
// and k-th largest of the n(n+1)/2 Walsh averages bound the centre with
// coverage 1 − 2·P(W+ <= k−1) >= confidence, taking the largest such k
// (the narrowest interval). ok is false when even k = 1 covers less. It is
// cutoff's counterpart for pairs.
func signedRankCutoff(n int, confidence float64) (k int, coverage float64, ok bool) {
	if n <= 0 || !(confidence < 1) {
		return 0, 0, false
	}
	tail := (1 - confidence) / 2
	// As in cutoff: the rounding of 1 − confidence must not cost an exact
	// case (5 pairs at 93.75%: P(W+ = 0) = 1/32).
	limit := tail * (1 + 1e-9)
	walsh := n * (n + 1) / 2
	// The lower bound's rank must not pass the upper bound's: k−1 <= walsh−k.
	maxW := (walsh - 1) / 2

	if n <= wilcoxonExactLimit {
		cdf := signedRankCDF(n)
		w := -1
		for w+1 <= maxW && cdf[w+1] <= limit {
			w++
		}
		if w < 0 {
			return 0, 0, false
		}
		return w + 1, 1 - 2*cdf[w], true
	}

	// Normal approximation with continuity correction:
	// P(W+ <= w) ≈ Φ((w + 0.5 − μ)/σ), μ = n(n+1)/4, σ² = n(n+1)(2n+1)/24.
	nf := float64(n)
	mean := nf * (nf + 1) / 4
	sigma := math.Sqrt(nf * (nf + 1) * (2*nf + 1) / 24)
	w := int(math.Floor(mean - 0.5 + sigma*stats.StdNormal.InvCDF(tail)))
	w = min(w, maxW)
	if w < 0 {
		return 0, 0, false
	}
	return w + 1, 1 - 2*stats.StdNormal.CDF((float64(w)+0.5-mean)/sigma), true
}

// RoundsToReach returns the smallest number of rounds (pairs) whose most
// extreme outcome, every pair worse, gives a one-sided signed-rank p-value
// below level: 2^−n < level with the exact distribution. Fewer rounds
// cannot show a regression at level whatever the data; an A/B family of m
// gates at alpha needs RoundsToReach(alpha/m). It returns 1000 when no n up
// to 1000 does (a level <= 0 or NaN).
func RoundsToReach(level float64) int {
	return itemsToReach(wilcoxonAllWorse, level)
}

// MinPPairs returns the smallest one-sided signed-rank p-value n pairs
// (rounds) can give, every pair worse: 2^−n, exact up to 50 pairs. It is
// MinP's counterpart for pairs: a family of m gates can show a regression
// with n pairs only when MinPPairs(n)·m < level.
func MinPPairs(n int) float64 { return wilcoxonAllWorse(n) }

// roundsForInterval returns the smallest number of rounds for which
// SignedRankShift has a finite interval at confidence; 1000 when none up to
// it has (a confidence >= 1 or NaN).
func roundsForInterval(confidence float64) int {
	if !(confidence < 1) {
		return searchCap
	}
	for n := 1; n < searchCap; n++ {
		if _, _, ok := signedRankCutoff(n, confidence); ok {
			return n
		}
	}
	return searchCap
}

// DecideRounds is DecideAll's counterpart for an A/B: each gate's Baseline[i]
// and Candidate[i] were measured in the same round, a pair, and the gate
// tests the pairs rather than two independent samples. The quality gates
// are tested as DecideAll tests them, and every p-value of the family goes
// through one Holm adjustment over m = len(gates) + len(paired).
//
// Per gate, with a relative tolerance the pairs are compared as
// log-ratios log(c_i/b_i), so that a round twice as slow on both sides
// weighs as much as any other; with an absolute one as differences
// c_i − b_i. Then:
//
//   - P is the one-sided Wilcoxon signed-rank p-value in the bad direction
//     (exact up to 50 non-zero differences, zeros dropped, ties at their
//     midrank);
//   - Shift is SignedRankShift of the differences c_i − b_i in the
//     metric's unit, at confidence 1 − 2·level, so that each bound alone is
//     a one-sided (1 − level) bound;
//   - Change is, with a relative tolerance, exp(·) − 1 of the
//     SignedRankShift of the log-ratios (estimate and bounds): the median
//     paired ratio's analogue, 0.3 for a candidate 1.3 times the
//     baseline; with an absolute one, Shift over the baseline median's
//     magnitude, as Decide's.
//
// The outcomes are Decide's: regression when PAdjusted < level and the
// estimate is worse than the tolerance; pass when the interval's bad-side
// bound is within the tolerance and a regression was detectable at all;
// inconclusive otherwise. For n pairs the smallest p-value is 2^−n (every
// pair worse), so a family of m gates can detect a regression only when
// 2^−n·m < level; below that every gate is inconclusive with a warning
// saying how many rounds it needs (RoundsToReach(level/m)).
//
// A gate whose sides hold different numbers of values (rounds cannot be
// paired), with a relative tolerance and a value <= 0 (no ratio), or with
// any input Decide refuses is inconclusive with a warning, never a pass; so
// is every gate when level is not in (0, 0.5). DecideRounds never panics,
// and returns empty, non-nil slices for no gates.
//
// It is DecideAll with every gate Paired, its reasons and warnings counting
// rounds rather than pairs.
func DecideRounds(gates []Gate, paired []PairedGate, level float64) ([]Decision, []PairedDecision) {
	rounds := make([]Gate, len(gates))
	for i, g := range gates {
		g.Paired = true
		rounds[i] = g
	}
	out, pout, _ := decideFamily(rounds, paired, nil, level, true)
	return out, pout
}

// testRounds tests g's values as pairs: it fills d's Shift and Change and
// returns the signed-rank p-value in the bad direction, NaN when g cannot
// be tested (then d is decided: inconclusive with a warning). rounds says
// the pairs are an A/B's rounds, for the warnings' words.
func testRounds(d *Decision, g Gate, level float64, rounds bool) float64 {
	if reason, warning := untestableRounds(g, level, rounds); reason != "" {
		d.Outcome, d.Reason, d.Warnings = Inconclusive, reason, []string{warning}
		return math.NaN()
	}
	n := len(g.Baseline)
	diffs := make([]float64, n)
	for i, b := range g.Baseline {
		diffs[i] = g.Candidate[i] - b
	}
	if slices.ContainsFunc(diffs, notFinite) {
		d.Outcome, d.Reason = Inconclusive, "a difference is not finite"
		d.Warnings = []string{"a difference candidate − baseline overflows float64: the gate cannot be decided"}
		return math.NaN()
	}
	confidence := 1 - 2*level
	d.Shift = SignedRankShift(diffs, confidence)
	tested := diffs
	if g.Relative {
		logs := make([]float64, n)
		for i, b := range g.Baseline {
			// The difference of logs, finite for any positive finite
			// values (their ratio may overflow).
			logs[i] = math.Log(g.Candidate[i]) - math.Log(b)
		}
		ls := SignedRankShift(logs, confidence)
		d.Change.Estimate, d.Change.Lo, d.Change.Hi = math.Expm1(ls.Estimate), math.Inf(-1), math.Inf(1)
		if ls.OK {
			d.Change.Lo, d.Change.Hi = math.Expm1(ls.Lo), math.Expm1(ls.Hi)
		}
		tested = logs
	} else {
		d.Change.Estimate, d.Change.Lo, d.Change.Hi = relativeTo(d.Shift, d.BaselineMedian)
	}
	// WilcoxonSignedRank tests for a shift below 0: the bad direction when
	// higher is better; for a latency, the differences are turned round.
	if !g.HigherIsBetter {
		bad := make([]float64, n)
		for i, v := range tested {
			bad[i] = -v
		}
		tested = bad
	}
	d.P = WilcoxonSignedRank(tested)
	return d.P
}

// untestableRounds returns why g's values cannot be tested as pairs at
// level, and a warning saying so; "" when they can be. rounds says the
// pairs are an A/B's rounds, for the words.
func untestableRounds(g Gate, level float64, rounds bool) (reason, warning string) {
	if reason, warning := untestable(g, level); reason != "" {
		return reason, warning
	}
	what := "pairs"
	if rounds {
		what = "rounds"
	}
	if nb, nc := len(g.Baseline), len(g.Candidate); nb != nc {
		if rounds {
			return "unequal rounds", fmt.Sprintf(
				"the baseline has %d values and the candidate %d: an A/B pairs them round by round, so they must be as many; the gate cannot be decided", nb, nc)
		}
		return "unequal pairs", fmt.Sprintf(
			"the baseline has %d values and the candidate %d: values tested as pairs must be as many; the gate cannot be decided", nb, nc)
	}
	nonPositive := func(v float64) bool { return !(v > 0) }
	if g.Relative && (slices.ContainsFunc(g.Baseline, nonPositive) || slices.ContainsFunc(g.Candidate, nonPositive)) {
		return "a relative tolerance needs positive values", fmt.Sprintf(
			"a value is 0 or negative: a relative tolerance compares the %s' ratios candidate/baseline and needs values > 0; use an absolute tolerance", what)
	}
	return "", ""
}

// TheilSen returns the Theil–Sen slope of values against their index: the
// median of the slopes (v_j − v_i)/(j − i) over every pair i < j. It is a
// trend that a few outliers do not move (up to 29% of the points may be
// wild), for the drift of an A/B's base arm across its rounds. NaN for
// fewer than 2 values or a value that is NaN or infinite.
func TheilSen(values []float64) float64 {
	n := len(values)
	if n < 2 || slices.ContainsFunc(values, notFinite) {
		return math.NaN()
	}
	slopes := make([]float64, 0, n*(n-1)/2)
	for i, a := range values {
		for j := i + 1; j < n; j++ {
			slopes = append(slopes, (values[j]-a)/float64(j-i))
		}
	}
	mid := len(slopes) / 2
	upper := selectKth(slopes, mid)
	if len(slopes)%2 == 1 {
		return upper
	}
	return (slices.Max(slopes[:mid]) + upper) / 2
}
