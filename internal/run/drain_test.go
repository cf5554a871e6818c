package run

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// serverLog is a fake server that finishes what it started: a request
// occupies it for its latency whether or not the client gave up on it
// (as an engine that does not abort a request whose client disconnected).
// It logs, per request id, when the server began and ended it.
type serverLog struct {
	latency time.Duration
	mu      sync.Mutex
	began   map[string]time.Time
	ended   map[string]time.Time
	// hang, if set and true when a request's work is done, makes it wait
	// for its client to give up instead of answering.
	hang *atomic.Bool
	// fail, if set, fails the requests it says with an HTTP 500.
	fail func(id string) bool
}

func newServerLog(latency time.Duration) *serverLog {
	return &serverLog{latency: latency, began: map[string]time.Time{}, ended: map[string]time.Time{}}
}

func (s *serverLog) Do(ctx context.Context, _ *workload.Request, id string) *client.Response {
	sent := time.Now()
	s.mu.Lock()
	s.began[id] = sent
	s.ended[id] = sent.Add(s.latency) // the server's work ends then, whatever the client does
	s.mu.Unlock()
	timer := time.NewTimer(s.latency)
	defer timer.Stop()
	resp := &client.Response{RequestID: id, Sent: sent}
	canceled := func() *client.Response {
		resp.End = time.Now()
		resp.Err = &client.Error{Kind: client.ErrCanceled, Err: ctx.Err()}
		return resp
	}
	select {
	case <-timer.C:
	case <-ctx.Done():
		return canceled()
	}
	if s.hang != nil && s.hang.Load() {
		<-ctx.Done()
		return canceled()
	}
	resp.End = time.Now()
	if s.fail != nil && s.fail(id) {
		resp.Err = &client.Error{Kind: client.ErrHTTP, Status: 500, Message: "engine overloaded"}
		return resp
	}
	resp.FirstToken = sent.Add(s.latency / 2)
	resp.ChunkTimes = []time.Time{resp.FirstToken, resp.End}
	resp.OutputTokens, resp.TokensFrom = 8, client.TokensFromUsage
	return resp
}

// phase is the repetition a request id belongs to ("-r0-" is the warm-up).
func phase(id string) string {
	for _, p := range []string{"-r0-", "-r1-", "-r2-"} {
		if strings.Contains(id, p) {
			return p
		}
	}
	return ""
}

// Warm-up ends by draining: no request it sent runs on the server while
// repetition 1 does. The requests in flight when it was judged steady end
// normally (they are neither cancelled nor failed), and the result says
// how long the drain took.
func TestWarmupDrainsBeforeRepetitionOne(t *testing.T) {
	srv := newServerLog(40 * time.Millisecond)
	d := &Dispatcher{Sender: srv}
	w := &Warmup{
		Dispatcher: d, RunID: "run", Drain: 10 * time.Second,
		Config: config.Warmup{Method: config.WarmupWindows, Window: 200 * time.Millisecond, Windows: 2,
			Tolerance: 0.5, Max: 10 * time.Second},
	}
	s := scenario("s", config.Load{Type: config.LoadClosed, Concurrency: 4}, warmRequests(8))
	s.Config.Requests, s.Config.MaxErrorRate = 8, 0.05
	wres, err := w.Run(t.Context(), s)
	require.NoError(t, err)
	require.True(t, wres.Steady)
	m := &Measurement{Dispatcher: d, Repetitions: config.Repetitions{Min: 1, Max: 1}, RunID: "run"}
	_, err = m.Measure(t.Context(), s)
	require.NoError(t, err)

	srv.mu.Lock()
	defer srv.mu.Unlock()
	var lastWarm, firstRep time.Time
	for id, began := range srv.began {
		switch phase(id) {
		case "-r0-":
			if end := srv.ended[id]; end.After(lastWarm) {
				lastWarm = end
			}
		case "-r1-":
			if firstRep.IsZero() || began.Before(firstRep) {
				firstRep = began
			}
		}
	}
	require.False(t, lastWarm.IsZero())
	require.False(t, firstRep.IsZero())
	assert.False(t, lastWarm.After(firstRep), "a warm-up request ran %v into repetition 1", lastWarm.Sub(firstRep))
	assert.Zero(t, wres.Failed, "drained requests end normally")
	assert.Equal(t, len(srv.began)-8, wres.Requests, "every warm-up request sent completed: none was cut off")
	require.NotNil(t, wres.Drain)
	assert.Positive(t, float64(*wres.Drain))
	assert.Less(t, wres.Drain.Dur(), 2*time.Second)
	assert.Zero(t, wres.DrainCut)
}

// A drain is bounded: what is still in flight at Drain is cancelled and
// counted, and an engine whose queue never empties is waited on no longer.
func TestWarmupDrainBound(t *testing.T) {
	srv := newServerLog(5 * time.Millisecond)
	srv.hang = new(atomic.Bool)
	var polls atomic.Int32
	w := &Warmup{
		Dispatcher: &Dispatcher{Sender: srv}, RunID: "run", Drain: 300 * time.Millisecond,
		Config: config.Warmup{Method: config.WarmupWindows, Window: 100 * time.Millisecond, Windows: 2,
			Tolerance: 0.5, Max: 10 * time.Second},
		// Every request the server answers from now on hangs: those in
		// flight when warm-up is steady never end on their own.
		OnWindow: func(_ result.WarmupWindow, steady bool, _ string) { srv.hang.Store(steady) },
		Queue: func(context.Context) (float64, float64, bool) {
			polls.Add(1)
			return 1, 2, true
		},
	}
	wres, err := w.Run(t.Context(), scenario("s", config.Load{Type: config.LoadClosed, Concurrency: 4}, warmRequests(8)))
	require.NoError(t, err)
	require.True(t, wres.Steady)
	assert.Positive(t, wres.DrainCut, "the requests in flight at the bound were cancelled")
	assert.Zero(t, wres.Failed, "and are not failures of the server")
	require.NotNil(t, wres.Drain)
	assert.GreaterOrEqual(t, wres.Drain.Dur(), 300*time.Millisecond)
	assert.Less(t, wres.Drain.Dur(), 2*time.Second)
	require.NotNil(t, wres.DrainQueue)
	assert.Equal(t, 3.0, *wres.DrainQueue, "what the engine still held")
	assert.Greater(t, polls.Load(), int32(len(wres.Windows)), "the queue was sampled each window and polled as it drained")
}

