package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock advances only when it is slept on (to the time slept until) or
// told to: a wait of minutes runs in microseconds.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Time // every time slept until, in order
}

var _ Clock = (*fakeClock)(nil)

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, t)
	if t.After(c.now) {
		c.now = t
	}
	return ctx.Err()
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// pauses returns the time between each sleep's end and the one before,
// starting from start.
func (c *fakeClock) pauses(start time.Time) []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	prev := start
	for _, t := range c.sleeps {
		out = append(out, t.Sub(prev))
		prev = t
	}
	return out
}

// lines collects what WaitReady says while it waits.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) add(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, msg)
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// A stack that never gets ready is not waited for in silence: every 10 s
// WaitReady says how long it has waited, the time left, and the last error.
func TestWaitReadyProgress(t *testing.T) {
	clock := newFakeClock()
	start := clock.Now()
	var said lines
	h := Health{Path: "none", Interval: time.Second}
	probe := func(context.Context) error { return errors.New("model is loading") }

	_, err := WaitReady(context.Background(), newFakeInstance("loading"), h,
		Wait{Timeout: time.Minute, Clock: clock, Progress: said.add}, probe)

	var nre *NotReadyError
	require.ErrorAs(t, err, &nre)
	assert.Equal(t, 60, nre.Attempts, "a check every second for a minute")
	assert.Equal(t, time.Minute, nre.After)
	assert.Contains(t, err.Error(), "stack not ready after 1m0s and 60 attempts (stack.ready_timeout); last check: a one-token completion failed: model is loading")
	want := []string{}
	for s := 10; s < 60; s += 10 {
		want = append(want, fmt.Sprintf("stack not ready after %ds (%ds left of stack.ready_timeout, %d attempts); last check: a one-token completion failed: model is loading",
			s, 60-s, s+1))
	}
	assert.Equal(t, want, said.all(), "a line every 10s, none at the end (the error says it)")
	assert.Equal(t, start.Add(time.Minute), clock.Now())
}

// Checks that take time themselves still give a line once 10 s have passed,
// and the line quotes the last answer, not the first.
func TestWaitReadyProgressSlowChecks(t *testing.T) {
	clock := newFakeClock()
	var said lines
	var n atomic.Int64
	h := Health{Path: "none", Interval: 200 * time.Millisecond}
	probe := func(context.Context) error {
		clock.advance(3 * time.Second) // each check takes 3s
		if i := n.Add(1); i < 8 {
			return fmt.Errorf("HTTP 503 number %d", i)
		}
		return nil
	}

	got, err := WaitReady(context.Background(), newFakeInstance(), h,
		Wait{Timeout: time.Hour, Clock: clock, Progress: said.add}, probe)
	require.NoError(t, err)
	assert.Equal(t, 8, got.Attempts)
	require.Error(t, got.Failed)
	assert.Contains(t, got.Failed.Error(), "HTTP 503 number 7")
	// Checks end at 3, 6.2, 9.4, 12.6 (a line), 15.8, 19, 22.2 (a line).
	said_ := said.all()
	require.Len(t, said_, 2, "%q", said_)
	assert.Contains(t, said_[0], "stack not ready after 12.6s (59m47s left of stack.ready_timeout, 4 attempts); last check: a one-token completion failed: HTTP 503 number 4")
	assert.Contains(t, said_[1], "after 22.2s (59m38s left")
	assert.Contains(t, said_[1], "HTTP 503 number 7")
}

