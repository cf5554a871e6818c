package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// CalibrationPower is the detection probability "smallest detectable
// regression" refers to: the usual 80%.
const CalibrationPower = 0.8

// Calibration reports, from several results of one configuration (A/A), how
// noisy each gated metric is and what the gate can therefore detect: the
// evidence for setting tolerances and repetitions.
type Calibration struct {
	Alpha   float64 `json:"alpha"`
	Results int     `json:"results"`
	// Pairs is how many A/A comparisons were run (each pair of results, or
	// the two halves of a single result's repetitions).
	Pairs     int                   `json:"pairs"`
	Scenarios []CalibrationScenario `json:"scenarios"`
	Notes     []string              `json:"notes,omitempty"`
}

// CalibrationScenario is one scenario's calibration.
type CalibrationScenario struct {
	Name string `json:"name"`
	// Repetitions is the repetitions a side a gate would have (the fewest
	// among the results).
	Repetitions int `json:"repetitions"`
	// Gates is the size of the scenario's gate family as compare and gate
	// test it: its gates that a comparison tests (not a per-start gate
	// with one start a side, which is shown, not tested), its tail gates
	// and its quality gates. Holm divides the scenario's share of alpha by
	// it.
	Gates int `json:"gates"`
	// Level is Holm's first step in the scenario's family as perfgate gate
	// tests it at these repetitions: alpha, shared evenly by the scenarios
	// that have gates, over Gates. MinDetectable is at this level.
	Level   Num                 `json:"level"`
	Metrics []CalibrationMetric `json:"metrics"`
}

// CalibrationMetric is one gated metric's noise and what it allows.
type CalibrationMetric struct {
	Metric    string `json:"metric"`
	Title     string `json:"title"`
	Unit      string `json:"unit"`
	Tolerance string `json:"tolerance"`
	// N is the repetitions pooled over all results; Median their median.
	N      int `json:"n"`
	Median Num `json:"median"`
	// CV is the coefficient of variation between repetitions (all results
	// pooled, so run-to-run drift counts as noise, as it does for a stored
	// baseline).
	CV Num `json:"cv"`
	// MinDetectable is the smallest relative regression detected with 80%
	// probability at the scenario's repetitions, at the scenario's Level
	// (the first step of Holm); +Inf (null) when that many repetitions
	// cannot reach significance at all.
	MinDetectable Num `json:"min_detectable"`
	// RepetitionsNeeded is the repetitions a side at which MinDetectable
	// falls to the tolerance (relative tolerances only; 0 when unknown).
	RepetitionsNeeded int `json:"repetitions_needed,omitempty"`
	// FalseAlarms is how many of the A/A comparisons called this metric a
	// regression; Inconclusive how many could not decide.
	FalseAlarms  int `json:"false_alarms"`
	Inconclusive int `json:"inconclusive"`
}

