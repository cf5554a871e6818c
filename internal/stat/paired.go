package stat

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// The paired statistics of the quality gates. Quality is compared item by
// item: every eval item was answered once by the baseline and once by the
// candidate, so the two sides are paired, and a paired test sees a change
// that the noise between items would hide from an unpaired one.

// maxItems caps ItemsToDetect, whose answer for a vanishing drop would
// overflow an int: an answer of maxItems means "more than anyone has".
const maxItems = 1 << 40

// BinomialAtMost returns P(X <= k) for X ~ Binomial(n, p), exactly: the
// sum of the probabilities of 0..k successes. The sum starts from the term
// at k, computed in log space (math.Lgamma), and walks away from the mode,
// each term from the last by the ratio of consecutive probabilities, so the
// terms fall geometrically and the walk stops once they no longer change
// the sum: a few thousand steps for n = 100000. When k is at or past the
// mode the result is 1 minus the upper tail, summed the same way; the tail
// that is small is always the one summed, so a small result keeps its
// relative precision (about 1e-9 at n = 100000, from Lgamma's rounding).
//
// It is 0 for k < 0 and 1 for k >= n; NaN for n < 0 or p not in [0, 1].
func BinomialAtMost(k, n int, p float64) float64 {
	switch {
	case n < 0 || !(p >= 0 && p <= 1):
		return math.NaN()
	case k < 0:
		return 0
	case k >= n || p == 0:
		return 1
	case p == 1:
		return 0 // k < n
	}
	// The probabilities rise up to mode and fall after it.
	mode := int(math.Floor(float64(n+1) * p))
	if k < mode {
		return binomTail(k, n, p, -1)
	}
	return max(0, 1-binomTail(k+1, n, p, +1))
}

// binomTail returns the sum of P(X = j) for j from start walking in
// direction dir (-1: down to 0, +1: up to n), X ~ Binomial(n, p) with
// 0 < p < 1; the terms must fall in that direction from start on.
func binomTail(start, n int, p float64, dir int) float64 {
	lq := math.Log1p(-p)
	lp := math.Log(p)
	logOdds := lp - lq // log(p/(1−p))
	// The sum relative to the first term, so that no term underflows
	// before the sum is scaled.
	sum, term := 0.0, 1.0
	for j := start; j >= 0 && j <= n; j += dir {
		sum += term
		// P(j−1)/P(j) = j/(n−j+1)·(1−p)/p; P(j+1)/P(j) = (n−j)/(j+1)·p/(1−p).
		var r float64
		if dir < 0 {
			r = float64(j) / float64(n-j+1) * math.Exp(-logOdds)
		} else {
			r = float64(n-j) / float64(j+1) * math.Exp(logOdds)
		}
		term *= r
		if term < sum*1e-17 || term == 0 {
			break // the ratios only fall from here: the rest is negligible
		}
	}
	// For small n the first term is a plain product, which is exact where
	// the answer is (McNemar(3, 0) is 1/8, not 1/8 + 3e-17); for large n or
	// a product that would underflow, it is taken in log space.
	if n <= 1000 {
		c := 1.0
		for i := 1; i <= min(start, n-start); i++ {
			c = c * float64(n-min(start, n-start)+i) / float64(i)
		}
		if first := c * math.Pow(p, float64(start)) * math.Pow(1-p, float64(n-start)); first > 1e-280 {
			return first * sum
		}
	}
	return math.Exp(logBinomPMF(start, n, lp, lq) + math.Log(sum))
}

// logBinomPMF is log P(X = k) for X ~ Binomial(n, p), given log p and
// log(1−p).
func logBinomPMF(k, n int, lp, lq float64) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c + float64(k)*lp + float64(n-k)*lq
}

// McNemar returns the exact one-sided McNemar p-value of "the candidate is
// worse": losses counts the items that passed in the baseline and fail in
// the candidate, gains the reverse. Under the null of no change each
// discordant item is a loss or a gain with probability 1/2, so the p-value
// is P(X >= losses) for X ~ Binomial(losses+gains, 1/2) (the exact
// conditional form of McNemar's test, the sign test on the discordant
// pairs); by symmetry that is P(X <= gains), which BinomialAtMost sums
// stably for any n. Concordant items carry no evidence and do not enter.
//
// It is 1 when there are no discordant items, and NaN when a count is
// negative.
func McNemar(losses, gains int) float64 {
	if losses < 0 || gains < 0 {
		return math.NaN()
	}
	if losses+gains == 0 {
		return 1
	}
	return BinomialAtMost(gains, losses+gains, 0.5)
}

