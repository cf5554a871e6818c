package capacity

import (
	"fmt"
	"math"

	"github.com/perfgate/perfgate/internal/result"
)

// state is where a search stands: the highest load that held and the
// lowest that broke so far (0 when none), and how many probes it made. It
// chooses the next probe from these alone, so WorstCase can walk every
// path a search could take.
type state struct {
	s             Spec
	holds, breaks float64
	probes        int
}

func newState(s Spec) *state { return &state{s: s} }

// next is the next load to probe and its phase, or the outcome when the
// search is over (the budget is the caller's).
//
// Bracket: from Start, double while the last probe held and halve while it
// broke, clamped to [Min, Max], until one load held and a higher one broke;
// Max holding is above_max, Min breaking below_min. Bisect: the geometric
// midpoint (rounded, for users) until Breaks/Holds <= 1+Resolution, or, for
// users, no integer lies between.
func (st *state) next() (load float64, phase, outcome string) {
	s := st.s
	switch {
	case st.probes == 0:
		return s.Start, PhaseBracket, ""
	case st.breaks == 0: // everything so far held
		if st.holds >= s.Max {
			return 0, "", result.CapacityAboveMax
		}
		return st.round(min(2*st.holds, s.Max), st.holds, math.Inf(1)), PhaseBracket, ""
	case st.holds == 0: // everything so far broke
		if st.breaks <= s.Min {
			return 0, "", result.CapacityBelowMin
		}
		return st.round(max(st.breaks/2, s.Min), 0, st.breaks), PhaseBracket, ""
	}
	if st.breaks/st.holds <= 1+s.Resolution || (s.Integer && st.breaks-st.holds <= 1) {
		return 0, "", result.CapacityBracketed
	}
	return st.round(math.Sqrt(st.holds*st.breaks), st.holds, st.breaks), PhaseBisect, ""
}

// round rounds a load to a whole number of users when the search is over
// users, keeping it strictly between lo and hi (which callers guarantee
// has an integer in it).
func (st *state) round(x, lo, hi float64) float64 {
	if !st.s.Integer {
		return x
	}
	r := math.Round(x)
	if r <= lo {
		r = lo + 1
	}
	if r >= hi {
		r = hi - 1
	}
	return r
}

// record takes a probe's verdict. A load that held above one that broke
// (the latency is not monotone in the load) moves neither bound past the
// other: the bracket stays [holds, breaks) with holds < breaks.
func (st *state) record(load float64, held bool) {
	st.probes++
	switch {
	case held && (st.breaks == 0 || load < st.breaks):
		st.holds = max(st.holds, load)
	case !held && load > st.holds && (st.breaks == 0 || load < st.breaks):
		st.breaks = load
	}
}

// interval says what the search knows so far: "capacity in [80, 113)",
// "capacity >= 80", "capacity < 10".
func (st *state) interval() string {
	what := "capacity"
	if st.s.Headroom != nil {
		what = "headroom"
	}
	switch {
	case st.holds > 0 && st.breaks > 0:
		return fmt.Sprintf("%s in [%s, %s)", what, FormatLoad(st.holds), FormatLoad(st.breaks))
	case st.holds > 0:
		return what + " >= " + FormatLoad(st.holds)
	case st.breaks > 0:
		return what + " < " + FormatLoad(st.breaks)
	}
	return "nothing known yet"
}

// WorstCase is the most probes a search from min to max at resolution can
// make before it stops by itself, starting at start (0: the default start,
// the geometric mean of min and max, rounded for users): the default
// budget, and the figure a smaller budget is warned against. It walks every
// path a search could take (each probe holding or breaking, consistently
// with a single capacity), so it is exact for the search as implemented;
// the closing probes (PhaseClose) come on top. For a range of loads that is
// not a range (min not in (0, max)), a start outside it or a resolution
// that is not positive it returns 0.
//
// From the geometric mean it is at most ceil(log2(sqrt(max/min))) + 1
// probes to bracket, plus ceil(log2(ln 2 / ln(1+resolution))) to bisect the
// bracket (at most 2x wide) to the resolution: 10 to 640 req/s at 5% is
// 4 + 4 = 8. A start near one end costs up to log2(max/min) bracket probes.
func WorstCase(min, max, start, resolution float64, integer bool) int {
	if !(min > 0) || !(max > min) || math.IsInf(max, 0) || !(resolution > 0) {
		return 0
	}
	if start == 0 {
		start = math.Sqrt(min * max)
		if integer {
			start = math.Round(start)
		}
	}
	if integer {
		min, max = math.Ceil(min), math.Floor(max)
		if !(max > min) {
			return 0
		}
	}
	if !(start >= min && start <= max) {
		return 0
	}
	s := Spec{Min: min, Max: max, Start: start, Resolution: resolution, Integer: integer}
	return deepest(state{s: s})
}

// deepest is the most probes a search from st can still make.
func deepest(st state) int {
	load, _, outcome := st.next()
	if outcome != "" || st.probes > 1000 {
		return st.probes
	}
	held, broke := st, st
	held.record(load, true)
	broke.record(load, false)
	return max(deepest(held), deepest(broke))
}
