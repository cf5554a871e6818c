package stat

import (
	"math"
	"slices"
	"sync"

	"github.com/aclements/go-moremath/stats"
)

// Shift is the Hodges-Lehmann estimate of the shift candidate − baseline and
// its distribution-free confidence interval. It is the effect size that goes
// with the U test: the estimate is the median of all pairwise differences
// y_j − x_i, and the interval is the set of shifts the two-sided U test would
// not reject, so it needs no assumption about the distribution beyond the
// two samples differing by a shift.
type Shift struct {
	// Estimate is the median of the n1*n2 pairwise differences candidate −
	// baseline; NaN when a side is empty or holds NaN.
	Estimate float64
	// Lo and Hi bound the shift at Confidence; -Inf and +Inf when OK is
	// false.
	Lo, Hi float64
	// Confidence is the interval's actual two-sided coverage, at least the
	// requested one (the null distribution of U is discrete, so the exact
	// requested coverage is rarely available); 0 when OK is false.
	Confidence float64
	// OK is false when the samples are too few for an interval at the
	// requested confidence: even the widest interval, from the smallest to
	// the largest difference, covers less.
	OK bool
}

// HodgesLehmann returns the Hodges-Lehmann shift of candidate relative to
// baseline and its Moses (Lehmann) interval at confidence: the k-th smallest
// and k-th largest pairwise differences, with k the largest rank for which
// P(U <= k−1) <= (1−confidence)/2 under the exact null distribution of U
// (go-moremath stats.UDist with no ties). For continuous data the coverage is
// exactly Shift.Confidence, which is >= confidence. Beyond 50 values a side
// the cut-off comes from the normal approximation of U and the coverage is
// approximate.
func HodgesLehmann(baseline, candidate []float64, confidence float64) Shift {
	s := Shift{Estimate: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	n1, n2 := len(baseline), len(candidate)
	if n1 == 0 || n2 == 0 ||
		slices.ContainsFunc(baseline, math.IsNaN) || slices.ContainsFunc(candidate, math.IsNaN) {
		return s
	}
	d := make([]float64, 0, n1*n2)
	for _, y := range candidate {
		for _, x := range baseline {
			d = append(d, y-x)
		}
	}
	k, coverage, ok := cutoff(n1, n2, confidence)
	s.fromOrder(d, k, coverage, ok)
	return s
}

// fromOrder sets s from the values whose median is the estimate (the
// pairwise differences, or the Walsh averages): the Estimate is their
// median and, when ok, Lo and Hi are their k-th smallest and k-th largest
// (k 1-based, at most half their number), with coverage. It rearranges d,
// which must be non-empty and hold no NaN.
func (s *Shift) fromOrder(d []float64, k int, coverage float64, ok bool) {
	n := len(d)
	mid := n / 2
	// Select the middle element: afterwards d[:mid] <= d[mid] <= d[mid+1:],
	// so the bounds are selected within the halves.
	upper := selectKth(d, mid)
	if n%2 == 1 {
		s.Estimate = upper
	} else {
		s.Estimate = (slices.Max(d[:mid]) + upper) / 2
	}
	if !ok {
		return
	}
	lo, hi := k-1, n-k // 0-based ranks of the bounds; lo <= hi
	switch {
	case lo < mid:
		s.Lo = selectKth(d[:mid], lo)
	default:
		s.Lo = d[mid]
	}
	switch {
	case hi > mid:
		s.Hi = selectKth(d[mid+1:], hi-mid-1)
	default:
		s.Hi = d[mid]
	}
	s.Confidence = coverage
	s.OK = true
}

// IntervalSamples returns the smallest n such that HodgesLehmann with n
// values a side has a finite interval at confidence: the "need >= N samples
// a side for an interval" warning. It returns 1000 when no n up to 1000 does
// (a confidence >= 1 or NaN).
func IntervalSamples(confidence float64) int {
	if !(confidence < 1) {
		return searchCap
	}
	for n := 1; n < searchCap; n++ {
		if _, _, ok := cutoff(n, n, confidence); ok {
			return n
		}
	}
	return searchCap
}

// exactLimit is the largest sample size a side for which cutoff uses the
// exact null distribution of U, as stats.MannWhitneyExactLimit does for the
// test.
const exactLimit = 50

// cutoffKey caches the exact cut-offs that are not read from a table.
type cutoffKey struct {
	n1, n2     int
	confidence float64
}

type cutoffVal struct {
	k        int
	coverage float64
	ok       bool
}

var cutoffs sync.Map // cutoffKey -> cutoffVal

// cutoff returns the 1-based rank k such that the k-th smallest and k-th
// largest of the n1*n2 pairwise differences bound the shift with coverage
// 1 − 2·P(U <= k−1) >= confidence, taking the largest such k (the
// narrowest interval). ok is false when even k = 1 covers less.
func cutoff(n1, n2 int, confidence float64) (k int, coverage float64, ok bool) {
	if n1 <= 0 || n2 <= 0 || !(confidence < 1) {
		return 0, 0, false
	}
	tail := (1 - confidence) / 2
	// The rounding of 1 − confidence (1 − 0.9 is 0.09999999999999998) must
	// not cost the exact cases (n = 3 a side at 90%: P(U = 0) = 1/20).
	limit := tail * (1 + 1e-9)
	n := n1 * n2
	// The lower bound's rank must not pass the upper bound's: k−1 <= n−k.
	maxU := (n - 1) / 2

	if n <= tableMaxPairs {
		cdf := nullCDF(n1, n2)
		u := -1
		for u+1 <= maxU && cdf[u+1] <= limit {
			u++
		}
		if u < 0 {
			return 0, 0, false
		}
		return u + 1, 1 - 2*cdf[u], true
	}

	if n1 <= exactLimit && n2 <= exactLimit {
		key := cutoffKey{n1, n2, confidence}
		if v, found := cutoffs.Load(key); found {
			c := v.(cutoffVal)
			return c.k, c.coverage, c.ok
		}
		dist := stats.UDist{N1: n1, N2: n2}
		// Largest u in [0, maxU] with CDF(u) <= limit, by bisection.
		lo, hi := -1, maxU+1 // CDF(lo) <= limit (lo = -1: vacuous), CDF(hi) > limit or hi past maxU
		for hi-lo > 1 {
			m := (lo + hi) / 2
			if dist.CDF(float64(m)) <= limit {
				lo = m
			} else {
				hi = m
			}
		}
		c := cutoffVal{}
		if lo >= 0 {
			c = cutoffVal{k: lo + 1, coverage: 1 - 2*dist.CDF(float64(lo)), ok: true}
		}
		cutoffs.Store(key, c)
		return c.k, c.coverage, c.ok
	}

	// Normal approximation with continuity correction:
	// P(U <= u) ≈ Φ((u + 0.5 − n/2)/σ), σ² = n1·n2·(n1+n2+1)/12.
	mean := float64(n) / 2
	sigma := math.Sqrt(float64(n1) * float64(n2) * float64(n1+n2+1) / 12)
	z := stats.StdNormal.InvCDF(tail)
	u := int(math.Floor(mean - 0.5 + sigma*z))
	u = min(u, maxU)
	if u < 0 {
		return 0, 0, false
	}
	return u + 1, 1 - 2*stats.StdNormal.CDF((float64(u)+0.5-mean)/sigma), true
}

// selectKth rearranges a so that a[k] holds the value it would hold were a
// sorted, with a[:k] <= a[k] <= a[k+1:], and returns a[k]. It is Hoare's
// quickselect (Wirth's FIND) with a median-of-three pivot, linear on
// average: the Hodges-Lehmann estimate and bounds need three order
// statistics of n1*n2 differences, not a full sort. Equal values are
// swapped across the pivot, so many ties cost no more than none. a must
// hold no NaN.
func selectKth(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		p := median3(a[lo], a[lo+(hi-lo)/2], a[hi])
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		// a[lo:j+1] <= p, a[j+1:i] == p, a[i:hi+1] >= p
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}

func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}
