package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/internal/httpguard"

	"github.com/perfgate/perfgate/internal/clock"
)

// Health is how a stack's health is checked: GET BaseURL+Path answering
// 200. A server without that path (404 or 405) is asked GET /v1/models
// instead, which every OpenAI-compatible server has: its 200 is health too.
type Health struct {
	BaseURL string
	// Path is the health path; "" or "none" means the stack has none, and only
	// its process (or container) is watched.
	Path string
	// Headers are sent with every check, as the target's requests carry
	// them (expanded: config.Target.ExpandHeaders); a "Host" sets the
	// request's host.
	Headers map[string]string
	// Redact, if set, cleans the start of a failed check's answer, which
	// the error quotes, of the headers' secrets
	// (config.ExpandedHeaders.Redact).
	Redact func(string) string
	// Interval is the time between checks.
	Interval time.Duration
	// Client sends the checks; nil means a client of perfgate's own.
	// Whatever it is, a redirect is never followed: a 3xx is a failed
	// check that names where it pointed.
	Client *http.Client
}

func (h Health) enabled() bool { return h.Path != "" && h.Path != "none" }

func (h Health) client() *http.Client { return noRedirects(h.Client) }

// HeaderClient is perfgate's own client for health checks and identity
// requests (no redirects, bounded response headers, no proxy) that adds
// headers to every request, as Health.Headers does: for Identify against a
// server that wants a key on every path. nil headers give the plain one.
func HeaderClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return defaultHTTPClient
	}
	c := *defaultHTTPClient
	c.Transport = headerTransport{base: defaultHTTPClient.Transport, headers: headers}
	return &c
}

