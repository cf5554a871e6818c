package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
)

func TestWorkloadLine(t *testing.T) {
	shape := &result.WorkloadShape{
		Requests: 300, Chat: 300,
		PromptWords:   result.Lengths{P50: 20, P90: 900, P99: 2100, Max: 2400},
		MaxTokens:     result.Lengths{P50: 128, P90: 256, P99: 512, Max: 512},
		PrefixSharing: result.PrefixSharing{Words: 100, SharedWords: 12, Ratio: 0.12},
		Sessions:      &result.SessionShape{Count: 40, Requests: 120, TurnsMin: 2, TurnsP50: 3, TurnsMax: 5},
		Arrivals:      &result.ArrivalShape{Requests: 220, Span: 104, MeanRate: 2.1, Burstiness: 1.8, PeakPerSecond: 9},
	}
	const hash = "sha256:1a2b3c4d5e6f7a8b9c0d"
	cases := []struct {
		name  string
		shape *result.WorkloadShape
		want  string
	}{
		{"everything", shape, "workload chat.jsonl sha256:1a2b3c4d5e6f: 300 requests, prompts p50 20 / p99 2100 words, max_tokens p50 128, prefix sharing 12%, 40 sessions of 2-5 turns, arrivals 2.1 req/s burstiness 1.8"},
		{"no sessions, no arrivals", &result.WorkloadShape{Requests: 1, PromptWords: result.Lengths{P50: 1, P99: 1}, MaxTokens: result.Lengths{P50: 8}},
			"workload chat.jsonl sha256:1a2b3c4d5e6f: 1 request, prompts p50 1 / p99 1 words, max_tokens p50 8, prefix sharing 0%"},
		{"no shape", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, workloadLine("chat.jsonl", hash, c.shape), "workloadLine")
		})
	}
	one := *shape
	one.Sessions = &result.SessionShape{Count: 3, Requests: 6, TurnsMin: 2, TurnsP50: 2, TurnsMax: 2}
	assert.Contains(t, workloadLine("w", hash, &one), ", 3 sessions of 2 turns,", "workloadLine(sessions of one length)")
	assert.NotContains(t, workloadLine("a\x1b[31mb", hash, &one), "\x1b", "workloadLine cleans the file name")
}

// TestSummaryShowsWorkloadLine: the terminal summary shows the line under
// the scenario's heading, and a result without a shape shows none.
func TestSummaryShowsWorkloadLine(t *testing.T) {
	r := &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{{
		Name: "chat", Workload: "chat.jsonl", WorkloadHash: "sha256:1a2b3c4d5e6f7a8b", Load: result.Load{Type: "closed", Concurrency: 2},
		WorkloadShape: &result.WorkloadShape{Requests: 4, Completions: 4, PromptWords: result.Lengths{P50: 2, P90: 4, P99: 4, Max: 4},
			MaxTokens: result.Lengths{P50: 20, P90: 40, P99: 40, Max: 40}},
	}}}
	var b bytes.Buffer
	require.NoError(t, Summary(&b, r))
	lines := strings.Split(b.String(), "\n")
	i := slicesIndexPrefix(lines, "== chat")
	require.GreaterOrEqual(t, i, 0, "Summary: no scenario heading in\n%s", b.String())
	assert.Equal(t, "workload chat.jsonl sha256:1a2b3c4d5e6f: 4 requests, prompts p50 2 / p99 4 words, max_tokens p50 20, prefix sharing 0%", lines[i+1], "Summary: the line under the heading")

	r.Scenarios[0].WorkloadShape = nil
	b.Reset()
	require.NoError(t, Summary(&b, r))
	assert.NotContains(t, b.String(), "prompts p50", "Summary of a result without a shape")
}

func slicesIndexPrefix(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}

// TestRenderWorkloadLine: the pull request comment and the HTML page say
// what each scenario replayed, in the scenario's own section.
func TestRenderWorkloadLine(t *testing.T) {
	doc := documentCases[1].doc()
	sd := &doc.Scenarios[0]
	sd.Workload, sd.WorkloadHash = "workloads/chat.jsonl", "sha256:1a2b3c4d5e6f7a8b9c0d"
	sd.WorkloadShape = &result.WorkloadShape{Requests: 300, Chat: 300,
		PromptWords:   result.Lengths{P50: 20, P90: 900, P99: 2100, Max: 2400},
		MaxTokens:     result.Lengths{P50: 128, P90: 256, P99: 512, Max: 512},
		PrefixSharing: result.PrefixSharing{Words: 100, SharedWords: 12, Ratio: 0.12},
		Sessions:      &result.SessionShape{Count: 40, Requests: 120, TurnsMin: 2, TurnsP50: 3, TurnsMax: 5}}
	const line = "workload workloads/chat.jsonl sha256:1a2b3c4d5e6f: 300 requests, prompts p50 20 / p99 2100 words, max_tokens p50 128, prefix sharing 12%, 40 sessions of 2-5 turns"

	var md bytes.Buffer
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{doc}, MarkdownOptions{Limit: commentLimit, Marker: "<!-- perfgate:perfgate.yaml -->"}))
	section := md.String()[strings.Index(md.String(), sd.Name):]
	assert.Contains(t, section, strings.Replace(line, "max_tokens", `max\_tokens`, 1), "the comment's section of %s (markdown-escaped)", sd.Name)
	assert.Equal(t, 1, strings.Count(md.String(), "prompts p50 20 / p99 2100 words"), "the line once, in its scenario only")

	page := renderHTML(t, doc)
	assert.Contains(t, page, line, "the HTML page")
}

// TestSummaryShowsSessions: perfgate run's summary shows a multi-turn
// workload's session figures, medians over the repetitions that have them.
func TestSummaryShowsSessions(t *testing.T) {
	sess := func(started, completed int, first, later, e2e float64) *result.SessionStats {
		s := &result.SessionStats{Started: started, Completed: completed, TurnsMean: 3, TurnsMax: 4,
			FirstTurnTTFT: result.Stats{Count: int64(started), P50: first}, LaterTurnTTFT: result.Stats{Count: 2, P50: later}}
		if completed > 0 {
			s.E2E = result.Stats{Count: int64(completed), P50: e2e}
		}
		return s
	}
	r := &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{{
		Name: "chat", Workload: "s.jsonl", WorkloadHash: "sha256:1a2b3c4d5e6f7a8b", Load: result.Load{Type: "closed", Concurrency: 2},
		Repetitions: []result.Repetition{
			{Index: 1, Sent: 9, Completed: 9, Sessions: sess(3, 3, 290, 120, 31000)},
			{Index: 2, Sent: 9, Completed: 9, Sessions: sess(3, 2, 300, 100, 41000)},
			{Index: 3, Sent: 9, Completed: 6, Failed: 3, Sessions: sess(3, 0, 310, 110, 0)},
		},
	}}}
	var b bytes.Buffer
	require.NoError(t, Summary(&b, r))
	out := b.String()
	for _, want := range []string{
		"sessions started       3       3       3",
		"sessions completed       2       0       3",
		"TTFT p50, turn 1 (ms)  300.00  290.00  310.00",
		"TTFT p50, later turns (ms)  110.00  100.00  120.00",
		"session E2E p50 (s)   36.00   31.00   41.00", // the two repetitions with a completed session
	} {
		assert.Contains(t, strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " "), "Summary:\n%s", out)
	}
	r.Scenarios[0].Repetitions[0].Sessions = nil
	b.Reset()
	require.NoError(t, Summary(&b, r))
	assert.NotContains(t, b.String(), "sessions started", "Summary of a scenario whose repetitions do not all have sessions")
}
