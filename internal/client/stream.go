package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// chunk is the part of a streamed chunk that perfgate reads; encoding/json
// skips the rest (ids, timings, logprobs).
type chunk struct {
	Choices []choice `json:"choices"`
	// Usage is read by readUsage, so that a usage that is not a count does
	// not fail the chunk.
	Usage json.RawMessage `json:"usage"`
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
	// ToolCalls carries pieces of the answer's tool calls (OpenAI's
	// streamed shape).
	ToolCalls []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    *int           `json:"index"`
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function *functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

const (
	// maxPresize bounds the capacity reserved up front from max_tokens.
	maxPresize = 1 << 16
	// maxFinishReason bounds the finish_reason kept: real ones are words.
	maxFinishReason = 64
)

// Bounds on one response's output, so that a server that streams for ever
// cannot exhaust memory before the request's timeout. A server generates at
// most max_tokens tokens, in at most as many chunks (twice as many with the
// slack of UsageRefused's rules), and no token's text is longer than a few
// hundred bytes.
const (
	outputChunkSlack = 64
	outputBytesPer   = 1 << 10 // per token of max_tokens
	outputBytesSlack = 64 << 10
	// Without a max_tokens (a request that sets none):
	maxOutputChunks = 1 << 20
	maxOutputBytes  = 64 << 20
)

// outputLimits returns the most chunks of output and bytes of text a response
// to a request for maxTokens may carry.
func outputLimits(maxTokens int) (chunks, bytes int) {
	if maxTokens <= 0 || maxTokens > maxOutputChunks/2 {
		return maxOutputChunks, maxOutputBytes
	}
	return 2*maxTokens + outputChunkSlack, min(maxTokens*outputBytesPer+outputBytesSlack, maxOutputBytes)
}

// stream accumulates one response from its events.
type stream struct {
	resp      *Response
	maxTokens int // the request's max_tokens
	text      strings.Builder
	events    int // events handled
	chunks    int // events that carried output (content or reasoning)
	// outBytes is the output text that arrived, reasoning included: a bound
	// on the tokens a usage may claim.
	outBytes int
	// promptBytes and promptMessages size the request's text (0: unknown):
	// a bound on the prompt tokens a usage may claim.
	promptBytes, promptMessages int
	finish                      bool // a choice carried a finish_reason
	// usage is the last usage seen, if hasUsage.
	usage    usage
	hasUsage bool
	// maxChunks and maxText bound the output (see outputLimits); maxText
	// bounds the text and the tool calls' names and arguments together.
	maxChunks, maxText int
	// calls are the tool calls being assembled, by index (an unused slot
	// is an index no fragment named); callBytes is the bytes of their
	// names and arguments, lastCall the index of the last fragment's call.
	calls     []toolCallBuilder
	callBytes int
	lastCall  int
	dec       decoded
	scratch   []byte // fastDecode's buffer for unescaped strings
}

// toolCallBuilder assembles one tool call from its fragments.
type toolCallBuilder struct {
	used                bool
	id, typ, name, args []byte
}

func newStream(resp *Response, maxTokens int) *stream {
	s := &stream{resp: resp, maxTokens: maxTokens}
	s.maxChunks, s.maxText = outputLimits(maxTokens)
	n := min(max(maxTokens, 0)+1, maxPresize)
	resp.ChunkTimes = make([]time.Time, 0, n)
	s.text.Grow(min(4*n, maxPresize))
	return s
}

// read reads events from er into s until the stream ends, and judges it. It
// returns nil for a stream that ended properly (with [DONE], or at the end of
// the body after a finish_reason) and carried output; ErrNoOutput for one that
// ended properly without output; another *Error for a stream that ended too
// early, an error event or a malformed chunk. A failure to read comes back as
// readErr instead, for the caller to classify (a timeout looks like one).
// hook, if not nil, sees each event with its read time. resp.End is the time
// the last event (or the end) was read.
func (s *stream) read(er *EventReader, hook func(Event, time.Time)) (e *Error, readErr error) {
	for {
		ev, err := er.Next()
		now := time.Now()
		if err != nil {
			s.resp.End = now
			if err != io.EOF {
				return nil, err
			}
			if !er.Done() && !s.finish {
				return &Error{Kind: ErrStream, Err: fmt.Errorf("the stream ended after %s, before [DONE] and without a finish_reason", plural(s.events, "event"))}, nil
			}
			if s.chunks == 0 {
				return s.noOutput(er.Done()), nil
			}
			return nil, nil
		}
		if hook != nil {
			hook(ev, now)
		}
		if e := s.event(ev, now); e != nil {
			s.resp.End = now
			return e, nil
		}
	}
}

// noOutput describes a stream that ended properly without output: what it
// did carry.
func (s *stream) noOutput(done bool) *Error {
	var b strings.Builder
	b.WriteString("the stream ended ")
	if done {
		b.WriteString("with [DONE]")
	} else {
		b.WriteString("after a finish_reason")
	}
	b.WriteString(" but carried no output text: ")
	b.WriteString(plural(s.events, "event"))
	if s.resp.FinishReason != "" {
		b.WriteString(", finish_reason ")
		b.WriteString(strconv.Quote(s.resp.FinishReason))
	} else {
		b.WriteString(", no finish_reason")
	}
	switch {
	case !s.hasUsage:
		b.WriteString(", no usage")
	case s.usage.unreadable != "":
		b.WriteString(", an unreadable usage (")
		b.WriteString(s.usage.unreadable)
		b.WriteString(")")
	default:
		fmt.Fprintf(&b, ", usage completion_tokens %d", s.usage.CompletionTokens)
	}
	return &Error{Kind: ErrNoOutput, Err: errors.New(b.String())}
}

// event handles one event read at now. It returns an error for an error event,
// a malformed chunk or too much output; the stream should then end.
func (s *stream) event(ev Event, now time.Time) *Error {
	s.events++
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
	callBytes := 0
	for i := range d.tools {
		callBytes += len(d.tools[i].name) + len(d.tools[i].args)
	}
	if len(out) > 0 || d.reasoning || callBytes > 0 {
		if s.chunks == s.maxChunks || s.text.Len()+s.callBytes+len(out)+callBytes > s.maxText {
			return s.tooMuch()
		}
		if s.chunks == 0 {
			s.resp.FirstToken = now
		}
		s.chunks++
		s.outBytes += len(out) + d.reasoningBytes + callBytes
		s.resp.ChunkTimes = append(s.resp.ChunkTimes, now)
		s.text.Write(out)
		if d.reasoning {
			s.resp.ReasoningChunks++
		}
		if (len(out) > 0 || callBytes > 0) && s.resp.FirstAnswer.IsZero() {
			s.resp.FirstAnswer = now
		}
	}
	for i := range d.tools {
		if e := s.toolFragment(&d.tools[i]); e != nil {
			return e
		}
	}
	if f := d.finish; len(f) > 0 {
		if len(f) > maxFinishReason {
			f = cutUTF8(f, maxFinishReason)
		}
		if string(f) != s.resp.FinishReason {
			s.resp.FinishReason = string(f)
		}
		s.finish = true
	}
	return nil
}

// toolFragment adds one fragment to the tool call it belongs to: the call of
// its index; without an index, a new call when it carries an id other than
// the last call's, else the last call. It fails the stream for an index
// perfgate does not keep.
func (s *stream) toolFragment(f *toolFragment) *Error {
	idx := s.lastCall
	switch {
	case f.hasIndex:
		idx = f.index
	case len(f.id) > 0 && len(s.calls) > 0 && string(s.calls[s.lastCall].id) != string(cutUTF8(f.id, MaxToolCallField)):
		idx = len(s.calls)
	}
	if idx < 0 || idx >= MaxToolCalls {
		return &Error{Kind: ErrStream, Err: fmt.Errorf("a tool call with index %d: an answer may make at most %d (perfgate stops reading it)", idx, MaxToolCalls)}
	}
	for len(s.calls) <= idx {
		s.calls = append(s.calls, toolCallBuilder{})
	}
	s.lastCall = idx
	c := &s.calls[idx]
	c.used = true
	keep := func(dst *[]byte, v []byte) {
		if len(*dst) < MaxToolCallField {
			*dst = append(*dst, cutUTF8(v, MaxToolCallField-len(*dst))...)
		}
	}
	if len(c.id) == 0 {
		keep(&c.id, f.id)
	}
	if len(c.typ) == 0 {
		keep(&c.typ, f.typ)
	}
	keep(&c.name, f.name) // a name sent in pieces is joined, as arguments are
	c.args = append(c.args, f.args...)
	s.callBytes += len(f.name) + len(f.args)
	return nil
}

// tooMuch is the error for output past outputLimits.
func (s *stream) tooMuch() *Error {
	what := "no max_tokens"
	if s.maxTokens > 0 {
		what = "max_tokens " + strconv.Itoa(s.maxTokens)
	}
	return &Error{Kind: ErrStream, Err: fmt.Errorf("the server sent more output than a request with %s can have (%s, %d bytes of text and tool calls): perfgate stops reading it",
		what, plural(s.chunks, "chunk"), s.text.Len()+s.callBytes)}
}

// cutUTF8 returns at most n bytes of b, cut on a rune boundary.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
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
	d.reset()
	d.usage, d.hasUsage = readUsage(c.Usage)
	if len(c.Choices) > 0 {
		ch := &c.Choices[0]
		d.content = []byte(ch.Delta.Content)
		d.text = []byte(ch.Text)
		d.reasoning = ch.Delta.ReasoningContent != "" || ch.Delta.Reasoning != ""
		d.reasoningBytes = len(ch.Delta.ReasoningContent) + len(ch.Delta.Reasoning)
		d.finish = []byte(ch.FinishReason)
		for _, tc := range ch.Delta.ToolCalls {
			f := toolFragment{id: []byte(tc.ID), typ: []byte(tc.Type)}
			if tc.Index != nil {
				f.index, f.hasIndex = *tc.Index, true
			}
			if tc.Function != nil {
				f.name, f.args = []byte(tc.Function.Name), []byte(tc.Function.Arguments)
			}
			d.tools = append(d.tools, f)
		}
	}
	return nil
}