// Where the engine shows its queue, the drain waits for it to empty.
func TestWarmupDrainWaitsForTheEngine(t *testing.T) {
	srv := newServerLog(5 * time.Millisecond)
	var left atomic.Int32
	left.Store(-1) // not draining yet: the queue reads 0
	w := &Warmup{
		Dispatcher: &Dispatcher{Sender: srv}, RunID: "run", Drain: 10 * time.Second,
		Config: config.Warmup{Method: config.WarmupWindows, Window: 100 * time.Millisecond, Windows: 2,
			Tolerance: 0.5, Max: 10 * time.Second},
		OnWindow: func(_ result.WarmupWindow, steady bool, _ string) {
			if steady {
				left.Store(3) // three polls of a busy engine
			}
		},
		Queue: func(context.Context) (float64, float64, bool) {
			if n := left.Load(); n > 0 {
				left.Add(-1)
				return 1, float64(n - 1), true
			}
			return 0, 0, true
		},
	}
	wres, err := w.Run(t.Context(), scenario("s", config.Load{Type: config.LoadClosed, Concurrency: 4}, warmRequests(8)))
	require.NoError(t, err)
	assert.Zero(t, left.Load(), "the drain polled the engine until it was idle")
	require.NotNil(t, wres.Drain)
	assert.GreaterOrEqual(t, wres.Drain.Dur(), 2*queuePoll, "three polls, two pauses")
	assert.Nil(t, wres.DrainQueue)
}

// Once warm-up's own requests have ended, an engine queue that does not
// fall (another client's requests, a stale gauge) is waited on for a few
// polls, not until target.timeout.
func TestWarmupDrainStopsOnAStaleQueue(t *testing.T) {
	srv := newServerLog(5 * time.Millisecond)
	w := &Warmup{
		Dispatcher: &Dispatcher{Sender: srv}, RunID: "run", Drain: 20 * time.Second,
		Config: config.Warmup{Method: config.WarmupWindows, Window: 100 * time.Millisecond, Windows: 2,
			Tolerance: 0.5, Max: 10 * time.Second},
		Queue: func(context.Context) (float64, float64, bool) { return 0, 2, true },
	}
	wres, err := w.Run(t.Context(), scenario("s", config.Load{Type: config.LoadClosed, Concurrency: 4}, warmRequests(8)))
	require.NoError(t, err)
	require.NotNil(t, wres.Drain)
	require.NotNil(t, wres.DrainQueue)
	assert.Equal(t, 2.0, *wres.DrainQueue, "what the engine still held")
	assert.Zero(t, wres.DrainCut)
	assert.GreaterOrEqual(t, wres.Drain.Dur(), queueStalePolls*queuePoll)
	assert.Less(t, wres.Drain.Dur(), 10*time.Second, "not until target.timeout")
}

// Warm-up failures are counted by kind; when the windows judged steady fail
// more than max_error_rate of their requests, warm-up stops with a
// *FailingError that names the errors.
func TestWarmupFailuresAreTold(t *testing.T) {
	run := func(t *testing.T, every int, maxErrorRate float64) (*result.Warmup, error) {
		srv := newServerLog(5 * time.Millisecond)
		var n atomic.Int64
		srv.fail = func(string) bool { return n.Add(1)%int64(every) == 0 }
		w := &Warmup{
			Dispatcher: &Dispatcher{Sender: srv}, RunID: "run",
			Config: config.Warmup{Method: config.WarmupWindows, Window: 100 * time.Millisecond, Windows: 2,
				Tolerance: 0.5, Max: 10 * time.Second},
		}
		s := scenario("chat", config.Load{Type: config.LoadClosed, Concurrency: 4}, warmRequests(8))
		s.Config.MaxErrorRate = maxErrorRate
		return w.Run(t.Context(), s)
	}
	t.Run("over max_error_rate", func(t *testing.T) {
		got, err := run(t, 2, 0.05) // half fail
		var fe *FailingError
		require.ErrorAs(t, err, &fe)
		require.NotNil(t, got)
		assert.Positive(t, got.Failed)
		assert.Equal(t, map[string]int{"http": got.Failed}, got.Errors)
		assert.Contains(t, got.FirstError, "500")
		require.NotNil(t, got.Drain, "a failed warm-up drains too: the requests it sent end before anything else runs")
		msg := err.Error()
		for _, want := range []string{"scenario chat warm-up: ", "requests failed in the windows judged steady", "over max_error_rate 5.0%", "http ×", "; the first: "} {
			assert.Contains(t, msg, want)
		}
	})
	t.Run("within max_error_rate", func(t *testing.T) {
		got, err := run(t, 10, 0.5)
		require.NoError(t, err)
		assert.True(t, got.Steady)
		assert.Positive(t, got.Failed)
		assert.Equal(t, got.Failed, got.Errors["http"])
		failed := 0
		for _, w := range got.Windows {
			failed += w.Failed
		}
		assert.Positive(t, failed, "each window counts the requests that failed in it")
	})
}
