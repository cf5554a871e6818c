package run

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/workload"
)

// lockedBuffer is a bytes.Buffer safe for the simulator's truth writer.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// An agent's requests (tools declared, the simulator answering each with a
// call) are measured as successes: every record has the simulator's call,
// name and arguments, its first token where the simulator wrote the first
// piece of the call, and a chunk time for every piece. Before tool calls
// were read, each was a no_output failure.
func TestToolCallsMeasuredAgainstSimulatorTruth(t *testing.T) {
	truth := &lockedBuffer{}
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken = 2*time.Millisecond, 0, 0
	cfg.Truth = truth
	srv, err := sim.Start(t.Context(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	c, err := client.New(client.Options{BaseURL: srv.URL(), API: client.APIChat, Model: cfg.Model, MaxConns: 4})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)

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
	d := &Dispatcher{Sender: c}
	var recs []*result.Record
	var mu sync.Mutex
	err = d.Run(t.Context(), Plan{Scenario: "agents", Repetition: 1, Requests: reqs, Load: config.Load{Type: config.LoadClosed, Concurrency: 4}},
		func(r *result.Record) { mu.Lock(); recs = append(recs, r); mu.Unlock() })
	require.NoError(t, err)
	require.NoError(t, srv.Close())

	byID := map[string]sim.TruthRecord{}
	sc := bufio.NewScanner(strings.NewReader(truth.b.String()))
	for sc.Scan() {
		var tr sim.TruthRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &tr))
		byID[tr.RequestID] = tr
	}
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
