package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// TruthRecord is the server's ground truth for one finished request, one
// JSON line each. All *_ns fields are nanoseconds since Start on the
// monotonic clock.
type TruthRecord struct {
	// RequestID is the request's X-Request-Id header, or a generated id.
	RequestID string `json:"request_id"`
	// ArrivalNS is when the handler was entered.
	ArrivalNS int64 `json:"arrival_ns"`
	// FirstTokenNS is when the first content chunk had been written and
	// flushed; 0 if none was (and for non-streaming requests).
	FirstTokenNS int64 `json:"first_token_ns"`
	// TokenNS holds when each content chunk had been written and flushed, in
	// order.
	TokenNS []int64 `json:"token_ns"`
	// EndNS is when the response had been completely written and flushed.
	EndNS        int64 `json:"end_ns"`
	PromptTokens int   `json:"prompt_tokens"`
	// CachedTokens is how many of the prompt tokens the prefix cache
	// served, so that a test can tell a measured prefill from a cache hit.
	CachedTokens int `json:"cached_tokens"`
	OutputTokens int `json:"output_tokens"`
	// Preemptions is how many times the engine preempted the request
	// (Config.KVPolicy preempt) and recomputed it; absent for none.
	Preemptions  int    `json:"preemptions,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
	// Error says why the request failed; empty on success.
	Error string `json:"error,omitempty"`
	// EvalSuite and EvalItem name the --answers item the request's prompt
	// matched, and EvalRight says whether it was answered right; all absent
	// for other requests.
	EvalSuite string `json:"eval_suite,omitempty"`
	EvalItem  string `json:"eval_item,omitempty"`
	EvalRight *bool  `json:"eval_right,omitempty"`
	// ReasoningTokens is how many of OutputTokens were thinking
	// (--reasoning-tokens), streamed as reasoning_content before the answer.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// ToolCall is the call the request was answered with (a chat request
	// with tools), its arguments as sent; absent for text.
	ToolCall *TruthToolCall `json:"tool_call,omitempty"`
	// Structured is set for a request decoded under a grammar (JSON, or a
	// tool call): Valid false for an answer --structured-error-rate cut.
	Structured *TruthStructured `json:"structured,omitempty"`
	// Adapter is the LoRA adapter the request named (Config.Loras), and
	// AdapterLoaded says its admission loaded it (it was not resident):
	// the request paid Config.LoraLoad.
	Adapter       string `json:"adapter,omitempty"`
	AdapterLoaded bool   `json:"adapter_loaded,omitempty"`
	// Replicas is how many replicas were ready when the request was
	// admitted (Config.AutoscaleMax); absent without autoscaling, and for a
	// request never admitted.
	Replicas int `json:"replicas,omitempty"`
	// DriftFactor is the factor Config.Drift multiplied step time by when
	// the request arrived (Server.DriftFactor); absent without Drift.
	DriftFactor float64 `json:"drift_factor,omitempty"`
}

// TruthStructured is what the sim did to a structured request's answer.
type TruthStructured struct {
	Valid bool `json:"valid"`
}

// TruthToolCall is the tool call of a TruthRecord.
type TruthToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// truthToolCall is the call g made in its first n tokens; nil when g is
// not a tool call.
func truthToolCall(g generation, n int) *TruthToolCall {
	tg, ok := g.(toolGen)
	if !ok {
		return nil
	}
	return &TruthToolCall{Name: tg.call.name, Arguments: tg.text(n)}
}

// truthWriter serialises TruthRecords through a buffer. Records written
// after close are dropped.
type truthWriter struct {
	mu     sync.Mutex
	w      *bufio.Writer
	closed bool
	err    error
}

func newTruthWriter(w io.Writer) *truthWriter {
	if w == nil {
		return nil
	}
	return &truthWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

func (t *truthWriter) write(rec *TruthRecord) {
	if t == nil {
		return
	}
	if rec.TokenNS == nil {
		rec.TokenNS = []int64{}
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return // a TruthRecord always marshals
	}
	line = append(line, '\n')
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.err != nil {
		return
	}
	_, t.err = t.w.Write(line)
}

func (t *truthWriter) close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.err
	}
	t.closed = true
	if err := t.w.Flush(); err != nil && t.err == nil {
		t.err = err
	}
	return t.err
}

// ReadTruth reads a --truth file (JSON lines of TruthRecord) into a map keyed
// by request id, for checking a client's measurements against the server's.
func ReadTruth(r io.Reader) (map[string]TruthRecord, error) {
	out := map[string]TruthRecord{}
	dec := json.NewDecoder(r)
	for line := 1; dec.More(); line++ {
		var rec TruthRecord
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("truth record %d: %w", line, err)
		}
		out[rec.RequestID] = rec
	}
	return out, nil
}