// flakyServer is a local server that answers the first fails completions
// with status (0: it closes the connection without an answer), then 200.
type flakyServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newFlakyServer(t *testing.T, fails int64, status int) *flakyServer {
	t.Helper()
	fs := &flakyServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			w.WriteHeader(http.StatusOK)
			return
		}
		if fs.hits.Add(1) > fails {
			_, _ = io.WriteString(w, `{"choices":[{"text":"OK"}]}`)
			return
		}
		if status == 0 {
			hj, ok := w.(http.Hijacker)
			if !ok {
				panic("no hijacker")
			}
			c, _, _ := hj.Hijack()
			_ = c.Close()
			return
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"error":{"message":"injected failure"}}`)
	}))
	t.Cleanup(fs.Close)
	return fs
}

// probe sends one completion to the server, as perfgate's readiness probe
// does, and fails on anything but 200.
func (fs *flakyServer) probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fs.URL+"/v1/completions", strings.NewReader(`{"max_tokens":1}`))
	if err != nil {
		return err
	}
	resp, err := fs.Client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// externalWait is how perfgate waits for an external server (see
// internal/session): 0.5 s doubling to 5 s, for 30 s.
func externalWait(clock Clock, progress func(string)) Wait {
	return Wait{Timeout: 30 * time.Second, Key: "stack.external_ready_timeout", Subject: "target http://test",
		Backoff: 500 * time.Millisecond, MaxBackoff: 5 * time.Second, Clock: clock, Progress: progress}
}

// An external server whose first answers fail is retried with backoff: a
// single failed probe no longer ends the run.
func TestWaitReadyExternalRetries(t *testing.T) {
	tests := []struct {
		name   string
		fails  int64
		status int
	}{
		{"ready at once", 0, 500},
		{"first probe fails", 1, 500},
		{"first probe's connection dropped", 1, 0},
		{"six probes fail", 6, 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := newFlakyServer(t, tt.fails, tt.status)
			clock := newFakeClock()
			start := clock.Now()
			var said lines
			h := Health{BaseURL: fs.URL, Path: "/health", Interval: 200 * time.Millisecond}

			got, err := WaitReady(context.Background(), external{}, h, externalWait(clock, said.add), fs.probe)
			require.NoError(t, err)
			assert.Equal(t, int(tt.fails)+1, got.Attempts)
			assert.Equal(t, tt.fails+1, fs.hits.Load())
			if tt.fails == 0 {
				assert.NoError(t, got.Failed)
				assert.Zero(t, got.After)
				return
			}
			require.Error(t, got.Failed, "the failure before is kept, to be told")
			assert.Contains(t, got.Failed.Error(), "a one-token completion failed")
			want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
			assert.Equal(t, want[:tt.fails], clock.pauses(start), "pauses between checks")
			assert.Equal(t, clock.Now().Sub(start), got.After)
			if tt.fails == 6 { // 17.5s: one line, at 12.5s
				require.Len(t, said.all(), 1)
				assert.Contains(t, said.all()[0], "target http://test not ready after 12.5s (17.5s left of stack.external_ready_timeout, 6 attempts); last check: health is OK but a one-token completion failed: HTTP 503")
			}
		})
	}
}

// An external server that never answers is given stack.external_ready_timeout,
// and the error names the attempts and the last check's error.
func TestWaitReadyExternalGivesUp(t *testing.T) {
	fs := newFlakyServer(t, 1<<40, http.StatusInternalServerError)
	clock := newFakeClock()
	start := clock.Now()
	var said lines
	h := Health{BaseURL: fs.URL, Path: "/health", Interval: 200 * time.Millisecond}

	_, err := WaitReady(context.Background(), external{}, h, externalWait(clock, said.add), fs.probe)

	var nre *NotReadyError
	require.ErrorAs(t, err, &nre)
	// Checks at 0, 0.5, 1.5, 3.5, 7.5, 12.5, 17.5, 22.5 and 27.5 s.
	assert.Equal(t, 9, nre.Attempts)
	assert.Equal(t, int64(9), fs.hits.Load())
	assert.Equal(t, 30*time.Second, clock.Now().Sub(start))
	assert.Equal(t, "target http://test not ready after 30s and 9 attempts (stack.external_ready_timeout); "+
		"last check: health is OK but a one-token completion failed: HTTP 500", err.Error())
	assert.Len(t, said.all(), 2, "lines at 12.5 s and 22.5 s: %q", said.all())
}

// An interruption ends an external wait at once, and is no NotReadyError.
func TestWaitReadyExternalInterrupted(t *testing.T) {
	cause := errors.New("interrupted by the user")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var n atomic.Int64
	probe := func(context.Context) error {
		if n.Add(1) == 3 {
			cancel(cause)
		}
		return errors.New("refused")
	}
	_, err := WaitReady(ctx, external{}, Health{Path: "none"}, externalWait(newFakeClock(), nil), probe)
	require.ErrorIs(t, err, cause)
	assert.Contains(t, err.Error(), "waiting for the target http://test to be ready: interrupted by the user")
	var nre *NotReadyError
	assert.False(t, errors.As(err, &nre))
	assert.Equal(t, int64(3), n.Load())
}

// An answer that waiting will not change ends the wait at once.
func TestWaitReadyFinalAnswer(t *testing.T) {
	fs := newFlakyServer(t, 1<<40, http.StatusNotFound)
	clock := newFakeClock()
	w := externalWait(clock, nil)
	w.Final = func(err error) bool { return strings.Contains(err.Error(), "HTTP 404") }
	h := Health{BaseURL: fs.URL, Path: "/health", Interval: 200 * time.Millisecond}

	_, err := WaitReady(context.Background(), external{}, h, w, fs.probe)

	var nre *NotReadyError
	require.ErrorAs(t, err, &nre)
	assert.True(t, nre.Final)
	assert.Equal(t, 1, nre.Attempts)
	assert.Equal(t, int64(1), fs.hits.Load())
	assert.Empty(t, clock.pauses(time.Time{}), "no pause")
	assert.Equal(t, "target http://test not ready, and waiting will not change its answer (1 attempt after 0s); "+
		"last check: health is OK but a one-token completion failed: HTTP 404", err.Error())
}

// A health path that answers something else than 200 is a
// *HealthStatusError, which says the status.
func TestHealthStatusError(t *testing.T) {
	hs := newHealthServer(t, func(int64) (int, string) { return http.StatusServiceUnavailable, "still\n loading  weights" })
	err := Health{BaseURL: hs.URL, Path: "/health", Interval: time.Second}.check(context.Background(), eventTimeout)
	var he *HealthStatusError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.StatusServiceUnavailable, he.Status)
	assert.Equal(t, "GET "+hs.URL+"/health: HTTP 503: still loading weights", err.Error())
}
