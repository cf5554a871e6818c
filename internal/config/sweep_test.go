package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

const synth = "    synth: {requests: 64, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}\n"

// scenarioYAML is a config of one scenario named chat with the given extra
// lines (indented as scenario keys).
func scenarioYAML(lines ...string) string {
	return "scenarios:\n  - name: chat\n" + synth + strings.Join(lines, "\n") + "\n"
}

func TestSweepDecoding(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       Load
	}{
		{"rates", scenarioYAML("    load: {type: poisson, rate: [1, 2.5, 1e3]}"),
			Load{Type: LoadPoisson, Sweep: []float64{1, 2.5, 1000}, SweepParam: SweepRate}},
		{"users", scenarioYAML("    load: {concurrency: [1, 4, 16]}"),
			Load{Type: LoadClosed, Sweep: []float64{1, 4, 16}, SweepParam: SweepConcurrency}},
		{"block list", scenarioYAML("    load:\n      type: gamma\n      burstiness: 0.5\n      rate:\n        - 2\n        - 4"),
			Load{Type: LoadGamma, Burstiness: 0.5, Sweep: []float64{2, 4}, SweepParam: SweepRate}},
		{"merged", "x-l: &l {type: poisson, rate: [1, 2]}\n" + scenarioYAML("    load: {<<: *l, max_in_flight: 8}"),
			Load{Type: LoadPoisson, MaxInFlight: 8, Sweep: []float64{1, 2}, SweepParam: SweepRate}},
		{"scalar rate", scenarioYAML("    load: {type: poisson, rate: 1e3}"), Load{Type: LoadPoisson, Rate: 1000}},
		{"scalar users", scenarioYAML("    load: {concurrency: 4}"), Load{Type: LoadClosed, Concurrency: 4}},
	} {
		c, err := Parse([]byte(tc.yaml), "p.yaml")
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, c.Scenarios[0].Load, "Parse(%s).Scenarios[0].Load", tc.name)
	}
}

func TestSweepDecodingErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{scenarioYAML("    load: {type: poisson, rate: [1, x, 4]}"), `p.yaml:4:37: scenarios[0].load.rate[1]: want a number, got "x"`},
		{scenarioYAML("    load: {concurrency: [1, 2.5]}"), `p.yaml:4:29: scenarios[0].load.concurrency[1]: want an integer, got 2.5`},
		{scenarioYAML("    load: {type: poisson, rate: [1, [2]]}"), `p.yaml:4:37: scenarios[0].load.rate[1]: want a number, got a list`},
		{scenarioYAML("    load: {type: poisson, rate: {a: 1}}"), `p.yaml:4:34: scenarios[0].load.rate: want a number, got a mapping`},
	} {
		_, err := Parse([]byte(tc.yaml), "p.yaml")
		require.Error(t, err, tc.yaml)
		assert.Equal(t, tc.want, err.Error(), "Parse(%q)", tc.yaml)
	}
}

// The hashes of the example configs before sweeps and capacity existed: a
// config that uses neither keeps its hash, so committed baselines still
// match. testdata/perfgate-hash.yaml is examples/perfgate.yaml as it was
// then (the example has since changed its gates, and so its hash).
func TestHashWithoutSweepUnchanged(t *testing.T) {
	for file, want := range map[string]string{
		"../../examples/demo.yaml":    "sha256:57a54bd5b562152516c56535753b9046760f2e7555b153facd0f1a71afe13acf",
		"testdata/perfgate-hash.yaml": "sha256:5733bf07d1077efaae0e8634598b275460fc580dc9df58f31725c33e6c766eee",
	} {
		c, err := LoadFile(file)
		require.NoError(t, err)
		assert.Equal(t, want, c.Hash(), "LoadFile(%s).Hash()", file)
	}
	// A sweep hashes its values: two sweeps differ, and a sweep is not its
	// first point.
	a, err := Parse([]byte(scenarioYAML("    load: {type: poisson, rate: [1, 2]}")), "p.yaml")
	require.NoError(t, err)
	b, err := Parse([]byte(scenarioYAML("    load: {type: poisson, rate: [1, 3]}")), "p.yaml")
	require.NoError(t, err)
	one, err := Parse([]byte(scenarioYAML("    load: {type: poisson, rate: 1}")), "p.yaml")
	require.NoError(t, err)
	assert.NotEqual(t, a.Hash(), b.Hash())
	assert.NotEqual(t, a.Hash(), one.Hash())
}

