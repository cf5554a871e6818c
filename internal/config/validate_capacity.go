package config

import (
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/metric"
)

// The rules of sweeps (a load that lists several rates or concurrencies) and
// capacity searches (a scenario with a capacity section).

// sweepValues checks the values of a sweep at path (load.rate or
// load.concurrency): 2 to MaxSweepPoints of them, each in [lo, hi] (an
// integer for users), increasing.
func (v *validator) sweepValues(path string, vals []float64, lo, hi float64, unit string, integer bool) {
	one := path[strings.LastIndex(path, ".")+1:]
	switch {
	case len(vals) < 2:
		v.add(path, "a sweep needs at least 2 values, got %d (write a number for one %s)", len(vals), one)
		return
	case len(vals) > MaxSweepPoints:
		v.add(path, "at most %d points in a sweep, got %d", MaxSweepPoints, len(vals))
		return
	}
	for i, x := range vals {
		ip := path + "[" + itoa(i) + "]"
		switch {
		case integer && x != math.Trunc(x):
			v.add(ip, "want an integer, got %s", fmtFloat(x))
		case !inRange(x, lo, hi):
			v.add(ip, "must be from %s to %s%s, got %s", fmtFloat(lo), fmtFloat(hi), unitSuffix(unit), fmtFloat(x))
		case i > 0 && !(x > vals[i-1]):
			v.add(ip, "the sweep's values must increase, got %s after %s", fmtFloat(x), fmtFloat(vals[i-1]))
		}
	}
}

// pointNames checks the names of sweep points: each must be a valid name
// (not too long) and must not be the name of a scenario as written.
func (v *validator) pointNames() {
	written := map[string]int{}
	for i, s := range v.c.Scenarios {
		if _, dup := written[s.Name]; !dup {
			written[s.Name] = i
		}
	}
	for i, s := range v.c.Scenarios {
		if len(s.Load.Sweep) == 0 || s.Name == "" || !namePattern.MatchString(s.Name) {
			continue
		}
		p := "scenarios[" + itoa(i) + "].name"
		for _, pt := range s.points() {
			if len(pt.Name) > MaxNameLength {
				v.add(p, "point %s of this sweep must be at most %d characters (it titles reports and names a baseline file), got %d", pt.Name, MaxNameLength, len(pt.Name))
				break // the others are as long, or longer
			}
			if j, ok := written[pt.Name]; ok {
				v.add(p, "point %s of this sweep has the name of scenarios[%d]", pt.Name, j)
			}
		}
	}
}

// capacityLoad checks the load of a capacity search: its shape only, an
// open or closed loop the search can set.
func (v *validator) capacityLoad(p string, s *Scenario, rateGiven, concGiven bool) {
	l := s.Load
	if l.Type == LoadTrace {
		v.add(p+".type", "a trace replays its own arrival times; a capacity search needs poisson, gamma or closed")
		return
	}
	for _, k := range []struct {
		key   string
		given bool
	}{{SweepRate, rateGiven}, {SweepConcurrency, concGiven}} {
		switch {
		case !k.given:
		case l.SweepParam == k.key:
			v.add(p+"."+k.key, "a scenario sweeps its load or searches its capacity, not both")
		default:
			v.add(p+"."+k.key, "the capacity search sets the %s: remove it (capacity.min and capacity.max bound the search)", k.key)
		}
	}
}

// latencyFamilies are the latency distributions a capacity SLO may bound.
var latencyFamilies = []string{"ttft", "tpot", "itl", "e2e"}

