package stat

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/aclements/go-moremath/mathx"
	"github.com/aclements/go-moremath/stats"
)

// searchCap bounds the sample-size searches of SamplesToReach and
// IntervalSamples: an answer of searchCap means "not within searchCap".
const searchCap = 1000

// OneSidedU returns the p-value of the one-sided Mann-Whitney U test of the
// alternative "candidate is worse than baseline" against the null "they come
// from the same distribution". Worse means stochastically greater when
// higherIsBetter is false (a latency that grew) and stochastically smaller
// when it is true (a throughput that fell). The U test is used because
// benchmark samples are few, skewed and heavy-tailed: it assumes no
// distribution, and its p-value is exact for continuous data.
//
// When every value on both sides is the same there is no evidence either
// way, and the p-value is 1. An empty side or a NaN value is an error.
//
// The p-value is go-moremath's stats.MannWhitneyUTest(x1, x2,
// LocationLess), whose alternative is "x1 tends to be smaller than x2": x1,
// x2 = baseline, candidate when lower is better, and candidate, baseline
// when higher is better. That is LocationGreater with the arguments
// swapped, but moremath computes LocationGreater as 1 − CDF(U−1), which with
// ties steps a whole unit where U moves in halves and reads UDist.CDF below
// the smallest attainable U, where it is wrong (for ties T = [3,1] and 2 a
// side, CDF(0) = 0.5 though U >= 1 always): a throughput of {1,1} against
// a candidate of {1,2} would get p = 0.5 for "the candidate is smaller"
// instead of the exact 1. LocationLess only reads the CDF at the observed
// U, which is attainable; a test checks the result against enumeration.
//
// When the samples have no ties and are small (n1*n2 <= 400) the p-value is
// read from a cached table of the same exact null distribution
// (stats.UDist.CDF), bit for bit what MannWhitneyUTest returns, instead of
// recomputing that distribution on every call: sequential looks over many
// gates call this thousands of times.
func OneSidedU(baseline, candidate []float64, higherIsBetter bool) (float64, error) {
	if len(baseline) == 0 || len(candidate) == 0 {
		return math.NaN(), fmt.Errorf("u test: %d baseline and %d candidate values: %w",
			len(baseline), len(candidate), stats.ErrSampleSize)
	}
	if slices.ContainsFunc(baseline, math.IsNaN) || slices.ContainsFunc(candidate, math.IsNaN) {
		return math.NaN(), errors.New("u test: a sample holds NaN")
	}
	return uSorted(sortedCopy(baseline), sortedCopy(candidate), higherIsBetter)
}

// uSorted is OneSidedU for sorted samples without NaN, both non-empty.
func uSorted(baseline, candidate []float64, higherIsBetter bool) (float64, error) {
	x1, x2 := baseline, candidate
	if higherIsBetter {
		x1, x2 = candidate, baseline
	}
	if p, ok := tableU(x1, x2); ok {
		return p, nil
	}
	res, err := stats.MannWhitneyUTest(x1, x2, stats.LocationLess)
	if errors.Is(err, stats.ErrSamplesEqual) {
		return 1, nil
	}
	if err != nil {
		return math.NaN(), fmt.Errorf("u test of %d baseline and %d candidate values: %w",
			len(baseline), len(candidate), err)
	}
	return res.P, nil
}

// tableMaxPairs is the largest n1*n2 whose null distribution of U is
// tabulated. Building a table costs about (n1*n2)^3/4 steps, a few
// milliseconds at 400 (20 a side), and samples are rarely larger.
const tableMaxPairs = 400

// tableU computes MannWhitneyUTest(a, b, LocationLess)'s exact p-value,
// P(U <= U1), from a cached CDF table when there are no ties and the table
// is small enough; ok is false when the caller must use MannWhitneyUTest
// itself. a and b are sorted.
func tableU(a, b []float64) (p float64, ok bool) {
	n1, n2 := len(a), len(b)
	if n1*n2 > tableMaxPairs {
		return 0, false
	}
	if hasAdjacentEqual(a) || hasAdjacentEqual(b) {
		return 0, false
	}
	// U1 counts the pairs in which the x1 value is greater.
	u1, j := 0, 0
	for _, v := range a {
		for j < n2 && b[j] < v {
			j++
		}
		if j < n2 && b[j] == v {
			return 0, false // a tie between the samples
		}
		u1 += j
	}
	return nullCDF(n1, n2)[u1], true
}

// sortedCopy returns values sorted, leaving values as they were.
func sortedCopy(values []float64) []float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	return s
}

func hasAdjacentEqual(sorted []float64) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}

type sizes struct{ n1, n2 int }

// cdfTables caches nullCDF by sample sizes.
var cdfTables sync.Map // sizes -> []float64

// nullCDF returns P(U <= u) for u = 0..n1*n2 under the null hypothesis with
// no ties, as stats.UDist.CDF computes it. n1*n2 must be at most
// tableMaxPairs.
func nullCDF(n1, n2 int) []float64 {
	key := sizes{n1, n2}
	if t, ok := cdfTables.Load(key); ok {
		return t.([]float64)
	}
	d := stats.UDist{N1: n1, N2: n2}
	t := make([]float64, n1*n2+1)
	for u := range t {
		t[u] = d.CDF(float64(u))
	}
	cdfTables.Store(key, t)
	return t
}

// MinP returns the smallest one-sided p-value the U test can give with n1
// and n2 values (and no ties): 1/C(n1+n2, n1), the chance under the null
// that the two samples do not overlap at all in the tested direction. It is
// 1 when either side is empty. A test at a level at or below MinP can never
// reject, whatever the data: that is the "too few samples" warning.
func MinP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	return 1 / mathx.Choose(n1+n2, n1)
}

// SamplesToReach returns the smallest n such that MinP(n, n) < level: the
// number of samples a side without which a U test at level cannot reject.
// It returns 1000 when no n up to 1000 does (a level <= 0 or NaN).
func SamplesToReach(level float64) int {
	for n := 1; n < searchCap; n++ {
		if MinP(n, n) < level {
			return n
		}
	}
	return searchCap
}
