package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/perfgate/perfgate/internal/capacity"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
)

// capacitySpec is the search a scenario's capacity section asks for. A
// parsed config has every default applied already; a config built in code
// may leave values zero, and gets the same defaults here (config's): the
// metric from load.type, start the geometric mean of min and max (rounded
// for users), its resolution and rule, repetitions.max repetitions a probe,
// and the worst case for a budget.
func capacitySpec(cfg *config.Config, sc config.Scenario) capacity.Spec {
	c := sc.Capacity
	s := capacity.Spec{Metric: c.Metric, Min: c.Min, Max: c.Max, Start: c.Start, Resolution: c.Resolution,
		Rule: c.Holds, Confidence: c.Confidence, Repetitions: c.Repetitions, Budget: c.Probes,
		MaxErrorRate: sc.MaxErrorRate, Capped: sc.Load.MaxInFlight > 0}
	if s.Metric == "" {
		s.Metric = config.CapacityRequestRate
		if sc.Load.Type == config.LoadClosed {
			s.Metric = config.CapacityConcurrency
		}
	}
	s.Integer = s.Metric == config.CapacityConcurrency
	for _, k := range slices.Sorted(maps.Keys(c.SLO)) {
		s.SLO = append(s.SLO, capacity.Objective{Metric: k, LimitMS: float64(c.SLO[k]) / 1e6})
	}
	if s.Start == 0 {
		s.Start = math.Sqrt(s.Min * s.Max)
		if s.Integer {
			s.Start = math.Round(s.Start)
		}
	}
	if s.Repetitions == 0 {
		s.Repetitions = max(cfg.Repetitions.Min, cfg.Repetitions.Max)
	}
	searchDefaults(&s)
	return s
}

// searchDefaults gives a search's spec the config's defaults where a
// config built in code left them zero: the resolution, the holds rule and
// its confidence, and the worst case for a budget.
func searchDefaults(s *capacity.Spec) {
	if s.Resolution == 0 {
		s.Resolution = config.DefaultCapacityResolution
	}
	if s.Rule == "" {
		s.Rule = config.DefaultCapacityHolds
	}
	if s.Rule == config.HoldsBound && s.Confidence == 0 {
		s.Confidence = config.DefaultCapacityConfidence
	}
	if s.Budget == 0 {
		s.Budget = max(2, config.CapacityWorstCase(s.Min, s.Max, s.Start, s.Resolution, s.Integer))
	}
}

// atLoad is sc with its load set to probe n's: the rate of an open loop or
// the users of a closed one. The name stays, so repetition r draws the same
// seeded arrivals at every load (common random numbers); the salt takes
// the probe's number, so that no probe is served from a prompt cache an
// earlier probe filled with the same text.
func atLoad(sc run.Scenario, metric string, load float64, n int) run.Scenario {
	sc.SaltTag = fmt.Sprintf("probe-%d", n)
	sc.Config.Load.Rate, sc.Config.Load.Concurrency = 0, 0
	if metric == config.CapacityConcurrency {
		sc.Config.Load.Concurrency = int(math.Round(load))
	} else {
		sc.Config.Load.Rate = load
	}
	return sc
}