// Wilson returns the Wilson score interval (Wilson 1927) for a proportion
// of k successes in n trials at the two-sided confidence: the proportions
// p whose score test |p̂ − p| / sqrt(p(1−p)/n) <= z would not reject, with
// z the standard normal quantile at 1 − (1−confidence)/2. Unlike the Wald
// interval it stays inside [0, 1] and does not collapse at k = 0 or k = n,
// which is where a pass rate near 100% lives.
//
// It is NaN-free: n <= 0, or a confidence >= 1 or NaN, gives (0, 1), the
// whole range (no information); a confidence <= 0 gives (p̂, p̂); k is
// clamped to [0, n]. The bound at k = 0 is exactly 0 and at k = n exactly 1.
func Wilson(k, n int, confidence float64) (lo, hi float64) {
	if n <= 0 || !(confidence < 1) {
		return 0, 1
	}
	k = min(max(k, 0), n)
	ph := float64(k) / float64(n)
	if confidence <= 0 {
		return ph, ph
	}
	z := stats.StdNormal.InvCDF(1 - (1-confidence)/2)
	nf := float64(n)
	z2n := z * z / nf
	center := (ph + z2n/2) / (1 + z2n)
	half := z / (1 + z2n) * math.Sqrt(ph*(1-ph)/nf+z2n/(4*nf))
	lo, hi = max(0, center-half), min(1, center+half)
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}

// PairedDifference returns the difference of two paired pass rates,
// candidate − baseline = (gains − losses)/n, with the Agresti–Min (2005)
// adjusted Wald interval at the two-sided confidence: add 0.5 to each of
// the four cells of the 2x2 table (n becomes n+2, the discordant counts
// gains+0.5 and losses+0.5) and take the Wald interval of the adjusted
// difference, d* ± z·sqrt((b*+c*) − (c*−b*)²/n*)/n*. It covers close to
// the nominal level even for few items and a difference near ±1, where
// the plain Wald interval collapses.
//
// n is the number of items, concordant ones included; losses are the items
// that passed only in the baseline, gains those that passed only in the
// candidate. The interval is clipped to [−1, 1] and widened, where the
// adjustment's shrinkage toward 0 would leave it out, to hold the
// estimate. n == 0 gives (0, −1, 1), no information; negative counts or
// losses+gains > n give NaNs. A confidence >= 1 or NaN gives (−1, 1), one
// <= 0 the estimate alone.
func PairedDifference(n, losses, gains int, confidence float64) (est, lo, hi float64) {
	switch {
	case n < 0 || losses < 0 || gains < 0 || losses+gains > n:
		nan := math.NaN()
		return nan, nan, nan
	case n == 0:
		return 0, -1, 1
	}
	est = float64(gains-losses) / float64(n)
	if !(confidence < 1) {
		return est, -1, 1
	}
	if confidence <= 0 {
		return est, est, est
	}
	z := stats.StdNormal.InvCDF(1 - (1-confidence)/2)
	b, c, ns := float64(losses)+0.5, float64(gains)+0.5, float64(n)+2
	adj := (c - b) / ns
	se := math.Sqrt(max(0, (b+c)-(c-b)*(c-b)/ns)) / ns
	lo = max(-1, min(est, adj-z*se))
	hi = min(1, max(est, adj+z*se))
	return est, lo, hi
}

// wilcoxonExactLimit is the largest number of nonzero differences for
// which WilcoxonSignedRank uses the exact null distribution.
const wilcoxonExactLimit = 50

// WilcoxonSignedRank returns the one-sided p-value of the Wilcoxon
// signed-rank test that the paired differences (candidate − baseline) are
// shifted below 0: P(W+ <= observed W+) under the null that each
// difference is as likely negative as positive, W+ being the sum of the
// ranks of |d| over the positive differences. Zero differences are dropped
// (Wilcoxon's method) and tied |d| get their midrank.
//
// With at most 50 nonzero differences the null distribution is exact, with
// the ties as they are: a dynamic programme over the 2^n sign assignments
// by rank sum, the ranks doubled so that midranks stay integers. Beyond 50
// it is the normal approximation, mean n(n+1)/4 and variance
// n(n+1)(2n+1)/24 − Σ(t³−t)/48 over the tie groups, with a continuity
// correction of 1/2.
//
// It is 1 when every difference is 0 (or there are none): no evidence
// either way. NaN when a difference is NaN.
func WilcoxonSignedRank(diffs []float64) float64 {
	if slices.ContainsFunc(diffs, math.IsNaN) {
		return math.NaN()
	}
	ranks2, w2 := signedRanks(diffs)
	n := len(ranks2)
	if n == 0 {
		return 1
	}
	if n <= wilcoxonExactLimit {
		return wilcoxonExact(ranks2, w2)
	}
	return wilcoxonNormal(ranks2, w2)
}

