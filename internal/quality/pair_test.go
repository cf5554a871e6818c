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

// An item whose request failed on either side is dropped from the pairs
// (and from the drift), kept in Common for the error rate, and shown among
// the examples with its error when one side answered.
func TestPairFailedItems(t *testing.T) {
	ok := func(id string, pass bool, out string) result.ItemOutcome {
		o := result.ItemOutcome{ID: id, Hash: id, Pass: pass, Output: out}
		if pass {
			o.Score = 1
		}
		return o
	}
	failed := func(id, kind, msg string) result.ItemOutcome {
		return result.ItemOutcome{ID: id, Hash: id, Error: msg, ErrorKind: kind}
	}
	base := &result.SuiteResult{Items: []result.ItemOutcome{
		ok("a", true, "carbon dioxide"),
		ok("b", true, "Paris"),
		failed("c", "timeout", "timeout: after 1m0s"),
		failed("d", "http", "http 503: busy"),
		ok("e", true, "4"),
		ok("f", true, "x"),
	}}
	cand := &result.SuiteResult{Items: []result.ItemOutcome{
		failed("a", "http", "http 500: simulated engine error"),
		ok("b", true, "Paris"),
		ok("c", true, "7"),
		failed("d", "stream", "stream: reset"),
		ok("e", false, "5"),
		{ID: "f", Hash: "f", Error: "http 500: old result"}, // no kind recorded
	}}
	p := Pair(base, cand)
	assert.Equal(t, []string{"a", "b", "c", "d", "e", "f"}, p.Common)
	assert.Equal(t, []float64{0, 0, 1, 1, 0, 0}, p.BaselineFailed)
	assert.Equal(t, []float64{1, 0, 0, 1, 0, 1}, p.CandidateFailed)
	assert.Equal(t, 4, p.Dropped)
	assert.Equal(t, []string{"b", "e"}, p.Items)
	assert.Equal(t, []float64{1, 1}, p.BaselinePass)
	assert.Equal(t, []float64{1, 0}, p.CandidatePass)
	assert.Equal(t, Drift{Identical: 1, Differ: 1}, p.Drift, "failed items are not drift")
	var ids []string
	for _, ex := range p.Examples {
		ids = append(ids, ex.ID)
	}
	assert.Equal(t, []string{"e", "a", "f", "c"}, ids, "pass→fail, then failed in the candidate, then failed in the baseline")
	a := p.Examples[1]
	assert.True(t, a.BaselinePass)
	assert.False(t, a.CandidatePass)
	assert.Equal(t, "http 500: simulated engine error", a.CandidateError)
	assert.Equal(t, "http", a.CandidateErrorKind)
	assert.Equal(t, "error", p.Examples[2].CandidateErrorKind, "an older result's failure has the kind error")
	assert.Equal(t, "timeout", p.Examples[3].BaselineErrorKind)
	assert.True(t, p.Examples[3].CandidatePass)
}
