package run

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// Scenario is a configured scenario with its workload loaded.
type Scenario struct {
	Config   config.Scenario
	Requests []workload.Request
	// Source names the workload: the file path as configured, or "synth".
	Source       string
	WorkloadHash string
}

// Prepare loads (or synthesises) the workload of each scenario of cfg whose
// name is in only (all of them when only is empty). An unknown name in only is
// an error.
func Prepare(cfg *config.Config, only []string) ([]Scenario, error) {
	want := map[string]bool{}
	for _, n := range only {
		want[n] = true
	}
	var out []Scenario
	for _, sc := range cfg.Scenarios {
		if len(want) > 0 && !want[sc.Name] {
			continue
		}
		delete(want, sc.Name)
		s := Scenario{Config: sc}
		if sc.Synth != nil {
			reqs, err := workload.Synthesize(*sc.Synth, cfg.Dir, cfg.Seed)
			if err != nil {
				return nil, fmt.Errorf("scenario %s: synthesise workload: %w", sc.Name, err)
			}
			s.Requests, s.Source = reqs, "synth"
		} else {
			w, err := workload.Load(resolve(cfg.Dir, sc.Workload))
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
			}
			s.Requests, s.Source = w.Requests, sc.Workload
		}
		s.WorkloadHash = workload.Hash(s.Requests)
		out = append(out, s)
	}
	for n := range want {
		return nil, fmt.Errorf("no scenario named %q in %s", n, cfg.Path)
	}
	return out, nil
}

func resolve(dir, path string) string {
	if filepath.IsAbs(path) || dir == "" {
		return path
	}
	return filepath.Join(dir, path)
}

// Measurement runs every repetition of every scenario.
type Measurement struct {
	Dispatcher  *Dispatcher
	Repetitions int
	Seed        int64
	RunID       string
	// OnRecord, if set, sees every record (e.g. to write --records).
	OnRecord func(*result.Record)
	// Progress, if set, reports each repetition as it runs.
	Progress *Progress
}

// Run measures the scenarios. Repetitions are interleaved across scenarios
// (rep 1 of each, then rep 2 of each, ...) so that slow drift of the server or
// the machine spreads over all scenarios instead of biasing the last one.
func (m *Measurement) Run(ctx context.Context, scenarios []Scenario) ([]result.ScenarioResult, error) {
	out := make([]result.ScenarioResult, len(scenarios))
	for i, s := range scenarios {
		c := s.Config
		out[i] = result.ScenarioResult{Name: c.Name, Workload: s.Source, WorkloadHash: s.WorkloadHash, Load: c.Load, SLO: c.SLO}
	}
	for rep := 1; rep <= m.Repetitions; rep++ {
		for i, s := range scenarios {
			c := s.Config
			plan := Plan{
				Scenario: c.Name, Repetition: rep, Requests: s.Requests,
				Count: c.Requests, Duration: c.Duration, Load: c.Load,
				Seed: planSeed(m.Seed, c.Name, rep), RunID: m.RunID,
			}
			agg := result.NewAggregator(c.SLO, plan.OpenLoop(), c.Load.Rate)
			if m.Progress != nil {
				m.Progress.Begin(fmt.Sprintf("%s rep %d/%d", c.Name, rep, m.Repetitions), plan.limit())
			}
			err := m.Dispatcher.Run(ctx, plan, func(r *result.Record) {
				agg.Add(r)
				if m.OnRecord != nil {
					m.OnRecord(r)
				}
				if m.Progress != nil {
					m.Progress.Add(r.OK())
				}
			})
			if m.Progress != nil {
				m.Progress.End()
			}
			if err != nil {
				return nil, fmt.Errorf("scenario %s repetition %d: %w", c.Name, rep, err)
			}
			out[i].Repetitions = append(out[i].Repetitions, agg.Summary(rep))
		}
	}
	return out, nil
}

// planSeed derives the arrival seed of one repetition from the run's seed, so
// that repetition r of a baseline and of a candidate draw the same schedule.
func planSeed(seed int64, scenario string, rep int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", seed, scenario, rep)
	return h.Sum64()
}
