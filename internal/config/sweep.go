package config

import (
	"maps"
	"strconv"
	"time"

	"github.com/perfgate/perfgate/internal/result"
)

// A scenario whose load lists several rates or concurrencies
// (`rate: [25, 50, 100]`) is a sweep: it is measured as one scenario per
// value, each an ordinary scenario at one load with its own name
// (PointName), its own results and its own baseline. Measured is that
// expansion; everything that measures or gates iterates it rather than
// Scenarios, which stays as written (and hashed).

// Measured returns the scenarios as they are measured, in order: a swept
// scenario becomes one Scenario per value of its sweep, named by PointName,
// with that value as its rate or concurrency, Sweep cleared and Point set;
// every other scenario (a capacity search included) is returned as it is.
func (c *Config) Measured() []Scenario {
	out := make([]Scenario, 0, len(c.Scenarios))
	for _, s := range c.Scenarios {
		out = append(out, s.points()...)
	}
	return out
}

// points is s as measured: its sweep's points, or s alone.
func (s Scenario) points() []Scenario {
	l := s.Load
	if len(l.Sweep) == 0 {
		return []Scenario{s}
	}
	out := make([]Scenario, len(l.Sweep))
	for i, v := range l.Sweep {
		p := s
		p.Name = PointName(s.Name, l.SweepParam, v)
		p.Load.Sweep, p.Load.SweepParam = nil, ""
		switch l.SweepParam {
		case SweepConcurrency:
			p.Load.Concurrency = int(v)
		default:
			p.Load.Rate = v
		}
		// The point's gates are its own: a sweep draws a curve, and
		// gating every point by default would split the run's alpha
		// across them (GatesOf).
		p.Gates = maps.Clone(s.Gates)
		p.Point = &SweepPoint{Of: s.Name, Param: l.SweepParam, Value: v, Index: i, Points: len(l.Sweep)}
		out[i] = p
	}
	return out
}

// PointName names one point of a sweep: the scenario's name, the swept
// parameter and the value, as "chat.rate-25", "chat.rate-0.5" or
// "chat.concurrency-16". The value is written in its shortest decimal form,
// never with an exponent, so that the name passes the scenario name pattern
// and names a baseline file.
func PointName(name, param string, v float64) string {
	return name + "." + param + "-" + strconv.FormatFloat(v, 'f', -1, 64)
}

// ScenarioNamed returns the measured scenario named name: a scenario as
// written, or one point of a sweep ("chat.rate-25"). The name of a swept
// scenario itself ("chat") names no one measured scenario and is not found;
// Points lists its points.
func (c *Config) ScenarioNamed(name string) (Scenario, bool) {
	for _, s := range c.Measured() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Points returns the measured scenarios that the name selects: the one
// scenario (or point) of that name, or every point of the sweep of that
// name; nil when nothing has it.
func (c *Config) Points(name string) []Scenario {
	var out []Scenario
	for _, s := range c.Measured() {
		if s.Name == name || (s.Point != nil && s.Point.Of == name) {
			out = append(out, s)
		}
	}
	return out
}

// Result is the sweep point as a result records it; nil for a scenario that
// is no point of a sweep.
func (p *SweepPoint) Result() *result.SweepPoint {
	if p == nil {
		return nil
	}
	return &result.SweepPoint{Of: p.Of, Param: p.Param, Value: p.Value, Index: p.Index, Points: p.Points}
}

// Result is the capacity search as a result records it: its SLOs in
// milliseconds, its holds rule as Rule and its probe budget as Budget. The
// config must have been defaulted.
func (c *Capacity) Result() result.CapacitySearch {
	slo := make(map[string]float64, len(c.SLO))
	for k, d := range c.SLO {
		slo[k] = float64(d) / float64(time.Millisecond)
	}
	return result.CapacitySearch{
		Metric: c.Metric, SLO: slo, Min: c.Min, Max: c.Max, Start: c.Start,
		Resolution: c.Resolution, Rule: c.Holds, Confidence: c.Confidence,
		Repetitions: c.Repetitions, Budget: c.Probes,
	}
}