// headerTransport adds headers to each request it sends.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	setHeaders(r, t.headers)
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// setHeaders sets headers on req; a "Host" sets its host.
func setHeaders(req *http.Request, headers map[string]string) {
	for k, v := range headers {
		if http.CanonicalHeaderKey(k) == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
}

// ModelsPath is where a health check turns when the health path is not
// there.
const ModelsPath = "/v1/models"

// check GETs the health path once, and /v1/models when the health path
// answers 404 (not found) or 405 (method not allowed): a server without a
// health endpoint (a hosted API, a gateway) is healthy when it lists its
// models. It returns nil on 200, else an error that says what came back:
// the status and the start of the body, the redirect
// (*httpguard.RedirectError), or the failure; when /v1/models was asked,
// its answer is the error's cause.
func (h Health) check(ctx context.Context, timeout time.Duration) error {
	err := h.get(ctx, timeout, h.Path)
	var he *HealthStatusError
	if h.Path == ModelsPath || !errors.As(err, &he) || he.Status != http.StatusNotFound && he.Status != http.StatusMethodNotAllowed {
		return err
	}
	if merr := h.get(ctx, timeout, ModelsPath); merr != nil {
		return fmt.Errorf("%s answered HTTP %d, and %s, asked instead: %w", h.Path, he.Status, ModelsPath, merr)
	}
	return nil
}

// Check is one health check, as Watch and WaitReady make them, bounded by
// timeout: nil when the server is healthy.
func (h Health) Check(ctx context.Context, timeout time.Duration) error { return h.check(ctx, timeout) }

// get GETs path once, as check says.
func (h Health) get(ctx context.Context, timeout time.Duration, path string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := strings.TrimRight(h.BaseURL, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	setHeaders(req, h.Headers)
	resp, err := h.client().Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if re := httpguard.Redirected(resp); re != nil {
		// Its Location is the server's word, and may echo the key.
		if h.Redact != nil {
			re.URL, re.Location = h.Redact(re.URL), h.Redact(re.Location)
		}
		return re
	}
	// The start, for the message; read past it so that a secret across
	// the cut is redacted whole.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		start := string(body)
		if h.Redact != nil {
			start = h.Redact(start)
		}
		start = start[:min(len(start), 512)]
		return &HealthStatusError{URL: url, Status: resp.StatusCode, Body: strings.Join(strings.Fields(start), " ")}
	}
	return nil
}

// HealthStatusError is a health check answered with a status other than 200.
type HealthStatusError struct {
	// URL is the health path's URL.
	URL string
	// Status is the HTTP status.
	Status int
	// Body is the start of the answer's body (512 bytes at most), its
	// whitespace collapsed.
	Body string
}

func (e *HealthStatusError) Error() string {
	msg := ""
	if e.Body != "" {
		msg = ": " + e.Body
	}
	return fmt.Sprintf("GET %s: HTTP %d%s", e.URL, e.Status, msg)
}

// ProgressEvery is how often WaitReady says what it is waiting for: a line
// after the first check that ends past each multiple of it since the start
// (10 s, 20 s, ...), one at most for each. Ten seconds is often enough that a
// wait never looks hung, and rare enough that a 15-minute cold start prints
// 90 lines, not thousands.
const ProgressEvery = 10 * time.Second

// Clock is the readiness wait's time source (clock.Clock). Tests inject a
// fake that advances without sleeping.
type Clock = clock.Clock

// Wait says how WaitReady waits: for how long, how often it checks, and
// where it says how it is going.
type Wait struct {
	// Timeout bounds the wait.
	Timeout time.Duration
	// Key is the config key that sets Timeout, for messages; "" is
	// stack.ready_timeout.
	Key string
	// Subject names what is waited for in messages; "" is "stack".
	Subject string
	// Backoff, if > 0, is the pause after the first failed check; each
	// later pause doubles, up to MaxBackoff. Zero pauses Health.Interval
	// after every check.
	Backoff, MaxBackoff time.Duration
	// Clock is the time source; nil is the real clock. A check in flight is
	// cut short by Timeout in real time whatever the clock.
	Clock Clock
	// Final, if set, says that a failed check's answer will not change by
	// waiting (a redirect, a 404): the wait ends at once with it.
	Final func(error) bool
	// Progress, if set, receives a line every ProgressEvery while the
	// stack is not ready: the time waited, the time left, the attempts and
	// the last check's error (with the ports the stack's processes listen
	// on, when the target refused the connection).
	Progress func(msg string)
}

func (w Wait) key() string {
	if w.Key == "" {
		return "stack.ready_timeout"
	}
	return w.Key
}

func (w Wait) subject() string {
	if w.Subject == "" {
		return "stack"
	}
	return w.Subject
}

func (w Wait) clock() Clock {
	if w.Clock == nil {
		return clock.Real{}
	}
	return w.Clock
}

// Readiness is how a wait that ended ready went.
type Readiness struct {
	// Attempts is how many checks ran, the one that passed included.
	Attempts int
	// After is the time from the start of the wait to the check that
	// passed.
	After time.Duration
	// Failed is the last check that failed before it, or nil.
	Failed error
}

// NotReadyError says a stack never became ready: it timed out, or exited
// while starting. It carries the last thing the checks saw and the log tail.
type NotReadyError struct {
	// Subject names what was waited for: "stack", or the external target.
	Subject string
	// Key is the config key of the time waited (stack.ready_timeout).
	Key string
	// After is how long perfgate waited.
	After time.Duration
	// Attempts is how many checks ran.
	Attempts int
	// Last is the last failed check: a health status or a completion error.
	Last error
	// Final is set when the wait ended early on an answer that waiting
	// would not change (Wait.Final).
	Final bool
	// Hint, if set, says what the stack's processes listen on when the
	// last check's connection was refused.
	Hint string
	// Exit is set when the stack exited while starting.
	Exit error
	// OtherAnswered is set when the checks passed after the stack had
	// exited: something else answers at the target.
	OtherAnswered bool
	// Tail is the last lines of the stack's log.
	Tail []string
}

func (e *NotReadyError) Error() string {
	if e.Exit != nil {
		other := ""
		if e.OtherAnswered {
			other = ", yet something else answers at the target (a server left over from an earlier run, holding the port the stack needed?)"
		}
		// The exit error carries the log tail already.
		return fmt.Sprintf("stack exited before it was ready (after %s)%s: %v", e.After.Round(time.Millisecond), other, e.Exit)
	}
	last := "no check finished"
	if e.Last != nil {
		last = e.Last.Error()
	}
	if e.Hint != "" {
		last += "; " + e.Hint
	}
	subject, key := e.Subject, e.Key
	if subject == "" {
		subject = "stack"
	}
	if key == "" {
		key = "stack.ready_timeout"
	}
	if e.Final {
		return fmt.Sprintf("%s not ready, and waiting will not change its answer (%s after %s); last check: %s%s",
			subject, plural(e.Attempts, "attempt"), roundWait(e.After), last, FormatTail(e.Tail))
	}
	return fmt.Sprintf("%s not ready after %s and %s (%s); last check: %s%s",
		subject, roundWait(e.After), plural(e.Attempts, "attempt"), key, last, FormatTail(e.Tail))
}

func (e *NotReadyError) Unwrap() error { return e.Exit }

// roundWait rounds a wait for a message: to the second from a minute, to
// the tenth of a second below.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WaitReady polls until the stack is ready: its health path answers 200 and
// then probe (one tiny completion) succeeds, while the stack's own process
// (or container) still runs. It fails with a *NotReadyError when w.Timeout
// passes first or the stack exits, and with ctx's cause when ctx ends. A
// stack with no health path is ready when probe succeeds. A check in
// progress is cut short by the timeout and by the stack's exit, so neither
// waits for a hung request. While it waits it tells w.Progress how it goes,
// every ProgressEvery.
//
// A stack that has exited is never ready, whatever the checks say: what
// answers then is not the stack perfgate started (a server left over from an
// earlier run, still holding the port the stack failed to bind).
//
// An external stack (the Instance Start returns for kind external) never
// exits: with a Backoff, WaitReady retries a server perfgate did not start
// until it answers or w.Timeout passes.
func WaitReady(ctx context.Context, inst Instance, h Health, w Wait, probe func(context.Context) error) (Readiness, error) {
	clock := w.clock()
	start := clock.Now()
	deadline := start.Add(w.Timeout)
	checkCtx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	go func() {
		select {
		case <-inst.Done():
			cancel()
		case <-checkCtx.Done():
		}
	}()
	pause := h.Interval
	if w.Backoff > 0 {
		pause = w.Backoff
	}
	var last error
	answered := false // the checks passed once the stack had exited
	attempts := 0
	report := start.Add(ProgressEvery) // when the next line is due
	for {
		attempts++
		err := readyOnce(checkCtx, h, probe)
		if err == nil {
			if !exited(inst) {
				return Readiness{Attempts: attempts, After: clock.Now().Sub(start), Failed: last}, nil
			}
			answered = true
		} else if checkCtx.Err() == nil || last == nil {
			last = err // keep the last answer, not the cut-off of the final one
		}
		final := err != nil && w.Final != nil && w.Final(err)
		if now := clock.Now(); !final && !exited(inst) && checkCtx.Err() == nil && now.Before(deadline) {
			if w.Progress != nil && !now.Before(report) {
				for !report.After(now) {
					report = report.Add(ProgressEvery)
				}
				w.Progress(progressLine(w, now.Sub(start), deadline.Sub(now), attempts, last, refusedHint(inst, h, last)))
			}
			next := now.Add(pause)
			if w.Backoff > 0 {
				pause = min(2*pause, max(w.MaxBackoff, w.Backoff))
			}
			if next.After(deadline) {
				next = deadline
			}
			if clock.SleepUntil(checkCtx, next) == nil && clock.Now().Before(deadline) {
				continue
			}
		}
		// Several may hold at once; an interruption wins, then an exit.
		after := clock.Now().Sub(start)
		if ctx.Err() != nil {
			return Readiness{}, fmt.Errorf("waiting for the %s to be ready: %w", w.subject(), context.Cause(ctx))
		}
		if exited(inst) {
			return Readiness{}, &NotReadyError{Subject: w.subject(), Key: w.key(), After: after, Attempts: attempts,
				Last: last, Exit: inst.Err(), OtherAnswered: answered}
		}
		return Readiness{}, &NotReadyError{Subject: w.subject(), Key: w.key(), After: after, Attempts: attempts,
			Last: last, Final: final, Hint: refusedHint(inst, h, last), Tail: inst.Tail(TailLines)}
	}
}

// progressLine is what WaitReady says while it waits.
func progressLine(w Wait, waited, left time.Duration, attempts int, last error, hint string) string {
	msg := "no check finished"
	if last != nil {
		msg = last.Error()
	}
	if hint != "" {
		msg += "; " + hint
	}
	return fmt.Sprintf("%s not ready after %s (%s left of %s, %s); last check: %s",
		w.subject(), roundWait(waited), roundWait(left), w.key(), plural(attempts, "attempt"), msg)
}

// refusedHint says, when err is a refused connection and inst can tell what
// its processes listen on (a process stack, on Linux), which address refused
// and where the stack's processes listen instead: "connection refused on
// 127.0.0.1:18485; the stack's processes listen on 127.0.0.1:18484". It is
// "" otherwise.
func refusedHint(inst Instance, h Health, err error) string {
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		return ""
	}
	l, ok := inst.(listener)
	if !ok {
		return ""
	}
	addrs, ok := l.listening()
	if !ok {
		return ""
	}
	where := refusedAddr(h, err)
	if len(addrs) == 0 {
		return fmt.Sprintf("connection refused on %s; the stack's processes listen on no TCP port yet", where)
	}
	return fmt.Sprintf("connection refused on %s; the stack's processes listen on %s", where, strings.Join(addrs, ", "))
}