func TestPointName(t *testing.T) {
	for _, tc := range []struct {
		param string
		v     float64
		want  string
	}{
		{SweepRate, 25, "chat.rate-25"},
		{SweepRate, 0.5, "chat.rate-0.5"},
		{SweepRate, 0.001, "chat.rate-0.001"},
		{SweepRate, 100000, "chat.rate-100000"},
		{SweepConcurrency, 16, "chat.concurrency-16"},
	} {
		got := PointName("chat", tc.param, tc.v)
		assert.Equal(t, tc.want, got, "PointName(chat, %s, %g)", tc.param, tc.v)
		assert.Regexp(t, namePattern, got)
	}
}

func TestMeasured(t *testing.T) {
	c, err := Parse([]byte(`scenarios:
  - name: chat
`+synth+`    load: {type: poisson, rate: [0.5, 25]}
    gates: {ttft.p99: +10%}
  - name: one
`+synth+`    load: {concurrency: 2}
  - name: users
`+synth+`    load: {concurrency: [1, 4, 16]}
`), "p.yaml")
	require.NoError(t, err)
	m := c.Measured()
	var names []string
	for _, s := range m {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"chat.rate-0.5", "chat.rate-25", "one", "users.concurrency-1", "users.concurrency-4", "users.concurrency-16"}, names)
	assert.Equal(t, Load{Type: LoadPoisson, Rate: 25}, m[1].Load)
	assert.Equal(t, &SweepPoint{Of: "chat", Param: SweepRate, Value: 25, Index: 1, Points: 2}, m[1].Point)
	assert.Equal(t, Load{Type: LoadClosed, Concurrency: 16}, m[5].Load)
	assert.Nil(t, m[2].Point, "an ordinary scenario is no point")
	assert.Equal(t, c.Scenarios[1], m[2])
	// Expanding leaves the scenarios as written (and hashed) alone.
	assert.Equal(t, []float64{0.5, 25}, c.Scenarios[0].Load.Sweep)
	m[0].Gates["x"] = "y"
	assert.NotContains(t, c.Scenarios[0].Gates, "x", "a point's gates are a copy")

	s, ok := c.ScenarioNamed("users.concurrency-4")
	require.True(t, ok)
	assert.Equal(t, 4, s.Load.Concurrency)
	s, ok = c.ScenarioNamed("one")
	assert.True(t, ok)
	assert.Equal(t, "one", s.Name)
	_, ok = c.ScenarioNamed("chat")
	assert.False(t, ok, "ScenarioNamed(chat): a sweep is measured as its points")
	_, ok = c.ScenarioNamed("nope")
	assert.False(t, ok)
	assert.Len(t, c.Points("chat"), 2)
	assert.Len(t, c.Points("chat.rate-25"), 1)
	assert.Empty(t, c.Points("nope"))

	assert.Equal(t, &result.SweepPoint{Of: "chat", Param: SweepRate, Value: 25, Index: 1, Points: 2}, m[1].Point.Result())
	var none *SweepPoint
	assert.Nil(t, none.Result())
}

// The default budget is the search's exact worst case from its own start:
// from the geometric mean of 10 and 640 it is 8 probes; from a start at
// min the bracket may double six times first, and a budget of 8 is warned.
func TestCapacityDefaultBudgetFollowsStart(t *testing.T) {
	parse := func(extra string) *Config {
		t.Helper()
		c, err := Parse([]byte(`scenarios:
  - name: cap
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: poisson}
    capacity: {slo: {tpot.p99: 50ms}, min: 10, max: 640`+extra+`}
`), "perfgate.yaml")
		require.NoError(t, err)
		return c
	}
	assert.Equal(t, 8, parse("").Scenarios[0].Capacity.Probes, "from the geometric mean")
	assert.Equal(t, 11, parse(", start: 10").Scenarios[0].Capacity.Probes, "from min: 7 to bracket, 4 to bisect")
	c := parse(", start: 10, probes: 8")
	require.Len(t, c.Warnings, 1)
	assert.Contains(t, c.Warnings[0].Error(), "8 probes may not reach the resolution")
	assert.Contains(t, c.Warnings[0].Error(), "may need 11")
}

