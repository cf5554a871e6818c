package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/capacity"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// withholdBounds keeps a capacity gate (a metric of metric.GroupCapacity)
// from deciding on a guess. A capacity sample whose repetition never
// crossed its SLO within the probes is a bound, not a value: censored above
// (it held at every probe, so its capacity is at least its load) or below
// (it broke at every probe, so at most its load). The test ran on the bounds,
// so an outcome the true values could reverse is withheld:
//
//   - no pass while a candidate sample is an upper bound or a baseline
//     sample a lower bound (the candidate may be worse than it looks);
//   - no regression while a candidate sample is a lower bound or a baseline
//     sample an upper bound (it may be better than it looks).
//
// Such a gate becomes inconclusive, its reason naming the side whose search
// did not bracket and the bound of capacity.min or capacity.max to widen.
// Whatever the outcome, a side whose search ended at the edge of its range
// (below_min, above_max) or could not be sent fast enough (client_limited)
// is said so in the reason: it has no capacity, only a bound. It runs after
// fill; other gates, and scenarios without a capacity search, are left as
// they are.
func withholdBounds(g *Gate, base, cand *result.ScenarioResult) {
	if m, err := metric.Lookup(g.Metric); err != nil || m.Group != metric.GroupCapacity {
		return
	}
	if base.Capacity == nil || cand.Capacity == nil {
		return // Values refused the gate already
	}
	sides := []capacitySide{{"baseline", base.Capacity}, {"candidate", cand.Capacity}}
	var withheld []string
	switch g.Outcome {
	case stat.Pass:
		withheld = append(withheld, sides[1].censored(result.CensoredBelow)...)
		withheld = append(withheld, sides[0].censored(result.CensoredAbove)...)
		withheld = append(withheld, sides[1].bounded(result.CensoredBelow)...)
		withheld = append(withheld, sides[0].bounded(result.CensoredAbove)...)
	case stat.Regression:
		withheld = append(withheld, sides[1].censored(result.CensoredAbove)...)
		withheld = append(withheld, sides[0].censored(result.CensoredBelow)...)
		withheld = append(withheld, sides[1].bounded(result.CensoredAbove)...)
		withheld = append(withheld, sides[0].bounded(result.CensoredBelow)...)
	}
	var notes []string
	for _, s := range sides {
		if n := s.outcomeNote(); n != "" {
			notes = append(notes, n)
		}
	}
	if len(withheld) > 0 {
		g.Reason = fmt.Sprintf("%s withheld, as the bounds it was tested on could reverse it: %s (the test alone: %s)",
			g.Outcome, strings.Join(withheld, "; "), g.Reason)
		g.Outcome = stat.Inconclusive
	}
	if len(notes) > 0 {
		g.Reason += "; " + strings.Join(notes, "; ")
	}
}

// capacitySide is one side's capacity search, named for messages.
type capacitySide struct {
	name string // baseline or candidate
	c    *result.Capacity
}

// censored describes the side's samples censored in direction dir (above or
// below), with what to change; nil when there are none.
func (s capacitySide) censored(dir string) []string {
	n, total, edge := 0, len(s.c.Samples), 0.0
	for _, x := range s.c.Samples {
		if x.Censored == dir {
			n++
			edge = x.Load
		}
	}
	if n == 0 {
		return nil
	}
	unit, key := searchUnit(s.c.Search.Metric), s.key()
	if dir == result.CensoredBelow {
		return []string{fmt.Sprintf("%d of the %s's %d samples are upper bounds (their repetitions broke at every probe down to %s %s: the search did not bracket them; widen %s.min)",
			n, s.name, total, capacity.FormatLoad(edge), unit, key)}
	}
	advice := "widen " + key + ".max"
	if edge < s.c.Search.Max && s.c.Search.Headroom == nil {
		advice = "they held even at the closing probes, far above the others: more requests a repetition make its p99 steadier"
	}
	return []string{fmt.Sprintf("%d of the %s's %d samples are lower bounds (their repetitions held at every probe up to %s %s: the search did not bracket them; %s)",
		n, s.name, total, capacity.FormatLoad(edge), unit, advice)}
}

