package stack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// fakeInstance is an Instance the test ends when it likes, with a fixed tail.
type fakeInstance struct {
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	err  error
	tail []string
}

var _ Instance = (*fakeInstance)(nil)

func newFakeInstance(tail ...string) *fakeInstance {
	return &fakeInstance{done: make(chan struct{}), tail: tail}
}

// exit ends the fake stack with err; only the first call counts.
func (f *fakeInstance) exit(err error) {
	f.once.Do(func() {
		f.mu.Lock()
		f.err = err
		f.mu.Unlock()
		close(f.done)
	})
}

func (f *fakeInstance) Done() <-chan struct{} { return f.done }

func (f *fakeInstance) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func (f *fakeInstance) Tail(n int) []string {
	return f.tail[max(len(f.tail)-n, 0):]
}

func (f *fakeInstance) Identity() result.Stack { return result.Stack{Kind: config.StackProcess} }

func (f *fakeInstance) Stop(context.Context) error {
	f.exit(&ExitError{What: "fake", Code: -1, Signal: "SIGTERM"})
	return nil
}

// healthServer serves /health with what answer says for the nth request
// (1-based), and counts the requests.
type healthServer struct {
	*httptest.Server
	hits   atomic.Int64
	lastOK atomic.Bool // whether the latest /health answer was 200
}

func newHealthServer(t *testing.T, answer func(n int64) (status int, body string)) *healthServer {
	t.Helper()
	hs := &healthServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		status, body := answer(hs.hits.Add(1))
		hs.lastOK.Store(status == http.StatusOK)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})
	hs.Server = httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs
}

const loadingBody = `{"error":"loading"}`

// unhealthyUntil answers 503 loading for the first n requests, then 200.
func unhealthyUntil(n int64) func(int64) (int, string) {
	return func(i int64) (int, string) {
		if i <= n {
			return http.StatusServiceUnavailable, loadingBody
		}
		return http.StatusOK, `{"status":"ok"}`
	}
}

// countingProbe fails its first fails calls with err, then succeeds.
func countingProbe(fails int64, err error, calls *atomic.Int64) func(context.Context) error {
	return func(ctx context.Context) error {
		if calls.Add(1) <= fails {
			return err
		}
		return nil
	}
}

func TestWaitReadyPolls(t *testing.T) {
	tests := []struct {
		name                   string
		healthFails, probeFail int64
	}{
		{"ready at once", 0, 0},
		{"health loading first", 3, 0},
		{"probe fails first", 0, 1},
		{"health loading, then probe fails once", 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hs := newHealthServer(t, unhealthyUntil(tt.healthFails))
			var calls atomic.Int64
			probe := func(ctx context.Context) error {
				assert.True(t, hs.lastOK.Load(), "probe only once health answers 200")
				return countingProbe(tt.probeFail, errors.New("model not loaded"), &calls)(ctx)
			}
			h := Health{BaseURL: hs.URL, Path: "/health", Interval: 10 * time.Millisecond}

			_, err := WaitReady(context.Background(), newFakeInstance(), h, Wait{Timeout: eventTimeout}, probe)
			require.NoError(t, err)
			assert.Equal(t, tt.probeFail+1, calls.Load(), "probe calls")
			assert.Equal(t, tt.healthFails+tt.probeFail+1, hs.hits.Load(), "health checks")
		})
	}
}

func TestWaitReadyWithoutHealthPath(t *testing.T) {
	for _, path := range []string{"", "none"} {
		t.Run(fmt.Sprintf("path %q", path), func(t *testing.T) {
			hs := newHealthServer(t, unhealthyUntil(1000)) // would never be ready
			var calls atomic.Int64
			h := Health{BaseURL: hs.URL, Path: path, Interval: 10 * time.Millisecond}

			_, err := WaitReady(context.Background(), newFakeInstance(), h, Wait{Timeout: eventTimeout},
				countingProbe(2, errors.New("connection refused"), &calls))
			require.NoError(t, err)
			assert.Equal(t, int64(3), calls.Load(), "only the probe decides")
			assert.Zero(t, hs.hits.Load(), "no health check without a health path")
		})
	}
}