func TestCapacityDefaults(t *testing.T) {
	c, err := Parse([]byte(`repetitions: {min: 4, max: 7}
scenarios:
  - name: open
`+synth+`    load: {type: poisson}
    duration: 5s
    capacity: {slo: {tpot.p99: 3ms}, min: 10, max: 640}
  - name: users
`+synth+`    load: {type: closed}
    capacity: {slo: {ttft.p99: 500ms}, min: 1, max: 10, holds: bound}
`), "p.yaml")
	require.NoError(t, err)
	assert.Empty(t, c.Warnings)
	assert.Equal(t, Capacity{SLO: map[string]time.Duration{"tpot.p99": 3 * time.Millisecond},
		Metric: CapacityRequestRate, Min: 10, Max: 640, Start: 80, Resolution: 0.05, Holds: HoldsEvery,
		Repetitions: 7, Probes: 8}, *c.Scenarios[0].Capacity)
	assert.Equal(t, Capacity{SLO: map[string]time.Duration{"ttft.p99": 500 * time.Millisecond},
		Metric: CapacityConcurrency, Min: 1, Max: 10, Start: 3, Resolution: 0.05, Holds: HoldsBound,
		Confidence: 0.95, Repetitions: 7, Probes: CapacityWorstCase(1, 10, 0, 0.05, true)}, *c.Scenarios[1].Capacity)
	assert.Equal(t, []Scenario{c.Scenarios[0], c.Scenarios[1]}, c.Measured(), "a capacity scenario is measured as it is")

	assert.Equal(t, result.CapacitySearch{Metric: CapacityRequestRate, SLO: map[string]float64{"tpot.p99": 3},
		Min: 10, Max: 640, Start: 80, Resolution: 0.05, Rule: HoldsEvery, Repetitions: 7, Budget: 8},
		c.Scenarios[0].Capacity.Result())
	assert.Equal(t, 0.95, c.Scenarios[1].Capacity.Result().Confidence)

	// Stated values are kept.
	c, err = Parse([]byte(scenarioYAML("    load: {type: gamma}", "    duration: 5s",
		"    capacity: {slo: {e2e.mean: 2s}, min: 1, max: 100, start: 50, resolution: 0.1, repetitions: 5, probes: 12}")), "p.yaml")
	require.NoError(t, err)
	got := *c.Scenarios[0].Capacity
	assert.Equal(t, []float64{50, 0.1}, []float64{got.Start, got.Resolution})
	assert.Equal(t, []int{5, 12}, []int{got.Repetitions, got.Probes})
}

// capBase is a valid capacity scenario's capacity section, as flow mapping
// entries a case can extend or override (a later key wins is not YAML: each
// case writes the whole mapping).
func capacityYAML(load, capacity string, more ...string) string {
	return scenarioYAML(append([]string{"    load: " + load, "    duration: 5s", "    capacity: " + capacity}, more...)...)
}