// capacity checks a scenario's capacity section; p is the scenario's path.
func (v *validator) capacity(p string, s *Scenario) {
	cp, c := p+".capacity", s.Capacity
	v.capacitySLO(cp+".slo", c.SLO)

	unit, integer := "requests per second", false
	switch {
	case c.Metric != CapacityRequestRate && c.Metric != CapacityConcurrency:
		v.add(cp+".metric", "must be %s or %s, got %q", CapacityRequestRate, CapacityConcurrency, c.Metric)
		return // the bounds below are in the metric's unit
	case c.Metric == CapacityRequestRate && s.Load.Type == LoadClosed:
		v.add(cp+".metric", "request_rate searches the offered rate of an open loop, and load.type is closed: use load.type poisson or gamma, or capacity.metric concurrency")
	case c.Metric == CapacityConcurrency && s.Load.Type != LoadClosed:
		v.add(cp+".metric", "concurrency searches the number of closed-loop users, and load.type is %s: use load.type closed, or capacity.metric request_rate", s.Load.Type)
	}
	lo, hi := MinRate, MaxRate
	if c.Metric == CapacityConcurrency {
		unit, integer, lo, hi = "users", true, 1, MaxConcurrency
	}

	// bound checks min or max; it reports whether the value can bound a
	// search (so that max and start are checked against it).
	bound := func(key, what string, x float64) bool {
		path := cp + "." + key
		switch {
		case !v.set(path, x != 0):
			v.add(path, "required: the %s load to probe (%s)", what, unit)
		case integer && x != math.Trunc(x):
			v.add(path, "concurrency is a number of users: want an integer, got %s", fmtFloat(x))
		case !inRange(x, lo, hi):
			v.add(path, "must be from %s to %s%s, got %s", fmtFloat(lo), fmtFloat(hi), unitSuffix(unit), fmtFloat(x))
		default:
			return true
		}
		return false
	}
	minOK := bound("min", "lowest", c.Min)
	maxOK := bound("max", "highest", c.Max)
	if minOK && maxOK && !(c.Max > c.Min) {
		v.add(cp+".max", "must be more than min (%s), got %s", fmtFloat(c.Min), fmtFloat(c.Max))
		maxOK = false
	}
	if minOK && maxOK {
		switch {
		case !inRange(c.Start, c.Min, c.Max):
			v.add(cp+".start", "must be from min (%s) to max (%s), got %s", fmtFloat(c.Min), fmtFloat(c.Max), fmtFloat(c.Start))
		case integer && c.Start != math.Trunc(c.Start):
			v.add(cp+".start", "concurrency is a number of users: want an integer, got %s", fmtFloat(c.Start))
		}
	}
	v.searchRules(cp, searchKnobs{min: c.Min, max: c.Max, start: c.Start, resolution: c.Resolution, confidence: c.Confidence,
		holds: c.Holds, repetitions: c.Repetitions, probes: c.Probes, integer: integer, ranged: minOK && maxOK})
	// A repetition ends after its requests or its duration; at a low rate
	// a fixed number of requests takes long.
	requests := s.Requests
	if requests == 0 && s.Synth != nil {
		requests = s.Synth.Requests
	}
	if !integer && minOK && s.Duration == 0 && requests > 0 {
		if secs := float64(requests) / c.Min; secs > 120 {
			v.warn(p+".duration", "a probe repetition at the lowest load takes %ss (requests %d at %s req/s): set duration to cap it",
				fmtFloat(math.Round(secs)), requests, fmtFloat(c.Min))
		}
	}
}

// searchKnobs are what a capacity and a headroom search share beyond their
// range's own checks: how fine, the holds rule, repetitions a probe and the
// budget. ranged says min and max were found good.
type searchKnobs struct {
	min, max, start, resolution, confidence float64
	holds                                   string
	repetitions, probes                     int
	integer, ranged                         bool
}