// close fills the response's text and token counts from what was read: the
// server's usage if it passes checkUsage, else perfgate's own count.
func (s *stream) close() {
	s.resp.Text = s.text.String()
	s.resp.ToolCalls = nil
	for i := range s.calls {
		if c := &s.calls[i]; c.used {
			s.resp.ToolCalls = append(s.resp.ToolCalls, ToolCall{Index: i, ID: string(c.id), Type: string(c.typ),
				Name: string(c.name), Arguments: string(c.args)})
		}
	}
	if s.hasUsage {
		why := checkUsage(s.usage, s.chunks, s.maxTokens)
		if why == "" {
			why = checkUsageSize(s.usage, s.outBytes, s.chunks, s.promptBytes, s.promptMessages)
		}
		if why == "" {
			s.resp.PromptTokens = int(s.usage.PromptTokens)
			s.resp.OutputTokens = int(s.usage.CompletionTokens)
			s.resp.TokensFrom = TokensFromUsage
			s.resp.ReasoningTokens = min(s.resp.ReasoningChunks, s.resp.OutputTokens)
			if s.usage.HasReasoning && s.usage.ReasoningTokens <= s.usage.CompletionTokens {
				s.resp.ReasoningTokens = int(s.usage.ReasoningTokens)
			}
			return
		}
		s.resp.UsageRefused = why
	}
	s.resp.PromptTokens = 0
	s.resp.OutputTokens = s.chunks
	s.resp.TokensFrom = TokensFromChunks
	s.resp.ReasoningTokens = s.resp.ReasoningChunks
}
