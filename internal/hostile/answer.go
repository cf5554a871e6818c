package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// completionRequest is what the server reads of a completion request.
type completionRequest struct {
	// text is the messages' contents joined by newlines, or the prompt.
	text string
	// maxTokens is max_tokens (or max_completion_tokens); 0 when unset.
	maxTokens    int
	stream       bool
	includeUsage bool
}

// promptTokens is the prompt's length in tokens, as the server counts them:
// its words, at least one.
func (c *completionRequest) promptTokens() int64 {
	return int64(max(1, len(strings.Fields(c.text))))
}

// parseCompletion reads a chat or completions request body.
func parseCompletion(body []byte) (*completionRequest, error) {
	var v struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Prompt              json.RawMessage `json:"prompt"`
		MaxTokens           *int            `json:"max_tokens"`
		MaxCompletionTokens *int            `json:"max_completion_tokens"`
		Stream              bool            `json:"stream"`
		StreamOptions       *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("the request body is not a JSON request: %v", err)
	}
	c := &completionRequest{stream: v.Stream, includeUsage: v.StreamOptions != nil && v.StreamOptions.IncludeUsage}
	switch {
	case v.MaxTokens != nil:
		c.maxTokens = *v.MaxTokens
	case v.MaxCompletionTokens != nil:
		c.maxTokens = *v.MaxCompletionTokens
	}
	if len(v.Messages) > 0 {
		parts := make([]string, len(v.Messages))
		for i, m := range v.Messages {
			parts[i] = contentText(m.Content)
		}
		c.text = strings.Join(parts, "\n")
	} else {
		c.text = contentText(v.Prompt)
	}
	return c, nil
}

