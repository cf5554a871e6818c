// Package workload defines perfgate's request trace format (JSONL, one request a
// line), loads and validates it with line numbers, identifies it by a content
// hash, and synthesises workloads from length distributions (see synth.go).
//
// A workload file looks like:
//
//	{"id":"q1","messages":[{"role":"user","content":"Hi"}],"max_tokens":64}
//	{"id":"d7","prompt":"Summarise: ...","max_tokens":256,"arrival_ms":1200.5}
//
// Load and Parse are strict, and report every problem with its file, line and
// key ("workloads/chat.jsonl:12: max_tokens: want an integer from 1 to
// 1048576, got 0"), each a *LineError joined with errors.Join (at most 50,
// then a count); a JSON syntax error also has its column
// ("workloads/chat.jsonl:4:42: invalid JSON: ..."). A line is one JSON object
// with only the keys of Request; exactly one of messages (roles system, user,
// assistant, tool; a user message's content non-empty) and prompt
// (non-empty); max_tokens from 1 to MaxLength; arrival_ms from 0 to
// MaxArrivalMS; temperature from 0 to 2; top_p in (0, 1]; 0 <= min_tokens <=
// max_tokens; model a non-empty name of at most MaxModelName bytes without
// control characters; response_format an object; tools an array and
// tool_choice a string or an object; tags non-empty strings; ids unique (a missing id
// becomes "line-N"); session_id and turn together (turn from 1 to
// MaxTurns, each session's turns 1..n once each, only its first turn with
// arrival_ms, think_ms from 0 to MaxArrivalMS on a later turn only). An integer may be written as any JSON number
// with a whole value (1e2). A null value is the same as leaving the key out.
// Blank lines are skipped and still counted; a UTF-8 byte-order mark at the
// start of the file is read as one.
//
// Every reader is bounded (limits.go): Load reads only a regular file (a
// named pipe or /dev/zero is refused at once), at most MaxFileBytes, in lines
// of at most MaxLineBytes.
//
// Write gives the canonical form of a workload (one compact line a request, keys
// in field order), and Hash is the SHA-256 of that form, so whitespace and key
// order in a file do not change a workload's identity.
//
// Synthesize makes a workload from length distributions (Dist, also written in
// the CLI syntax that ParseDist reads, "lognormal:mean=512,stddev=300"), with
// optional shared prefixes, from a seed.
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