// TestSweepAndCapacityMessages checks each rule's message, with its line.
func TestSweepAndCapacityMessages(t *testing.T) {
	const ok = "{slo: {tpot.p99: 3ms}, min: 10, max: 640}"
	for _, tc := range []struct{ yaml, want string }{
		{scenarioYAML("    load: {type: poisson, rate: [1]}"),
			"p.yaml:4:27: scenarios[0].load.rate: a sweep needs at least 2 values, got 1 (write a number for one rate)"},
		{scenarioYAML("    load: {concurrency: []}"),
			"p.yaml:4:12: scenarios[0].load.concurrency: a sweep needs at least 2 values, got 0 (write a number for one concurrency)"},
		{scenarioYAML("    load: {type: poisson, rate: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}"),
			"p.yaml:4:27: scenarios[0].load.rate: at most 16 points in a sweep, got 20"},
		{scenarioYAML("    load: {type: poisson, rate: [1, 8, 4]}"),
			"p.yaml:4:40: scenarios[0].load.rate[2]: the sweep's values must increase, got 4 after 8"},
		{scenarioYAML("    load: {type: poisson, rate: [1, 1]}"),
			"p.yaml:4:37: scenarios[0].load.rate[1]: the sweep's values must increase, got 1 after 1"},
		{scenarioYAML("    load: {type: poisson, rate: [1, 0]}"),
			"p.yaml:4:37: scenarios[0].load.rate[1]: must be from 0.001 to 100000 requests per second, got 0"},
		{scenarioYAML("    load: {concurrency: [0, 4]}"),
			"p.yaml:4:26: scenarios[0].load.concurrency[0]: must be from 1 to 10000 users, got 0"},
		{scenarioYAML("    load: {type: closed, rate: [1, 2]}"),
			"p.yaml:4:5: scenarios[0].load.concurrency: required for a closed load: the number of concurrent users (1 to 10000)\n" +
				"p.yaml:4:26: scenarios[0].load.rate: only for poisson, gamma and step loads, and this load is closed"},
		{scenarioYAML("    load: {type: poisson, rate: [4, 8]}") + "  - name: chat.rate-4\n" + synth + "    load: {concurrency: 1}\n",
			"p.yaml:2:11: scenarios[0].name: point chat.rate-4 of this sweep has the name of scenarios[1]"},
		{"scenarios:\n  - name: " + strings.Repeat("c", 60) + "\n" + synth + "    load: {type: poisson, rate: [4, 8]}\n",
			"p.yaml:2:11: scenarios[0].name: point " + strings.Repeat("c", 60) + ".rate-4 of this sweep must be at most 64 characters (it titles reports and names a baseline file), got 67"},

		{capacityYAML("{type: poisson, rate: [1, 2]}", ok),
			"p.yaml:4:27: scenarios[0].load.rate: a scenario sweeps its load or searches its capacity, not both"},
		{capacityYAML("{type: poisson, rate: 5}", ok),
			"p.yaml:4:33: scenarios[0].load.rate: the capacity search sets the rate: remove it (capacity.min and capacity.max bound the search)"},
		{capacityYAML("{type: closed, concurrency: 5}", "{slo: {tpot.p99: 3ms}, min: 1, max: 64}"),
			"p.yaml:4:39: scenarios[0].load.concurrency: the capacity search sets the concurrency: remove it (capacity.min and capacity.max bound the search)"},
		{"scenarios:\n  - name: chat\n    workload: sweep_test.go\n    load: {type: trace}\n    capacity: " + ok + "\n",
			"p.yaml:4:18: scenarios[0].load.type: a trace replays its own arrival times; a capacity search needs poisson, gamma or closed"},
		{capacityYAML("{type: poisson}", "{min: 10, max: 640}"),
			"p.yaml:6:5: scenarios[0].capacity.slo: required: at least one latency objective, e.g. {ttft.p99: 500ms}"},
		{capacityYAML("{type: poisson}", "{slo: {goodput: 3ms}, min: 10, max: 640}"),
			"p.yaml:6:31: scenarios[0].capacity.slo.goodput: goodput is not a latency statistic; capacity SLOs bound ttft, tpot, itl or e2e (p50 ... p99.9, mean)"},
		{capacityYAML("{type: poisson}", "{slo: {cold_start: 3ms}, min: 10, max: 640}"),
			"p.yaml:6:34: scenarios[0].capacity.slo.cold_start: cold_start is not a latency statistic; capacity SLOs bound ttft, tpot, itl or e2e (p50 ... p99.9, mean)"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 0s}, min: 10, max: 640}"),
			"p.yaml:6:32: scenarios[0].capacity.slo.tpot.p99: must be from 1µs to 1h, got 0s"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, metric: rps, min: 10, max: 640}"),
			`p.yaml:6:46: scenarios[0].capacity.metric: must be request_rate or concurrency, got "rps"`},
		{capacityYAML("{type: closed}", "{slo: {tpot.p99: 3ms}, metric: request_rate, min: 1, max: 64}"),
			"p.yaml:6:46: scenarios[0].capacity.metric: request_rate searches the offered rate of an open loop, and load.type is closed: use load.type poisson or gamma, or capacity.metric concurrency"},
		{capacityYAML("{type: gamma}", "{slo: {tpot.p99: 3ms}, metric: concurrency, min: 1, max: 64}"),
			"p.yaml:6:46: scenarios[0].capacity.metric: concurrency searches the number of closed-loop users, and load.type is gamma: use load.type closed, or capacity.metric request_rate"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, max: 640}"),
			"p.yaml:6:5: scenarios[0].capacity.min: required: the lowest load to probe (requests per second)"},
		{capacityYAML("{type: closed}", "{slo: {tpot.p99: 3ms}, min: 1}"),
			"p.yaml:6:5: scenarios[0].capacity.max: required: the highest load to probe (users)"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 10, max: 8}"),
			"p.yaml:6:52: scenarios[0].capacity.max: must be more than min (10), got 8"},
		{capacityYAML("{type: closed}", "{slo: {tpot.p99: 3ms}, min: 2.5, max: 8}"),
			"p.yaml:6:43: scenarios[0].capacity.min: concurrency is a number of users: want an integer, got 2.5"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 0, max: 8}"),
			"p.yaml:6:43: scenarios[0].capacity.min: must be from 0.001 to 100000 requests per second, got 0"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 10, max: 640, start: 700}"),
			"p.yaml:6:64: scenarios[0].capacity.start: must be from min (10) to max (640), got 700"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 10, max: 640, resolution: 0}"),
			"p.yaml:6:69: scenarios[0].capacity.resolution: must be from 0.01 to 1 (a fraction: 0.05 stops at an interval 5% wide), got 0"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 10, max: 640, holds: all}"),
			`p.yaml:6:64: scenarios[0].capacity.holds: must be every or bound, got "all"`},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 10, max: 640, confidence: 0.9}"),
			"p.yaml:6:69: scenarios[0].capacity.confidence: only for holds: bound"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 10, max: 640, holds: bound, confidence: 1}"),
			"p.yaml:6:83: scenarios[0].capacity.confidence: must be from 0.5 to 0.999, got 1"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 10, max: 640, holds: bound, repetitions: 2}"),
			"p.yaml:6:84: scenarios[0].capacity.repetitions: holds: bound needs at least 3 repetitions a probe (a t bound on 2 has one degree of freedom), got 2"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 10, max: 640, repetitions: 0}"),
			"p.yaml:6:70: scenarios[0].capacity.repetitions: must be from 1 to 1000, got 0"},
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 10, max: 640, probes: 1}"),
			"p.yaml:6:65: scenarios[0].capacity.probes: must be from 2 to 64, got 1"},
		{capacityYAML("{type: poisson}", ok, "    gates: {ttft.p99: +10%}"),
			"p.yaml:7:23: scenarios[0].gates.ttft.p99: each side of a capacity scenario is measured at its own capacity, so ttft.p99 would compare different loads: gate capacity or capacity_tokens here, and latency in a scenario at one load"},
		{scenarioYAML("    load: {concurrency: 2}", "    gates: {capacity: -5%}"),
			"p.yaml:5:23: scenarios[0].gates.capacity: capacity comes from a capacity search, and this scenario has no capacity section"},
		{"quality: {suites: [sweep_test.go]}\n" + scenarioYAML("    load: {type: poisson, rate: [1, 2]}"),
			"p.yaml:1:1: quality: the first scenario, chat, sweeps its load: set quality.scenario"},
		{"quality: {suites: [sweep_test.go], scenario: chat}\n" + capacityYAML("{type: poisson}", ok),
			"p.yaml:1:46: quality.scenario: chat searches its capacity: answer eval items in a scenario at one load"},
	} {
		_, err := Parse([]byte(tc.yaml), "p.yaml")
		require.Error(t, err, "Parse(%q)", tc.yaml)
		assert.Equal(t, tc.want, err.Error(), "Parse(%q)", tc.yaml)
	}
}