// signedRanks drops the zero differences and returns the doubled midranks
// of the others' magnitudes, in ascending order, and w2, the sum of the
// doubled ranks of the positive differences (2·W+).
func signedRanks(diffs []float64) (ranks2 []int, w2 int) {
	type item struct {
		abs float64
		pos bool
	}
	items := make([]item, 0, len(diffs))
	for _, d := range diffs {
		if d != 0 {
			items = append(items, item{math.Abs(d), d > 0})
		}
	}
	slices.SortFunc(items, func(a, b item) int {
		switch {
		case a.abs < b.abs:
			return -1
		case a.abs > b.abs:
			return 1
		}
		return 0
	})
	ranks2 = make([]int, len(items))
	for i := 0; i < len(items); {
		j := i
		for j < len(items) && items[j].abs == items[i].abs {
			j++
		}
		// Ranks i+1..j (1-based): the midrank (i+1+j)/2, doubled.
		for l := i; l < j; l++ {
			ranks2[l] = i + 1 + j
			if items[l].pos {
				w2 += i + 1 + j
			}
		}
		i = j
	}
	return ranks2, w2
}

// wilcoxonExact returns P(2W+ <= w2) under the null, for the doubled ranks
// ranks2: each rank is in W+ with probability 1/2, independently.
func wilcoxonExact(ranks2 []int, w2 int) float64 {
	total := 0
	for _, r := range ranks2 {
		total += r
	}
	if w2 >= total {
		return 1
	}
	dist := signedRankDist(ranks2)
	p := 0.0
	for s := 0; s <= w2; s++ {
		p += dist[s]
	}
	return min(1, p)
}

// signedRankDist returns the null distribution of a signed-rank sum: dist[s]
// is the probability that the ranks counted in the sum add up to s when
// each rank is counted with probability 1/2, independently (its sign is
// positive). It is a dynamic programme over the 2^n sign assignments by
// rank sum, n·Σranks steps. The ranks are integers: WilcoxonSignedRank
// passes doubled midranks, SignedRankShift the plain ranks 1..n. For n up
// to 50 every probability is a count over 2^n, held exactly.
func signedRankDist(ranks []int) []float64 {
	total := 0
	for _, r := range ranks {
		total += r
	}
	// dist[s] = P(sum = s) over the ranks so far.
	dist := make([]float64, total+1)
	dist[0] = 1
	top := 0
	for _, r := range ranks {
		top += r
		for s := top; s >= 0; s-- {
			v := dist[s] / 2
			if s >= r {
				v += dist[s-r] / 2
			}
			dist[s] = v
		}
	}
	return dist
}

// wilcoxonNormal is the normal approximation of P(2W+ <= w2), with the tie
// correction of the variance and a continuity correction of 1/2 on W+.
func wilcoxonNormal(ranks2 []int, w2 int) float64 {
	n := float64(len(ranks2))
	mean := n * (n + 1) / 4
	variance := n * (n + 1) * (2*n + 1) / 24
	for i := 0; i < len(ranks2); {
		j := i
		for j < len(ranks2) && ranks2[j] == ranks2[i] {
			j++
		}
		t := float64(j - i)
		variance -= (t*t*t - t) / 48
		i = j
	}
	return stats.StdNormal.CDF((float64(w2)/2 - mean + 0.5) / math.Sqrt(variance))
}

// wilcoxonAllWorse is WilcoxonSignedRank of n equal negative differences:
// the smallest p-value n items can give, 2^−n when exact. It is computed
// directly, without the n differences.
func wilcoxonAllWorse(n int) float64 {
	if n <= 0 {
		return 1
	}
	if n <= wilcoxonExactLimit {
		return math.Ldexp(1, -n)
	}
	// One tie group of n, W+ = 0.
	nf := float64(n)
	variance := nf*(nf+1)*(2*nf+1)/24 - (nf*nf*nf-nf)/48
	return stats.StdNormal.CDF((0.5 - nf*(nf+1)/4) / math.Sqrt(variance))
}

