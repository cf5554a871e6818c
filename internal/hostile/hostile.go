package hostile

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Options configure a Server. The zero value is a Healthy server that
// streams 8 tokens, 1 ms apart.
type Options struct {
	// Mode is the failure to model; empty is Healthy.
	Mode Mode
	// Paths, if set, are the only paths the mode applies to (a stream mode
	// applies only to the completion endpoints among them, a metrics mode
	// only to /metrics, VersionDeep only to the identity endpoints). Empty
	// is the mode's own paths: see the package doc.
	Paths []string
	// HealthyFirst answers the first HealthyFirst requests the mode applies
	// to as Healthy: the readiness probe and a warm-up get through, the
	// measured requests meet the failure.
	HealthyFirst int

	// Model is the model /v1/models lists; empty is "hostile-model".
	Model string
	// Version is what /version says; empty is "0.0.0-hostile".
	Version string
	// Tokens is how many tokens an answer streams (fewer when max_tokens
	// says so); 0 is 8.
	Tokens int
	// TokenDelay is the time before each token; 0 is 1 ms, negative none.
	TokenDelay time.Duration

	// Status is Status mode's HTTP status; 0 is 400.
	Status int
	// StatusMessage is Status mode's error message; empty is
	// DefaultStatusMessage.
	StatusMessage string

	// TrickleEvery is TrickleBody's time between bytes; 0 is 200 ms.
	TrickleEvery time.Duration
	// KeepAliveEvery is EndlessComments' time between comments; 0 is 10 ms.
	KeepAliveEvery time.Duration
	// CloseDelay is how long CloseAfterStream waits, after a response,
	// before it closes the connection (without reading from it): a client
	// that reuses the connection within it writes its request on a
	// connection about to close, every time. 0 closes at once, as llama.cpp
	// does, and the client meets the close only when it wins the race.
	CloseDelay time.Duration
	// CapBytes and CapTime bound every answer, endless ones included: past
	// either the server cuts the connection. 0 is 64 MiB and 30 s.
	CapBytes int64
	CapTime  time.Duration
}

func (o Options) withDefaults() Options {
	o.Mode = cmp.Or(o.Mode, Healthy)
	o.Model = cmp.Or(o.Model, "hostile-model")
	o.Version = cmp.Or(o.Version, "0.0.0-hostile")
	if o.Tokens <= 0 {
		o.Tokens = 8
	}
	switch {
	case o.TokenDelay == 0:
		o.TokenDelay = time.Millisecond
	case o.TokenDelay < 0:
		o.TokenDelay = 0
	}
	o.Status = cmp.Or(o.Status, http.StatusBadRequest)
	o.StatusMessage = cmp.Or(o.StatusMessage, DefaultStatusMessage)
	o.TrickleEvery = cmp.Or(o.TrickleEvery, 200*time.Millisecond)
	o.KeepAliveEvery = cmp.Or(o.KeepAliveEvery, 10*time.Millisecond)
	o.CapBytes = cmp.Or(o.CapBytes, 64<<20)
	o.CapTime = cmp.Or(o.CapTime, 30*time.Second)
	return o
}

// Request is one request a Server received.
type Request struct {
	Method string
	Path   string
	// Header is the request's header, as sent.
	Header http.Header
	// Conn is the connection it came on: 1 for the first one accepted.
	Conn int
	// Reused is true when the connection had carried a request before.
	Reused bool
	// Prompt is the text of a completion request: its messages' contents
	// joined by newlines, or its prompt; "" for other requests.
	Prompt string
	// Mode is the mode that answered it: Healthy for a path the mode does
	// not apply to, or one of the first Options.HealthyFirst. (CloseOnReuse
	// answers a connection's first request as Healthy does.)
	Mode Mode
}

// Server is a running hostile server. Its methods are safe for concurrent
// use.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:port, without /v1.
	URL string
	// Elsewhere is where Redirect points: a Healthy server that records
	// every request (see its Log and Authorizations). It is nil on
	// Elsewhere itself.
	Elsewhere *Server

	t    testing.TB
	opts Options
	mode atomic.Value // Mode
	srv  *http.Server
	done chan struct{} // closed when Close begins

	affected atomic.Int64 // requests the mode applied to, for HealthyFirst
	inflight atomic.Int64 // completions being answered, for /metrics
	prompt   atomic.Int64 // prompt tokens answered, for /metrics
	output   atomic.Int64 // output tokens streamed, for /metrics
	answers  atomic.Int64 // completions answered in full, for /metrics

	mu       sync.Mutex
	closed   bool
	handlers sync.WaitGroup
	conns    []*connInfo
	log      []Request
	hijacked map[net.Conn]struct{}

	closeOnce sync.Once
}