func TestWaitReadyTimeout(t *testing.T) {
	// Long enough for a first check to finish on a busy machine under -race:
	// the message must quote what the server answered, not a cut-off.
	const timeout = time.Second
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	tests := []struct {
		name    string
		answer  func(int64) (int, string)
		baseURL string // overrides the health server's
		probe   func(context.Context) error
		want    []string
		notWant []string
	}{
		{
			name:   "health never answers 200",
			answer: unhealthyUntil(1 << 40),
			want:   []string{"last check: GET http", "/health: HTTP 503: " + loadingBody},
		},
		{
			name: "body whitespace collapsed",
			answer: func(int64) (int, string) {
				return http.StatusServiceUnavailable, "{\n  \"error\":\t\"still\n loading\"\n}\n"
			},
			want: []string{`HTTP 503: { "error": "still loading" }`},
		},
		{
			name:    "long body cut",
			answer:  func(int64) (int, string) { return http.StatusInternalServerError, strings.Repeat("x", 2000) },
			want:    []string{"HTTP 500: " + strings.Repeat("x", 512)},
			notWant: []string{strings.Repeat("x", 513)},
		},
		{
			name:   "empty body",
			answer: func(int64) (int, string) { return http.StatusBadGateway, "" },
			want:   []string{"/health: HTTP 502\n"},
		},
		{
			name:    "server not there",
			answer:  unhealthyUntil(0),
			baseURL: closed.URL,
			want:    []string{"last check: GET " + closed.URL + "/health: "},
		},
		{
			name:   "probe never succeeds",
			answer: unhealthyUntil(0),
			probe:  func(context.Context) error { return errors.New("connection reset by peer") },
			want:   []string{"health is OK but a one-token completion failed: connection reset by peer"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hs := newHealthServer(t, tt.answer)
			base := hs.URL
			if tt.baseURL != "" {
				base = tt.baseURL
			}
			probe := tt.probe
			if probe == nil {
				probe = func(context.Context) error { return nil }
			}
			var tail []string
			for i := range 30 {
				tail = append(tail, fmt.Sprintf("log line %d", i))
			}
			inst := newFakeInstance(tail...)
			h := Health{BaseURL: base + "/", Path: "/health", Interval: 20 * time.Millisecond}

			start := time.Now()
			_, err := WaitReady(context.Background(), inst, h, Wait{Timeout: timeout}, probe)
			took := time.Since(start)

			var nre *NotReadyError
			require.ErrorAs(t, err, &nre)
			assert.Nil(t, nre.Exit)
			require.Error(t, nre.Last)
			assert.GreaterOrEqual(t, nre.After, timeout)
			assert.GreaterOrEqual(t, took, timeout)
			assert.Less(t, took, eventTimeout/2)
			assert.Equal(t, tail[30-TailLines:], nre.Tail, "the last TailLines lines of the log")

			msg := err.Error()
			assert.Contains(t, msg, "stack not ready after")
			assert.Contains(t, msg, "(stack.ready_timeout)")
			assert.Contains(t, msg, "last 20 lines of the stack's log:\n  | log line 10\n")
			assert.True(t, strings.HasSuffix(msg, "\n  | log line 29"), "the tail ends the message: %q", msg)
			assert.NotContains(t, msg, "log line 9\n")
			for _, w := range tt.want {
				assert.Contains(t, msg, w)
			}
			for _, w := range tt.notWant {
				assert.NotContains(t, msg, w)
			}
			var ee *ExitError
			assert.False(t, errors.As(err, &ee), "a timeout is no exit")
		})
	}
}

func TestWaitReadyStackExits(t *testing.T) {
	inst := newFakeInstance("tail of a fake")
	exit := &ExitError{What: "process vllm", Code: 1, Tail: []string{"loading weights", "CUDA out of memory"}}
	hs := newHealthServer(t, func(n int64) (int, string) {
		if n == 3 {
			inst.exit(exit) // exits while a check is failing
		}
		return http.StatusServiceUnavailable, loadingBody
	})
	h := Health{BaseURL: hs.URL, Path: "/health", Interval: 10 * time.Millisecond}

	_, err := WaitReady(context.Background(), inst, h, Wait{Timeout: eventTimeout}, func(context.Context) error { return nil })

	var nre *NotReadyError
	require.ErrorAs(t, err, &nre)
	assert.Same(t, exit, nre.Exit)
	assert.Less(t, nre.After, eventTimeout/2, "an exit ends the wait at once, not at the timeout")
	assert.GreaterOrEqual(t, hs.hits.Load(), int64(3))
	var ee *ExitError
	require.ErrorAs(t, err, &ee, "the exit is wrapped")
	assert.Same(t, exit, ee)

	msg := err.Error()
	assert.Contains(t, msg, "stack exited before it was ready (after ")
	assert.Contains(t, msg, "process vllm exited with status 1")
	assert.Contains(t, msg, "\n  | loading weights\n  | CUDA out of memory")
	assert.Equal(t, 1, strings.Count(msg, "CUDA out of memory"), "the tail once, from the exit")
	assert.NotContains(t, msg, "tail of a fake")
}

