package baseline

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// The parameters of ChangePoints.
const (
	// minSegment is the fewest values a regime may have: a split leaves at
	// least this many on each side. Three is the least that has a spread of
	// its own; a shorter "regime" is one outlier.
	minSegment = 3
	// permutations is the number of shuffles of the permutation test; with
	// 199 the p-value (k+1)/200 is a multiple of 0.005.
	permutations = 199
	// significance is the largest p-value at which a split is a change point.
	significance = 0.05
	// stream is the second word of the random generator's state; the seed
	// is the first.
	stream = 0x7065726667617465 // "perfgate"
)

// ChangePoints finds where a series changes regime, by the E-divisive means
// method of Matteson and James (2014), as Apache Otava (formerly DataStax
// Hunter) and MongoDB's performance CI apply it to benchmark histories. It
// returns, sorted, each index i where a new regime starts: xs[i] is the
// first value after the change.
//
// The method makes no assumption about the values' distribution. For a
// candidate split of a segment into X (m values) and Y (n values) it
// measures their divergence with the energy statistic, using distances
// |a-b| (exponent alpha = 1):
//
//	Ê = 2/(mn)·Σ|Xi-Yj| − 1/C(m,2)·Σ_{i<k}|Xi-Xk| − 1/C(n,2)·Σ_{j<k}|Yj-Yk|
//	Q = mn/(m+n) · Ê
//
// that is, how much further apart the two sides are than each is within
// itself, weighted by their sizes. The split with the largest Q is tested by
// permutation: the segment is shuffled 199 times and the largest Q of each
// shuffle found the same way; the p-value is (k+1)/200, k the number of
// shuffles whose Q reaches the observed one, and the split is a change point
// when p <= 0.05. The search then recurses into both sides, until a segment
// has no significant split or is too short to split: each side of a split
// holds at least 3 values, so a series of fewer than 6 values has no change
// point, and regimes of one or two runs (outliers) are not reported.
//
// The shuffles come from a generator seeded by seed, so a series and a seed
// always give the same answer. At 0.05, about one series in twenty with no
// change at all shows a spurious one. The cost is O(199·n²) per segment
// tested, where n log n comes from summing each value's distances to the
// values before it (and after it) through Fenwick trees over the values'
// ranks: a history of 5,000 runs is searched in well under a second. A
// series holding NaN or an infinity has no change points.
func ChangePoints(xs []float64, seed uint64) []int {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	}
	n := len(xs)
	d := divisive{
		rng:    rand.New(rand.NewPCG(seed, stream)),
		before: make([]float64, n), after: make([]float64, n),
		shuffle: make([]float64, n), shuffleRank: make([]int, n),
		rank: make([]int, n), order: make([]int, n),
		cnt: make([]float64, n+1), sum: make([]float64, n+1),
	}
	d.split(xs, 0)
	slices.Sort(d.found)
	return d.found
}

// divisive holds the state of one ChangePoints search.
type divisive struct {
	rng           *rand.Rand
	before, after []float64 // scratch for bestSplit
	shuffle       []float64 // scratch for the permutation test
	shuffleRank   []int     // the ranks of shuffle's values
	rank, order   []int     // scratch for ranks
	cnt, sum      []float64 // Fenwick trees over ranks, 1-based
	found         []int
}

// split looks for a change point in seg, which starts at offset in the whole
// series, and recurses into both sides of one it finds.
func (d *divisive) split(seg []float64, offset int) {
	if len(seg) < 2*minSegment || slices.Min(seg) == slices.Max(seg) {
		return // a constant segment has no change, whatever rounding says
	}
	rank := d.ranks(seg)
	tau, q := d.bestSplit(seg, rank)
	if tau < 0 || !(q > 0) || !d.significant(seg, rank, q) {
		return
	}
	d.found = append(d.found, offset+tau)
	d.split(seg[:tau], offset)
	d.split(seg[tau:], offset+tau)
}

