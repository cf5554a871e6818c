package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/compare"
)

// Too few repetitions for an interval.
//
// With fewer than 6 repetitions a side a median has no 95% interval (its
// bounds are infinite), and with fewer than the stat package's threshold
// neither has a gate's change. Rather than "43.8 ± ∞" in every cell, a cell
// shows the figure alone and the table says why once, under it.

// unboundedSummary reports whether s has a median but no finite interval
// for it: too few values (IntervalNeeds, or, in a verdict from before it
// was recorded, an infinite bound).
func unboundedSummary(s compare.Summary) bool {
	if !s.Median.Finite() {
		return false
	}
	return s.IntervalNeeds > 0 || isInf(s.Lo) || isInf(s.Hi)
}

// unboundedChange reports whether g has a change but no finite interval for
// it.
func unboundedChange(g compare.Gate) bool {
	if g.Tail != nil {
		return false
	}
	iv := g.Change
	if p, ok := pointsChange(g); ok {
		iv = p
	} else if !iv.Estimate.Finite() {
		iv = g.Shift
	}
	if !iv.Estimate.Finite() {
		return false
	}
	return g.IntervalNeeds > 0 || isInf(iv.Lo) || isInf(iv.Hi)
}

func isInf(n compare.Num) bool { return !n.Finite() && float64(n) == float64(n) }

// intervalNotes are a gate table's notes on its missing intervals: one for
// the medians (95%), one for the changes (at the gates' confidence), each
// with the repetitions (an A/B's rounds) a side has and needs; none when
// every cell has its interval.
func intervalNotes(s *compare.Scenario, names sides, ab bool) []item {
	var out []item
	var short []sideCount
	needs := 0
	for _, g := range s.Gates {
		for _, side := range []struct {
			name string
			s    compare.Summary
		}{{names.Base, g.Baseline}, {"candidate", g.Candidate}} {
			if unboundedSummary(side.s) {
				short = addSide(short, side.name, side.s.N)
				needs = max(needs, side.s.IntervalNeeds)
			}
		}
	}
	if len(short) > 0 {
		if needs == 0 {
			needs = compare.MedianIntervalNeeds()
		}
		out = append(out, item{Text: plain(fmt.Sprintf("too few repetitions for a %s interval: %s, where one needs >= %d; the medians are shown without one",
			percentOf(compare.MedianConfidence), sidesText(short, 2, "a side"), needs))})
	}

	short, needs = nil, 0
	level := s.Level
	for _, g := range s.Gates {
		if unboundedChange(g) {
			short = addSide(short, names.Base, g.Baseline.N)
			short = addSide(short, "candidate", g.Candidate.N)
			needs = max(needs, g.IntervalNeeds)
			if g.Level.Finite() && g.Level > 0 {
				level = float64(g.Level)
			}
		}
	}
	if len(short) > 0 {
		what, each := "repetitions", "a side"
		if ab {
			what, each = "rounds", "rounds"
		}
		text := fmt.Sprintf("too few %s for a %s interval of the change: %s", what, percentOf(1-2*level), sidesText(short, 2, each))
		if needs > 0 {
			text += fmt.Sprintf(", where one needs >= %d", needs)
		}
		out = append(out, item{Text: plain(text + "; the changes are shown without one")})
	}
	return out
}

// sideCount is how many values a side has.
type sideCount struct {
	name string
	n    int
}

// addSide adds name's count n to counts, once.
func addSide(counts []sideCount, name string, n int) []sideCount {
	c := sideCount{name, n}
	if slices.Contains(counts, c) {
		return counts
	}
	return append(counts, c)
}

// sidesText is "5 a side" when each of the sides (both of them) has the
// same count, else "baseline 3, candidate 7".
func sidesText(counts []sideCount, sides int, each string) string {
	if len(counts) == sides {
		same := true
		for _, c := range counts {
			same = same && c.n == counts[0].n
		}
		if same {
			return strconv.Itoa(counts[0].n) + " " + each
		}
	}
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = c.name + " " + strconv.Itoa(c.n)
	}
	return strings.Join(parts, ", ")
}

// percentOf is a confidence as a percent: "95%", "90%", "99.5%".
func percentOf(confidence float64) string {
	return strconv.FormatFloat(100*confidence, 'g', 4, 64) + "%"
}

// oldIntervalWarning reports whether w is benchmath's warning that s has
// no interval ("need >= 6 samples for confidence interval at level 0.95"),
// which a verdict from before IntervalNeeds kept among its warnings: the
// table's note says it.
func oldIntervalWarning(s compare.Summary, w string) bool {
	return unboundedSummary(s) && strings.Contains(w, "samples for confidence interval")
}