func TestWaitReadyContextCancelled(t *testing.T) {
	cause := errors.New("interrupted by the user")
	tests := []struct {
		name   string
		before bool // cancel before WaitReady, else at the second health check
	}{
		{"cancelled before", true},
		{"cancelled while polling", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tt.before {
				cancel(cause)
			}
			hs := newHealthServer(t, func(n int64) (int, string) {
				if n == 2 {
					cancel(cause)
				}
				return http.StatusServiceUnavailable, loadingBody
			})
			h := Health{BaseURL: hs.URL, Path: "/health", Interval: 10 * time.Millisecond}

			_, err := WaitReady(ctx, newFakeInstance(), h, Wait{Timeout: eventTimeout}, func(context.Context) error { return nil })
			require.Error(t, err)
			assert.ErrorIs(t, err, cause)
			assert.Contains(t, err.Error(), "waiting for the stack to be ready: interrupted by the user")
			var nre *NotReadyError
			assert.False(t, errors.As(err, &nre), "an interruption is not a stack that is not ready")
		})
	}
}

// waitCtx waits for ctx to be done, failing the test if it is not in time.
func waitCtx(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(eventTimeout):
		t.Fatalf("the watched context was not cancelled within %s", eventTimeout)
	}
}

// stopWatch calls a watch's stop, failing the test if it does not return.
func stopWatch(t *testing.T, stop func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(eventTimeout):
		t.Fatal("the watch's stop did not return")
	}
}

func TestWatchStackExits(t *testing.T) {
	for _, withHealth := range []bool{false, true} {
		t.Run(fmt.Sprintf("health %v", withHealth), func(t *testing.T) {
			inst := newFakeInstance("watched tail")
			h := Health{Path: "none", Interval: 10 * time.Millisecond}
			hs := newHealthServer(t, unhealthyUntil(0))
			if withHealth {
				h.BaseURL, h.Path = hs.URL, "/health"
			}
			watched, stop := Watch(context.Background(), inst, h, 3)
			defer stop()
			if withHealth {
				// Let the watch get going; no health check fails.
				require.Eventually(t, func() bool { return hs.hits.Load() >= 3 }, eventTimeout, 5*time.Millisecond)
			}
			require.NoError(t, watched.Err(), "live while the stack runs")

			exit := &ExitError{What: "process vllm", Code: 3, Tail: []string{"simulated crash"}}
			inst.exit(exit)
			waitCtx(t, watched)

			var ce *CrashError
			require.ErrorAs(t, context.Cause(watched), &ce)
			assert.Same(t, exit, ce.Exit)
			assert.Nil(t, ce.Health)
			var ee *ExitError
			require.ErrorAs(t, context.Cause(watched), &ee, "the exit is wrapped")
			msg := ce.Error()
			assert.Contains(t, msg, "the stack went down during the run: process vllm exited with status 3")
			assert.Contains(t, msg, "  | simulated crash")

			stopWatch(t, stop)
			assert.Same(t, ce, context.Cause(watched), "stop keeps the crash as the cause")
		})
	}
}

