package workload

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// promptWords counts the whitespace-separated words of all a request's text.
func promptWords(r Request) int {
	n := len(strings.Fields(r.Prompt))
	for _, m := range r.Messages {
		n += len(strings.Fields(m.Content))
	}
	return n
}

func TestExampleChat(t *testing.T) {
	const path = "../../examples/workloads/chat.jsonl"
	w, err := Load(path)
	require.NoError(t, err)
	assert.Len(t, w.Requests, 300)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Less(t, info.Size(), int64(2<<20), "keep the example under 2 MB")

	// Each kind's lengths stay in the ranges the example documents.
	ranges := map[string]struct{ words, tokens [2]int }{
		"short":     {[2]int{10, 60}, [2]int{32, 256}},
		"summarise": {[2]int{600, 2500}, [2]int{150, 400}},
		"code":      {[2]int{80, 600}, [2]int{200, 600}},
		"multiturn": {[2]int{20, 1000}, [2]int{128, 512}},
	}
	count := map[string]int{}
	for _, r := range w.Requests {
		require.NotEmpty(t, r.Tags, r.ID)
		kind := r.Tags[0]
		want, ok := ranges[kind]
		require.True(t, ok, "%s: kind %q", r.ID, kind)
		count[kind]++
		n := promptWords(r)
		assert.True(t, n >= want.words[0] && n <= want.words[1], "%s: %d words, want %v", r.ID, n, want.words)
		assert.True(t, r.MaxTokens >= want.tokens[0] && r.MaxTokens <= want.tokens[1], "%s: max_tokens %d, want %v", r.ID, r.MaxTokens, want.tokens)
		assert.Nil(t, r.ArrivalMS)
		if kind == "multiturn" {
			assert.Equal(t, "system", r.Messages[0].Role, r.ID)
			assert.Greater(t, len(r.Messages), 3, r.ID)
			assert.Equal(t, "user", r.Messages[len(r.Messages)-1].Role, r.ID)
		}
	}
	for kind := range ranges {
		assert.Positive(t, count[kind], kind)
	}
}

func TestExampleTrace(t *testing.T) {
	w, err := Load("../../examples/workloads/trace.jsonl")
	require.NoError(t, err)
	assert.Len(t, w.Requests, 200)
	var at []float64
	for _, r := range w.Requests {
		require.NotNil(t, r.ArrivalMS, r.ID)
		at = append(at, *r.ArrivalMS)
		assert.LessOrEqual(t, promptWords(r), 500, r.ID)
	}
	assert.Zero(t, at[0])
	assert.True(t, slices.IsSorted(at), "arrivals in order")

	// Bursty: many gaps are short (inside a burst), a few are long.
	short, long := 0, 0
	for i := 1; i < len(at); i++ {
		switch gap := at[i] - at[i-1]; {
		case gap < 200:
			short++
		case gap > 1000:
			long++
		}
	}
	assert.Greater(t, short, len(at)/2)
	assert.Greater(t, long, 10)
}
