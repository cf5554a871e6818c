package reportfile

import (
	"slices"
	"time"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/result"
)

// Measured says what a candidate measured, as its result's identity and
// telemetry recorded it.
type Measured struct {
	// Model is the model requested (target.model); Engine and
	// EngineVersion what the server said of itself, empty when it did
	// not say.
	Model         string `json:"model,omitempty"`
	Engine        string `json:"engine,omitempty"`
	EngineVersion string `json:"engine_version,omitempty"`
	// GPUs are the GPUs the stack ran on, by model, with how many of
	// each; empty when none was seen.
	GPUs []GPUCount `json:"gpus,omitempty"`
	// Simulated is true when the target was perfgate's simulator.
	Simulated bool `json:"simulated,omitempty"`
	// At is when the candidate started measuring: a baseline's age is
	// counted from it, so a report rendered again later says the same.
	At time.Time `json:"at"`
}

// GPUCount is how many GPUs of one model a stack ran on.
type GPUCount struct {
	Model string `json:"model"`
	Count int    `json:"count"`
}

// BaselineRef is the promotion a scenario's baseline came from.
type BaselineRef struct {
	// Commit is the commit the promotion named; empty when the history
	// has no entry for the baseline (a baseline file given by path).
	Commit string `json:"commit,omitempty"`
	// Date is the promotion's date from the history, else the baseline's
	// finish time.
	Date time.Time `json:"date"`
}

// measuredOf is what result r measured.
func measuredOf(r *result.Result) *Measured {
	id := r.Identity
	m := &Measured{Model: id.Target.Model, Engine: id.Server.Engine, EngineVersion: id.Server.Version, Simulated: id.Simulated, At: r.StartedAt}
	for _, g := range id.GPUs {
		i := slices.IndexFunc(m.GPUs, func(c GPUCount) bool { return c.Model == g.Model })
		if i < 0 {
			m.GPUs = append(m.GPUs, GPUCount{Model: g.Model})
			i = len(m.GPUs) - 1
		}
		m.GPUs[i].Count++
	}
	return m
}

// findResult is the first of results that has a scenario named name, or
// nil.
func findResult(results []*result.Result, name string) *result.Result {
	for _, r := range results {
		if r != nil && findScenario([]*result.Result{r}, name) != nil {
			return r
		}
	}
	return nil
}

// baselineRef is the promotion that made scenario s of r the baseline: the
// latest history entry of the scenario with r's identity and s's figures;
// without one, r's finish time and no commit.
func baselineRef(r *result.Result, s *result.ScenarioResult, history []baseline.Entry) *BaselineRef {
	if r == nil {
		return nil
	}
	ref := &BaselineRef{Date: r.FinishedAt}
	want, err := baseline.NewEntry(r, s, baseline.Meta{})
	if err != nil {
		return ref
	}
	for i := len(history) - 1; i >= 0; i-- {
		e := history[i]
		if e.Scenario == s.Name && e.Identity == want.Identity && sameMedians(e.Metrics, want.Metrics) {
			return &BaselineRef{Commit: e.Commit, Date: e.Date}
		}
	}
	return ref
}

// sameMedians reports whether a and b hold the same metrics with the same
// medians: the entry promoted from a result has exactly its figures.
func sameMedians(a, b map[string]baseline.Summary) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || x.Median != y.Median || x.N != y.N {
			return false
		}
	}
	return true
}

// currentSummaries are the candidate's summaries of the history metrics of
// scenario s; nil when it has none (no repetitions, a figure that is not a
// number).
func currentSummaries(r *result.Result, s *result.ScenarioResult) map[string]baseline.Summary {
	if r == nil || s == nil {
		return nil
	}
	e, err := baseline.NewEntry(r, s, baseline.Meta{})
	if err != nil {
		return nil
	}
	return e.Metrics
}