// connInfo is one accepted connection.
type connInfo struct {
	id       int
	requests atomic.Int64
}

type connKey struct{}

// maxLog bounds the requests a Server records: a run that sends more is not
// a test of perfgate's own.
const maxLog = 200_000

// maxRequestBody bounds a request body the server reads.
const maxRequestBody = 8 << 20

// closeWait bounds how long Close waits for handlers to end.
const closeWait = 10 * time.Second

// Start starts a Server on 127.0.0.1, and its Elsewhere (where Redirect
// points, started whatever the mode, so that SetMode(Redirect) works). Both
// close when the test ends, or at Close. A mode that is not one of Modes
// fails the test.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	elsewhere := start(t, Options{Model: o.Model, Version: o.Version, Tokens: o.Tokens, TokenDelay: o.TokenDelay}, nil)
	return start(t, o, elsewhere)
}

func start(t testing.TB, o Options, elsewhere *Server) *Server {
	t.Helper()
	o = o.withDefaults()
	if !o.Mode.Valid() {
		t.Fatalf("hostile.Start: unknown mode %q", o.Mode)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("hostile.Start: listen on 127.0.0.1: %v", err)
	}
	s := &Server{
		URL:       "http://" + ln.Addr().String(),
		Elsewhere: elsewhere,
		t:         t,
		opts:      o,
		done:      make(chan struct{}),
		hijacked:  map[net.Conn]struct{}{},
	}
	s.mode.Store(o.Mode)
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext:       s.connContext,
		// Hostile answers make net/http complain (hijacked writes, aborted
		// handlers); none of it is the test's business.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(s.Close)
	return s
}

// SetMode changes the mode for the requests that arrive from now on.
func (s *Server) SetMode(m Mode) {
	if !m.Valid() {
		panic(fmt.Sprintf("hostile: SetMode: unknown mode %q", m))
	}
	s.mode.Store(m)
}

// Mode is the current mode.
func (s *Server) Mode() Mode { return s.mode.Load().(Mode) }

// Close stops the server: it cuts every connection, ends every handler and
// waits for them (10 s at most, then fails the test). It closes Elsewhere
// too. Calling it again does nothing.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		for c := range s.hijacked {
			_ = c.Close()
		}
		s.mu.Unlock()
		close(s.done)
		_ = s.srv.Close()
		ended := make(chan struct{})
		go func() { s.handlers.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(closeWait):
			s.t.Errorf("hostile: a handler of %s did not end within %s of Close", s.URL, closeWait)
		}
	})
	if s.Elsewhere != nil {
		s.Elsewhere.Close()
	}
}

func (s *Server) connContext(ctx context.Context, _ net.Conn) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	ci := &connInfo{id: len(s.conns) + 1}
	s.conns = append(s.conns, ci)
	return context.WithValue(ctx, connKey{}, ci)
}

// Log returns every request received so far, in arrival order.
func (s *Server) Log() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.log))
	for i, r := range s.log {
		r.Header = r.Header.Clone()
		out[i] = r
	}
	return out
}

// Requests counts the requests received for path; "" counts them all.
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		if path == "" || r.Path == path {
			n++
		}
	}
	return n
}

// Connections counts the TCP connections accepted.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// RequestsPerConnection is how many requests each connection carried, in
// the order they were accepted (a connection that carried none counts 0).
func (s *Server) RequestsPerConnection() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, len(s.conns))
	for i, c := range s.conns {
		out[i] = int(c.requests.Load())
	}
	return out
}

// Reused counts the requests that arrived on a connection that had carried
// a request before.
func (s *Server) Reused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		if r.Reused {
			n++
		}
	}
	return n
}

// Prompts returns the text of every completion request, in arrival order
// (see Request.Prompt).
func (s *Server) Prompts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.log {
		if isCompletion(r.Path) && r.Method == http.MethodPost {
			out = append(out, r.Prompt)
		}
	}
	return out
}

// RepeatedPrompts returns each prompt that arrived more than once, in the
// order of its second arrival.
func (s *Server) RepeatedPrompts() []string {
	seen := map[string]int{}
	var out []string
	for _, p := range s.Prompts() {
		seen[p]++
		if seen[p] == 2 {
			out = append(out, p)
		}
	}
	return out
}

