package compare

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// MaxLooks is the most looks a sequential gate takes (stat.MaxLooks).
const MaxLooks = stat.MaxLooks

// Looks returns the repetition counts at which a sequential gate with
// repetitions {min, max} compares: stat.Looks, which config's validation
// reads too.
func Looks(min, max int) []int { return stat.Looks(min, max) }

// Sequential is a sequential gate in progress: repetitions are added while a
// gate is inconclusive, and the false-regression rate is kept within Alpha
// however many looks are taken.
//
// The correction: each scenario gets a share of alpha (Share: alpha split
// evenly across the scenarios with gates, by internal/gate's Policy, which
// builds a Sequential), and spends it over its looks with the Pocock-type
// spending function alpha·ln(1+(e−1)·t), t = repetitions/max. A look tests at
// the alpha it spends (the increment since the previous look), with Holm
// across the scenario's gates, and its intervals are at the matching level.
// By the union bound the chance of any false regression (or of any interval
// missing, for a pass) over all looks is at most the alpha spent. A gate
// decided at a look keeps that decision and its evidence: later looks only
// decide the gates still open.
type Sequential struct {
	// Options are the comparison's options (gates, alpha, on_inconclusive).
	Options Options
	// Min and Max are the scenario's repetitions.
	Min, Max int
	// Share is each scenario's share of alpha, spent over its looks
	// (gate.Policy.Share: alpha over the scenarios with gates); 0 takes all
	// of Options.Alpha.
	Share float64

	looked  map[string]int
	levels  map[string]float64
	decided map[string]map[string]Gate
}

// IsLook reports whether a scenario with n repetitions is at a look.
func (s *Sequential) IsLook(n int) bool {
	for _, l := range Looks(s.Min, s.Max) {
		if l == n {
			return true
		}
	}
	return false
}

// Look compares a scenario measured so far (partial) with its baseline at
// a look, records the gates it decides, and returns the gates still
// undecided (by title) and the look's level. In an A/B (Options.AB set) the
// baseline is the base arm as measured so far: its scenario must hold as
// many rounds as partial.
func (s *Sequential) Look(base *result.Result, partial *result.ScenarioResult) (undecided []string, level float64, err error) {
	level = s.spend(partial)
	o := s.Options
	o.AllowMismatch = true // identities are checked on the final result
	o.Levels = map[string]float64{partial.Name: level}
	cand := &result.Result{Schema: result.Schema, Identity: base.Identity, Compare: nil, Scenarios: []result.ScenarioResult{*partial}}
	v, err := Compare([]*result.Result{base}, cand, o)
	if err != nil {
		return nil, level, err
	}
	s.freeze(v)
	for _, g := range s.apply(v).Scenarios[0].Gates {
		if g.Outcome == stat.Inconclusive {
			undecided = append(undecided, g.Title)
		}
	}
	return undecided, level, nil
}

// Final compares the whole result: each scenario at its last look (taking
// it now if the repetitions ended past the last one), with the gates decided
// at earlier looks keeping their decisions.
func (s *Sequential) Final(baselines []*result.Result, res *result.Result, allowMismatch bool) (*Verdict, error) {
	for i := range res.Scenarios {
		sc := &res.Scenarios[i]
		if _, b := find(baselines, sc.Name); b != nil && s.looked[sc.Name] != len(sc.Repetitions) {
			s.spend(sc)
		}
	}
	o := s.Options
	o.AllowMismatch = allowMismatch
	o.Detectable = true
	o.Levels = s.levels
	if o.Levels == nil {
		o.Levels = map[string]float64{}
	}
	v, err := Compare(baselines, res, o)
	if err != nil {
		return nil, err
	}
	s.freeze(v)
	return s.apply(v), nil
}

// FirstLevel is the level of the first look of a scenario: the alpha its
// share spends at repetitions.min (all of it when the repetitions are
// fixed). It records nothing.
func (s *Sequential) FirstLevel() float64 {
	share := s.share()
	first := Looks(s.Min, s.Max)[0]
	return stat.LookLevel(share, 0, float64(first)/float64(max(s.Max, first)))
}

// share is each scenario's share of alpha.
func (s *Sequential) share() float64 {
	if s.Share > 0 {
		return s.Share
	}
	return s.Options.Alpha
}

// spend records a look at a scenario's repetitions so far and returns its
// level. A capacity search is one look with all its samples (its
// repetitions are fixed, capacity.repetitions, whatever repetitions.max
// says), so it spends the scenario's whole share there.
func (s *Sequential) spend(sc *result.ScenarioResult) float64 {
	if s.looked == nil {
		s.looked, s.levels, s.decided = map[string]int{}, map[string]float64{}, map[string]map[string]Gate{}
	}
	name, n := sc.Name, len(sc.Repetitions)
	share := s.share()
	maxN := float64(max(s.Max, n))
	if sc.Capacity != nil {
		maxN = float64(max(1, n))
	}
	level := stat.LookLevel(share, min(1, float64(s.looked[name])/maxN), float64(n)/maxN)
	s.looked[name], s.levels[name] = n, level
	return level
}

// freeze keeps the first decision of every gate that v decides.
func (s *Sequential) freeze(v *Verdict) {
	unit := "repetitions"
	if v.AB != nil {
		unit = "rounds"
	}
	for _, sc := range v.Scenarios {
		for _, g := range sc.Gates {
			if g.Outcome == stat.Inconclusive {
				continue
			}
			if s.decided[sc.Name] == nil {
				s.decided[sc.Name] = map[string]Gate{}
			}
			if _, ok := s.decided[sc.Name][g.Metric]; !ok {
				g.Reason = fmt.Sprintf("%s (decided at %d %s)", g.Reason, sc.CandidateN, unit)
				s.decided[sc.Name][g.Metric] = g
			}
		}
	}
}

// apply replaces the gates of v decided at earlier looks by those
// decisions, and recomputes the outcome.
func (s *Sequential) apply(v *Verdict) *Verdict {
	v.Sequential = true
	for i := range v.Scenarios {
		sc := &v.Scenarios[i]
		for j, g := range sc.Gates {
			if d, ok := s.decided[sc.Name][g.Metric]; ok {
				d.Detectable = g.Detectable // the final comparison's, at every sample measured
				sc.Gates[j] = d
			}
		}
		sortGates(sc.Gates)
	}
	v.Outcome = overall(v.Scenarios)
	return v
}