// refusedAddr is the address a refused connection was to: the dial's, or
// else the host and port of the health check's base URL.
func refusedAddr(h Health, err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Addr != nil {
		return oe.Addr.String()
	}
	if u, perr := url.Parse(h.BaseURL); perr == nil && u.Host != "" {
		return u.Host
	}
	return h.BaseURL
}

// exited says whether inst has exited. An external stack (whose Done is
// nil) never does.
func exited(inst Instance) bool {
	select {
	case <-inst.Done():
		return true
	default:
		return false
	}
}

// readyOnce runs one round of the readiness check.
func readyOnce(ctx context.Context, h Health, probe func(context.Context) error) error {
	if h.enabled() {
		if err := h.check(ctx, max(h.Interval, 5*time.Second)); err != nil {
			return err
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := probe(pctx); err != nil {
		if !h.enabled() {
			return fmt.Errorf("a one-token completion failed: %w", err)
		}
		return fmt.Errorf("health is OK but a one-token completion failed: %w", err)
	}
	return nil
}

// CrashError says the stack went down while it was warmed up or measured.
type CrashError struct {
	// Exit is set when the process or container exited.
	Exit error
	// Health is set when the health check failed Failures times in a row; it
	// is the last failure.
	Health   error
	Failures int
	Tail     []string
}

func (e *CrashError) Error() string {
	if e.Exit != nil {
		return "the stack went down during the run: " + e.Exit.Error()
	}
	return fmt.Sprintf("the stack's health check failed %d times in a row during the run; last: %v%s",
		e.Failures, e.Health, FormatTail(e.Tail))
}

func (e *CrashError) Unwrap() error { return e.Exit }

// ExitGrace is how long a failed warm-up or repetition waits for the stack
// to be seen exiting before it is reported as the server's failure under
// load: a server that is going down first refuses or drops requests, and
// its process ends a moment later.
const ExitGrace = 3 * time.Second

// ExitedWithin waits up to grace for inst to exit and returns the
// *CrashError when it did, or nil. A run whose requests failed calls it
// before blaming the load: failures that come with the process ending are
// the crash, not the server's answer to the load. An external stack (whose
// Done never closes) costs the whole grace, so callers wait only after a
// failure. A nil inst is nil at once.
func ExitedWithin(ctx context.Context, inst Instance, grace time.Duration) *CrashError {
	if inst == nil {
		return nil
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-inst.Done():
		return &CrashError{Exit: inst.Err()}
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// ErrStopped is the cause of a watch's context once the watch is stopped.
var ErrStopped = errors.New("stack watch stopped")

// Watch returns a context derived from ctx that is cancelled with a
// *CrashError cause as soon as inst exits or its health check fails failures
// times in a row. Everything that sends load to the stack should run under
// it, so that a crash stops the run at once. A stack whose own process (or
// container) exits has crashed even if something still answers its health
// check. stop ends the watch and cancels the context with ErrStopped, or
// with a *CrashError if the stack had exited by then; call it when the stack
// is about to be stopped on purpose, and look at the context's cause after
// it to catch an exit at the very end of a run.
func Watch(ctx context.Context, inst Instance, h Health, failures int) (watched context.Context, stop func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		var tick <-chan time.Time
		if h.enabled() {
			t := time.NewTicker(h.Interval)
			defer t.Stop()
			tick = t.C
		}
		bad := 0
		for {
			select {
			case <-wctx.Done():
				return
			case <-inst.Done():
				cancel(&CrashError{Exit: inst.Err()})
				return
			case <-tick:
				err := h.check(wctx, max(h.Interval, 10*time.Second))
				if wctx.Err() != nil {
					return
				}
				if err == nil {
					bad = 0
					continue
				}
				if bad++; bad >= failures {
					cancel(&CrashError{Health: err, Failures: bad, Tail: inst.Tail(TailLines)})
					return
				}
			}
		}
	}()
	return wctx, func() {
		// A stack that exited before it was stopped on purpose crashed,
		// even if the watch had not yet seen it.
		if exited(inst) {
			cancel(&CrashError{Exit: inst.Err()})
		}
		cancel(ErrStopped)
		<-ended
	}
}
