package run

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/quality"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/structured"
	"github.com/perfgate/perfgate/internal/workload"
)

// An agent's requests (tools declared, the simulator answering each with a
// call) are measured as successes: every record has the simulator's call,
// name and arguments, its first token where the simulator wrote the first
// piece of the call, and a chunk time for every piece. Before tool calls
// were read, each was a no_output failure.
func TestToolCallsMeasuredAgainstSimulatorTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken = 2*time.Millisecond, 0, 0
	srv, c, truth := truthSim(t, cfg, 4)

	weather := json.RawMessage(`[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":3}},"required":["city","days"]}}},
		{"type":"function","function":{"name":"book","parameters":{"type":"object","properties":{"when":{"type":"string","enum":["today","tomorrow"]}}}}}]`)
	var reqs []workload.Request
	for i := range 8 {
		r := workload.Request{ID: fmt.Sprintf("t%d", i), Prompt: fmt.Sprintf("what is the weather, %d?", i), MaxTokens: 64, Tools: weather}
		switch i % 4 {
		case 1:
			r.ToolChoice = json.RawMessage(`{"type":"function","function":{"name":"book"}}`)
		case 2:
			r.MaxTokens = 3 // cut: finish reason length, a partial call
		case 3:
			r.ToolChoice = json.RawMessage(`"none"`) // text
		}
		reqs = append(reqs, r)
	}
	recs := closedLoop(t, c, reqs, 4)
	require.NoError(t, srv.Close())

	byID := truth.records(t)
	require.Len(t, recs, 8)
	calls := 0
	for _, r := range recs {
		tr, ok := byID[r.RequestID]
		require.True(t, ok, "no truth for %s", r.RequestID)
		assert.Empty(t, r.ErrorKind, "%s: %s", r.ID, r.Error)
		assert.Equal(t, tr.FinishReason, r.FinishReason, r.ID)
		assert.Len(t, r.ITLUS, len(tr.TokenNS)-1, "%s: a chunk time for every piece", r.ID)
		assert.Greater(t, r.TTFTUS, int64(0), r.ID)
		if tr.ToolCall == nil {
			assert.Empty(t, r.ToolCalls, r.ID)
			continue
		}
		calls++
		require.Len(t, r.ToolCalls, 1, r.ID)
		assert.Equal(t, tr.ToolCall.Name, r.ToolCalls[0].Name, r.ID)
		assert.Equal(t, tr.ToolCall.Arguments, r.ToolCalls[0].Arguments, r.ID)
		switch r.FinishReason {
		case "tool_calls":
			assert.True(t, json.Valid([]byte(r.ToolCalls[0].Arguments)), "%s: %s", r.ID, r.ToolCalls[0].Arguments)
		case "length":
			assert.Equal(t, 3, r.OutputTokens, r.ID)
		default:
			t.Errorf("%s: finish reason %q", r.ID, r.FinishReason)
		}
	}
	assert.Equal(t, 6, calls, "two of eight asked for no tool")
	for _, r := range recs {
		if r.ID == "t0" {
			assert.Equal(t, `{"city":"sim","days":3}`, r.ToolCalls[0].Arguments)
		}
		if r.ID == "t1" {
			assert.Equal(t, "book", r.ToolCalls[0].Name)
			assert.Equal(t, `{"when":"today"}`, r.ToolCalls[0].Arguments)
		}
	}
}

// Structured answers are checked under load against the simulator's truth:
// an answer it cut (--structured-error-rate) is a structured error, counted
// and kept out of latency and goodput; every other structured answer is
// right, and free-text requests are not structured.
func TestStructuredAnswersCheckedAgainstSimulatorTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken = time.Millisecond, 0, 0
	cfg.StructuredErrorRate = 0.3
	srv, c, truth := truthSim(t, cfg, 8)

	schema := json.RawMessage(`{"type":"json_schema","json_schema":{"name":"p","schema":{"type":"object","properties":{"name":{"type":"string","minLength":12},"tags":{"type":"array","items":{"type":"string"},"minItems":3}},"required":["name","tags"]}}}`)
	tools := json.RawMessage(`[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"id":{"type":"integer","minimum":1000}},"required":["id"]}}}]`)
	var reqs []workload.Request
	for i := range 60 {
		r := workload.Request{ID: fmt.Sprintf("s%d", i), Prompt: fmt.Sprintf("request %d", i), MaxTokens: 64}
		switch i % 3 {
		case 0:
			r.ResponseFormat = schema
		case 1:
			r.Tools, r.ToolChoice = tools, json.RawMessage(`"required"`)
		}
		reqs = append(reqs, r)
	}
	require.NoError(t, structured.Validate(reqs))
	recs := closedLoop(t, c, reqs, 8)
	require.NoError(t, srv.Close())

	byID := truth.records(t)
	wrong := 0
	for _, r := range recs {
		tr := byID[r.RequestID]
		require.Empty(t, r.ErrorKind, r.Error)
		assert.Equal(t, tr.Structured != nil, r.Structured, r.ID)
		if tr.Structured == nil {
			continue
		}
		if tr.Structured.Valid {
			assert.Empty(t, r.StructuredError, "%s: a right answer", r.ID)
		} else {
			wrong++
			assert.NotEmpty(t, r.StructuredError, "%s: the sim cut it", r.ID)
		}
	}
	assert.Greater(t, wrong, 0, "0.3 of 40 structured answers: some wrong")
	rep := summary(recs)
	assert.Equal(t, 40, rep.Structured)
	assert.Equal(t, wrong, rep.StructuredErrors)
	assert.InDelta(t, float64(wrong)/40, rep.StructuredErrorRate, 1e-12)
	assert.Equal(t, 60, rep.Completed, "a wrong answer is an answer: not a failure")
	assert.Zero(t, rep.ErrorRate)
	assert.Equal(t, int64(60-wrong), histCount(t, rep, result.HistE2E), "wrong answers are not timed")
	assert.Contains(t, rep.FirstStructuredError, ": ")
}

