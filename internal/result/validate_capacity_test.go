package result

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capacityResult is a valid result of one capacity scenario: a bracketed
// search from 10 to 640 req/s whose probes at 80 held and 160 broke, of two
// repetitions each, and a sweep point beside it.
func capacityResult() *Result {
	rep := func(i int) Repetition {
		return Repetition{Index: i, Sent: 16, Completed: 16, RequestThroughput: 80, OutputThroughput: 1280, TokensFrom: "usage"}
	}
	probe := func(load float64, phase string, held bool, m float64) CapacityProbe {
		return CapacityProbe{Load: load, Phase: phase, Held: held, Margin: map[string]float64{"tpot.p99": m},
			Repetitions: []Repetition{rep(1), rep(2)}}
	}
	cost := 0.8
	return &Result{Schema: Schema, Scenarios: []ScenarioResult{
		{Name: "chat-capacity", Load: Load{Type: "poisson"}, Gates: []Gate{}, Repetitions: []Repetition{rep(1), rep(2)},
			Capacity: &Capacity{
				Search: CapacitySearch{Metric: "request_rate", SLO: map[string]float64{"tpot.p99": 3}, Min: 10, Max: 640, Start: 80,
					Resolution: 0.05, Rule: "every", Repetitions: 2, Budget: 8},
				Outcome: CapacityBracketed, Holds: 80, Breaks: 160, At: 0, RequestRate: 80, OutputThroughput: 1280, CostPerMTok: &cost,
				Probes:  []CapacityProbe{probe(80, "bracket", true, 0.5), probe(160, "bracket", false, 1.2)},
				Samples: []CapacitySample{{Repetition: 1, Load: 148, RequestRate: 148, OutputThroughput: 2368}, {Repetition: 2, Load: 150, RequestRate: 150, OutputThroughput: 2400}},
			}},
		{Name: "chat.rate-25", Load: Load{Type: "poisson", Rate: 25}, Gates: []Gate{}, Repetitions: []Repetition{rep(1)},
			Sweep: &SweepPoint{Of: "chat", Param: "rate", Value: 25, Index: 0, Points: 4}},
	}}
}