// Calibrate analyses A/A results: results of one configuration measured
// without any change between them. gates gives each scenario's gates (nil:
// the ones recorded in the results); levels gives each family (gate counts
// by scenario) its level, as perfgate gate tests it (internal/gate's
// policy: gate.Calibrate).
func Calibrate(results []*result.Result, alpha float64, gates func(string) []config.Gate,
	levels func(alpha float64, families map[string]int) map[string]float64) (*Calibration, error) {
	if len(results) == 0 {
		return nil, fmt.Errorf("calibration needs at least one result")
	}
	if alpha == 0 {
		alpha = config.DefaultAlpha
	}
	cal := &Calibration{Alpha: alpha, Results: len(results)}
	o := Options{Alpha: alpha, OnInconclusive: config.InconclusivePass, Gates: gates}
	// The values are those the comparisons test: the last result's
	// estimator, as each comparison takes the candidate's.
	estimator, err := o.estimator(results[len(results)-1])
	if err != nil {
		return nil, err
	}
	o.Estimator = estimator

	// The A/A comparisons: every pair, or one result split in halves.
	type pair struct {
		base, cand *result.Result
		what       string
	}
	var pairs []pair
	if len(results) == 1 {
		first, second := halves(results[0])
		pairs = append(pairs, pair{first, second, "the two halves"})
		cal.Notes = append(cal.Notes, "one result: its first and second halves of repetitions were compared; several results (runs at different times) give a truer picture of run-to-run noise")
	}
	for i := range results {
		for j := i + 1; j < len(results); j++ {
			pairs = append(pairs, pair{results[i], results[j], fmt.Sprintf("results %d and %d", i+1, j+1)})
		}
	}

	// The gate families, as perfgate gate, compare and validate test them:
	// a first comparison of every pair says which gates each scenario's
	// family holds (a scenario may be in some results only); the
	// comparisons are then made at each scenario's share of alpha (alpha
	// over the scenarios with gates), Holm within it.
	family := map[string]int{}
	for _, p := range pairs {
		probe, err := Compare([]*result.Result{p.base}, p.cand, o)
		if err != nil {
			return nil, fmt.Errorf("A/A comparison of %s: %w", p.what, err)
		}
		for name, n := range FamilySizes(probe) {
			family[name] = max(family[name], n) // a scenario in several pairs: the largest
		}
	}
	o.Levels = levels(alpha, family)
	var verdicts []*Verdict
	for _, p := range pairs {
		v, err := Compare([]*result.Result{p.base}, p.cand, o)
		if err != nil {
			return nil, fmt.Errorf("A/A comparison of %s: %w", p.what, err)
		}
		verdicts = append(verdicts, v)
	}
	cal.Pairs = len(verdicts)

	// Every scenario, in the order of first appearance: one may be in
	// later results only.
	var scenarios []result.ScenarioResult
	seen := map[string]bool{}
	for _, r := range results {
		for _, s := range r.Scenarios {
			if !seen[s.Name] {
				seen[s.Name] = true
				scenarios = append(scenarios, s)
			}
		}
	}
	for _, s := range scenarios {
		cs := CalibrationScenario{Name: s.Name, Repetitions: math.MaxInt}
		var pooled []*result.ScenarioResult
		for _, r := range results {
			for k := range r.Scenarios {
				if r.Scenarios[k].Name == s.Name {
					pooled = append(pooled, &r.Scenarios[k])
					cs.Repetitions = min(cs.Repetitions, len(r.Scenarios[k].Repetitions))
				}
			}
		}
		if len(results) == 1 {
			cs.Repetitions = len(s.Repetitions) // what a gate with this config would have a side
		}
		gs, notGated := o.gatesOf(&s)
		for _, w := range notGated {
			cal.Notes = append(cal.Notes, "scenario "+s.Name+": "+w)
		}
		cs.Gates = family[s.Name]
		level := o.Levels[s.Name] / float64(max(1, cs.Gates))
		cs.Level = Num(level)
		for _, g := range gs {
			m, err := metric.Lookup(g.Metric)
			if err != nil {
				return nil, err
			}
			if m.PerStart {
				continue // one value per start: no noise between repetitions
			}
			all, err := pooledValues(pooled, m.Name, estimator)
			if err != nil {
				return nil, err
			}
			cm := CalibrationMetric{Metric: m.Name, Title: m.Title, Unit: m.Unit(), Tolerance: g.Tolerance.Text, N: len(all)}
			sorted := slices.Sorted(slices.Values(all))
			cm.Median = Num(stat.SortedMedian(sorted))
			cv := stat.CV(all)
			cm.CV = Num(cv)
			cm.MinDetectable = Num(stat.MinDetectable(cv, cs.Repetitions, cs.Repetitions, level, CalibrationPower))
			if g.Tolerance.Relative && g.Tolerance.Value > 0 && !math.IsNaN(cv) {
				for n := 2; n <= 200; n++ {
					if stat.MinDetectable(cv, n, n, level, CalibrationPower) <= g.Tolerance.Value {
						cm.RepetitionsNeeded = n
						break
					}
				}
			}
			for _, v := range verdicts {
				for _, vs := range v.Scenarios {
					if vs.Name != s.Name {
						continue
					}
					for _, vg := range vs.Gates {
						if vg.Metric != m.Name {
							continue
						}
						switch vg.Outcome {
						case stat.Regression:
							cm.FalseAlarms++
						case stat.Inconclusive:
							cm.Inconclusive++
						}
					}
				}
			}
			cs.Metrics = append(cs.Metrics, cm)
		}
		cal.Scenarios = append(cal.Scenarios, cs)
	}
	return cal, nil
}

// pooledValues is every repetition's value of a gated metric over the
// scenarios, as the comparisons test them (GateValues); when one of them
// kept no usable histogram, every one's as recorded, as Compare falls back.
func pooledValues(pooled []*result.ScenarioResult, name, estimator string) ([]float64, error) {
	var all []float64
	for _, ps := range pooled {
		v, err := GateValues(ps, name, estimator)
		if errors.Is(err, errNoHistogram) {
			return pooledValues(pooled, name, config.EstimatorSample)
		}
		if err != nil {
			return nil, err
		}
		all = append(all, v...)
	}
	return all, nil
}

// FamilySizes is the size of each scenario's gate family in v: the gates
// it tested (tail gates among them) and its quality gates; scenarios with
// none are left out. internal/gate's policy gives each its share of alpha.
func FamilySizes(v *Verdict) map[string]int {
	out := map[string]int{}
	for _, sc := range v.Scenarios {
		n := len(sc.Gates)
		for _, q := range sc.Quality {
			n += len(q.Gates)
		}
		if n > 0 {
			out[sc.Name] = n
		}
	}
	return out
}

// halves splits one result's repetitions (and a capacity search's samples)
// into a first-half and a second-half result, for an A/A comparison of a
// single run.
func halves(r *result.Result) (*result.Result, *result.Result) {
	a, b := *r, *r
	a.Scenarios, b.Scenarios = nil, nil
	for _, s := range r.Scenarios {
		mid := len(s.Repetitions) / 2
		sa, sb := s, s
		sa.Repetitions = s.Repetitions[:mid]
		sb.Repetitions = s.Repetitions[mid:]
		if s.Capacity != nil {
			// A capacity gate's samples are the search's, one per
			// repetition index: each half gets its half of them, not
			// the same ones (which would always pass).
			ca, cb := *s.Capacity, *s.Capacity
			m := len(s.Capacity.Samples) / 2
			ca.Samples, cb.Samples = s.Capacity.Samples[:m], s.Capacity.Samples[m:]
			sa.Capacity, sb.Capacity = &ca, &cb
		}
		a.Scenarios = append(a.Scenarios, sa)
		b.Scenarios = append(b.Scenarios, sb)
	}
	return &a, &b
}