// Constrained decoding is priced apart within a scenario: one user sends
// structured and free requests in turn to a simulator whose grammar steps
// cost three times a free step; the repetition's structured subset shows
// a TPOT about three times the free one's, while the whole blurs them.
func TestConstrainedDecodingPricedApart(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken, cfg.Jitter = 5*time.Millisecond, 0, 0, 0
	cfg.ConstrainedSlowdown = 3
	srv, c, _ := truthSim(t, cfg, 1)
	schema := json.RawMessage(`{"type":"json_object"}`)
	var reqs []workload.Request
	for i := range 16 {
		r := workload.Request{ID: fmt.Sprintf("r%d", i), Prompt: fmt.Sprintf("request %d", i), MaxTokens: 12}
		if i%2 == 0 {
			r.ResponseFormat = schema
		}
		reqs = append(reqs, r)
	}
	recs := closedLoop(t, c, reqs, 1)
	require.NoError(t, srv.Close())
	rep := summary(recs)
	require.Equal(t, []string{result.SubsetStructured, result.SubsetFree}, rep.SubsetNames())
	st, free := rep.Subsets[result.SubsetStructured], rep.Subsets[result.SubsetFree]
	assert.Equal(t, 8, st.Completed)
	assert.Equal(t, 8, free.Completed)
	ratio := st.TPOT.P50 / free.TPOT.P50
	assert.InDelta(t, 3, ratio, 1, "structured TPOT p50 %.2f ms, free %.2f ms", st.TPOT.P50, free.TPOT.P50)
	v, err := rep.Value("tpot.p50@structured")
	require.NoError(t, err)
	assert.Equal(t, st.TPOT.P50, v)
}