// MeanDifference returns the mean of the paired differences and its
// Student t interval at the two-sided confidence: mean ± t·s/sqrt(n), t
// the quantile of the t distribution with n−1 degrees of freedom
// (go-moremath stats.TDist) at 1 − (1−confidence)/2 and s the sample
// standard deviation. By the central limit theorem it is close to its
// nominal coverage for bounded differences (scores in [0, 1]) from a few
// dozen items on.
//
// When every difference is equal the interval is degenerate at the mean.
// With fewer than 2 differences the bounds are −Inf and +Inf (the mean is
// NaN when there are none), and so they are for a confidence >= 1 or NaN;
// a confidence <= 0 gives the mean alone. A NaN difference gives NaNs.
func MeanDifference(diffs []float64, confidence float64) (est, lo, hi float64) {
	n := len(diffs)
	if n == 0 {
		return math.NaN(), math.Inf(-1), math.Inf(1)
	}
	if slices.ContainsFunc(diffs, math.IsNaN) {
		nan := math.NaN()
		return nan, nan, nan
	}
	if !slices.ContainsFunc(diffs, func(d float64) bool { return d != diffs[0] }) {
		est = diffs[0]
		if n < 2 || !(confidence < 1) {
			return est, math.Inf(-1), math.Inf(1)
		}
		return est, est, est
	}
	for _, d := range diffs {
		est += d
	}
	est /= float64(n)
	if !(confidence < 1) {
		return est, math.Inf(-1), math.Inf(1)
	}
	if confidence <= 0 {
		return est, est, est
	}
	ss := 0.0
	for _, d := range diffs {
		ss += (d - est) * (d - est)
	}
	se := math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
	t := TQuantile(1-(1-confidence)/2, float64(n-1))
	return est, est - t*se, est + t*se
}

// TQuantile returns the p quantile of Student's t distribution with v
// degrees of freedom, 1/2 < p < 1, by bisection on stats.TDist's CDF. The
// paired interval uses it, and so does the capacity search's bound rule (a
// one-sided bound on the repetitions' mean log latency).
func TQuantile(p, v float64) float64 {
	d := stats.TDist{V: v}
	lo, hi := 0.0, 1.0
	for d.CDF(hi) < p {
		lo, hi = hi, 2*hi
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if d.CDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// ItemsToDetect returns the number of items a paired pass/fail comparison
// needs for McNemar's test at the one-sided level to detect a drop of the
// pass rate by drop (a fraction: 0.02 is 2 points) with probability power,
// when the share of discordant items (passing on one side only) is
// discordance. It is Connor's (1987) normal approximation,
//
//	n = (z_a·sqrt(ψ) + z_b·sqrt(ψ − δ²))² / δ²,
//
// with δ = drop, ψ = discordance, z_a and z_b the standard normal quantiles
// at 1 − level and power. ψ is floored at δ, the fewest discordant items
// such a drop implies (all of them losses): an observed discordance of 0
// does not make a drop free to detect. The answer is also never below the
// smallest n at which McNemar's test can reach level at all, with every
// discordant item a loss: 0.5^(n·δ) < level.
//
// It returns 0 when drop is not in (0, 1] or level or power not in (0, 1),
// and at most 2^40.
func ItemsToDetect(drop, discordance, level, power float64) int {
	if !(drop > 0 && drop <= 1) || !(level > 0 && level < 1) || !(power > 0 && power < 1) {
		return 0
	}
	psi := discordance
	if !(psi <= 1) { // NaN too
		psi = 1
	}
	psi = max(psi, drop)
	za := stats.StdNormal.InvCDF(1 - level)
	zb := stats.StdNormal.InvCDF(power)
	root := za*math.Sqrt(psi) + zb*math.Sqrt(max(0, psi-drop*drop))
	connor := math.Ceil(root * root / (drop * drop))
	if root < 0 { // power < 1/2 beyond the level: no items at all would do
		connor = 0
	}
	// 0.5^(n·δ) < level ⇔ n > log2(1/level)/δ.
	reach := math.Floor(-math.Log2(level)/drop) + 1
	n := max(connor, reach, 1)
	if n >= maxItems {
		return maxItems
	}
	return int(n)
}
