package sim

import (
	"encoding/json"
	"strconv"
	"time"
)

// format renders one request's responses the way vLLM does. Chunks are
// appended to a caller's buffer; the constant head of every chunk is
// rendered once.
type format struct {
	api     apiKind
	head    []byte // `data: {"id":...,"model":...,` up to "choices"
	id      string
	created int64
	model   string
}

func newFormat(api apiKind, model, requestID string) *format {
	f := &format{api: api, model: model, created: time.Now().Unix()}
	object := "chat.completion.chunk"
	f.id = "chatcmpl-" + requestID
	if api == apiCompletions {
		object = "text_completion"
		f.id = "cmpl-" + requestID
	}
	h := []byte(`data: {"id":`)
	h = appendJSONString(h, f.id)
	h = append(h, `,"object":"`...)
	h = append(h, object...)
	h = append(h, `","created":`...)
	h = strconv.AppendInt(h, f.created, 10)
	h = append(h, `,"model":`...)
	h = appendJSONString(h, model)
	h = append(h, ',')
	f.head = h
	return f
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// roleChunk is the chat stream's first chunk: the role, no content.
func (f *format) roleChunk(b []byte) []byte {
	b = append(b, f.head...)
	return append(b, `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

func (f *format) tokenChunk(b []byte, tok string) []byte {
	b = append(b, f.head...)
	if f.api == apiChat {
		b = append(b, `"choices":[{"index":0,"delta":{"content":`...)
		b = appendJSONString(b, tok)
		return append(b, `},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
	}
	b = append(b, `"choices":[{"index":0,"text":`...)
	b = appendJSONString(b, tok)
	return append(b, `,"logprobs":null,"finish_reason":null,"stop_reason":null}]}`+"\n\n"...)
}

// toolChunk is token i of a tool call: the first carries the call's id,
// type and name with the first piece of its arguments, as OpenAI and vLLM
// stream them; the others a piece of the arguments each.
func (f *format) toolChunk(b []byte, g toolGen, i int) []byte {
	b = append(b, f.head...)
	b = append(b, `"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,`...)
	if i == 0 {
		b = append(b, `"id":`...)
		b = appendJSONString(b, "call-"+f.id)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = appendJSONString(b, g.call.name)
		b = append(b, `,"arguments":`...)
	} else {
		b = append(b, `"function":{"arguments":`...)
	}
	b = appendJSONString(b, g.Token(i))
	return append(b, `}}]},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

func (f *format) finalChunk(b []byte, reason string) []byte {
	b = append(b, f.head...)
	if f.api == apiChat {
		b = append(b, `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
	} else {
		b = append(b, `"choices":[{"index":0,"text":"","logprobs":null,"finish_reason":`...)
	}
	b = appendJSONString(b, reason)
	return append(b, `,"stop_reason":null}]}`+"\n\n"...)
}

// reasoningChunk is a token of a reasoning model's thinking, as vLLM and
// llama.cpp stream it.
func (f *format) reasoningChunk(b []byte, tok string) []byte {
	b = append(b, f.head...)
	b = append(b, `"choices":[{"index":0,"delta":{"reasoning_content":`...)
	b = appendJSONString(b, tok)
	return append(b, `},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

// usageChunk is the usage; reasoning tokens, of completion's, are in its
// completion_tokens_details when there were any.
func (f *format) usageChunk(b []byte, prompt, completion, reasoning int) []byte {
	b = append(b, f.head...)
	b = append(b, `"choices":[],"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+completion), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	if reasoning > 0 {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(reasoning), 10)
		b = append(b, '}')
	}
	return append(b, "}}\n\n"...)
}

// errorEvent is a mid-stream error, after which the stream ends without
// [DONE].
func (f *format) errorEvent(b []byte, msg string) []byte {
	e, _ := json.Marshal(map[string]apiError{"error": {Message: msg, Type: "InternalServerError", Code: 500}})
	b = append(b, "data: "...)
	b = append(b, e...)
	return append(b, "\n\n"...)
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// whole is a non-streaming response with n tokens of g.
func (f *format) whole(b []byte, g generation, n int, reason string, prompt int) []byte {
	text := make([]byte, 0, 8*n)
	var thought []byte
	th, thinks := g.(thinker)
	for i := range n {
		if thinks && th.thinking(i) {
			thought = append(thought, g.Token(i)...)
			continue
		}
		text = append(text, g.Token(i)...)
	}
	u := usage{PromptTokens: prompt, CompletionTokens: n, TotalTokens: prompt + n}
	var v any
	if f.api == apiChat {
		type function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}
		type call struct {
			ID       string   `json:"id"`
			Type     string   `json:"type"`
			Function function `json:"function"`
		}
		type message struct {
			Role             string  `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content,omitempty"`
			ToolCalls        []call  `json:"tool_calls,omitempty"`
		}
		msg := message{Role: "assistant", ReasoningContent: string(thought)}
		if tg, ok := g.(toolGen); ok {
			msg.ToolCalls = []call{{"call-" + f.id, "function", function{tg.call.name, tg.text(n)}}}
		} else {
			s := string(text)
			msg.Content = &s
		}
		type choice struct {
			Index        int     `json:"index"`
			Message      message `json:"message"`
			Logprobs     any     `json:"logprobs"`
			FinishReason string  `json:"finish_reason"`
		}
		v = struct {
			ID      string   `json:"id"`
			Object  string   `json:"object"`
			Created int64    `json:"created"`
			Model   string   `json:"model"`
			Choices []choice `json:"choices"`
			Usage   usage    `json:"usage"`
		}{f.id, "chat.completion", f.created, f.model, []choice{{0, msg, nil, reason}}, u}
	} else {
		type choice struct {
			Index        int    `json:"index"`
			Text         string `json:"text"`
			Logprobs     any    `json:"logprobs"`
			FinishReason string `json:"finish_reason"`
		}
		v = struct {
			ID      string   `json:"id"`
			Object  string   `json:"object"`
			Created int64    `json:"created"`
			Model   string   `json:"model"`
			Choices []choice `json:"choices"`
			Usage   usage    `json:"usage"`
		}{f.id, "text_completion", f.created, f.model, []choice{{0, string(text), nil, reason}}, u}
	}
	out, _ := json.Marshal(v) // plain structs always marshal
	return append(b, append(out, '\n')...)
}