func TestWatchHealthFailures(t *testing.T) {
	const failBody = `{"error":"engine dead"}`
	tests := []struct {
		name     string
		fails    func(n int64) bool // whether the nth health check fails
		failures int
		crashAt  int64 // the check after which the watch cancels; 0: none
	}{
		{"3 failures in a row after OK ones", func(n int64) bool { return n > 4 }, 3, 7},
		{"failing from the start", func(n int64) bool { return true }, 3, 3},
		{"one failure allowed", func(n int64) bool { return n > 2 }, 1, 3},
		{"a single failure among OK ones", func(n int64) bool { return n == 3 }, 3, 0},
		{"two in a row, below the limit", func(n int64) bool { return n == 3 || n == 4 }, 3, 0},
		{"an OK answer resets the count", func(n int64) bool { return n%3 != 0 }, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inst := newFakeInstance("engine log 1", "engine log 2")
			hs := newHealthServer(t, func(n int64) (int, string) {
				if tt.fails(n) {
					return http.StatusServiceUnavailable, failBody
				}
				return http.StatusOK, `{"status":"ok"}`
			})
			h := Health{BaseURL: hs.URL, Path: "/health", Interval: 10 * time.Millisecond}
			watched, stop := Watch(context.Background(), inst, h, tt.failures)
			defer stop()

			if tt.crashAt == 0 {
				const polls = 15
				require.Eventually(t, func() bool { return watched.Err() != nil || hs.hits.Load() >= polls },
					eventTimeout, 5*time.Millisecond)
				require.NoError(t, watched.Err(), "cancelled: %v", context.Cause(watched))
				stopWatch(t, stop)
				assert.ErrorIs(t, context.Cause(watched), ErrStopped)
				return
			}

			waitCtx(t, watched)
			stopWatch(t, stop) // the watch has returned: no check after the crash
			assert.Equal(t, tt.crashAt, hs.hits.Load(), "cancelled at the failure that reached the limit")

			var ce *CrashError
			require.ErrorAs(t, context.Cause(watched), &ce)
			assert.Nil(t, ce.Exit)
			assert.Equal(t, tt.failures, ce.Failures)
			require.Error(t, ce.Health)
			assert.Contains(t, ce.Health.Error(), "HTTP 503: "+failBody)
			assert.Equal(t, []string{"engine log 1", "engine log 2"}, ce.Tail)
			msg := ce.Error()
			assert.Contains(t, msg, fmt.Sprintf("the stack's health check failed %d times in a row during the run", tt.failures))
			assert.Contains(t, msg, failBody)
			assert.Contains(t, msg, "\n  | engine log 1\n  | engine log 2")
			var ee *ExitError
			assert.False(t, errors.As(ce, &ee), "a failing health check is no exit")
		})
	}
}

func TestWatchStop(t *testing.T) {
	tests := []struct {
		name   string
		inst   Instance
		health bool
	}{
		{"external stack, no health path", external{}, false},
		{"external stack, health checked", external{}, true},
		{"started stack, health checked", newFakeInstance(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := newHealthServer(t, unhealthyUntil(0))
			h := Health{Path: "none", Interval: 10 * time.Millisecond}
			if tt.health {
				h.BaseURL, h.Path = hs.URL, "/health"
			}
			watched, stop := Watch(context.Background(), tt.inst, h, 3)
			if tt.health {
				require.Eventually(t, func() bool { return hs.hits.Load() >= 2 }, eventTimeout, 5*time.Millisecond)
			}
			require.NoError(t, watched.Err())

			stopWatch(t, stop)
			assert.ErrorIs(t, watched.Err(), context.Canceled)
			assert.Equal(t, ErrStopped, context.Cause(watched))
			stopWatch(t, stop) // twice is safe
			assert.Equal(t, ErrStopped, context.Cause(watched))

			// A stack stopped after its watch is no crash.
			if f, ok := tt.inst.(*fakeInstance); ok {
				f.exit(&ExitError{What: "fake", Code: 0})
				assert.Equal(t, ErrStopped, context.Cause(watched))
			}
		})
	}
}

func TestWatchParentCancelled(t *testing.T) {
	cause := errors.New("interrupted by the user")
	parent, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	inst := newFakeInstance()
	hs := newHealthServer(t, unhealthyUntil(0))
	h := Health{BaseURL: hs.URL, Path: "/health", Interval: 10 * time.Millisecond}
	watched, stop := Watch(parent, inst, h, 3)
	require.Eventually(t, func() bool { return hs.hits.Load() >= 2 }, eventTimeout, 5*time.Millisecond)
	require.NoError(t, watched.Err())

	cancel(cause)
	waitCtx(t, watched)
	assert.ErrorIs(t, context.Cause(watched), cause)
	var ce *CrashError
	assert.False(t, errors.As(context.Cause(watched), &ce), "an interruption is no crash")

	stopWatch(t, stop)
	inst.exit(&ExitError{What: "fake", Code: 1})
	assert.ErrorIs(t, context.Cause(watched), cause, "the first cause stays")
}
