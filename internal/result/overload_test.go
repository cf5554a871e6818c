package result

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An overload record that cannot be true is refused, naming its field; a
// sound one reads back.
func TestValidateOverload(t *testing.T) {
	good := map[string]any{"requests": 240, "offered_rate": 12.0, "served_rate": 8.6, "backlog_s": 9.1,
		"ttft_first_ms": 970.0, "ttft_last_ms": 17802.0, "in_flight_first": 9.0, "in_flight_last": 52.0,
		"trend_p": 1e-12, "overloaded": true}
	cases := []struct {
		field string
		value any
		want  string
	}{
		{"served_rate", -8.6, "scenarios[0].repetitions[0].overload.served_rate: want a finite number >= 0, got -8.6"},
		{"trend_p", 1.5, "scenarios[0].repetitions[0].overload.trend_p: want a fraction from 0 to 1, got 1.5"},
		{"requests", -1, "scenarios[0].repetitions[0].overload.requests: want a count >= 0, got -1"},
		{"in_flight_last", -3.0, "scenarios[0].repetitions[0].overload.in_flight_last: want a finite number >= 0, got -3"},
	}
	decode := func(change func(m map[string]any)) error {
		m := minimal(t)
		o := map[string]any{}
		for k, v := range good {
			o[k] = v
		}
		rep0(m)["overload"] = o
		change(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		_, err = Decode(b, "r.json")
		return err
	}
	require.NoError(t, decode(func(map[string]any) {}))
	for _, c := range cases {
		err := decode(func(m map[string]any) { rep0(m)["overload"].(map[string]any)[c.field] = c.value })
		require.Error(t, err, c.field)
		assert.True(t, errors.Is(err, ErrInvalid))
		assert.Contains(t, err.Error(), c.want)
	}
	err := decode(func(m map[string]any) {
		m["scenarios"].([]any)[0].(map[string]any)["load"] = map[string]any{"type": "poisson", "overload": "sometimes"}
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `scenarios[0].load.overload: want measure or nothing, got "sometimes"`)
}

// A scenario is overloaded when at least half its judged repetitions are;
// declared, it does not fail the run; a capacity search is never.
func TestScenarioOverload(t *testing.T) {
	rep := func(over bool, offered, served float64) Repetition {
		return Repetition{Overload: &Overload{Overloaded: over, OfferedRate: offered, ServedRate: served}}
	}
	s := ScenarioResult{Name: "chat", Repetitions: []Repetition{rep(true, 12.05, 8.61), rep(true, 12, 8.6), rep(true, 11.9, 8.7)}}
	v := s.Overload()
	assert.True(t, v.Failed())
	assert.Equal(t, "overloaded", v.Label())
	assert.Equal(t, "offered 12.0 req/s, served 8.6 req/s; the queue grew through every repetition", v.Sentence())
	r := &Result{Scenarios: []ScenarioResult{s}}
	var oe *OverloadError
	require.ErrorAs(t, r.CheckOverload(), &oe)
	assert.Contains(t, oe.Error(), "scenario chat: offered 12.0 req/s, served 8.6 req/s; the queue grew through every repetition")

	s.Load.Overload = OverloadMeasure
	v = s.Overload()
	assert.False(t, v.Failed())
	assert.Equal(t, "overloaded (declared)", v.Label())
	assert.NoError(t, (&Result{Scenarios: []ScenarioResult{s}}).CheckOverload())

	// One repetition of four fell behind: noise at the edge, not overload.
	s = ScenarioResult{Name: "edge", Repetitions: []Repetition{rep(true, 12, 10), rep(false, 12, 12), rep(false, 12, 12), rep(false, 12, 12), {}}}
	v = s.Overload()
	assert.Equal(t, 4, v.Judged)
	assert.False(t, v.Any())
	assert.Empty(t, v.Label())
	s.Repetitions[1].Overload.Overloaded = true
	assert.Equal(t, "offered 12.0 req/s, served 11.0 req/s; the queue grew in 2 of 4 repetitions", s.Overload().Sentence())

	s.Capacity = &Capacity{}
	assert.False(t, s.Overload().Any(), "a capacity search judges its probes itself")
}

// The warm-up's evidence counts as one more judged vote: an overload found
// in warm-up fails the run even when the repetitions were too short for
// the detector, and tips a half.
func TestScenarioOverloadFromWarmup(t *testing.T) {
	warm := &Warmup{Method: "windows", Overload: &Overload{Requests: 400, Overloaded: true, OfferedRate: 12, ServedRate: 8.6}}
	s := ScenarioResult{Name: "chat", Warmup: warm, Repetitions: []Repetition{{}, {}}}
	v := s.Overload()
	assert.True(t, v.Failed())
	assert.Equal(t, "offered 12.0 req/s, served 8.6 req/s; the queue grew through warm-up (the repetitions were too short to judge)", v.Sentence())
	require.Error(t, (&Result{Scenarios: []ScenarioResult{s}}).CheckOverload())

	rep := func(over bool) Repetition {
		return Repetition{Overload: &Overload{Overloaded: over, OfferedRate: 12, ServedRate: 8.6}}
	}
	s.Repetitions = []Repetition{rep(true), rep(false), rep(false)}
	v = s.Overload()
	assert.True(t, v.Any(), "1 of 3 and the warm-up: 2 of 4")
	assert.Contains(t, v.Sentence(), "the queue grew through warm-up and in 1 of 3 repetitions")
	s.Repetitions = []Repetition{rep(false), rep(false), rep(false)}
	assert.False(t, s.Overload().Any(), "the repetitions kept up: 1 of 4")

	warm.Overload.Overloaded = false
	s.Repetitions = nil
	assert.False(t, s.Overload().Any(), "evidence that the server kept up")
}
