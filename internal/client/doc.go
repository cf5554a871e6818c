// Package client sends one OpenAI-compatible streaming request and measures it:
// it writes the request, reads the server-sent events, timestamps every chunk
// with the monotonic clock as it is read, and reports TTFT, inter-token gaps,
// end-to-end latency, token counts and a classified error.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package client
