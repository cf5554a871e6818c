package stat

import (
	"cmp"
	"math"
	"slices"
)

// Holm returns Holm-Bonferroni adjusted p-values, in the input order. A gate
// family tests many metrics at once; comparing each adjusted p-value with
// the level keeps the chance of any false rejection in the family at or
// below the level, whatever the dependence between the metrics, while
// rejecting more than plain Bonferroni.
//
// The step-down adjustment: with the m raw p-values sorted ascending, the
// i-th (0-based) is multiplied by m−i, the results are made monotone by a
// running maximum in that order, and capped at 1. A NaN p-value (a gate that
// could not be tested) still counts in m, is ordered last, and stays NaN.
func Holm(p []float64) []float64 {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	key := func(i int) float64 {
		if math.IsNaN(p[i]) {
			return math.Inf(1)
		}
		return p[i]
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(key(a), key(b)) })
	adj := make([]float64, m)
	running := 0.0
	for rank, i := range order {
		if math.IsNaN(p[i]) {
			adj[i] = math.NaN()
			continue
		}
		running = max(running, min(1, float64(m-rank)*p[i]))
		adj[i] = running
	}
	return adj
}

// Spend is the Lan-DeMets Pocock-type alpha-spending function
// alpha·ln(1+(e−1)·t): how much of the false-rejection budget alpha may have
// been used by information fraction t in [0,1] (the share of the planned
// samples taken so far). Spend(alpha, 0) = 0 and Spend(alpha, 1) = alpha; t
// outside [0,1] is clamped. The Pocock shape spends early, so an obvious
// regression can stop a run at its first looks.
func Spend(alpha, t float64) float64 {
	switch {
	case t <= 0:
		return 0
	case t >= 1:
		return alpha
	}
	return alpha * math.Log(1+(math.E-1)*t)
}

// LookLevel returns the level a look at information fraction t may use when
// the previous look was at tPrev (0 for the first look): Spend(alpha, t) −
// Spend(alpha, tPrev), never negative. Looks tested at their incremental
// levels have, by the union bound, a total false-rejection probability <=
// alpha however many looks are taken and however they are correlated: this
// is the documented correction for looking at a growing sample repeatedly.
func LookLevel(alpha, tPrev, t float64) float64 {
	return max(0, Spend(alpha, t)-Spend(alpha, tPrev))
}
