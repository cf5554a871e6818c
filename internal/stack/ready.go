package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/httpguard"
)

// Health is how a stack's health is checked: GET BaseURL+Path answering 200.
type Health struct {
	BaseURL string
	// Path is the health path; "" or "none" means the stack has none, and only
	// its process (or container) is watched.
	Path string
	// Interval is the time between checks.
	Interval time.Duration
	// Client sends the checks; nil means a client of perfgate's own.
	// Whatever it is, a redirect is never followed: a 3xx is a failed
	// check that names where it pointed.
	Client *http.Client
}

func (h Health) enabled() bool { return h.Path != "" && h.Path != "none" }

func (h Health) client() *http.Client { return noRedirects(h.Client) }

// check GETs the health path once. It returns nil on 200, else an error that
// says what came back: the status and the start of the body, the redirect
// (*httpguard.RedirectError), or the failure.
func (h Health) check(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := strings.TrimRight(h.BaseURL, "/") + h.Path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	resp, err := h.client().Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if re := httpguard.Redirected(resp); re != nil {
		return re
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512)) // the start, for the message
	if resp.StatusCode != http.StatusOK {
		msg := strings.Join(strings.Fields(string(body)), " ")
		if msg != "" {
			msg = ": " + msg
		}
		return fmt.Errorf("GET %s: HTTP %d%s", url, resp.StatusCode, msg)
	}
	return nil
}

// NotReadyError says a stack never became ready: it timed out, or exited
// while starting. It carries the last thing the checks saw and the log tail.
type NotReadyError struct {
	// After is how long perfgate waited.
	After time.Duration
	// Last is the last failed check: a health status or a completion error.
	Last error
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
	return fmt.Sprintf("stack not ready after %s (stack.ready_timeout); last check: %s%s",
		e.After.Round(time.Second), last, FormatTail(e.Tail))
}

func (e *NotReadyError) Unwrap() error { return e.Exit }

// WaitReady polls until the stack is ready: its health path answers 200 and
// then probe (one tiny completion) succeeds, while the stack's own process
// (or container) still runs. It fails with a *NotReadyError when timeout
// passes first or the stack exits, and with ctx's cause when ctx ends. A
// stack with no health path is ready when probe succeeds. A check in
// progress is cut short by the timeout and by the stack's exit, so neither
// waits for a hung request.
//
// A stack that has exited is never ready, whatever the checks say: what
// answers then is not the stack perfgate started (a server left over from an
// earlier run, still holding the port the stack failed to bind).
func WaitReady(ctx context.Context, inst Instance, h Health, timeout time.Duration, probe func(context.Context) error) error {
	start := time.Now()
	checkCtx, cancel := context.WithDeadline(ctx, start.Add(timeout))
	defer cancel()
	go func() {
		select {
		case <-inst.Done():
			cancel()
		case <-checkCtx.Done():
		}
	}()
	tick := time.NewTicker(h.Interval)
	defer tick.Stop()
	var last error
	answered := false // the checks passed once the stack had exited
	for {
		err := readyOnce(checkCtx, h, probe)
		if err == nil {
			if !exited(inst) {
				return nil
			}
			answered = true
		} else if checkCtx.Err() == nil || last == nil {
			last = err // keep the last answer, not the cut-off of the final one
		}
		if !exited(inst) {
			select {
			case <-tick.C:
				continue
			case <-checkCtx.Done(): // interrupted, exited (see the goroutine above) or timed out
			case <-inst.Done():
			}
		}
		// Several may hold at once; an interruption wins, then an exit.
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for the stack to be ready: %w", context.Cause(ctx))
		}
		if exited(inst) {
			return &NotReadyError{After: time.Since(start), Last: last, Exit: inst.Err(), OtherAnswered: answered}
		}
		return &NotReadyError{After: time.Since(start), Last: last, Tail: inst.Tail(TailLines)}
	}
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

// CheckReady runs one round of the readiness check, for a server perfgate did
// not start and so has no reason to wait for: nil when its health path answers
// 200 and probe succeeds.
func CheckReady(ctx context.Context, h Health, probe func(context.Context) error) error {
	return readyOnce(ctx, h, probe)
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
