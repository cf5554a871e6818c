package stat

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Noise is a gated metric's noise, as a detectability estimate models it:
// each repetition's value is its run's level plus Within, and each run's
// level is the true one plus Between. Relative noise is in log terms (0.1
// is about ±10%), for a gate with a relative tolerance; absolute noise is
// in the metric's unit.
type Noise struct {
	// Within is the standard deviation of one repetition's value around
	// its run's level.
	Within float64
	// Between is the standard deviation of a run's level from one run to
	// the next (0: none, or not known): a baseline and a candidate are two
	// runs, so their levels differ by √2·Between though nothing changed,
	// and a gate's interval, built from the spread within each run, does
	// not see it.
	Between float64
	// Relative is set for a relative tolerance.
	Relative bool
	// Paired is set for rounds tested pair by pair (DecideRounds): Within
	// is then the spread of a pair's difference (of its log-ratio, when
	// relative), what the pairing leaves, and Between does not apply.
	Paired bool
	// Falls is set for a gate that watches a fall (a higher-is-better
	// metric): its bad-side bound is the interval's lower one, whose size
	// differs from the upper one's when the noise is relative. A size of
	// 1 or more is a fall no relative tolerance can allow (below -100%).
	Falls bool
}

// Look is one look of a gate: the samples of each side it compares and
// the level it tests at (a fixed count is one look at the scenario's
// share; a stored baseline keeps its count while the candidate's grows
// look by look).
type Look struct {
	Baseline, Candidate int
	Level               float64
}

// detectDraws is how many simulated A/A comparisons DetectableChange
// draws: enough for a quantile at 1 − 0.05/14 (the README's fourteen
// gates) to rest on about fifteen draws beyond it.
const detectDraws = 4000

// DetectableChange is the smallest tolerance at which a gate, in a family
// of m gates, passes an unchanged candidate with probability at least
// 1 − miss, for a metric with noise, compared at looks: the change the
// gate can tell apart from its own noise. A tolerance below it leaves an
// A/A comparison inconclusive more often than miss (and, with
// on_inconclusive: fail, fails the build); a change of the tolerance plus
// about this much is found a regression.
//
// It is measured, not derived: detectDraws A/A comparisons are drawn from
// the noise (seeded, so that the answer is repeatable), each gate's pass
// rule applied at every look as Decide applies it (the Hodges-Lehmann
// interval at 1 − 2·level finite, its bad-side bound within the
// tolerance, and a regression reachable in the family at that level:
// MinP(n1, n2)·m < level), and the answer is the (1 − miss)-quantile of the
// smallest bad-side bound over the looks, relative to the baseline's
// median for relative noise. It is +Inf when no look can pass at all (too
// few samples for the family), and 0 for a metric without noise.
func DetectableChange(noise Noise, looks []Look, m int, miss float64) float64 {
	if !(miss > 0 && miss < 1) {
		return math.NaN()
	}
	bounds, ok := aaBounds(noise, looks, m)
	if !ok {
		return math.NaN()
	}
	if bounds == nil {
		return math.Inf(1)
	}
	q := bounds[min(len(bounds)-1, int(math.Ceil((1-miss)*float64(len(bounds))))-1)]
	return max(q, 0)
}

// AAPassRate is the share of unchanged candidates that pass a gate of
// tolerance tol, in a family of m gates, for a metric with noise,
// compared at looks: DetectableChange's draws, counted. 0 when no look
// can pass at all; NaN for a bad argument.
func AAPassRate(noise Noise, looks []Look, m int, tol float64) float64 {
	bounds, ok := aaBounds(noise, looks, m)
	if !ok || math.IsNaN(tol) {
		return math.NaN()
	}
	if bounds == nil {
		return 0
	}
	n, _ := slices.BinarySearch(bounds, math.Nextafter(tol, math.Inf(1)))
	return float64(n) / float64(len(bounds))
}

// aaBounds draws detectDraws A/A comparisons and returns, sorted, each
// one's smallest bad-side bound over the looks that can pass (see
// DetectableChange); nil when none can, ok false for a bad argument.
func aaBounds(noise Noise, looks []Look, m int) (bounds []float64, ok bool) {
	if !(noise.Within >= 0) || !(noise.Between >= 0) || m < 1 {
		return nil, false
	}
	var usable []Look
	nMax := 0
	for _, l := range looks {
		reach := Reachable(l.Baseline, l.Candidate, m, l.Level)
		if noise.Paired {
			reach = ReachablePairs(min(l.Baseline, l.Candidate), m, l.Level)
		}
		if l.Baseline >= 1 && l.Candidate >= 1 && l.Level > 0 && l.Level < 0.5 && reach.Decides() {
			usable = append(usable, l)
			nMax = max(nMax, l.Baseline, l.Candidate)
		}
	}
	if len(usable) == 0 {
		return nil, true
	}
	bounds = make([]float64, detectDraws)
	if noise.Within == 0 && noise.Between == 0 {
		return bounds, true // every draw at 0
	}
	rng := rand.New(rand.NewPCG(0x5eed, uint64(nMax)))
	if noise.Paired {
		pairedBounds(rng, noise, usable, nMax, bounds)
	} else {
		twoSampleBounds(rng, noise, usable, nMax, bounds)
	}
	slices.Sort(bounds)
	return bounds, true
}

// twoSampleBounds fills bounds with draws of two independent samples.
func twoSampleBounds(rng *rand.Rand, noise Noise, looks []Look, nMax int, bounds []float64) {
	base := make([]float64, nMax)
	cand := make([]float64, nMax)
	const level = 100.0 // a metric's level; relative bounds do not depend on it
	value := func(x float64) float64 {
		if noise.Relative {
			return level * math.Exp(x)
		}
		return level + x
	}
	for d := range bounds {
		bRun, cRun := noise.Between*rng.NormFloat64(), noise.Between*rng.NormFloat64()
		for i := range nMax {
			base[i] = value(bRun + noise.Within*rng.NormFloat64())
			cand[i] = value(cRun + noise.Within*rng.NormFloat64())
		}
		best := math.Inf(1)
		for _, l := range looks {
			b, c := sortedCopy(base[:l.Baseline]), cand[:l.Candidate]
			s := HodgesLehmann(b, c, 1-2*l.Level)
			if !s.OK {
				continue
			}
			// The bound on the bad side, as a size.
			bound := s.Hi
			if noise.Falls {
				bound = -s.Lo
			}
			if noise.Relative {
				bound /= math.Abs(SortedMedian(b))
			}
			best = min(best, bound)
		}
		bounds[d] = best
	}
}

// pairedBounds fills bounds with draws of nMax pairs' differences; a
// look's bound is the Walsh-average interval's of its first pairs
// (SignedRankShift), exp(·) − 1 of it for log-ratios.
func pairedBounds(rng *rand.Rand, noise Noise, looks []Look, nMax int, bounds []float64) {
	diffs := make([]float64, nMax)
	for d := range bounds {
		for i := range diffs {
			diffs[i] = noise.Within * rng.NormFloat64()
		}
		best := math.Inf(1)
		for _, l := range looks {
			n := min(l.Baseline, l.Candidate)
			s := SignedRankShift(slices.Clone(diffs[:n]), 1-2*l.Level)
			if !s.OK {
				continue
			}
			bound := s.Hi
			switch {
			case noise.Relative && noise.Falls:
				bound = -math.Expm1(s.Lo)
			case noise.Relative:
				bound = math.Expm1(s.Hi)
			case noise.Falls:
				bound = -s.Lo
			}
			best = min(best, bound)
		}
		bounds[d] = best
	}
}
