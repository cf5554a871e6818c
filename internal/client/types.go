// Package client sends one OpenAI-compatible streaming request and measures it:
// it writes the request, reads the server-sent events, timestamps every chunk
// with the monotonic clock as it is read, and reports TTFT, inter-token gaps,
// end-to-end latency, token counts and a classified error.
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
	// Headers are added to every request (e.g. Authorization).
	Headers map[string]string
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
	// End is when the stream ended (or the request failed).
	End time.Time
	// ChunkTimes holds the read time of every chunk that carried output text, in order.
	ChunkTimes []time.Time
	// PromptTokens and OutputTokens come from usage, or chunk counts as a fallback.
	PromptTokens int
	OutputTokens int
	TokensFrom   TokenSource
	FinishReason string
	// Text is the concatenated output text.
	Text string
	// Err is nil for a successful request.
	Err *Error
}
