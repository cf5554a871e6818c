package result

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Record is the measurement of one request, as written one JSON line per
// request by `perfgate run --records FILE`. Times ending in _ns are nanoseconds
// since the start of the repetition on the monotonic clock; a zero
// FirstTokenNS means no output text arrived.
type Record struct {
	ID           string `json:"id"`         // the workload request's id
	RequestID    string `json:"request_id"` // the X-Request-Id sent (unique in the run)
	Scenario     string `json:"scenario"`
	Repetition   int    `json:"repetition"`
	ScheduledNS  int64  `json:"scheduled_ns"` // planned send time (closed loop: = sent_ns)
	SentNS       int64  `json:"sent_ns"`
	FirstTokenNS int64  `json:"first_token_ns"`
	// FirstAnswerNS is when the first chunk of the answer (not reasoning)
	// arrived; 0 when none did. Written only for a request that reasoned,
	// where it differs from FirstTokenNS.
	FirstAnswerNS int64   `json:"first_answer_ns,omitempty"`
	EndNS         int64   `json:"end_ns"`
	TTFTUS        int64   `json:"ttft_us"`
	E2EUS         int64   `json:"e2e_us"`
	ITLUS         []int64 `json:"itl_us"`
	PromptTokens  int     `json:"prompt_tokens"`
	OutputTokens  int     `json:"output_tokens"`
	TokensFrom    string  `json:"tokens_from"`
	// ReasoningTokens is how many of OutputTokens were reasoning (a
	// reasoning model's thinking): from the usage's
	// completion_tokens_details where given, else the reasoning chunks.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// UsageRefused says why the server's usage was not believed (the
	// counts then come from the stream); empty when it was, or was absent.
	UsageRefused string `json:"usage_refused,omitempty"`
	// Retries is 1 when the request was sent again on a new connection
	// because the reused one was closed before any answer; times are the
	// retry's.
	Retries      int    `json:"retries,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
	// ToolCalls are the tool calls the answer made (finish reason
	// "tool_calls", usually), in the order of their index; bounded by the
	// client (client.MaxToolCalls, client.MaxToolCallField, and the
	// response's bound on output).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Structured says the request asked for structured output (a
	// response_format of JSON, or tools), and StructuredError what was
	// wrong with a successful answer to it (not JSON, off its schema, a
	// call to an undeclared function...), empty when it was right. Such an
	// answer is counted, not timed: it is kept out of the latency
	// statistics and goodput.
	Structured      bool   `json:"structured,omitempty"`
	StructuredError string `json:"structured_error,omitempty"`
	// Model is the model the request was sent to when its workload line
	// named one (an adapter, say), else empty: the target's model.
	Model string `json:"model,omitempty"`
	// ColdAdapter says the request was the first of its repetition to its
	// adapter after the scenario's cold_adapters reload.
	ColdAdapter bool   `json:"cold_adapter,omitempty"`
	ErrorKind   string `json:"error_kind,omitempty"`
	Error       string `json:"error"`
	// Session and Turn place the request in its session: the workload's
	// session_id and turn; empty and 0 for a request of no session.
	Session string `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
	// SessionTurns is how many turns the session has (a session cut short
	// because the request count ran out sends fewer, and is not counted
	// as completed), and
	// SessionRun tells apart the runs of one session in a repetition (each
	// pass over the workload runs it again), from 1. Kept in memory for the
	// session statistics, not written.
	SessionTurns int `json:"-"`
	SessionRun   int `json:"-"`
	// Eval names the suite when the request was an eval item (then ID is
	// the item's id); eval items are kept out of the latency metrics.
	Eval string `json:"eval,omitempty"`
	// Text is the output text; kept in memory for the quality stage, not written.
	Text string `json:"-"`
}

// ToolCall is one tool call of an answer: the function called and its
// arguments as the server streamed them (JSON text, when it is right).
type ToolCall struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Type      string `json:"type,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// The values of ScenarioResult.Salt.
const (
	SaltPerPass = "per-pass"
	SaltOff     = "off"
)

// SessionErrorKind is the error kind of a session turn that was not sent
// because an earlier turn of its session failed: the conversation it would
// carry does not exist. Each such turn counts as a failed request, so the
// error rate shows the turns a failure cost and none is silently skipped;
// having never been sent, it is kept out of the schedule's statistics
// (send lag, rates) and of the mean concurrency.
const SessionErrorKind = "session"

// OK reports whether the request succeeded.
func (r *Record) OK() bool { return r.ErrorKind == "" }

// RecordWriter writes records as JSON lines; it is safe for concurrent use.
type RecordWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
	err error
}

// NewRecordWriter returns a writer of JSON lines to w. Call Flush at the end.
func NewRecordWriter(w io.Writer) *RecordWriter {
	bw := bufio.NewWriterSize(w, 64<<10)
	return &RecordWriter{w: bw, enc: json.NewEncoder(bw)}
}

// Write appends one record; the first error sticks and is returned by Flush too.
func (rw *RecordWriter) Write(r *Record) error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err == nil {
		if err := rw.enc.Encode(r); err != nil {
			rw.err = fmt.Errorf("write record: %w", err)
		}
	}
	return rw.err
}

// Flush writes out buffered records.
func (rw *RecordWriter) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err == nil {
		if err := rw.w.Flush(); err != nil {
			rw.err = fmt.Errorf("flush records: %w", err)
		}
	}
	return rw.err
}