func TestSweepAndCapacityWarnings(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{capacityYAML("{type: poisson}", "{slo: {tpot.p99: 3ms}, min: 10, max: 640, probes: 6}"),
			"p.yaml:6:65: scenarios[0].capacity.probes: 6 probes may not reach the resolution: from 10 to 640 at 5% the search may need 8 (it reports the interval it reached)"},
		{scenarioYAML("    load: {type: poisson}", "    requests: 200", "    capacity: {slo: {tpot.p99: 3ms}, min: 0.5, max: 64}"),
			"p.yaml:2:3: scenarios[0].duration: a probe repetition at the lowest load takes 400s (requests 200 at 0.5 req/s): set duration to cap it"},
	} {
		c, err := Parse([]byte(tc.yaml), "p.yaml")
		require.NoError(t, err, "Parse(%q)", tc.yaml)
		var got []string
		for _, w := range c.Warnings {
			got = append(got, w.Error())
		}
		assert.Equal(t, []string{tc.want}, got, "Parse(%q).Warnings", tc.yaml)
	}
}

// A config built in code is checked by the same rules.
func TestValidateSweepInCode(t *testing.T) {
	c := Defaults()
	c.Scenarios = []Scenario{{Name: "chat", Workload: "sweep_test.go",
		Load: Load{Type: LoadClosed, Sweep: []float64{1, 2.5}, SweepParam: SweepConcurrency}, MaxErrorRate: 0.05}}
	c.Dir = "."
	err := c.Validate()
	var errs *Errors
	require.True(t, errors.As(err, &errs), "Validate() = %v", err)
	assert.Equal(t, "scenarios[0].load.concurrency[1]: want an integer, got 2.5", errs.Error())
}