// searchCapacity measures sc by a capacity search through d: each probe
// warms the stack up at its load (a new load is a new steady state), then
// measures the spec's repetitions with the cool-down between them, a
// broken repetition counting against the probe rather than failing the
// run. The result's repetitions are the capacity point's, its Load the
// configured shape with no rate or concurrency (the search chose them),
// and its warm-up the capacity point's. Sequential repetitions (More) do
// not apply: a probe's repetitions are fixed.
func (s *session) searchCapacity(ctx context.Context, sc run.Scenario, d *run.Dispatcher, res result.ScenarioResult) (result.ScenarioResult, error) {
	c := sc.Config
	spec := capacitySpec(s.cfg, c)
	unit := "req/s"
	if spec.Metric == config.CapacityConcurrency {
		unit = "users"
	}
	s.begin(fmt.Sprintf("%s: searching capacity (%s from %s to %s, at most %d probes of %d repetitions, and up to %d closing probes)",
		c.Name, spec.Metric, capacity.FormatLoad(spec.Min), capacity.FormatLoad(spec.Max), spec.Budget, spec.Repetitions, capacity.MaxClosing))
	m := s.measurement(d)
	n := 0
	probe := func(ctx context.Context, load float64, phase string) ([]result.Repetition, *result.Warmup, error) {
		n++
		psc := atLoad(sc, spec.Metric, load, n)
		w, err := s.warmUpAs(ctx, psc, d, warming{title: fmt.Sprintf("%s probe %d (%s) at %s %s", c.Name, n, phase, capacity.FormatLoad(load), unit)})
		var unsteady *run.UnsteadyError
		var failing *run.FailingError
		if w != nil && psc.Config.Load.Type != config.LoadClosed && (errors.As(err, &unsteady) || errors.As(err, &failing)) {
			// An open loop past capacity never settles, or fails: its
			// repetitions say that it breaks. A closed loop's users wait
			// for their answers, so its load follows the server: an
			// unsteady or failing warm-up is one, and warmup.on_unsteady
			// decides as in any run.
			s.detail("%v: measuring the probe anyway, its repetitions decide whether it holds", err)
			err = nil
		}
		if err != nil {
			return nil, nil, err
		}
		reps, err := s.probeRepetitions(ctx, m, psc, spec.Repetitions, fmt.Sprintf("%s %s %s", c.Name, capacity.FormatLoad(load), unit))
		if err != nil {
			return nil, nil, err
		}
		return reps, w, nil
	}
	log := func(format string, args ...any) { s.detail(c.Name+": "+format, args...) }
	found, reps, err := capacity.Search(ctx, spec, probe, log)
	if err != nil {
		return res, fmt.Errorf("scenario %s: %w", c.Name, err)
	}
	res.Capacity, res.Repetitions = found, reps
	res.Load.Rate, res.Load.Concurrency = 0, 0
	res.Warmup = found.Probes[found.At].Warmup
	s.detail("%s: %s", c.Name, capacityLine(found, unit))
	for _, w := range found.Warnings {
		s.detail("warning: %s", w)
	}
	return res, nil
}

// probeRepetitions measures a search probe's n repetitions of psc through
// m, with the cool-down between them, each labelled "title rep r/n". A
// broken repetition counts against the probe rather than failing the run;
// any other error ends it, with the repetitions measured so far.
func (s *session) probeRepetitions(ctx context.Context, m *run.Measurement, psc run.Scenario, n int, title string) ([]result.Repetition, error) {
	reps := make([]result.Repetition, 0, n)
	for r := 1; r <= n; r++ {
		if err := m.Cool(ctx, psc.Config.Name, r); err != nil {
			return reps, err
		}
		rep, err := m.Repetition(ctx, psc, r, fmt.Sprintf("%s rep %d/%d", title, r, n))
		var broken *run.BrokenError
		switch {
		case errors.As(err, &broken):
			s.detail("%v: the probe breaks", err)
		case err != nil:
			return reps, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// capacityLine is a search's outcome in one line for the run's log.
func capacityLine(c *result.Capacity, unit string) string {
	switch c.Outcome {
	case result.CapacityBelowMin:
		return fmt.Sprintf("the SLOs break at the lowest load, %s %s: capacity below it (%d probes)", capacity.FormatLoad(c.Breaks), unit, len(c.Probes))
	case result.CapacityAboveMax:
		return fmt.Sprintf("the SLOs hold at the highest load, %s %s: capacity at least that (%d probes)", capacity.FormatLoad(c.Holds), unit, len(c.Probes))
	case result.CapacityClientLimited:
		return fmt.Sprintf("perfgate could not send faster: capacity at least %s %s (%d probes)", capacity.FormatLoad(c.Holds), unit, len(c.Probes))
	case result.CapacityBudget:
		return fmt.Sprintf("capacity in [%s, %s) %s after all %d probes of the budget", capacity.FormatLoad(c.Holds), capacity.FormatLoad(c.Breaks), unit, len(c.Probes))
	}
	return fmt.Sprintf("capacity %s %s: holds at %s, breaks at %s (%d probes)", capacity.FormatLoad(c.Holds), unit, capacity.FormatLoad(c.Holds), capacity.FormatLoad(c.Breaks), len(c.Probes))
}
