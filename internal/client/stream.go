package client

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// chunk is the part of a streamed chunk that perfgate reads; encoding/json
// skips the rest (ids, timings, logprobs).
type chunk struct {
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage"`
	// Error is an error event in the stream: {"error": {...}} or {"error": "..."}.
	Error json.RawMessage `json:"error"`
	// Object is "error" in vLLM's older error events, with Message beside it.
	Object  string          `json:"object"`
	Message json.RawMessage `json:"message"`
}

type choice struct {
	Text         string `json:"text"` // completions
	Delta        delta  `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

type delta struct {
	Content string `json:"content"`
	// ReasoningContent (DeepSeek, vLLM, llama.cpp) and Reasoning (newer vLLM)
	// carry a reasoning model's thinking tokens.
	ReasoningContent string `json:"reasoning_content"`
	Reasoning        string `json:"reasoning"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// maxPresize bounds the capacity reserved up front from max_tokens.
const maxPresize = 1 << 16

// stream accumulates one response from its events.
type stream struct {
	resp   *Response
	text   strings.Builder
	chunks int  // events that carried output (content or reasoning)
	finish bool // a choice carried a finish_reason
	// usage is the last usage seen, if hasUsage.
	usage    usage
	hasUsage bool
	dec      decoded
	scratch  []byte // fastDecode's buffer for unescaped strings
}

func newStream(resp *Response, maxTokens int) *stream {
	s := &stream{resp: resp}
	n := min(max(maxTokens, 0)+1, maxPresize)
	resp.ChunkTimes = make([]time.Time, 0, n)
	s.text.Grow(min(4*n, maxPresize))
	return s
}

// event handles one event read at now. It returns an error for an error event
// or a malformed chunk; the stream should then end.
func (s *stream) event(ev Event, now time.Time) *Error {
	if ev.Name == "error" {
		msg := serverMessage(ev.Data)
		if msg == "" {
			msg = "error event"
		}
		return &Error{Kind: ErrStream, Message: msg}
	}
	if len(ev.Data) == 0 {
		return nil // an empty keep-alive event
	}
	d := &s.dec
	if !fastDecode(ev.Data, &s.scratch, d) {
		if e := slowDecode(ev.Data, d); e != nil {
			return e
		}
	}
	if d.hasUsage {
		s.usage = d.usage
		s.hasUsage = true
	}
	out := d.content
	if len(out) == 0 {
		out = d.text
	}
	if len(out) > 0 || d.reasoning {
		if s.chunks == 0 {
			s.resp.FirstToken = now
		}
		s.chunks++
		s.resp.ChunkTimes = append(s.resp.ChunkTimes, now)
		s.text.Write(out)
	}
	if len(d.finish) > 0 {
		if string(d.finish) != s.resp.FinishReason {
			s.resp.FinishReason = string(d.finish)
		}
		s.finish = true
	}
	return nil
}

// slowDecode decodes a chunk with encoding/json: the chunks fastDecode
// declines, error events among them.
func slowDecode(data []byte, d *decoded) *Error {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &Error{Kind: ErrStream, Err: fmt.Errorf("malformed chunk %q: %w", truncate(data[:min(len(data), 120)]), err)}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" || c.Object == "error" {
		msg := errorFieldMessage(c.Error)
		if msg == "" {
			msg = jsonString(c.Message)
		}
		if msg == "" {
			msg = truncate(data)
		}
		return &Error{Kind: ErrStream, Message: msg}
	}
	*d = decoded{}
	if c.Usage != nil {
		d.usage, d.hasUsage = *c.Usage, true
	}
	if len(c.Choices) > 0 {
		ch := &c.Choices[0]
		d.content = []byte(ch.Delta.Content)
		d.text = []byte(ch.Text)
		d.reasoning = ch.Delta.ReasoningContent != "" || ch.Delta.Reasoning != ""
		d.finish = []byte(ch.FinishReason)
	}
	return nil
}

// close fills the response's text and token counts from what was read.
func (s *stream) close() {
	s.resp.Text = s.text.String()
	if s.hasUsage {
		s.resp.PromptTokens = s.usage.PromptTokens
		s.resp.OutputTokens = s.usage.CompletionTokens
		s.resp.TokensFrom = TokensFromUsage
		return
	}
	s.resp.PromptTokens = 0
	s.resp.OutputTokens = s.chunks
	s.resp.TokensFrom = TokensFromChunks
}
