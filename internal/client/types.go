package client

import (
	"time"
)

// API is the kind of OpenAI-compatible endpoint to call.
type API string

// The two supported endpoint kinds.
const (
	APIChat        API = "chat"        // POST /v1/chat/completions
	APICompletions API = "completions" // POST /v1/completions
)

// Options configure a Client.
type Options struct {
	// BaseURL is the server root, e.g. "http://127.0.0.1:8000" (no /v1).
	BaseURL string
	API     API
	// Model is sent as the request's "model".
	Model string
	// Headers are added to every request (e.g. Authorization), as they
	// are: a ${VAR} in target.headers is expanded before they get here
	// (config.Target.ExpandHeaders).
	Headers map[string]string
	// Redact, if set, cleans the text a Response or an error carries of
	// what must never be written (the values of the headers' environment
	// variables, config.ExpandedHeaders.Redact): the server's error
	// message, the output text and the finish reason, which a server may
	// echo a header into.
	Redact func(string) string
	// Timeout bounds one whole request, connect to end of stream; 0 means none.
	Timeout time.Duration
	// MaxConns sizes the connection pool: the largest number of requests in flight.
	MaxConns int
}

// TokenSource says where a response's token counts came from.
type TokenSource string

// Token provenance values.
const (
	TokensFromUsage  TokenSource = "usage"  // the server's usage object (its own tokenizer)
	TokensFromChunks TokenSource = "chunks" // counted content chunks: a fallback, flagged as such
)

// ErrorKind classifies a failed request.
type ErrorKind string

// Error kinds, as reported in results ("error rate by kind").
const (
	ErrConnect  ErrorKind = "connect"  // could not connect or write the request
	ErrHTTP     ErrorKind = "http"     // a non-2xx status
	ErrStream   ErrorKind = "stream"   // broken stream, bad event, or an error event mid-stream
	ErrTimeout  ErrorKind = "timeout"  // the request's timeout passed
	ErrCanceled ErrorKind = "canceled" // the caller's context was cancelled (run ended)
	ErrRequest  ErrorKind = "request"  // the request could not be built (nil, or messages for the completions API)
	// ErrNoOutput is a stream that ended properly ([DONE], or the end of the
	// body after a finish_reason) but carried no output: no content, no
	// reasoning, no tool call and no completions text. Such a response has no first token,
	// so it can never be a fast success; its usage and finish reason are
	// still kept on the Response.
	ErrNoOutput ErrorKind = "no_output"
	// ErrLocal is a failure of perfgate's own machine, not of the server: it
	// ran out of open files (EMFILE, ENFILE), socket buffers or memory
	// (ENOBUFS, ENOMEM), or local ports (EADDRNOTAVAIL). It says nothing
	// about the server, and every later request would fail the same way: a
	// run stops at the first one.
	ErrLocal ErrorKind = "local"
)

// Error is a classified request failure.
type Error struct {
	Kind ErrorKind
	// Status is the HTTP status for ErrHTTP, else 0.
	Status int
	// Message is the server's own message where it sent one.
	Message string
	// Err is the underlying error, if any.
	Err error
}

