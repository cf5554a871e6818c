package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/internal/httpguard"
	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/workload"
)

// Transport tuning. Connect and TLS handshakes are bounded; waiting for the
// response headers is not (a loaded server may queue a request for a long
// time before its first byte), only by Options.Timeout.
const (
	dialTimeout         = 10 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
	idleConnTimeout     = 90 * time.Second
	// drainGrace bounds how long Do waits, after [DONE], for the server to end
	// the response so that the connection can be reused.
	drainGrace = 100 * time.Millisecond
	maxDrain   = 64 << 10
	// maxErrorBody bounds how much of a non-2xx body is read for its message.
	maxErrorBody = 64 << 10
	// maxModelsBody bounds the /v1/models response.
	maxModelsBody = 8 << 20
)

// errRequestTimeout is the cause of a request context whose Options.Timeout
// passed; it tells a timeout apart from the caller's own cancellation.
var errRequestTimeout = errors.New("request timeout")

// Client sends requests to one OpenAI-compatible server. It is safe for
// concurrent use; create one per server and reuse it, so that connections are
// reused.
type Client struct {
	opts      Options
	streamURL string
	modelsURL string
	// base is the server root, without a trailing / (perfgate adds /v1/...).
	base   string
	header http.Header // sent with every request; never mutated after New
	host   string      // a "Host" from Options.Headers, else ""
	tr     *http.Transport
	hc     *http.Client
	// retryTr has keep-alives off, so each request on it has a connection of
	// its own: a request sent again (see attempt.retryable) is certain to go
	// out on a new connection, never on another stale one from the pool.
	retryTr *http.Transport
	retryHC *http.Client
	readers sync.Pool // *EventReader

	// dial opens connections for both transports; tests replace it.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// eventHook, when set (by tests), is called with each event and its read time.
	eventHook func(Event, time.Time)
}

// New validates opts and returns a Client with its own connection pool.
//
// BaseURL must be an http or https URL; a trailing "/" or "/v1" is dropped
// (perfgate appends "/v1/..."). An empty API means APIChat. An empty Model is
// left out of the request body (llama.cpp serves its one model either way).
//
// The transport keeps connections alive and idles up to MaxConns (at least 1)
// of them, so that a run reuses its connections instead of reconnecting; it
// asks for no compression (which would batch tokens and cost CPU), does not
// force HTTP/2 (so each stream has its own HTTP/1.1 connection, as with other
// load generators), and uses no proxy whatever the environment says: load
// must go straight to the server under test, or the proxy is what is measured.
// It never follows a redirect, and reads at most
// httpguard.MaxResponseHeaderBytes of response headers.
func New(opts Options) (*Client, error) {
	switch opts.API {
	case "":
		opts.API = APIChat
	case APIChat, APICompletions:
	default:
		return nil, fmt.Errorf("client: api %q: must be %q or %q", opts.API, APIChat, APICompletions)
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("client: timeout %s: must be >= 0", opts.Timeout)
	}
	u, err := url.Parse(strings.TrimSpace(opts.BaseURL))
	if err != nil {
		return nil, fmt.Errorf("client: base url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("client: base url %q: scheme must be http or https", opts.BaseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("client: base url %q: no host", opts.BaseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: base url %q: must not have a query or fragment", opts.BaseURL)
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1")
	u.RawPath = ""
	base := strings.TrimRight(u.String(), "/")

	c := &Client{opts: opts, base: base, modelsURL: base + "/v1/models"}
	if opts.API == APIChat {
		c.streamURL = base + "/v1/chat/completions"
	} else {
		c.streamURL = base + "/v1/completions"
	}

	c.header = http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"text/event-stream"},
	}
	for k, v := range opts.Headers {
		if http.CanonicalHeaderKey(k) == "Host" {
			c.host = v
			continue
		}
		c.header.Set(k, v)
	}

	conns := max(opts.MaxConns, 1)
	dialer := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	c.dial = dialer.DialContext
	c.tr = &http.Transport{
		Proxy: nil, // never a proxy: see above
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return c.dial(ctx, network, addr)
		},
		MaxResponseHeaderBytes: httpguard.MaxResponseHeaderBytes,
		MaxIdleConns:           conns,
		MaxIdleConnsPerHost:    conns,
		IdleConnTimeout:        idleConnTimeout,
		TLSHandshakeTimeout:    tlsHandshakeTimeout,
		ExpectContinueTimeout:  time.Second,
		DisableCompression:     true,
		ForceAttemptHTTP2:      false,
		WriteBufferSize:        16 << 10,
		ReadBufferSize:         16 << 10,
	}
	c.hc = &http.Client{Transport: c.tr, CheckRedirect: httpguard.NoRedirects}
	c.retryTr = c.tr.Clone()
	c.retryTr.DisableKeepAlives = true
	c.retryHC = &http.Client{Transport: c.retryTr, CheckRedirect: httpguard.NoRedirects}
	c.readers.New = func() any { return NewEventReader(nil) }
	return c, nil
}