// A function-calling eval suite against the simulator: each item's answer
// is the call the sim made (right: the expected call; wrong: text), and
// the tool_call scorer agrees with the sim's truth item by item.
func TestToolCallEvalsScoredAgainstSimulatorTruth(t *testing.T) {
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}}]`
	var lines []string
	for i := range 24 {
		call := fmt.Sprintf(`{"name":"get_weather","arguments":{"city":"City %d"}}`, i)
		if i%3 == 0 {
			call = fmt.Sprintf(`{"name":"get_time","arguments":{"tz":"UTC+%d"}}`, i)
		}
		lines = append(lines, fmt.Sprintf(`{"id":"t%d","messages":[{"role":"user","content":"question %d"}],%s,"scorer":"tool_call","expected":%s}`, i, i, tools, call))
	}
	suite, err := quality.Parse(strings.NewReader(strings.Join(lines, "\n")), "evals/tools.jsonl")
	require.NoError(t, err)
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken = time.Millisecond, 0, 0
	simSuite, err := sim.ReadAnswers(strings.NewReader(strings.Join(lines, "\n")), "evals/tools.jsonl")
	require.NoError(t, err)
	cfg.Answers, cfg.Accuracy = []*sim.AnswerSuite{simSuite}, 0.6
	srv, c, truth := truthSim(t, cfg, 4)
	var reqs []workload.Request
	for _, it := range suite.Items {
		reqs = append(reqs, it.Request)
	}
	recs := closedLoop(t, c, reqs, 4)
	require.NoError(t, srv.Close())
	byID := truth.records(t)
	answers := map[string]*result.Record{}
	for _, r := range recs {
		require.Empty(t, r.ErrorKind, r.Error)
		answers[r.ID] = r
	}
	out := suite.Outcomes("evals/tools.jsonl", "separate", answers, nil)
	right := 0
	for _, o := range out.Items {
		tr := byID[answers[o.ID].RequestID]
		require.NotNil(t, tr.EvalRight, o.ID)
		assert.Equal(t, *tr.EvalRight, o.Pass, "%s: %s (output %s)", o.ID, o.Detail, o.Output)
		if o.Pass {
			right++
			assert.Equal(t, "tool_calls", o.FinishReason, o.ID)
		}
	}
	assert.Greater(t, right, 5, "accuracy 0.6 of 24: some right")
	assert.Less(t, right, 24, "accuracy 0.6 of 24: some wrong")
}

// closedLoop sends reqs once to c from n users and returns the records.
func closedLoop(t *testing.T, c *client.Client, reqs []workload.Request, n int) []*result.Record {
	t.Helper()
	return collect(t, &Dispatcher{Sender: c}, Plan{Scenario: "s", Repetition: 1, Requests: reqs, Load: config.Load{Type: config.LoadClosed, Concurrency: n}})
}

// summary is the repetition the records make.
func summary(recs []*result.Record) result.Repetition {
	agg := result.NewAggregator(result.SLO{}, false, 0).WithSubsets(true, true)
	for _, r := range recs {
		agg.Add(r)
	}
	return agg.Summary(1)
}

// histCount is how many values a repetition's histogram holds.
func histCount(t *testing.T, rep result.Repetition, name string) int64 {
	t.Helper()
	h, err := result.DecodeHistogram(rep.Histograms[name])
	require.NoError(t, err)
	return h.TotalCount()
}

// llama.cpp's server, started without --jinja, accepts a json_object
// response_format and does not enforce it: a 200 and a normal stream of
// free text (a real capture). The request succeeds, and its answer is a
// structured error, not a latency success.
func TestStructuredCheckOnLlamaCppCapture(t *testing.T) {
	body, err := os.ReadFile("../../testdata/captures/llamacpp/chat-stream-json-object-unconstrained.sse")
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Options{BaseURL: srv.URL, API: client.APIChat, Model: "m", MaxConns: 1})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	req := workload.Request{ID: "j", Prompt: "a person as JSON", MaxTokens: 12, ResponseFormat: json.RawMessage(`{"type":"json_object"}`)}
	recs := closedLoop(t, c, []workload.Request{req}, 1)
	require.Len(t, recs, 1)
	assert.Empty(t, recs[0].ErrorKind)
	assert.True(t, recs[0].Structured)
	assert.Equal(t, "length", recs[0].FinishReason)
	assert.True(t, strings.HasPrefix(recs[0].StructuredError, "cut by max_tokens (finish_reason length): not JSON: "), recs[0].StructuredError)
}

// A reasoning model (perfgate sim --reasoning-tokens) is timed apart: the
// first token is the first thought, the first answer comes after the
// thinking, the reasoning tokens are the simulator's, and an answer that
// max_tokens cut inside the thinking is counted as truncated, with no time
// to first answer.
func TestReasoningMeasuredAgainstSimulatorTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken = time.Millisecond, 0, 0
	cfg.ReasoningTokens = 6
	srv, c, truth := truthSim(t, cfg, 4)
	var reqs []workload.Request
	for i := range 12 {
		n := 16
		if i%4 == 3 {
			n = 4 // inside the thinking: no answer
		}
		reqs = append(reqs, workload.Request{ID: fmt.Sprintf("r%d", i), Prompt: fmt.Sprintf("think about %d", i), MaxTokens: n})
	}
	recs := closedLoop(t, c, reqs, 4)
	require.NoError(t, srv.Close())
	byID := truth.records(t)
	for _, r := range recs {
		tr := byID[r.RequestID]
		require.Empty(t, r.ErrorKind, r.Error)
		assert.Equal(t, tr.ReasoningTokens, r.ReasoningTokens, r.ID)
		assert.Equal(t, "usage", r.TokensFrom, r.ID)
		if r.ID[1:] == "3" || r.ID[1:] == "7" || r.ID[1:] == "11" {
			assert.Equal(t, 4, r.ReasoningTokens, r.ID)
			assert.Zero(t, r.FirstAnswerNS, "%s: cut inside the thinking", r.ID)
			assert.Equal(t, "length", r.FinishReason)
			continue
		}
		assert.Equal(t, 6, r.ReasoningTokens, r.ID)
		require.Greater(t, r.FirstAnswerNS, r.FirstTokenNS, "%s: the answer comes after the thinking", r.ID)
		// The answer's first chunk is the seventh: six gaps after the first thought.
		var sum int64
		for _, g := range r.ITLUS[:6] {
			sum += g
		}
		assert.InDelta(t, float64(r.FirstAnswerNS-r.FirstTokenNS)/1e3, float64(sum), 6, "%s: the gaps are whole µs, each cut by under 1 µs", r.ID)
	}
	rep := summary(recs)
	require.NotNil(t, rep.Reasoning)
	assert.Equal(t, 12, rep.Reasoning.Requests)
	assert.Equal(t, 3, rep.Reasoning.Truncated)
	assert.Equal(t, 9*6+3*4, rep.Reasoning.ReasoningTokens)
	assert.Equal(t, int64(9), rep.Reasoning.TTFA.Count)
	assert.Greater(t, rep.Reasoning.TTFA.P50, rep.TTFT.P50)
	v, err := rep.Value("reasoning_tokens")
	require.NoError(t, err)
	assert.InDelta(t, float64(9*6+3*4)/12, v, 1e-9)
}
