package result

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shapedResult is a valid result of one scenario whose workload has 300
// requests in 40 sessions, arrival times, tags and sampling parameters.
func shapedResult() *Result {
	return &Result{Schema: Schema, Scenarios: []ScenarioResult{{
		Name: "chat", Workload: "chat.jsonl", WorkloadHash: "sha256:1a2b", Load: Load{Type: "trace"}, Gates: []Gate{},
		WorkloadShape: &WorkloadShape{
			Requests: 300, Chat: 280, Completions: 20,
			PromptWords:   Lengths{P50: 20, P90: 400, P99: 2100, Max: 3000},
			MaxTokens:     Lengths{P50: 128, P90: 256, P99: 512, Max: 512},
			PrefixSharing: PrefixSharing{Words: 10000, SharedWords: 1200, Ratio: 0.12, Prefixes32: 3},
			Sessions: &SessionShape{Count: 40, Requests: 120, TurnsMin: 2, TurnsP50: 3, TurnsMax: 5,
				ThinkMS: &ThinkShape{Count: 80, P50: 1500, P90: 4000}, PrefixSharingWithHistory: 0.4},
			Arrivals:     &ArrivalShape{Requests: 220, Span: 104.5, MeanRate: 2.1, Burstiness: 1.8, PeakPerSecond: 9},
			Tags:         []TagCount{{"rag", 100}, {"chat", 80}},
			DistinctTags: 2,
			Sampling:     map[string]int{"temperature": 300},
			Tools:        12,
		},
	}}}
}

func TestValidateWorkloadShape(t *testing.T) {
	require.NoError(t, shapedResult().Validate(), "the valid fixture")
	w := func(r *Result) *WorkloadShape { return r.Scenarios[0].WorkloadShape }
	const p = "scenarios[0].workload_shape."
	cases := []struct {
		name   string
		change func(r *Result)
		want   string
	}{
		{"negative requests", func(r *Result) { w(r).Requests, w(r).Chat, w(r).Completions = -1, 0, -1 }, p + "requests: want a count >= 0, got -1"},
		{"API mix does not add up", func(r *Result) { w(r).Chat = 10 }, p + "requests: 300, want chat + completions (30)"},
		{"percentiles out of order", func(r *Result) { w(r).PromptWords.P90 = 5000 }, p + "prompt_words: want 0 <= p50 <= p90 <= p99 <= max, got 20, 5000, 2100, 3000"},
		{"negative max_tokens", func(r *Result) { w(r).MaxTokens.P50 = -1 }, p + "max_tokens: want 0 <= p50"},
		{"ratio above 1", func(r *Result) { w(r).PrefixSharing.Ratio = 1.5 }, p + "prefix_sharing.ratio: want a fraction from 0 to 1, got 1.5"},
		{"NaN ratio", func(r *Result) { w(r).PrefixSharing.Ratio = math.NaN() }, p + "prefix_sharing.ratio: want a fraction from 0 to 1, got NaN"},
		{"more shared words than words", func(r *Result) { w(r).PrefixSharing.SharedWords = 10001 }, p + "prefix_sharing.shared_words: want from 0 to words (10000), got 10001"},
		{"more session requests than requests", func(r *Result) { w(r).Sessions.Requests = 301 }, p + "sessions.requests: want a count from 0 to requests (300), got 301"},
		{"turns out of order", func(r *Result) { w(r).Sessions.TurnsMin = 4 }, p + "sessions.turns_min: want 1 <= turns_min <= turns_p50 <= turns_max, got 4, 3, 5"},
		{"a session of no turns", func(r *Result) { w(r).Sessions.TurnsMin = 0 }, p + "sessions.turns_min: want 1 <= turns_min"},
		{"think p90 below p50", func(r *Result) { w(r).Sessions.ThinkMS.P90 = 100 }, p + "sessions.think_ms.p90: want at least p50 (1500), got 100"},
		{"negative think", func(r *Result) { w(r).Sessions.ThinkMS.P50 = -1 }, p + "sessions.think_ms.p50: want a finite number >= 0, got -1"},
		{"history ratio negative", func(r *Result) { w(r).Sessions.PrefixSharingWithHistory = -0.1 }, p + "sessions.prefix_sharing_with_history: want a fraction from 0 to 1, got -0.1"},
		{"infinite rate", func(r *Result) { w(r).Arrivals.MeanRate = math.Inf(1) }, p + "arrivals.mean_rate: want a finite number >= 0, got +Inf"},
		{"negative burstiness", func(r *Result) { w(r).Arrivals.Burstiness = -1 }, p + "arrivals.burstiness: want a finite number >= 0, got -1"},
		{"negative span", func(r *Result) { w(r).Arrivals.Span = -2 }, p + "arrivals.span_s: want a finite number >= 0, got -2"},
		{"peak above the arrivals", func(r *Result) { w(r).Arrivals.PeakPerSecond = 221 }, p + "arrivals.peak_per_second: want from 1 to requests (220), got 221"},
		{"no peak", func(r *Result) { w(r).Arrivals.PeakPerSecond = 0 }, p + "arrivals.peak_per_second: want from 1 to requests (220), got 0"},
		{"more arrivals than requests", func(r *Result) { w(r).Arrivals.Requests = 400 }, p + "arrivals.requests: want a count from 0 to requests (300), got 400"},
		{"tag on more requests than exist", func(r *Result) { w(r).Tags[1].Requests = 301 }, p + "tags[1].requests: want a count from 0 to requests (300), got 301"},
		{"fewer distinct tags than listed", func(r *Result) { w(r).DistinctTags = 1 }, p + "distinct_tags: want a count from 0 to distinct_tags (1), got 2"},
		{"sampling on more requests than exist", func(r *Result) { w(r).Sampling["temperature"] = 301 }, p + "sampling.temperature: want a count from 0 to requests (300), got 301"},
		{"negative tools", func(r *Result) { w(r).Tools = -1 }, p + "tools: want a count from 0 to requests (300), got -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := shapedResult()
			c.change(r)
			err := r.Validate()
			require.Error(t, err, "Validate() after %s", c.name)
			assert.Contains(t, err.Error(), c.want, "Validate() after %s", c.name)
		})
	}
}

// TestWorkloadShapeOptional: a result without a shape (from before it was
// kept) still reads, and one with it round-trips.
func TestWorkloadShapeOptional(t *testing.T) {
	r := shapedResult()
	data, err := json.Marshal(r)
	require.NoError(t, err)
	back, err := Decode(data, "with.json")
	require.NoError(t, err, "Decode(a result with a workload shape)")
	assert.Equal(t, r.Scenarios[0].WorkloadShape, back.Scenarios[0].WorkloadShape, "the shape after a round trip")

	r.Scenarios[0].WorkloadShape = nil
	data, err = json.Marshal(r)
	require.NoError(t, err)
	require.False(t, strings.Contains(string(data), "workload_shape"), "a result without a shape writes no workload_shape key")
	back, err = Decode(data, "without.json")
	require.NoError(t, err, "Decode(a result without a workload shape)")
	assert.Nil(t, back.Scenarios[0].WorkloadShape, "the shape of a result without one")
}