func TestValidateCapacity(t *testing.T) {
	require.NoError(t, capacityResult().Validate(), "the valid fixture")
	c := func(r *Result) *Capacity { return r.Scenarios[0].Capacity }
	cases := []struct {
		name   string
		change func(r *Result)
		want   string
	}{
		{"unknown outcome", func(r *Result) { c(r).Outcome = "guessed" }, `scenarios[0].capacity.outcome: "guessed", want one of`},
		{"infinite holds", func(r *Result) { c(r).Holds = math.Inf(1) }, "scenarios[0].capacity.holds: want a finite number >= 0, got +Inf"},
		{"breaks below holds", func(r *Result) { c(r).Breaks = 40 }, "scenarios[0].capacity.breaks: 40 is not above holds 80"},
		{"negative probe load", func(r *Result) { c(r).Probes[1].Load = -1 }, "scenarios[0].capacity.probes[1].load: want a finite number > 0, got -1"},
		{"probe outside the range", func(r *Result) { c(r).Probes[1].Load = 1000 }, "scenarios[0].capacity.probes[1].load: want from min (10) to max (640), got 1000"},
		{"at out of range", func(r *Result) { c(r).At = 2 }, "scenarios[0].capacity.at: want an index of probes (0 to 1), got 2"},
		{"more samples than repetitions", func(r *Result) {
			c(r).Samples = append(c(r).Samples, CapacitySample{Repetition: 2, Load: 1})
		}, "scenarios[0].capacity.samples: 3 samples for 2 repetitions a probe"},
		{"sample repetition out of range", func(r *Result) { c(r).Samples[1].Repetition = 3 }, "scenarios[0].capacity.samples[1].repetition: want from 1 to 2, got 3"},
		{"NaN sample", func(r *Result) { c(r).Samples[0].RequestRate = math.NaN() }, "scenarios[0].capacity.samples[0].request_rate: want a finite number >= 0, got NaN"},
		{"unknown censoring", func(r *Result) { c(r).Samples[0].Censored = "sideways" }, `scenarios[0].capacity.samples[0].censored: "sideways"`},
		{"duplicate sample", func(r *Result) { c(r).Samples[1].Repetition = 1 }, "scenarios[0].capacity.samples[1].repetition: repetition 1 has a sample already"},
		{"sample beyond the probes", func(r *Result) { c(r).Samples[1].Load = 5000 }, "scenarios[0].capacity.samples[1].load: want within the loads probed"},
		{"no samples", func(r *Result) { c(r).Samples = nil }, "scenarios[0].capacity.samples: none"},
		{"held past its SLO", func(r *Result) { c(r).Probes[0].Margin["tpot.p99"] = 1.5 }, "scenarios[0].capacity.probes[0].held: held with tpot.p99 at 1.5x its SLO"},
		{"held with a broken repetition", func(r *Result) { c(r).Probes[0].Broken = 1 }, "scenarios[0].capacity.probes[0].held: held with 1 broken repetitions"},
		{"broken past its repetitions", func(r *Result) { c(r).Probes[1].Broken = 3 }, "scenarios[0].capacity.probes[1].broken: want from 0 to 2 (its repetitions), got 3"},
		{"holds at no held probe", func(r *Result) { c(r).Probes[0].Held = false }, "scenarios[0].capacity.holds: 80 is the load of no probe that held"},
		{"below_min with a hold", func(r *Result) { c(r).Outcome = CapacityBelowMin }, "scenarios[0].capacity.outcome: below_min, but holds 80 and breaks 160 (want 0 and min 10)"},
		{"above_max not at max", func(r *Result) { c(r).Outcome = CapacityAboveMax }, "scenarios[0].capacity.outcome: above_max, but holds 80 and breaks 160"},
		{"client_limited that broke", func(r *Result) { c(r).Outcome = CapacityClientLimited }, "scenarios[0].capacity.outcome: client_limited, but breaks 160"},
		{"over the budget", func(r *Result) { c(r).Search.Budget = 1 }, "scenarios[0].capacity.probes: 2 probes, over the budget of 1"},
		{"no probes", func(r *Result) { c(r).Probes = nil }, "scenarios[0].capacity.probes: no probes"},
		{"start outside", func(r *Result) { c(r).Search.Start = 700 }, "scenarios[0].capacity.search.start: want from min (10) to max (640), got 700"},
		{"unknown rule", func(r *Result) { c(r).Search.Rule = "all" }, `scenarios[0].capacity.search.rule: "all", want one of [every bound]`},
		{"zero SLO", func(r *Result) { c(r).Search.SLO["tpot.p99"] = 0 }, "scenarios[0].capacity.search.slo_ms.tpot.p99: want a finite number > 0, got 0"},
		{"repetitions not the point's", func(r *Result) { r.Scenarios[0].Repetitions = r.Scenarios[0].Repetitions[:1] }, "scenarios[0].repetitions: 1 repetitions, but the capacity point (probes[0]) has 2"},
		{"a load beside the search", func(r *Result) { r.Scenarios[0].Load.Rate = 80 }, "scenarios[0].load: a capacity search's load is the shape alone"},
		{"probe repetition impossible", func(r *Result) { c(r).Probes[1].Repetitions[0].Completed = 99 }, "scenarios[0].capacity.probes[1].repetitions[0].completed: 99 completed of 16 sent"},
		{"negative cost", func(r *Result) { v := -1.0; c(r).CostPerMTok = &v }, "scenarios[0].capacity.cost_per_mtok: want a finite number >= 0, got -1"},
		{"sweep index past its points", func(r *Result) { r.Scenarios[1].Sweep.Index = 4 }, "scenarios[1].sweep.index: want from 0 to points-1 (3), got 4"},
		{"sweep value zero", func(r *Result) { r.Scenarios[1].Sweep.Value = 0 }, "scenarios[1].sweep.value: want a finite number > 0, got 0"},
		{"sweep param", func(r *Result) { r.Scenarios[1].Sweep.Param = "users" }, `scenarios[1].sweep.param: "users"`},
		{"sweep of nothing", func(r *Result) { r.Scenarios[1].Sweep.Of = "" }, "scenarios[1].sweep.of: missing"},
		{"too many sweep points", func(r *Result) { r.Scenarios[1].Sweep.Points = 100000 }, "scenarios[1].sweep.points: want from 1 to 256 points, got 100000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := capacityResult()
			tc.change(r)
			err := r.Validate()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A capacity result survives JSON, and its outcomes each validate with the
// bounds they describe.
func TestCapacityRoundTrip(t *testing.T) {
	r := capacityResult()
	data, err := json.Marshal(r)
	require.NoError(t, err)
	back, err := Decode(data, "r.json")
	require.NoError(t, err)
	assert.Equal(t, r.Scenarios[0].Capacity, back.Scenarios[0].Capacity)
	assert.Equal(t, r.Scenarios[1].Sweep, back.Scenarios[1].Sweep)

	below := capacityResult()
	bc := below.Scenarios[0].Capacity
	bc.Outcome, bc.Holds, bc.Breaks = CapacityBelowMin, 0, 10
	bc.Probes = []CapacityProbe{{Load: 10, Phase: "bracket", Margin: map[string]float64{"tpot.p99": 2}, Repetitions: bc.Probes[0].Repetitions}}
	for i := range bc.Samples {
		bc.Samples[i].Load, bc.Samples[i].Censored = 10, CensoredBelow
	}
	assert.NoError(t, below.Validate())
	above := capacityResult()
	ac := above.Scenarios[0].Capacity
	ac.Outcome, ac.Holds, ac.Breaks = CapacityAboveMax, 640, 0
	ac.Probes = []CapacityProbe{{Load: 640, Phase: "bracket", Held: true, Margin: map[string]float64{"tpot.p99": 0.5}, Repetitions: ac.Probes[0].Repetitions}}
	for i := range ac.Samples {
		ac.Samples[i].Load, ac.Samples[i].Censored = 640, CensoredAbove
	}
	assert.NoError(t, above.Validate())
}