func TestGatesOfSweepsAndCapacity(t *testing.T) {
	c, err := Parse([]byte(`repetitions: 8
gates: {ttft.p99: +20%, capacity_tokens: -10%}
scenarios:
  - name: chat
`+synth+`    load: {type: poisson, rate: [1, 2]}
  - name: gated
`+synth+`    load: {type: poisson, rate: [1, 2]}
    gates: {tpot.p99: +10%}
  - name: cap
`+synth+`    load: {type: poisson}
    duration: 5s
    capacity: {slo: {tpot.p99: 3ms}, min: 10, max: 640}
  - name: capoff
`+synth+`    load: {type: poisson}
    duration: 5s
    capacity: {slo: {tpot.p99: 3ms}, min: 10, max: 640}
    gates: {capacity: off, ttft.p99: off}
  - name: plain
`+synth+`    load: {concurrency: 2}
`), "p.yaml")
	require.NoError(t, err)
	of := func(name string) map[string]string {
		s, ok := c.ScenarioNamed(name)
		require.True(t, ok, name)
		m := map[string]string{}
		for _, g := range c.GatesOf(s) {
			m[g.Metric] = g.Tolerance.Text
		}
		return m
	}
	assert.Empty(t, of("chat.rate-1"), "a point has no gates by default")
	assert.NotNil(t, c.GatesOf(c.Measured()[0]), "no gates is an empty list, not nil")
	assert.Equal(t, map[string]string{"tpot.p99": "+10%"}, of("gated.rate-2"))
	assert.Equal(t, map[string]string{"capacity": "-5%", "capacity_tokens": "-10%"}, of("cap"))
	assert.Equal(t, map[string]string{"capacity_tokens": "-10%"}, of("capoff"))
	plain := of("plain")
	assert.Equal(t, "+20%", plain["ttft.p99"])
	assert.NotContains(t, plain, "capacity_tokens", "a top-level capacity gate is not an ordinary scenario's")
	assert.Contains(t, plain, "goodput")
}

// A point of a sweep is a scenario at one load: it may carry the suites.
func TestQualityScenarioMayBeAPoint(t *testing.T) {
	c, err := Parse([]byte("quality: {suites: [sweep_test.go], scenario: chat.rate-2}\n"+scenarioYAML("    load: {type: poisson, rate: [1, 2]}")), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, "chat.rate-2", c.QualityScenario())
	_, err = Parse([]byte("quality: {suites: [sweep_test.go], scenario: chat.rate-3}\n"+scenarioYAML("    load: {type: poisson, rate: [1, 2]}")), "p.yaml")
	assert.EqualError(t, err, `p.yaml:1:46: quality.scenario: no scenario is named "chat.rate-3"`)
}
