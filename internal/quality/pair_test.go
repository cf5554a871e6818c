package quality

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/perfgate/perfgate/internal/result"
)

func TestFirstDifference(t *testing.T) {
	tests := []struct {
		a, b       string
		char, word int
	}{
		{"The answer is 42.", "The answer is 42.", 17, 4},
		{"The answer is 42.", "The answer is 43.", 15, 3},
		{"abc", "abd", 2, 0},
		{"", "x", 0, 0},
		{"héllo wörld", "héllo world", 7, 1},
		{"a b", "a b c", 3, 2},
	}
	for _, tt := range tests {
		c, w := FirstDifference(tt.a, tt.b)
		assert.Equal(t, tt.char, c, "%q vs %q: char", tt.a, tt.b)
		assert.Equal(t, tt.word, w, "%q vs %q: word", tt.a, tt.b)
	}
}

func TestPair(t *testing.T) {
	base := &result.SuiteResult{Items: []result.ItemOutcome{
		{ID: "a", Hash: "1", Pass: true, Score: 1, Output: "The answer is 4."},
		{ID: "b", Hash: "2", Pass: true, Score: 1, Output: "Paris"},
		{ID: "c", Hash: "3", Pass: false, Score: 0, Output: "I do not know."},
		{ID: "d", Hash: "4", Pass: true, Score: 1, Output: "x"},
		{ID: "gone", Hash: "5", Pass: true, Score: 1, Output: "y"},
	}}
	cand := &result.SuiteResult{Items: []result.ItemOutcome{
		{ID: "a", Hash: "1", Pass: true, Score: 1, Output: "The answer is 4."},
		{ID: "b", Hash: "2", Pass: false, Score: 0, Output: "Lyon"},
		{ID: "c", Hash: "3", Pass: true, Score: 1, Output: "The answer is 7."},
		{ID: "d", Hash: "changed", Pass: true, Score: 1, Output: "x"},
		{ID: "new", Hash: "6", Pass: true, Score: 1, Output: "z"},
	}}
	p := Pair(base, cand)
	assert.Equal(t, []string{"a", "b", "c"}, p.Items)
	assert.Equal(t, []float64{1, 1, 0}, p.BaselinePass)
	assert.Equal(t, []float64{1, 0, 1}, p.CandidatePass)
	assert.Equal(t, []float64{1, 0, 0}, p.Identical)
	assert.Equal(t, 1, p.OnlyBaseline)
	assert.Equal(t, 1, p.OnlyCandidate)
	assert.Equal(t, 1, p.Changed)
	assert.Equal(t, Drift{Identical: 1, Differ: 2, FirstDiffChar: 0, FirstDiffWord: 0}, p.Drift)
	if assert.Len(t, p.Examples, 2) {
		assert.Equal(t, "b", p.Examples[0].ID, "pass→fail first")
		assert.Equal(t, "c", p.Examples[1].ID)
	}
}
