package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/safeio"
)

// Retry timing: backoff doubles from firstBackoff up to maxBackoff; a rate
// limit that resets further away than maxRateLimitWait is not waited for, since
// a job would rather fail with a clear message than sit idle on a GPU runner.
const (
	firstBackoff     = time.Second
	maxBackoff       = 30 * time.Second
	maxRateLimitWait = 60 * time.Second
	errorBodyLimit   = 64 << 10 // bytes of an error response read for its message
)

// retryTransport retries GitHub API requests that failed for a reason that
// passes: a server error (5xx), too many requests (429), or a 403 that is a
// rate limit (X-RateLimit-Remaining: 0, a Retry-After header, or a body that
// says "secondary rate limit"). A plain 403 is an answer, not a failure, and
// goes back to the caller at once.
//
// It waits Retry-After when given, else until X-RateLimit-Reset for an
// exhausted primary limit, else 1s, 2s, 4s … capped at maxBackoff. It makes at
// most maxAttempts attempts, re-sending the body through req.GetBody.
//
// Each attempt has a deadline of its own, timeout from sending the request to
// the last byte of the answer: the response's body is read under it, and
// fails with a clear error when the answer is not in by then or is larger
// than bodyLimit. A slow answer is not retried: the caller's context, the
// budget of the whole comment step, is what a second try would eat into.
type retryTransport struct {
	base        http.RoundTripper
	maxAttempts int
	sleep       func(ctx context.Context, d time.Duration) error
	now         func() time.Time
	timeout     time.Duration // per attempt, body included; 0: none
	bodyLimit   int64         // bytes of an answer's body; 0: no limit
}

// rateLimitError is a rate limit that resets too far away to wait for.
type rateLimitError struct {
	status string        // the response's status line
	reset  time.Time     // when the limit resets
	wait   time.Duration // how far away that is
}

func (e *rateLimitError) Error() string {
	return fmt.Sprintf("GitHub API rate limit exceeded (%s); it resets at %s, in %s, too long to wait",
		e.status, e.reset.UTC().Format(time.RFC3339), e.wait.Round(time.Second))
}

// RoundTrip sends req, retrying as the type's comment says.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	hasBody := req.Body != nil && req.Body != http.NoBody
	for attempt := 1; ; attempt++ {
		actx, cancel := t.attemptContext(ctx)
		r := req.Clone(actx)
		if attempt > 1 && hasBody {
			body, err := req.GetBody()
			if err != nil {
				cancel()
				return nil, fmt.Errorf("replaying the request body for attempt %d: %w", attempt, err)
			}
			r.Body = body
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			cancel()
			return nil, t.late(ctx, actx, r, "answer", err)
		}
		wait, retry, err := t.decide(resp, attempt)
		if err != nil {
			discard(resp)
			cancel()
			return nil, err
		}
		if !retry || (hasBody && req.GetBody == nil) {
			// An answer, or a failure whose body cannot be replayed: the
			// caller reads it, within this attempt's deadline.
			resp.Body = t.guard(ctx, actx, cancel, r, resp.Body)
			return resp, nil
		}
		if attempt >= t.maxAttempts {
			msg := errorMessage(resp)
			discard(resp)
			cancel()
			return nil, fmt.Errorf("giving up after %d attempts: %s%s", attempt, resp.Status, msg)
		}
		discard(resp)
		cancel()
		if err := t.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("waiting %s to retry after %s: %w", wait, resp.Status, err)
		}
	}
}

// attemptContext returns the context of one attempt: ctx with t.timeout.
func (t *retryTransport) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if t.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, t.timeout)
}

// late turns err, met while waiting for part of r's answer, into an error
// that says the answer was too slow when the attempt's own deadline (not the
// caller's context) is what ended it; other errors pass unchanged.
func (t *retryTransport) late(ctx, actx context.Context, r *http.Request, part string, err error) error {
	if ctx.Err() != nil || !errors.Is(actx.Err(), context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("GitHub's %s to %s %s did not arrive within %s: %w", part, r.Method, r.URL.Path, t.timeout, context.DeadlineExceeded)
}

// guard returns body, read under the attempt's deadline and cut at
// t.bodyLimit; closing it ends the attempt.
func (t *retryTransport) guard(ctx, actx context.Context, cancel context.CancelFunc, r *http.Request, body io.ReadCloser) io.ReadCloser {
	var rd io.Reader = body
	if t.bodyLimit > 0 {
		what := fmt.Sprintf("GitHub's answer to %s %s", r.Method, r.URL.Path)
		rd = safeio.LimitReader(body, t.bodyLimit, what)
	}
	return &guardedBody{t: t, ctx: ctx, actx: actx, cancel: cancel, req: r, body: body, r: rd}
}

// guardedBody is an answer's body read within its attempt's deadline.
type guardedBody struct {
	t         *retryTransport
	ctx, actx context.Context
	cancel    context.CancelFunc
	req       *http.Request
	body      io.ReadCloser // closed by Close
	r         io.Reader     // body, limited
}

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = b.t.late(b.ctx, b.actx, b.req, "whole answer", err)
	}
	return n, err
}

func (b *guardedBody) Close() error {
	err := b.body.Close()
	b.cancel()
	return err
}

// decide says whether resp, the answer to attempt, is worth another attempt
// and after how long; an error when it is a rate limit too far away to wait.
func (t *retryTransport) decide(resp *http.Response, attempt int) (wait time.Duration, retry bool, err error) {
	code := resp.StatusCode
	exhausted := resp.Header.Get("X-RateLimit-Remaining") == "0"
	retryAfter := resp.Header.Get("Retry-After")
	switch {
	case code >= 500, code == http.StatusTooManyRequests:
	case code == http.StatusForbidden && (exhausted || retryAfter != "" || secondaryRateLimit(resp)):
	default:
		return 0, false, nil
	}

	wait = backoff(attempt)
	now := t.now()
	if d, ok := parseRetryAfter(retryAfter, now); ok {
		wait = d
	} else if reset, ok := parseReset(resp.Header.Get("X-RateLimit-Reset")); ok && exhausted {
		wait = max(reset.Sub(now), 0)
	}
	if wait > maxRateLimitWait {
		return 0, false, &rateLimitError{status: resp.Status, reset: now.Add(wait), wait: wait}
	}
	return wait, true, nil
}

// backoff is the wait before the retry that follows attempt: 1s, 2s, 4s …
// capped at maxBackoff.
func backoff(attempt int) time.Duration {
	d := firstBackoff
	for i := 1; i < attempt && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// parseReset reads X-RateLimit-Reset: Unix seconds.
func parseReset(v string) (time.Time, bool) {
	s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || s <= 0 {
		return time.Time{}, false
	}
	return time.Unix(s, 0), true
}

// secondaryRateLimit reports whether a 403 without rate-limit headers says in
// its body that it is a secondary rate limit. It reads up to errorBodyLimit
// bytes and puts them back, so the caller still sees the whole body.
func secondaryRateLimit(resp *http.Response) bool {
	head, err := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	lower := strings.ToLower(string(head))
	return strings.Contains(lower, "secondary rate limit") || strings.Contains(lower, "secondary-rate-limits")
}

// errorMessage returns ": " and the message of a GitHub error body, or "".
func errorMessage(resp *http.Response) string {
	var e struct {
		Message string `json:"message"`
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	if err != nil || json.Unmarshal(b, &e) != nil || e.Message == "" {
		return ""
	}
	return ": " + e.Message
}

// discard drains a little of resp's body, so the connection can be reused,
// and closes it.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyLimit))
	_ = resp.Body.Close()
}

// sleepContext waits d, or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
