package stat

import (
	"math"

	"github.com/aclements/go-moremath/stats"
)

// CV returns the coefficient of variation of values: the sample standard
// deviation (n−1 denominator) over the mean. It is the noise of a metric in
// the relative terms a tolerance is given in, and the input of
// MinDetectable. It is 0 for fewer than 2 values and NaN when the mean is 0.
func CV(values []float64) float64 {
	if len(values) < 2 {
		return 0
	}
	mean := 0.0
	for _, v := range values {
		mean += v
	}
	mean /= float64(len(values))
	if mean == 0 {
		return math.NaN()
	}
	ss := 0.0
	for _, v := range values {
		ss += (v - mean) * (v - mean)
	}
	return math.Sqrt(ss/float64(len(values)-1)) / mean
}

// MinDetectable returns the smallest relative shift (a fraction of the
// mean) that a one-sided U test at level detects with probability power,
// for a metric with coefficient of variation cv and n1, n2 values a side: it
// tells a user whether a tolerance is within reach of their repetitions.
//
// It is the normal approximation (z_{1−level} + z_{power})·cv·sqrt(1/n1 +
// 1/n2), divided by sqrt(3/π) because the U test needs 1/(3/π) times the
// samples of a t-test on normal data (its asymptotic relative efficiency).
// It is +Inf when MinP(n1, n2) >= level: no data can reach significance.
// With few samples it is optimistic, being asymptotic.
func MinDetectable(cv float64, n1, n2 int, level, power float64) float64 {
	if MinP(n1, n2) >= level {
		return math.Inf(1)
	}
	z := stats.StdNormal.InvCDF(1-level) + stats.StdNormal.InvCDF(power)
	return z * cv * math.Sqrt(1/float64(n1)+1/float64(n2)) / math.Sqrt(3/math.Pi)
}