// searchRules checks a search's knobs at path p (its section), and warns of
// a budget that may not reach the resolution.
func (v *validator) searchRules(p string, k searchKnobs) {
	if !inRange(k.resolution, 0.01, 1) {
		v.add(p+".resolution", "must be from 0.01 to 1 (a fraction: 0.05 stops at an interval 5%% wide), got %s", fmtFloat(k.resolution))
	}
	switch k.holds {
	case HoldsEvery:
		if v.set(p+".confidence", k.confidence != 0) {
			v.add(p+".confidence", "only for holds: bound")
		}
	case HoldsBound:
		v.floatIn(p+".confidence", k.confidence, 0.5, 0.999, "")
	default:
		v.add(p+".holds", "must be every or bound, got %q", k.holds)
	}
	switch {
	case k.repetitions < 1 || k.repetitions > MaxRepetitions:
		v.intIn(p+".repetitions", k.repetitions, 1, MaxRepetitions, "")
	case k.holds == HoldsBound && k.repetitions < 3:
		v.add(p+".repetitions", "holds: bound needs at least 3 repetitions a probe (a t bound on 2 has one degree of freedom), got %d", k.repetitions)
	}
	if k.probes != 0 || v.set(p+".probes", false) {
		// 0 unstated: min, max or resolution made no worst case to
		// default to, and they are reported.
		v.intIn(p+".probes", k.probes, 2, MaxCapacityProbes, "")
	}
	if k.ranged && inRange(k.resolution, 0.01, 1) && k.probes >= 2 && k.probes <= MaxCapacityProbes {
		if need := CapacityWorstCase(k.min, k.max, k.start, k.resolution, k.integer); k.probes < need {
			v.warn(p+".probes", "%d probes may not reach the resolution: from %s to %s at %s%% the search may need %d (it reports the interval it reached)",
				k.probes, fmtFloat(k.min), fmtFloat(k.max), fmtFloat(k.resolution*100), need)
		}
	}
}

// capacitySLO checks a capacity search's objectives: at least one, each a
// latency statistic of a repetition with a limit from 1µs to an hour.
func (v *validator) capacitySLO(path string, slo map[string]time.Duration) {
	if len(slo) == 0 {
		v.add(path, "required: at least one latency objective, e.g. {ttft.p99: 500ms}")
		return
	}
	for _, k := range slices.Sorted(maps.Keys(slo)) {
		kp := path + "." + k
		m, err := metric.Lookup(k)
		if err != nil {
			v.add(kp, "%v", err)
			continue
		}
		family, _, _ := strings.Cut(m.Name, ".")
		if m.Group != metric.GroupLatency || m.PerStart || !slices.Contains(latencyFamilies, family) {
			v.add(kp, "%s is not a latency statistic; capacity SLOs bound ttft, tpot, itl or e2e (p50 ... p99.9, mean)", m.Name)
			continue
		}
		if msg := v.c.unmeasuredGate(m.Name); msg != "" {
			v.add(kp, "%s", msg)
			continue
		}
		v.durationIn(kp, slo[k], time.Microsecond, MaxRequestTimeout)
	}
}

// scenarioGates checks that a scenario's own gates fit what it measures: a
// capacity scenario gates only capacity metrics (its latencies are measured
// at each side's own capacity), and only a capacity scenario has them.
func (v *validator) scenarioGates(path string, s *Scenario) {
	for _, name := range slices.Sorted(maps.Keys(s.Gates)) {
		m, err := metric.Lookup(name)
		if err != nil || m.Quality || strings.TrimSpace(s.Gates[name]) == GateOff {
			continue // reported by gates, or a gate turned off
		}
		switch capGate := m.Group == metric.GroupCapacity; {
		case s.Headroom != nil && name != HeadroomGate:
			v.add(path+"."+name, "a headroom scenario measures its headroom, and each probe at its own load: gate headroom here, and %s in a scenario at one load", name)
		case s.Headroom == nil && name == HeadroomGate:
			v.add(path+"."+name, "headroom comes from a headroom search, and this scenario has no headroom section")
		case s.Capacity != nil && !capGate:
			v.add(path+"."+name, "each side of a capacity scenario is measured at its own capacity, so %s would compare different loads: gate capacity or capacity_tokens here, and latency in a scenario at one load", name)
		case s.Capacity == nil && capGate:
			v.add(path+"."+name, "%s comes from a capacity search, and this scenario has no capacity section", name)
		case metric.RecoveryOnly(name) && !s.Disturbed():
			v.add(path+"."+name, "%s is measured by a step load (load.type step) or a fault, and this scenario has neither", name)
		}
	}
}

// warn records a warning at path.
func (v *validator) warn(path, format string, args ...any) {
	v.warns = append(v.warns, v.src.problem(path, format, args...))
}

func itoa(i int) string { return fmtFloat(float64(i)) }
