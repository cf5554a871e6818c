package baseline

import (
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
// tested. A series holding NaN or an infinity has no change points.
func ChangePoints(xs []float64, seed uint64) []int {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	}
	d := divisive{
		rng:     rand.New(rand.NewPCG(seed, stream)),
		before:  make([]float64, len(xs)),
		after:   make([]float64, len(xs)),
		shuffle: make([]float64, len(xs)),
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
	found         []int
}

// split looks for a change point in seg, which starts at offset in the whole
// series, and recurses into both sides of one it finds.
func (d *divisive) split(seg []float64, offset int) {
	tau, q := d.bestSplit(seg)
	if tau < 0 || !(q > 0) || !d.significant(seg, q) {
		return
	}
	d.found = append(d.found, offset+tau)
	d.split(seg[:tau], offset)
	d.split(seg[tau:], offset+tau)
}

// significant is the permutation test of an observed Q over seg. It stops
// counting once the p-value can no longer reach significance.
func (d *divisive) significant(seg []float64, observed float64) bool {
	maxReach := int(math.Floor(significance*(permutations+1)+1e-9)) - 1 // most shuffles that may reach observed
	tol := 1e-9 * math.Abs(observed)                                    // ties count as reaching it
	shuffled := d.shuffle[:len(seg)]
	copy(shuffled, seg)
	reach := 0
	for range permutations {
		d.rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if _, q := d.bestSplit(shuffled); q >= observed-tol {
			reach++
			if reach > maxReach {
				return false
			}
		}
	}
	return true
}

// bestSplit returns the split tau of x (x[tau] the first value of the right
// side, each side at least minSegment long) with the largest Q, and that Q;
// tau is -1 when x is too short to split.
//
// Moving the split one place right moves one value from the right side to
// the left, so the within-side sums of distances are updated from each
// value's distances to the values before and after it: O(n²) for all splits.
func (d *divisive) bestSplit(x []float64) (int, float64) {
	n := len(x)
	if n < 2*minSegment {
		return -1, 0
	}
	before, after := d.before[:n], d.after[:n]
	clear(before)
	clear(after)
	total := 0.0
	for i := range n {
		for k := i + 1; k < n; k++ {
			dist := math.Abs(x[i] - x[k])
			after[i] += dist
			before[k] += dist
			total += dist
		}
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
