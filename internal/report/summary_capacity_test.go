package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// capacityScenario is a capacity scenario's result: a request_rate search
// of 8 probes that found [148, 155), two repetitions at 148 req/s.
func capacityScenario() result.ScenarioResult {
	cost := 0.8321
	reps := []result.Repetition{rep(1, 30), rep(2, 31)}
	return result.ScenarioResult{Name: "chat-capacity", Workload: "synth", WorkloadHash: "sha256:0123456789abcdef",
		Load: result.Load{Type: config.LoadPoisson}, Repetitions: reps,
		Capacity: &result.Capacity{
			Search:  result.CapacitySearch{Metric: config.CapacityRequestRate, Min: 10, Max: 640, Start: 80, Resolution: 0.05, Rule: "every", Repetitions: 2, Budget: 8},
			Outcome: result.CapacityBracketed, Holds: 148.2, Breaks: 155.4, RequestRate: 147, OutputThroughput: 2370.4, CostPerMTok: &cost,
			Probes:   make([]result.CapacityProbe, 8),
			Samples:  []result.CapacitySample{{Repetition: 1, Load: 150}, {Repetition: 2, Load: 153, Censored: result.CensoredAbove}},
			Warnings: []string{"non-monotone: repetition 2 held at 160 req/s, above 155 where it broke\x1b[31m"},
		}}
}

func summaryOf(t *testing.T, s result.ScenarioResult) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Summary(&buf, &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{s}}))
	return buf.String()
}

func TestSummaryCapacity(t *testing.T) {
	out := summaryOf(t, capacityScenario())
	for _, want := range []string{
		"== chat-capacity · poisson, capacity search · 2 repetitions at the capacity point · workload synth",
		"\ncapacity 148 req/s [148, 155) · 2,370 output tok/s · $0.83/Mtok · 8 of 8 probes\nbracketed to 5%\n",
		"\nper-repetition capacity (the gate's samples): median 152 req/s over 2, from 150 to 153; 1 a bound, not a crossing\n",
		"\nnote: non-monotone: repetition 2 held at 160 req/s, above 155 where it broke",
		"request throughput (req/s)", // the capacity point's table follows
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "\x1b", "a warning is cleaned")
	assert.NotContains(t, out, "concurrency 0")
}

func TestSummaryCapacityOutcomes(t *testing.T) {
	cases := []struct {
		name   string
		change func(c *result.Capacity)
		head   string
		says   string
	}{
		{"bracketed", func(c *result.Capacity) {}, "capacity 148 req/s [148, 155) · ", "\nbracketed to 5%\n"},
		{"below_min", func(c *result.Capacity) { c.Outcome, c.Holds, c.Breaks = result.CapacityBelowMin, 0, 10 },
			"capacity < 10 req/s · ", "SLO broken at the lowest load, 10 req/s: the capacity is below it (lower capacity.min to find it)"},
		{"above_max", func(c *result.Capacity) { c.Outcome, c.Holds, c.Breaks = result.CapacityAboveMax, 640, 0 },
			"capacity ≥ 640 req/s · ", "SLO held at the highest load, 640 req/s: the capacity is at least that (raise capacity.max to find it)"},
		{"budget", func(c *result.Capacity) { c.Outcome, c.Holds, c.Breaks = result.CapacityBudget, 80, 160 },
			"capacity 80 req/s [80, 160) · ", "the budget of 8 probes ran out before the interval narrowed to 5%: the capacity is in the interval reached"},
		{"budget with no break", func(c *result.Capacity) { c.Outcome, c.Holds, c.Breaks = result.CapacityBudget, 1280, 0 },
			"capacity ≥ 1,280 req/s · ", "no probe broke, the capacity is at least 1,280 req/s"},
		{"client_limited", func(c *result.Capacity) {
			c.Outcome, c.Holds, c.Breaks = result.CapacityClientLimited, 160, 0
			c.Probes[7].Load = 226.3
		}, "capacity ≥ 160 req/s · ",
			"perfgate fell behind its schedule at 226 req/s (an open loop with no max_in_flight cap): the capacity is at least 160 req/s"},
		{"client_limited, nothing held", func(c *result.Capacity) {
			c.Outcome, c.Holds, c.Breaks, c.Probes = result.CapacityClientLimited, 0, 0, []result.CapacityProbe{{Load: 80, Phase: "bracket"}}
		}, "capacity not found (no probe held) · 2,370 output tok/s · $0.83/Mtok · 1 of 8 probes\n",
			"no probe held before perfgate fell behind its schedule at 80 req/s"},
		{"closing probes", func(c *result.Capacity) {
			c.Probes = append(c.Probes, result.CapacityProbe{Phase: "close"}, result.CapacityProbe{Phase: "close"})
		}, "capacity 148 req/s [148, 155) · 2,370 output tok/s · $0.83/Mtok · 8 of 8 probes + 2 closing\n", ""},
		{"users", func(c *result.Capacity) {
			c.Search.Metric, c.Holds, c.Breaks, c.RequestRate, c.CostPerMTok = config.CapacityConcurrency, 3, 4, 12.345, nil
		}, "capacity 3 users [3, 4) · 12.35 req/s · 2,370 output tok/s · 8 of 8 probes\n", ""},
		{"unknown outcome", func(c *result.Capacity) { c.Outcome = "odd\x1b[31m" }, "capacity 148 req/s [148, 155) · ", "\noutcome odd [31m\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := capacityScenario()
			for i := range s.Capacity.Probes {
				s.Capacity.Probes[i].Phase = "bracket"
			}
			tc.change(s.Capacity)
			out := summaryOf(t, s)
			assert.Contains(t, out, "\n"+tc.head)
			assert.NotContains(t, out, "\x1b")
			assert.NotContains(t, out, ">= 0", "a bound of 0 says nothing")
			if tc.says != "" {
				assert.Contains(t, out, tc.says)
			}
			// The outcome line is the report's outcome column, word for word.
			if text, known := capacityOutcomeText(s.Capacity, capacityUnit(s.Capacity.Search)); known {
				assert.Contains(t, out, "\n"+text+"\n")
			}
		})
	}
}

func TestGrouped(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		d    int
		want string
	}{{2370.4, 0, "2,370"}, {999, 0, "999"}, {1234567.891, 2, "1,234,567.89"}, {-1500, 0, "-1,500"}, {0, 1, "0.0"}} {
		assert.Equal(t, tc.want, grouped(tc.x, tc.d), "grouped(%v, %d)", tc.x, tc.d)
	}
}

// A result file's load type, scenario and workload names are untrusted:
// the summary cleans them of control characters.
func TestSummaryCleansLoadType(t *testing.T) {
	s := capacityScenario()
	s.Load.Type, s.Name, s.Workload = "odd\x1b]0;title\x07", "chat\x1b[2J", "synth\r"
	out := summaryOf(t, s)
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\x07")
	assert.NotContains(t, out, "\r")
	assert.Contains(t, out, "odd ]0;title , capacity search")
	s.Capacity = nil
	assert.NotContains(t, summaryOf(t, s), "\x1b", "describeLoad too")
}
