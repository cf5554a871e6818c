// Package hostile is a test double of a broken, quirky or hostile
// OpenAI-compatible server, for perfgate's own tests: the tests of other
// packages and cmd/perfgate's end-to-end tests start one with Start, point
// perfgate at its URL and check that perfgate's verdict cannot be fooled and
// that perfgate itself is never crashed, hung or exhausted.
//
// A Server listens on 127.0.0.1 only, in-process, and closes when the test
// ends. In its Healthy mode it serves enough of the API for a whole
// `perfgate run`:
//
//	GET  /health               200 {"status":"ok"}
//	GET  /v1/models            the one model, Options.Model
//	GET  /version              {"version":"...","engine":"hostile"}: perfgate's
//	                           identity probe reads engine "hostile"
//	GET  /metrics              a small vLLM-style Prometheus page
//	POST /v1/chat/completions  a streamed answer: a role chunk, Options.Tokens
//	POST /v1/completions       content chunks (at most max_tokens), a finish
//	                           chunk, a usage chunk when stream_options asks
//	                           for one, and data: [DONE]
//
// A request that does not ask to stream is refused with a 400. Every request
// is recorded (see Log, Requests, Connections, RequestsPerConnection, Reused,
// Prompts, RepeatedPrompts and Authorizations).
//
// # Modes
//
// A Server runs one Mode, set with Options.Mode and changed with SetMode.
// Each is named after the failure it models. Unless Options.Paths says
// otherwise, a mode applies to the completion endpoints, except where the
// list says; the other paths stay healthy, so that perfgate gets as far as
// the failure. Options.HealthyFirst answers the first requests a mode
// applies to as Healthy (the readiness probe and a warm-up, say).
//
// Output:
//
//   - Healthy: a well-behaved server.
//   - NoOutput: only a finish_reason chunk and a usage chunk that claims
//     completion tokens, no text: an engine whose output was filtered or lost,
//     or a proxy that keeps the envelope. Measured naively it is infinitely
//     fast (TTFT 0).
//   - EmptyContent: a role chunk and content "" deltas only, then finish and
//     usage: an engine streaming empty deltas (a tokenizer that decodes to
//     nothing, a model that emits only special tokens).
//
// Streams and bodies that never end (each stops when the client goes away,
// or at Options.CapBytes or Options.CapTime):
//
//   - EndlessEvent: data: lines that never end with the blank line that ends
//     an event: a buggy or malicious server that makes one event grow
//     without bound.
//   - EndlessLine: one data: line that never ends: the same, within a line.
//   - EndlessComments: ": keep-alive" comment lines every
//     Options.KeepAliveEvery, no data ever: a server stuck in its queue that
//     keeps the connection alive (SSE proxies and some engines send such
//     comments), so that no idle timeout fires.
//   - HugeHeaders: a response header of HugeHeaderBytes (2 MiB), then a
//     healthy stream: a misconfigured proxy or a hostile server.
//   - HugeErrorBody: a 500 whose JSON error body never ends: an error page
//     that streams a log, or an attack on a client that reads error bodies
//     whole.
//   - NoHeaders: the request is read and never answered: a server wedged
//     after accept (a deadlocked engine, a full accept queue behind a proxy).
//   - TrickleBody: 200 and the headers at once, then a stream that never
//     finishes, written a byte every Options.TrickleEvery: a slowloris server
//     that defeats idle timeouts.
//
// Where the request goes:
//
//   - Redirect: 307 to the same path on a second in-process server,
//     Elsewhere (a Healthy Server that records every request and its
//     headers), for every path: a server moved behind a redirect, or one that
//     sends a client and its API key to another origin. A client that
//     follows it measures another server while the result names this one.
//
// Token counts (each with normal text):
//
//   - HugeUsage: usage.completion_tokens of HugeTokens
//     (9000000000000000000): an overflowing counter.
//   - NegativeUsage: usage.completion_tokens of NegativeTokens (-1000).
//   - InflatedUsage: usage.completion_tokens InflateFactor (100) times the
//     tokens streamed: a plausible number far from what the stream showed
//     (a server that counts the prompt, or bills more than it sent).
//
// Connections:
//
//   - CloseAfterStream: llama.cpp's server: after every streamed response
//     (written by hand on a hijacked connection as HTTP/1.1 with chunked
//     SSE, complete and with no "Connection: close"), the server closes the
//     TCP connection, at once or after Options.CloseDelay. A client that
//     reuses it fails before the server sees the request.
//   - CloseOnReuse: the second and later requests on a kept-alive
//     connection are read and the socket closed without an answer, on every
//     path: a request that failed before the server processed it (an idle
//     timeout on the server racing the client's reuse).
//   - Truncated: a few tokens, then the connection is cut mid-stream: an
//     engine that crashed or was OOM-killed mid-response.
//
// Errors:
//
//   - MalformedChunk: a data: event that is not JSON in the middle of an
//     otherwise healthy stream: a proxy that mangles a chunk.
//   - ErrorEvent: a few tokens, then an error object as a data: event and
//     the end of the stream without [DONE], as llama.cpp sends when
//     generation fails mid-stream.
//   - Status: Options.Status (400 when unset) with a JSON error body whose
//     message is Options.StatusMessage ("the request exceeds the available
//     context size" when unset), as engines refuse requests.
//
// Probes and telemetry:
//
//   - MetricsNotProm: /metrics answers {} (JSON, not Prometheus text), which
//     panicked Prometheus's text parser.
//   - MetricsEndless: /metrics is a valid-looking page that never ends.
//   - VersionDeep: /version, /props, /info and /get_server_info answer
//     DeepJSONBytes (200 KB) of nested "[": a parser bomb for a recursive
//     JSON decoder.
//
// Every mode is bounded: whatever a client does, a handler ends when the
// client goes away, after Options.CapBytes (64 MiB) or Options.CapTime (30 s),
// or when the Server closes, so a broken client cannot hang a test.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package hostile