// Authorizations returns the Authorization headers received, in arrival
// order; requests without one add nothing.
func (s *Server) Authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.log {
		out = append(out, r.Header.Values("Authorization")...)
	}
	return out
}

// begin registers a handler; false when the server is closing.
func (s *Server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

// serve records the request, picks the mode that answers it and answers.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if !s.begin() {
		http.Error(w, "hostile: closing", http.StatusServiceUnavailable)
		return
	}
	defer s.handlers.Done()

	ci, _ := r.Context().Value(connKey{}).(*connInfo)
	reused := false
	connID := 0
	if ci != nil {
		reused = ci.requests.Add(1) > 1
		connID = ci.id
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "hostile: request body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	var cr *completionRequest
	var crErr error
	if isCompletion(r.URL.Path) && r.Method == http.MethodPost {
		cr, crErr = parseCompletion(body)
	}

	mode := s.Mode()
	if can, byDefault := mode.domain(r.URL.Path); !can ||
		(len(s.opts.Paths) == 0 && !byDefault) ||
		(len(s.opts.Paths) > 0 && !slices.Contains(s.opts.Paths, r.URL.Path)) {
		mode = Healthy
	} else if s.affected.Add(1) <= int64(s.opts.HealthyFirst) {
		mode = Healthy
	}
	s.record(r, connID, reused, cr, mode)

	// Every answer ends by CapTime, whatever the client does.
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(s.opts.CapTime))
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.CapTime)
	defer cancel()

	switch mode {
	case CloseOnReuse:
		if reused {
			s.hangUp(w)
			return
		}
		mode = Healthy
	case Redirect:
		if s.Elsewhere == nil { // Elsewhere itself: nowhere else to send it
			mode = Healthy
			break
		}
		http.Redirect(w, r, s.Elsewhere.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		return
	case Status:
		writeError(w, s.opts.Status, s.opts.StatusMessage)
		return
	case HugeErrorBody:
		s.hugeErrorBody(ctx, w)
		return
	case NoHeaders:
		s.noHeaders(ctx)
		return
	case HugeHeaders:
		w.Header().Set("X-Hostile-Padding", strings.Repeat("h", HugeHeaderBytes))
	case TrickleBody:
		if !isCompletion(r.URL.Path) {
			s.trickleWhole(ctx, w, r)
			return
		}
	}

	s.answer(ctx, w, r, cr, crErr, mode)
}

// answer answers r by its path, in mode: Healthy or a mode that changes
// what the path says.
func (s *Server) answer(ctx context.Context, w http.ResponseWriter, r *http.Request, cr *completionRequest, crErr error, mode Mode) {
	switch {
	case isCompletion(r.URL.Path):
		switch {
		case r.Method != http.MethodPost:
			writeError(w, http.StatusMethodNotAllowed, "use POST")
		case crErr != nil:
			writeError(w, http.StatusBadRequest, crErr.Error())
		case cr == nil:
			writeError(w, http.StatusBadRequest, "no request")
		default:
			s.complete(ctx, w, cr, mode, r.URL.Path == pathChat)
		}
	case r.URL.Path == pathMetrics:
		s.metrics(ctx, w, mode)
	case slices.Contains(identityPaths, r.URL.Path):
		s.identity(w, r.URL.Path, mode)
	case r.URL.Path == pathHealth:
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case r.URL.Path == pathModels:
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{{
			"id": s.opts.Model, "object": "model", "created": 0, "owned_by": "hostile",
		}}})
	default:
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
	}
}

func (s *Server) record(r *http.Request, conn int, reused bool, cr *completionRequest, mode Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.log) >= maxLog {
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Conn: conn, Reused: reused, Mode: mode}
	if cr != nil {
		req.Prompt = cr.text
	}
	s.log = append(s.log, req)
}

// hangUp closes the connection without an answer.
func (s *Server) hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // cuts the connection all the same
	}
	_ = conn.Close()
}

// hijack takes the connection over from net/http; Close will close it.
func (s *Server) hijack(w http.ResponseWriter) (net.Conn, error) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = conn.Close()
		return nil, errors.New("hostile: closing")
	}
	s.hijacked[conn] = struct{}{}
	return conn, nil
}

func (s *Server) release(conn net.Conn) {
	_ = conn.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.hijacked, conn)
}

// wait waits d, or less when ctx ends or the server closes; false then.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-ctx.Done():
			return false
		case <-s.done:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps and strings of the package's own
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeError answers an OpenAI-style error, as vLLM and llama.cpp do.
func writeError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "type": typ}})
}