// contentText reads a message's content or a prompt: a string, a list of
// strings, or a list of content parts ({"type":"text","text":...}).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return ""
	}
	parts := make([]string, 0, len(list))
	for _, item := range list {
		var part struct {
			Text string `json:"text"`
		}
		switch {
		case json.Unmarshal(item, &s) == nil:
			parts = append(parts, s)
		case json.Unmarshal(item, &part) == nil:
			parts = append(parts, part.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// vocabulary is what the server says, a token at a time.
var vocabulary = []string{"The", " hostile", " server", " streams", " a", " few", " plain", " tokens", " and", " stops", "."}

func token(i int) string { return vocabulary[i%len(vocabulary)] }

// format renders the chunks of one answer as vLLM does.
type format struct {
	chat    bool
	id      string
	created int64
	model   string
}

func newFormat(chat bool, model string) *format {
	id := "cmpl-hostile"
	if chat {
		id = "chatcmpl-hostile"
	}
	return &format{chat: chat, id: id, created: time.Now().Unix(), model: model}
}

func (f *format) event(choices []map[string]any, usage map[string]any) []byte {
	object := "text_completion"
	if f.chat {
		object = "chat.completion.chunk"
	}
	v := map[string]any{"id": f.id, "object": object, "created": f.created, "model": f.model, "choices": choices}
	if usage != nil {
		v["usage"] = usage
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and numbers
	}
	return fmt.Appendf(nil, "data: %s\n\n", b)
}

// role is the chat stream's first chunk.
func (f *format) role() []byte {
	return f.event([]map[string]any{{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}, "finish_reason": nil}}, nil)
}

func (f *format) content(text string) []byte {
	if f.chat {
		return f.event([]map[string]any{{"index": 0, "delta": map[string]any{"content": text}, "finish_reason": nil}}, nil)
	}
	return f.event([]map[string]any{{"index": 0, "text": text, "finish_reason": nil}}, nil)
}

func (f *format) finish(reason string) []byte {
	if f.chat {
		return f.event([]map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": reason}}, nil)
	}
	return f.event([]map[string]any{{"index": 0, "text": "", "finish_reason": reason}}, nil)
}

func (f *format) usage(prompt, completion int64) []byte {
	return f.event([]map[string]any{}, map[string]any{
		// total_tokens as a float: HugeUsage's sum must not wrap.
		"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": json.Number(addTokens(prompt, completion)),
	})
}

// addTokens is prompt + completion, written exactly even where int64 would
// overflow.
func addTokens(a, b int64) string {
	if (b > 0 && a > (1<<63-1)-b) || (b < 0 && a < (-1<<63)-b) {
		return strconv.FormatFloat(float64(a)+float64(b), 'f', -1, 64)
	}
	return strconv.FormatInt(a+b, 10)
}

const done = "data: [DONE]\n\n"

// errorEvent is llama.cpp's mid-stream error: an error object as data.
func errorEvent(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": 500, "message": msg, "type": "server_error"}})
	return fmt.Appendf(nil, "data: %s\n\n", b)
}

// malformedChunk is a data: event that is not JSON.
const malformedChunk = "data: {\"choices\":[{\"delta\": this is not JSON\n\n"

// sink writes a stream's pieces, each flushed to the client at once.
type sink interface {
	write(p []byte) error
}

// responseSink writes through net/http.
type responseSink struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (s responseSink) write(p []byte) error {
	if _, err := s.w.Write(p); err != nil {
		return err
	}
	return s.rc.Flush()
}

// chunkedSink writes HTTP/1.1 chunked encoding by hand, on a hijacked
// connection.
type chunkedSink struct{ bw *bufio.Writer }

func (s chunkedSink) write(p []byte) error {
	fmt.Fprintf(s.bw, "%x\r\n", len(p))
	s.bw.Write(p)
	s.bw.WriteString("\r\n")
	return s.bw.Flush()
}

// errCut says the answer ends by cutting the connection.
var errCut = errors.New("hostile: cut the connection")

func startSSE(w http.ResponseWriter) responseSink {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	return responseSink{w: w, rc: rc}
}

// complete answers a completion request in mode.
func (s *Server) complete(ctx context.Context, w http.ResponseWriter, cr *completionRequest, mode Mode, chat bool) {
	if !cr.stream {
		writeError(w, http.StatusBadRequest, `hostile: only streaming requests are served (set "stream": true)`)
		return
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	n := s.opts.Tokens
	if cr.maxTokens > 0 {
		n = min(n, cr.maxTokens)
	}
	f := newFormat(chat, s.opts.Model)
	switch mode {
	case EndlessEvent, EndlessLine, EndlessComments:
		s.endlessStream(ctx, startSSE(w), mode)
	case TrickleBody:
		s.trickleStream(ctx, w, f)
	case CloseAfterStream:
		s.closeAfterStream(ctx, w, f, cr, n)
	default:
		if err := s.stream(ctx, startSSE(w), f, cr, n, mode); errors.Is(err, errCut) {
			panic(http.ErrAbortHandler)
		}
	}
}

// stream writes an answer of n tokens in mode: Healthy or one of the modes
// that change what a stream says.
func (s *Server) stream(ctx context.Context, out sink, f *format, cr *completionRequest, n int, mode Mode) error {
	usage := cr.includeUsage
	completion := int64(n)
	switch mode {
	case HugeUsage:
		completion, usage = HugeTokens, true
	case NegativeUsage:
		completion, usage = NegativeTokens, true
	case InflatedUsage:
		completion, usage = int64(n)*InflateFactor, true
	case NoOutput, EmptyContent:
		usage = true
	}
	write := func(p []byte) error { return out.write(p) }
	if mode != NoOutput {
		if f.chat {
			if err := write(f.role()); err != nil {
				return err
			}
		}
		for i := range n {
			if !s.wait(ctx, s.opts.TokenDelay) {
				return context.Cause(ctx)
			}
			text := token(i)
			if mode == EmptyContent {
				text = ""
			}
			if err := write(f.content(text)); err != nil {
				return err
			}
			if mode != EmptyContent {
				s.output.Add(1)
			}
			if i != min(2, n)-1 { // the failures come after the second token
				continue
			}
			switch mode {
			case MalformedChunk:
				if err := write([]byte(malformedChunk)); err != nil {
					return err
				}
			case ErrorEvent:
				return write(errorEvent(ErrorEventMessage))
			case Truncated:
				return errCut
			}
		}
	}
	reason := "stop"
	if cr.maxTokens > 0 && n >= cr.maxTokens {
		reason = "length"
	}
	if err := write(f.finish(reason)); err != nil {
		return err
	}
	if usage {
		if err := write(f.usage(cr.promptTokens(), completion)); err != nil {
			return err
		}
	}
	if err := write([]byte(done)); err != nil {
		return err
	}
	s.answers.Add(1)
	s.prompt.Add(cr.promptTokens())
	return nil
}

// closeAfterStream answers as llama.cpp's server does: a complete chunked
// SSE response, written by hand on the hijacked connection with no
// "Connection: close", and then the connection closed (after
// Options.CloseDelay).
func (s *Server) closeAfterStream(ctx context.Context, w http.ResponseWriter, f *format, cr *completionRequest, n int) {
	conn, err := s.hijack(w)
	if err != nil {
		return
	}
	defer s.release(conn)
	_ = conn.SetWriteDeadline(time.Now().Add(s.opts.CapTime))
	bw := bufio.NewWriter(conn)
	bw.WriteString("HTTP/1.1 200 OK\r\n" +
		"Server: hostile\r\n" +
		"Content-Type: text/event-stream\r\n" +
		"Cache-Control: no-cache\r\n" +
		"Transfer-Encoding: chunked\r\n\r\n")
	if err := s.stream(ctx, chunkedSink{bw}, f, cr, n, Healthy); err != nil {
		return
	}
	bw.WriteString("0\r\n\r\n")
	if bw.Flush() != nil {
		return
	}
	s.wait(ctx, s.opts.CloseDelay)
}
