package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
)

// testdata/stats/small.jsonl, worked by hand: prompts of 4, 3, 2 and 1
// words (the second shares "w1 w2" with the first: 2 of 10 words);
// max_tokens 10, 20, 30, 40; arrivals at 0, 500 and 1000 ms; one session
// of two turns, whose second carries the first's 2 words (shared 2 + 2 of
// 4 + 3 + 2 + 3 = 12 words with history); think_ms 250.
const smallStats = "testdata/stats/small.jsonl"

func TestWorkloadStatsText(t *testing.T) {
	out, _, err := perfgate("workload", "stats", smallStats)
	require.NoError(t, err)
	for _, want := range []string{
		"workload testdata/stats/small.jsonl  sha256:",
		"\n  requests         4 (chat 2, completions 2)\n",
		"\n  prompt words     p50 2  p90 4  p99 4  max 4\n",
		"\n  max_tokens       p50 20  p90 40  p99 40  max 40\n",
		"\n  prefix sharing   20.0% of 10 words (2 shared); 0 distinct shared prefixes of >= 32 words\n",
		"\n  sessions         1 (2 requests); turns 2 to 2 (p50 2); prefix sharing with history 33.3%; think_ms on 1 turn, p50 250, p90 250\n",
		"\n  arrivals         3 over 1 s: 2 req/s, burstiness 0, peak 2 in 1 s\n",
		"\n  tags             x 1\n",
		"\n  sampling         temperature on 1 request\n",
	} {
		assert.Contains(t, out, want, "perfgate workload stats %s", smallStats)
	}
	assert.NotContains(t, out, "tools", "a workload without tools has no tools row")

	// Two files: a block each, in order.
	out, _, err = perfgate("workload", "stats", smallStats, "testdata/bad/ok.jsonl")
	require.NoError(t, err)
	first, second := strings.Index(out, "workload "+smallStats), strings.Index(out, "\n\nworkload testdata/bad/ok.jsonl")
	assert.True(t, first == 0 && second > first, "two files: want a block each, in order; got\n%s", out)
}

func TestWorkloadStatsJSON(t *testing.T) {
	out, _, err := perfgate("workload", "stats", "--format", "json", smallStats)
	require.NoError(t, err)
	var got fileStats
	require.NoError(t, json.Unmarshal([]byte(out), &got), "perfgate workload stats --format json: %s", out)
	assert.Equal(t, smallStats, got.File, "file")
	assert.True(t, strings.HasPrefix(got.WorkloadHash, "sha256:"), "workload_hash = %q, want sha256:...", got.WorkloadHash)
	s := got.Shape
	assert.Equal(t, 4, s.Requests, "shape.requests")
	assert.InDelta(t, 0.2, s.PrefixSharing.Ratio, 1e-12, "shape.prefix_sharing.ratio")
	require.NotNil(t, s.Sessions, "shape.sessions")
	assert.InDelta(t, 4.0/12, s.Sessions.PrefixSharingWithHistory, 1e-12, "shape.sessions.prefix_sharing_with_history")
	require.NotNil(t, s.Arrivals, "shape.arrivals")
	assert.InDelta(t, 2.0, s.Arrivals.MeanRate, 1e-12, "shape.arrivals.mean_rate")

	// Two files: a JSON object a line.
	out, _, err = perfgate("workload", "stats", "--format", "json", smallStats, smallStats)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Len(t, lines, 2, "two files: a line each")
}

func TestWorkloadStatsMarkdown(t *testing.T) {
	out, _, err := perfgate("workload", "stats", "--format", "markdown", smallStats)
	require.NoError(t, err)
	assert.Contains(t, out, "### Workload `testdata/stats/small.jsonl`\n", "heading")
	assert.Contains(t, out, "\n| prompt words | p50 2  p90 4  p99 4  max 4 |\n", "a table row")
}

func TestWorkloadStatsErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"a bad line", []string{"testdata/bad/wrong-type.jsonl"}, []string{"testdata/bad/wrong-type.jsonl:1: max_tokens: want an integer"}},
		{"every bad file", []string{"testdata/bad/wrong-type.jsonl", smallStats, "testdata/bad/empty.jsonl"},
			[]string{"wrong-type.jsonl:1: max_tokens", "empty.jsonl: no requests"}},
		{"a missing file", []string{"testdata/stats/missing.jsonl"}, []string{"read workload", "missing.jsonl"}},
		{"an unknown format", []string{"--format", "html", smallStats}, []string{"--format: want one of text, json, markdown, got \"html\""}},
		{"no file", nil, []string{"requires at least 1 arg"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := perfgate(append([]string{"workload", "stats"}, c.args...)...)
			require.Error(t, err, "perfgate workload stats %v", c.args)
			assert.Equal(t, exit.Usage, exit.Code(err), "exit code of perfgate workload stats %v", c.args)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w, "error of perfgate workload stats %v", c.args)
			}
			assert.Empty(t, out, "stdout of a failed perfgate workload stats %v", c.args)
		})
	}
}
