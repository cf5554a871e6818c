package compare

import "github.com/perfgate/perfgate/internal/result"

// PerScenario compares candidate with the baselines as perfgate gate tests
// a finished run with a fixed repetition count, and as perfgate validate
// and compare --aa count: alpha is split evenly across the scenarios that
// have gates (Bonferroni), and each scenario's gates (latency, tail and its
// suites' quality gates) are one family under Holm at the scenario's share.
// A first comparison finds which scenarios have gates; o.Levels is
// replaced. The verdict is not marked Sequential: it took no looks.
func PerScenario(baselines []*result.Result, candidate *result.Result, o Options) (*Verdict, error) {
	o.Levels = nil
	probe, err := Compare(baselines, candidate, o)
	if err != nil {
		return nil, err
	}
	o.Alpha = probe.Alpha // resolved from the candidate when unset
	o.Levels = ScenarioLevels(o.Alpha, familySizes(probe))
	v, err := Compare(baselines, candidate, o)
	if err != nil {
		return nil, err
	}
	v.Sequential = false
	return v, nil
}

// ScenarioLevels gives each scenario of families (gate counts by scenario,
// scenarios without gates left out) its share of alpha: alpha over how
// many there are.
func ScenarioLevels(alpha float64, families map[string]int) map[string]float64 {
	share := alpha / float64(max(1, len(families)))
	out := make(map[string]float64, len(families))
	for name := range families {
		out[name] = share
	}
	return out
}

// mergeFamilies adds the families of v to into: a scenario first seen in v
// gets its size, one seen before keeps the larger.
func mergeFamilies(into map[string]int, v *Verdict) {
	for name, n := range familySizes(v) {
		into[name] = max(into[name], n)
	}
}