// CloseIdleConnections closes the pool's idle connections.
func (c *Client) CloseIdleConnections() {
	c.tr.CloseIdleConnections()
	c.retryTr.CloseIdleConnections()
}

// requestBody is what Do sends. Optional parameters are pointers so that they
// are sent only when set.
type requestBody struct {
	Model          string             `json:"model,omitempty"`
	Messages       []workload.Message `json:"messages,omitempty"`
	Prompt         *string            `json:"prompt,omitempty"`
	MaxTokens      int                `json:"max_tokens"`
	Stream         bool               `json:"stream"`
	StreamOptions  streamOptions      `json:"stream_options"`
	Temperature    *float64           `json:"temperature,omitempty"`
	TopP           *float64           `json:"top_p,omitempty"`
	Seed           *int64             `json:"seed,omitempty"`
	IgnoreEOS      *bool              `json:"ignore_eos,omitempty"`
	MinTokens      *int               `json:"min_tokens,omitempty"`
	ResponseFormat json.RawMessage    `json:"response_format,omitempty"`
	Tools          json.RawMessage    `json:"tools,omitempty"`
	ToolChoice     json.RawMessage    `json:"tool_choice,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// encode builds the request body. For the chat API a request with only a
// prompt is sent as one user message; for the completions API a request with
// messages is an error (there is no faithful way to flatten them).
func (c *Client) encode(req *workload.Request) ([]byte, error) {
	if req == nil {
		return nil, errors.New("nil request")
	}
	model := c.opts.Model
	if req.Model != "" {
		model = req.Model // an adapter, or another model the server serves
	}
	b := requestBody{
		Model:          model,
		MaxTokens:      req.MaxTokens,
		Stream:         true,
		StreamOptions:  streamOptions{IncludeUsage: true},
		Temperature:    req.Temperature,
		TopP:           req.TopP,
		Seed:           req.Seed,
		IgnoreEOS:      req.IgnoreEOS,
		MinTokens:      req.MinTokens,
		ResponseFormat: req.ResponseFormat,
		Tools:          req.Tools,
		ToolChoice:     req.ToolChoice,
	}
	switch c.opts.API {
	case APIChat:
		b.Messages = req.Messages
		if len(b.Messages) == 0 {
			b.Messages = []workload.Message{{Role: "user", Content: req.Prompt}}
		}
	case APICompletions:
		if len(req.Messages) > 0 {
			return nil, fmt.Errorf("request %q has messages: the completions api needs a prompt", req.ID)
		}
		b.Prompt = &req.Prompt
	}
	return json.Marshal(&b)
}

// Do sends req as a streaming request and measures it. It always returns a
// Response, with Err set when the request failed; what was read before a
// failure (text, chunk times, usage) is kept. ctx cancels the request
// (ErrCanceled); Options.Timeout bounds it, a retry included (ErrTimeout).
//
// Output text is choices[0].delta.content (chat) or choices[0].text
// (completions). A reasoning model's delta.reasoning_content (or
// delta.reasoning) counts as output for FirstToken, ChunkTimes and the
// chunk-count token fallback, but is left out of Text; so does a piece of a
// tool call (delta.tool_calls with a name or arguments), assembled into
// ToolCalls. A stream that ends
// properly without any output is ErrNoOutput. TokensFrom is empty when no
// stream was read (a connect or HTTP error). With the chat API a request that
// has only a prompt is sent as one user message; with the completions API a
// request with messages fails with ErrRequest, unsent.
//
// A request whose first send fails on a kept-alive connection before any
// byte of an answer arrives (the server had closed the connection while it
// was idle, as llama.cpp's server does after every stream) is sent once more
// on a new connection; see Response.Retries. Redirects are never followed: a
// 3xx answer is ErrHTTP.
func (c *Client) Do(ctx context.Context, req *workload.Request, requestID string) (resp *Response) {
	resp = &Response{RequestID: requestID}
	defer func() {
		if p := recover(); p != nil {
			resp.Err = &Error{Kind: ErrRequest, Err: fmt.Errorf("client: internal error: %v", p)}
			if resp.End.IsZero() {
				resp.End = time.Now()
			}
		}
		c.redactResponse(resp)
	}()
	fail := func(e *Error) *Response {
		resp.Err = e
		if resp.End.IsZero() {
			resp.End = time.Now()
		}
		if resp.Sent.IsZero() {
			resp.Sent = resp.End
		}
		return resp
	}
	if ctx == nil {
		return fail(&Error{Kind: ErrRequest, Err: errors.New("nil context")})
	}
	body, err := c.encode(req)
	if err != nil {
		return fail(&Error{Kind: ErrRequest, Err: err})
	}
	rctx, cancel := c.requestContext(ctx)
	defer cancel()

	hreq, a, err := c.newStreamRequest(rctx, body, requestID)
	if err != nil {
		return fail(&Error{Kind: ErrRequest, Err: err})
	}
	hresp, err := a.send(c.hc, hreq)
	resp.Retries = a.transportRetries()
	if err != nil && a.retryable(rctx) {
		// The same request was built a moment ago: this should not fail.
		hreq, a, err = c.newStreamRequest(rctx, body, requestID)
		if err != nil {
			return fail(&Error{Kind: ErrRequest, Err: err})
		}
		resp.Retries++
		hresp, err = a.send(c.retryHC, hreq)
		resp.Retries += a.transportRetries()
	}
	resp.Sent = a.sent()
	if err != nil {
		kind := ErrConnect
		if a.firstByte.Load() {
			kind = ErrHTTP // an answer began, but it was not HTTP
		}
		return fail(c.classify(rctx, kind, err))
	}
	defer hresp.Body.Close()

	if re := httpguard.Redirected(hresp); re != nil {
		re.Redact = c.opts.Redact // its Location is the server's word, and may echo the key
		resp.End = time.Now()
		return fail(&Error{Kind: ErrHTTP, Status: hresp.StatusCode, Err: re})
	}
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		msg, _ := io.ReadAll(io.LimitReader(hresp.Body, maxErrorBody))
		resp.End = time.Now()
		return fail(&Error{Kind: ErrHTTP, Status: hresp.StatusCode, Message: serverMessage(msg)})
	}
	if ct, _, _ := mime.ParseMediaType(hresp.Header.Get("Content-Type")); ct == "application/json" {
		// The server ignored "stream": a plain JSON response or error.
		msg, _ := io.ReadAll(io.LimitReader(hresp.Body, maxErrorBody))
		resp.End = time.Now()
		e := &Error{Kind: ErrStream, Err: errors.New("the server did not stream (Content-Type application/json)")}
		if m := errorFieldMessage(jsonMember(msg, "error")); m != "" {
			e.Message = m
		}
		return fail(e)
	}

	er := c.readers.Get().(*EventReader)
	er.reset(hresp.Body)
	defer func() {
		er.reset(nil)
		c.readers.Put(er)
	}()
	s := newStream(resp, req.MaxTokens)
	s.promptBytes, s.promptMessages = promptSize(req)
	defer s.close()
	e, rerr := s.read(er, c.eventHook)
	if er.Done() {
		drain(hresp.Body, cancel) // so that the connection goes back to the pool
	}
	if rerr != nil {
		e = c.classify(rctx, ErrStream, rerr)
		if e.Kind == ErrStream && !errors.Is(rerr, ErrEventTooLarge) {
			e.Err = fmt.Errorf("the stream broke after %s: %w", plural(s.events, "event"), rerr)
		}
	}
	if e != nil {
		return fail(e)
	}
	return resp
}

// requestContext returns the context of one request: ctx, bounded by
// Options.Timeout with errRequestTimeout as its cause.
func (c *Client) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.opts.Timeout > 0 {
		return context.WithTimeoutCause(ctx, c.opts.Timeout, errRequestTimeout)
	}
	return context.WithCancel(ctx)
}

// attempt traces one send of a request: when it was written, and what the
// transport saw of its connection. The trace's callbacks run on the
// transport's goroutines, hence the atomics.
type attempt struct {
	base      time.Time    // just before the round trip
	wrote     atomic.Int64 // WroteRequest's offset from base, +1; 0: not written
	conns     atomic.Int32 // connections the transport got for it
	reused    atomic.Bool  // the last of them came from the idle pool
	firstByte atomic.Bool  // a byte of an answer arrived
}

// newStreamRequest builds the POST of body, traced by a new attempt.
func (c *Client) newStreamRequest(rctx context.Context, body []byte, requestID string) (*http.Request, *attempt, error) {
	a := &attempt{}
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			a.conns.Add(1)
			a.reused.Store(info.Reused)
		},
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				a.wrote.Store(int64(time.Since(a.base)) + 1)
			}
		},
		GotFirstResponseByte: func() { a.firstByte.Store(true) },
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(rctx, trace), http.MethodPost, c.streamURL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	// Without GetBody the transport never sends a POST again by itself (it
	// would, on a reused connection that failed before anything was
	// written): Do decides about retries, and counts them.
	hreq.GetBody = nil
	h := make(http.Header, len(c.header)+1)
	for k, v := range c.header {
		h[k] = v // shared, read-only slices
	}
	if requestID != "" {
		h["X-Request-Id"] = []string{requestID}
	}
	hreq.Header = h
	if c.host != "" {
		hreq.Host = c.host
	}
	return hreq, a, nil
}

// send makes the round trip of hreq on hc.
func (a *attempt) send(hc *http.Client, hreq *http.Request) (*http.Response, error) {
	a.base = time.Now()
	return hc.Do(hreq)
}

// sent is when the request was written: the WroteRequest trace, or just
// before the round trip if it did not fire.
func (a *attempt) sent() time.Time {
	if d := a.wrote.Load(); d > 0 {
		return a.base.Add(time.Duration(d - 1))
	}
	return a.base
}

// transportRetries is how many times the transport itself sent the request
// again, on another connection: 0, since the request has no GetBody; counted
// all the same, should a later Go do otherwise.
func (a *attempt) transportRetries() int { return max(int(a.conns.Load())-1, 0) }

// retryable reports whether a failed send may be made again: it went out on
// a kept-alive connection from the pool, and no byte of an answer came back,
// so the server closed a connection it had let idle (or dropped it before
// reading the request): it never answered this request. A send on a new
// connection, one that got any answer, one the transport already sent
// again, and one whose request timed out or was canceled are never retried.
func (a *attempt) retryable(rctx context.Context) bool {
	return rctx.Err() == nil && a.conns.Load() == 1 && a.reused.Load() && !a.firstByte.Load()
}

// classify turns a transport error into an Error: a timeout or cancellation
// if the request's context ended, ErrLocal for a resource perfgate's own
// machine ran out of, else kind, with a cause a user can act on.
func (c *Client) classify(rctx context.Context, kind ErrorKind, err error) *Error {
	if rctx.Err() != nil {
		if context.Cause(rctx) == errRequestTimeout {
			return &Error{Kind: ErrTimeout, Err: fmt.Errorf("the request took longer than its timeout of %s", c.opts.Timeout)}
		}
		return &Error{Kind: ErrCanceled, Err: context.Cause(rctx)}
	}
	if e := localError(err); e != nil {
		return e
	}
	switch kind {
	case ErrConnect:
		if closedWithoutAnswer(err) {
			err = fmt.Errorf("the server closed the connection without answering: %w", err)
		}
	case ErrHTTP:
		if strings.Contains(err.Error(), "response headers exceeded") {
			err = fmt.Errorf("the server's response headers are larger than %s, the most perfgate reads: %w",
				safeio.FormatBytes(httpguard.MaxResponseHeaderBytes), err)
		} else {
			err = fmt.Errorf("the server's answer is not valid HTTP: %w", err)
		}
	}
	return &Error{Kind: kind, Err: err}
}

// closedWithoutAnswer reports whether err says the server closed or reset
// the connection before answering.
func closedWithoutAnswer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "server closed idle connection")
}

// drain reads what is left of a finished stream (the end of the chunked
// body), so that the connection goes back to the pool, giving up after
// drainGrace.
func drain(body io.Reader, cancel context.CancelFunc) {
	t := time.AfterFunc(drainGrace, cancel)
	_, _ = io.CopyN(io.Discard, body, maxDrain)
	t.Stop()
}

// jsonMember returns the raw value of a top-level member of a JSON object.
func jsonMember(body []byte, name string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	return m[name]
}

// redactResponse cleans what resp carries of Options.Redact's secrets.
func (c *Client) redactResponse(resp *Response) {
	if c.opts.Redact == nil {
		return
	}
	resp.Text = c.opts.Redact(resp.Text)
	resp.FinishReason = c.opts.Redact(resp.FinishReason)
	for i := range resp.ToolCalls {
		tc := &resp.ToolCalls[i]
		tc.ID, tc.Type = c.opts.Redact(tc.ID), c.opts.Redact(tc.Type)
		tc.Name, tc.Arguments = c.opts.Redact(tc.Name), c.opts.Redact(tc.Arguments)
	}
	resp.Err = c.redactError(resp.Err)
}

// redactError is e cleaned of Options.Redact's secrets: its message, and
// its cause's text when that held one (the cause is then only its text).
func (c *Client) redactError(e *Error) *Error {
	if e == nil || c.opts.Redact == nil {
		return e
	}
	out := *e
	out.Message = c.opts.Redact(e.Message)
	if e.Err != nil {
		if msg := e.Err.Error(); c.opts.Redact(msg) != msg {
			out.Err = errors.New(c.opts.Redact(msg))
		}
	}
	return &out
}

// Model is one model a server lists at GET /v1/models: its id and, where
// the server says, who owns it (vLLM says "vllm", which perfgate init reads
// as the engine).
type Model struct {
	ID      string
	OwnedBy string
	// Meta is the model's "meta" object as the server sent it (llama.cpp's
	// server says the model's parameters and size there), unparsed and
	// untrusted; nil when it sent none.
	Meta json.RawMessage
}

// ErrNotAList says the answer of /v1/models is not a list of models.
var ErrNotAList = errors.New("the answer is not a list of models")

// ListModels returns the ids the server lists at GET /v1/models, in its
// order, without empty ones (Models).
func (c *Client) ListModels(ctx context.Context) ([]string, error) {
	models, err := c.Models(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(models))
	for _, m := range models {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}

// Models returns the models the server lists at GET /v1/models, in its
// order, as it lists them (ids unchecked: the caller decides which it can
// use). A failure is an *Error (connect, local, http, timeout, canceled; a
// redirect is an http error naming where it pointed, a 401 or 403 an http
// error with that Status), a *safeio.TooLargeError for an answer over 8
// MiB, or an error wrapping ErrNotAList; its text is cleaned of
// Options.Redact's secrets.
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	models, err := c.models(ctx)
	if err != nil && c.opts.Redact != nil {
		var ce *Error
		if errors.As(err, &ce) {
			if r := c.redactError(ce); r.Error() != ce.Error() {
				return nil, fmt.Errorf("list models: %w", r)
			}
		} else if msg := err.Error(); c.opts.Redact(msg) != msg {
			return nil, errors.New(c.opts.Redact(msg))
		}
	}
	return models, err
}

// models is Models before its error is cleaned.
func (c *Client) models(ctx context.Context) ([]Model, error) {
	if ctx == nil {
		return nil, errors.New("list models: nil context")
	}
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	var firstByte atomic.Bool
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { firstByte.Store(true) }}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(rctx, trace), http.MethodGet, c.modelsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	for k, v := range c.header {
		hreq.Header[k] = v
	}
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Del("Content-Type")
	if c.host != "" {
		hreq.Host = c.host
	}
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		kind := ErrConnect
		if firstByte.Load() {
			kind = ErrHTTP
		}
		return nil, fmt.Errorf("list models: %w", c.classify(rctx, kind, err))
	}
	defer hresp.Body.Close()
	if re := httpguard.Redirected(hresp); re != nil {
		re.Redact = c.opts.Redact
		return nil, fmt.Errorf("list models: %w", &Error{Kind: ErrHTTP, Status: hresp.StatusCode, Err: re})
	}
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		msg, _ := io.ReadAll(io.LimitReader(hresp.Body, maxErrorBody))
		return nil, fmt.Errorf("list models: %w", &Error{Kind: ErrHTTP, Status: hresp.StatusCode, Message: serverMessage(msg)})
	}
	body, err := safeio.ReadAll(hresp.Body, maxModelsBody, "the answer of "+c.modelsURL)
	if err != nil {
		var tl *safeio.TooLargeError
		if errors.As(err, &tl) {
			return nil, fmt.Errorf("list models: %w", err)
		}
		return nil, fmt.Errorf("list models: %w", c.classify(rctx, ErrStream, fmt.Errorf("reading the answer: %w", err)))
	}
	var v struct {
		Data []struct {
			ID      string          `json:"id"`
			OwnedBy string          `json:"owned_by"`
			Meta    json.RawMessage `json:"meta"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("list models: decode the answer of %s: %w: %w", c.modelsURL, ErrNotAList, err)
	}
	out := make([]Model, 0, len(v.Data))
	for _, m := range v.Data {
		out = append(out, Model{ID: m.ID, OwnedBy: m.OwnedBy, Meta: m.Meta})
	}
	return out, nil
}

// promptSize is the bytes of a request's text (its messages' contents, or
// its prompt) and its number of messages (1 for a prompt).
func promptSize(req *workload.Request) (bytes, messages int) {
	if len(req.Messages) == 0 {
		return len(req.Prompt), 1
	}
	for _, m := range req.Messages {
		bytes += len(m.Content)
	}
	return bytes, len(req.Messages)
}