// Response is the measurement of one request. Times are taken from time.Now and
// so carry the monotonic clock reading; durations between them are monotonic.
type Response struct {
	// RequestID is the X-Request-Id header that was sent with the request.
	RequestID string
	// Sent is when the request was fully written to the connection.
	Sent time.Time
	// FirstToken is when the first chunk carrying non-empty output text was
	// read; zero if none was.
	FirstToken time.Time
	// FirstAnswer is when the first chunk carrying the answer (content,
	// completions text or a piece of a tool call, not reasoning) was read;
	// zero if none was. For a reasoning model it is the first word the user
	// waits for; otherwise it equals FirstToken.
	FirstAnswer time.Time
	// End is when the stream ended (or the request failed).
	End time.Time
	// ChunkTimes holds the read time of every chunk that carried output text, in order.
	ChunkTimes []time.Time
	// PromptTokens and OutputTokens come from the server's usage when it sent
	// one and it passed the checks of UsageRefused (TokensFrom is then
	// TokensFromUsage); otherwise OutputTokens is the number of chunks that
	// carried output (len(ChunkTimes)) and PromptTokens is 0, unknown
	// (TokensFrom is TokensFromChunks). Neither is ever negative or more than
	// MaxUsageTokens.
	PromptTokens int
	OutputTokens int
	TokensFrom   TokenSource
	// ReasoningChunks is how many chunks carried reasoning (a reasoning
	// model's delta.reasoning_content or delta.reasoning), and
	// ReasoningTokens the reasoning tokens of OutputTokens: the usage's
	// completion_tokens_details.reasoning_tokens when the usage is believed
	// and has it (at most OutputTokens), else ReasoningChunks (at most
	// OutputTokens: a server may put two chunks in a token's place).
	ReasoningChunks int
	ReasoningTokens int
	// UsageRefused says why the server's usage was not believed, as a
	// sentence; it is "" when the server sent no usage or it was believed.
	// The last usage object of the stream is refused when:
	//   - it is not an object, or a count in it is not a whole JSON number
	//     (a string, a fraction, an exponent, past the range of int64);
	//   - a count is negative;
	//   - a count is more than MaxUsageTokens;
	//   - completion_tokens is more than the request's max_tokens (when it
	//     is > 0): no engine generates past it;
	//   - completion_tokens is 0 while output arrived;
	//   - completion_tokens is less than half the chunks that carried output.
	//     A server may put several tokens in one chunk (so fewer chunks than
	//     tokens is normal), but it does not split one token across more
	//     than two chunks.
	//   - completion_tokens is more than the output text could hold: its
	//     bytes (reasoning included) plus one per chunk plus 16, since a
	//     token decodes to at least one byte bar special tokens;
	//   - prompt_tokens is more than the request's text could hold: its
	//     bytes plus 64 a message plus 4096 for a chat template.
	// A refused usage is replaced by perfgate's own count (see OutputTokens).
	UsageRefused string
	// FinishReason is the last finish_reason the stream carried, cut to 64
	// bytes.
	FinishReason string
	// Text is the concatenated output text.
	Text string
	// ToolCalls are the tool calls the answer made (chat's
	// delta.tool_calls), assembled from their streamed fragments in the
	// order of their index; at most MaxToolCalls. A fragment that carries a
	// name or arguments is output as text is: it can be the first token,
	// it has a chunk time, and an answer of tool calls only is a success.
	ToolCalls []ToolCall
	// Retries is how many times the request was sent again: 1 when its first
	// send went out on a kept-alive connection that the server had closed
	// (an EOF, reset or "server closed idle connection" before any byte of
	// an answer) and it was sent once more on a new connection, else 0. Sent
	// and every later time are then the second send's.
	Retries int
	// Err is nil for a successful request.
	Err *Error
}

// ToolCall is one tool call of an answer, as streamed in OpenAI's shape:
// fragments with the same index are one call, its id, type and name sent
// once and its arguments (JSON text, when the server is right) in pieces.
type ToolCall struct {
	// Index is the call's place in the answer, from the server's index.
	Index int
	// ID is the server's id for the call (cut to MaxToolCallField bytes).
	ID string
	// Type is "function" for every call OpenAI's API defines (cut to
	// MaxToolCallField bytes).
	Type string
	// Name is the function called (cut to MaxToolCallField bytes).
	Name string
	// Arguments is the arguments' text as sent, fragments joined; its bytes
	// count against the response's bound on output text.
	Arguments string
}

// Bounds on tool calls: no real answer makes more calls or has longer ids,
// types or names, and a server that sends more cannot make perfgate keep
// them.
const (
	// MaxToolCalls is the most tool calls one answer may make; an index at
	// or past it fails the stream.
	MaxToolCalls = 128
	// MaxToolCallField bounds a call's id, type and name, each.
	MaxToolCallField = 256
)

// MaxUsageTokens is the largest token count perfgate believes in a usage
// object (2^31-1): no request has more, and it fits an int everywhere.
const MaxUsageTokens = 1<<31 - 1
