package workload

import "encoding/json"

// Message is one chat message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one line of a workload file: what to send, and optionally when.
// Exactly one of Messages (chat API) and Prompt (completions API) is set.
type Request struct {
	// ID names the request in records and results; Load fills "line-N" when absent.
	ID string `json:"id,omitempty"`
	// Model, when set, is sent as this request's "model" in place of the
	// target's: a LoRA adapter (vLLM --lora-modules, SGLang, TGI) or
	// another model of a multi-model server, as production traffic names
	// them request by request.
	Model    string    `json:"model,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	Prompt   string    `json:"prompt,omitempty"`
	// MaxTokens caps the output length; required, > 0.
	MaxTokens int `json:"max_tokens"`
	// ArrivalMS is the offset from the start of the trace, for trace replay.
	// In a session only the first turn may set it: the session arrives then.
	ArrivalMS *float64 `json:"arrival_ms,omitempty"`

	// SessionID puts the request in a conversation, whose turns (Turn,
	// numbered 1, 2, ... without gaps) are sent in order: turn k after turn
	// k−1's response ended plus ThinkMS, carrying the conversation so far
	// (every earlier turn's messages and the answers the server gave), so
	// that multi-turn prefix reuse and KV-cache pressure are real. A
	// request without one is a conversation of one turn.
	SessionID string `json:"session_id,omitempty"`
	Turn      int    `json:"turn,omitempty"`
	// ThinkMS is the pause between the previous turn's end and this turn's
	// send, in milliseconds (a later turn only; unset: the config's think
	// time, else none).
	ThinkMS *float64 `json:"think_ms,omitempty"`

	// Optional sampling parameters, passed through to the server when set.
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	IgnoreEOS   *bool    `json:"ignore_eos,omitempty"`
	MinTokens   *int     `json:"min_tokens,omitempty"`

	// ResponseFormat is passed through verbatim (structured output).
	ResponseFormat json.RawMessage `json:"response_format,omitempty"`
	// Tools and ToolChoice are passed through verbatim (function calling):
	// Tools a JSON array, ToolChoice a string or an object.
	Tools      json.RawMessage `json:"tools,omitempty"`
	ToolChoice json.RawMessage `json:"tool_choice,omitempty"`
	Tags       []string        `json:"tags,omitempty"`

	// Line is the 1-based line of the request in its file (0 when synthesised).
	Line int `json:"-"`
}

// Workload is a loaded request trace.
type Workload struct {
	// Path is the file it was loaded from ("" when synthesised in memory).
	Path     string
	Requests []Request
	// Hash is "sha256:<hex>" over the canonical encoding of Requests, so that two
	// files that differ only in whitespace or key order hash alike.
	Hash string
}

// Structured reports whether the request asks for output perfgate checks
// (package structured): a response_format of type json_object or
// json_schema, or tools with a tool_choice other than "none". A value that
// is not JSON of that shape is not structured here; loading and
// structured.Validate say what is wrong with it.
func (r *Request) Structured() bool {
	if len(r.ResponseFormat) > 0 {
		var rf struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(r.ResponseFormat, &rf) == nil && (rf.Type == "json_object" || rf.Type == "json_schema") {
			return true
		}
	}
	if len(r.Tools) == 0 {
		return false
	}
	var tools []json.RawMessage
	if json.Unmarshal(r.Tools, &tools) != nil || len(tools) == 0 {
		return false
	}
	var choice string
	return json.Unmarshal(r.ToolChoice, &choice) != nil || choice != "none"
}
