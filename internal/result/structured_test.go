package result

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A result file's structured and reasoning counts are untrusted: a count
// that cannot be true is refused with its field path.
func TestValidateStructuredAndReasoning(t *testing.T) {
	valid := func() *Result {
		return &Result{Schema: Schema, Scenarios: []ScenarioResult{{Name: "agents", Load: Load{Type: "closed", Concurrency: 1}, Repetitions: []Repetition{{
			Index: 1, Sent: 10, Completed: 10, TokensFrom: "usage",
			Structured: 8, StructuredErrors: 2, StructuredErrorRate: 0.25,
			Reasoning: &ReasoningStats{Requests: 6, Truncated: 1, ReasoningTokens: 300, AnswerTokens: 60,
				TTFA: Stats{Count: 5, Mean: 10, Min: 5, P50: 10, P90: 15, P95: 15, P99: 15, P999: 15, Max: 15}},
		}}}}}
	}
	require.NoError(t, valid().Validate(), "the valid fixture")
	for _, tc := range []struct {
		name  string
		spoil func(r *Repetition)
		want  string
	}{
		{"structured past completed", func(r *Repetition) { r.Structured = 11 }, "scenarios[0].repetitions[0].structured: 11 structured requests of 10 completed"},
		{"errors past structured", func(r *Repetition) { r.StructuredErrors, r.StructuredErrorRate = 9, 1 }, "scenarios[0].repetitions[0].structured_errors: 9 wrong answers of 8 structured requests"},
		{"rate not the counts", func(r *Repetition) { r.StructuredErrorRate = 0.5 }, "scenarios[0].repetitions[0].structured_error_rate: 0.5 is not 2 wrong answers of 8 structured requests"},
		{"rate past one", func(r *Repetition) { r.StructuredErrorRate = 2 }, "scenarios[0].repetitions[0].structured_error_rate: want a fraction from 0 to 1, got 2"},
		{"negative reasoning", func(r *Repetition) { r.Reasoning.ReasoningTokens = -5 }, "scenarios[0].repetitions[0].reasoning.reasoning_tokens: want a count >= 0, got -5"},
		{"more reasoned", func(r *Repetition) { r.Reasoning.Requests = 11 }, "scenarios[0].repetitions[0].reasoning.requests: 11 requests reasoned of 10 completed"},
		{"more cut", func(r *Repetition) { r.Reasoning.Truncated = 7 }, "scenarios[0].repetitions[0].reasoning.truncated: 7 cut of 6 that reasoned"},
		{"more timed", func(r *Repetition) { r.Reasoning.TTFA.Count = 7 }, "scenarios[0].repetitions[0].reasoning.ttfa_ms.count: 7 answers timed of 6 requests that reasoned"},
		{"negative TTFA", func(r *Repetition) { r.Reasoning.TTFA.P95 = -1 }, "scenarios[0].repetitions[0].reasoning.ttfa_ms.p95"},
		{"tokens of no request", func(r *Repetition) { r.Reasoning.Requests, r.Reasoning.Truncated = 0, 0 }, "scenarios[0].repetitions[0].reasoning.requests: 0 requests reasoned, yet 300 reasoning tokens"},
	} {
		r := valid()
		tc.spoil(&r.Scenarios[0].Repetitions[0])
		err := r.Validate()
		require.Error(t, err, tc.name)
		assert.True(t, strings.Contains(err.Error(), tc.want), "Validate(%s) = %v, want %q", tc.name, err, tc.want)
	}
}