// bounded says when the side's whole search ended in a bound in direction
// dir: below (below_min, the SLOs broke at capacity.min: at most it) or
// above (above_max or client_limited: at least the load reached). Under
// holds: bound a probe can break while no repetition does on its own, so
// the samples alone need not say it. nil otherwise.
func (s capacitySide) bounded(dir string) []string {
	switch {
	case dir == result.CensoredBelow && s.c.Outcome == result.CapacityBelowMin,
		dir == result.CensoredAbove && (s.c.Outcome == result.CapacityAboveMax || s.c.Outcome == result.CapacityClientLimited):
		return []string{fmt.Sprintf("the %s's search ended %s: its capacity is a bound", s.name, s.c.Outcome)}
	}
	return nil
}

// outcomeNote says when the side's search found no capacity, only a bound;
// "" for a bracketed search (or one that ran out of probes, which still has
// an interval).
func (s capacitySide) outcomeNote() string {
	unit := searchUnit(s.c.Search.Metric)
	if s.c.Search.Headroom != nil {
		switch s.c.Outcome {
		case result.CapacityBelowMin:
			return fmt.Sprintf("nothing held at the %s's headroom.min, %s %s: its headroom is below it (widen headroom.min)",
				s.name, capacity.FormatLoad(s.c.Search.Min), unit)
		case result.CapacityAboveMax:
			return fmt.Sprintf("everything held at the %s's headroom.max, %s %s: its headroom is at least that (widen headroom.max)",
				s.name, capacity.FormatLoad(s.c.Search.Max), unit)
		}
		return ""
	}
	switch s.c.Outcome {
	case result.CapacityBelowMin:
		return fmt.Sprintf("the %s's SLOs broke at capacity.min, %s %s: its capacity is below it (widen capacity.min)",
			s.name, capacity.FormatLoad(s.c.Search.Min), unit)
	case result.CapacityAboveMax:
		return fmt.Sprintf("the %s's SLOs held at capacity.max, %s %s: its capacity is at least that (widen capacity.max)",
			s.name, capacity.FormatLoad(s.c.Search.Max), unit)
	case result.CapacityClientLimited:
		return fmt.Sprintf("the %s's search stopped at %s %s because perfgate could not send faster (client_limited): its capacity is at least that",
			s.name, capacity.FormatLoad(s.c.Holds), unit)
	}
	return ""
}

// key is the config section the side's search came from: capacity or
// headroom.
func (s capacitySide) key() string {
	if s.c.Search.Headroom != nil {
		return "headroom"
	}
	return "capacity"
}

// searchUnit is the unit of a capacity search's loads.
func searchUnit(m string) string {
	if m == config.CapacityConcurrency {
		return "users"
	}
	if m == result.HeadroomContext {
		return "tokens"
	}
	return "req/s"
}

// capacityPairing is how a capacity gate's samples are tested. Repetition
// r of a capacity search replays the same seeded requests at every probe.
// Under load.arrivals: fresh each repetition draws arrivals of its own, and
// a baseline and a candidate that ran with the same seed drew the same
// ones, repetition by repetition: their samples r are a pair, measured on
// one arrival sequence that the other pairs did not share, and the
// difference within a pair cancels what the sequence did to the capacity.
// The gate then tests the pairs (the signed-rank test and the
// Walsh-average interval, as an A/B tests its rounds) rather than two
// independent samples.
//
// Under load.arrivals: same (the default) every repetition replays one
// schedule, on both sides: the samples of a side differ by the server's
// noise alone, and sample r of the baseline shares nothing with sample r of
// the candidate that the other samples do not. Pairing them would cancel
// nothing and would spend the U test's power (5 pairs reach p = 1/32, 5
// samples a side 1/252, and a pair's interval is wider), so they are
// tested unpaired; bench/capacity_test.go measured both ways.
type capacityPairing struct {
	// pairable is set when both sides recorded the same seed, drew fresh
	// arrivals for each repetition, and hold samples of the same
	// repetitions (and, under a relative tolerance, values with a ratio);
	// decide then pairs them if the pairs can reach the family's level.
	pairable bool
	// seed is the seed both sides recorded, when pairable.
	seed int64
	// why says why the samples are not pairable.
	why string
	// headroom is set for a headroom search's samples.
	headroom bool
}