// significant is the permutation test of an observed Q over seg. It stops
// counting once the p-value can no longer reach significance.
func (d *divisive) significant(seg []float64, rank []int, observed float64) bool {
	maxReach := int(math.Floor(significance*(permutations+1)+1e-9)) - 1 // most shuffles that may reach observed
	tol := 1e-9 * math.Abs(observed)                                    // ties count as reaching it
	shuffled, shuffledRank := d.shuffle[:len(seg)], d.shuffleRank[:len(seg)]
	copy(shuffled, seg)
	copy(shuffledRank, rank) // a shuffle moves values, not their ranks among them
	reach := 0
	for range permutations {
		d.rng.Shuffle(len(shuffled), func(i, j int) {
			shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
			shuffledRank[i], shuffledRank[j] = shuffledRank[j], shuffledRank[i]
		})
		if _, q := d.bestSplit(shuffled, shuffledRank); q >= observed-tol {
			reach++
			if reach > maxReach {
				return false
			}
		}
	}
	return true
}

// ranks returns the rank of each value of x among them (0 for the
// smallest; equal values get distinct ranks, which changes no distance).
// The slice is d's scratch, valid until the next call.
func (d *divisive) ranks(x []float64) []int {
	n := len(x)
	order := d.order[:n]
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(x[a], x[b]); c != 0 {
			return c
		}
		return a - b
	})
	rank := d.rank[:n]
	for r, i := range order {
		rank[i] = r
	}
	return rank
}

// bestSplit returns the split tau of x (x[tau] the first value of the right
// side, each side at least minSegment long) with the largest Q, and that Q;
// tau is -1 when x is too short to split. rank holds each value's rank
// among x's values.
//
// Moving the split one place right moves one value from the right side to
// the left, so the within-side sums of distances are updated from each
// value's summed distances to the values before it and to those after it.
// Those sums are taken through Fenwick trees of the counts and sums of the
// values seen so far, indexed by rank: for value v of rank r, the values
// below it contribute c·v − s and those above s' − c'·v. O(n log n) for all
// splits.
func (d *divisive) bestSplit(x []float64, rank []int) (int, float64) {
	n := len(x)
	if n < 2*minSegment {
		return -1, 0
	}
	before, after := d.before[:n], d.after[:n]
	d.distancesTo(x, rank, before, 0, n, 1)
	d.distancesTo(x, rank, after, n-1, -1, -1)
	total := 0.0
	for _, b := range before {
		total += b
	}
	left, right := 0.0, total // sums of distances within each side
	best, bestQ := -1, math.Inf(-1)
	for tau := 1; tau <= n-minSegment; tau++ {
		left += before[tau-1]
		right -= after[tau-1]
		if tau < minSegment {
			continue
		}
		m, k := float64(tau), float64(n-tau)
		between := total - left - right
		e := 2*between/(m*k) - 2*left/(m*(m-1)) - 2*right/(k*(k-1))
		if q := m * k / (m + k) * e; q > bestQ {
			best, bestQ = tau, q
		}
	}
	return best, bestQ
}

// distancesTo sets out[i], for i from first while i != end by step, to
// the sum of |x[i] − x[j]| over the j visited before it.
func (d *divisive) distancesTo(x []float64, rank []int, out []float64, first, end, step int) {
	n := len(x)
	cnt, sum := d.cnt[:n+1], d.sum[:n+1]
	clear(cnt)
	clear(sum)
	// Distances from the lowest value: equal values then sum to exact
	// zeros, and the sums stay small.
	lo := slices.Min(x)
	seen, seenSum := 0.0, 0.0
	for i := first; i != end; i += step {
		v, r := x[i]-lo, rank[i]
		c, s := 0.0, 0.0 // of the values seen below rank r
		for j := r; j > 0; j -= j & -j {
			c += cnt[j]
			s += sum[j]
		}
		out[i] = c*v - s + (seenSum - s) - (seen-c)*v
		for j := r + 1; j <= n; j += j & -j {
			cnt[j]++
			sum[j] += v
		}
		seen++
		seenSum += v
	}
}