// pairCapacity says whether the capacity gate in (a metric of
// metric.GroupCapacity) of scenario base and cand can be tested as pairs;
// nil for any other gate, whose samples are independent.
func pairCapacity(metricName string, base, cand *result.ScenarioResult, in stat.Gate) *capacityPairing {
	if m, err := metric.Lookup(metricName); err != nil || m.Group != metric.GroupCapacity || base.Capacity == nil || cand.Capacity == nil {
		return nil
	}
	bs, cs := base.Seed, cand.Seed
	bn, cn := len(base.Capacity.Samples), len(cand.Capacity.Samples)
	fresh := base.Load.Arrivals == config.ArrivalsFresh && cand.Load.Arrivals == config.ArrivalsFresh
	// A headroom search's users send the same seeded requests (salted by
	// the seed and the repetition) at every probe, on both sides when the
	// seeds match: repetition r of each side is the same requests.
	headroom := base.Capacity.Search.Headroom != nil && cand.Capacity.Search.Headroom != nil
	// An unknown seed first: a result from before seeds were recorded may
	// also be from before load.arrivals, when every repetition drew fresh
	// arrivals without saying so.
	switch {
	case bs == nil && cs == nil:
		return &capacityPairing{why: "neither side recorded its seed (results from before perfgate recorded it)"}
	case bs == nil:
		return &capacityPairing{why: "the baseline recorded no seed (a result from before perfgate recorded it)"}
	case cs == nil:
		return &capacityPairing{why: "the candidate recorded no seed"}
	case !fresh && !headroom:
		return &capacityPairing{why: "every repetition replayed one arrival schedule (load.arrivals: same), so sample r shares nothing with the other side's sample r that the other samples do not"}
	case *bs != *cs:
		return &capacityPairing{why: fmt.Sprintf("the seeds differ (%d and %d), so repetition r drew other arrivals on each side", *bs, *cs)}
	case bn != cn || len(in.Baseline) != bn || len(in.Candidate) != cn:
		return &capacityPairing{why: fmt.Sprintf("the baseline has %d samples and the candidate %d", bn, cn)}
	}
	for i := range bn {
		if base.Capacity.Samples[i].Repetition != cand.Capacity.Samples[i].Repetition {
			return &capacityPairing{why: "the two sides' samples are of different repetitions"}
		}
	}
	if in.Relative && (slices.ContainsFunc(in.Baseline, nonPositive) || slices.ContainsFunc(in.Candidate, nonPositive)) {
		return &capacityPairing{why: "a sample is 0, which has no ratio to the other side's"}
	}
	return &capacityPairing{pairable: true, seed: *bs, headroom: headroom}
}

func nonPositive(v float64) bool { return !(v > 0) }

// decide marks in as Paired when the samples are pairable and n pairs can
// reach both outcomes in a family of m gates at level (2^−n·m < level and
// an interval: stat.ReachablePairs), and returns the note the gate's reason
// ends with. Pairs too few for the family are tested unpaired, as every
// capacity gate was before the seed was recorded: the U test reaches lower
// p-values with as many samples a side (1/C(2n, n) against 2^−n), and the
// note says how many repetitions pairing needs.
func (p *capacityPairing) decide(in *stat.Gate, m int, level float64) string {
	if !p.pairable {
		return "unpaired: " + p.why
	}
	n := len(in.Baseline)
	if !stat.ReachablePairs(n, m, level).Decides() {
		over := ""
		if m > 1 {
			over = fmt.Sprintf(" over %d gates", m)
		}
		key := "capacity.repetitions"
		if p.headroom {
			key = "headroom.repetitions"
		}
		return fmt.Sprintf("unpaired: %d pairs (the same seed %d) cannot decide at level %.3g%s, and pairing needs >= %d (%s)",
			n, p.seed, level, over, stat.PairsToDecide(n, config.MaxRepetitions, m, level), key)
	}
	in.Paired = true
	if p.headroom {
		return fmt.Sprintf("paired by repetition (the same requests of the same seed %d)", p.seed)
	}
	return fmt.Sprintf("paired by repetition (fresh arrivals of the same seed %d)", p.seed)
}
