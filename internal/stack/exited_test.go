package stack

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/result"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// okProbe is a readiness probe that always succeeds, as one sent to a
// healthy leftover server does.
func okProbe(context.Context) error { return nil }

// The case: the stack perfgate started failed to bind its port and
// exited at once, while a server left over from an earlier run answers on
// that port, health check and completion alike. That is not ready: it is a
// stack that exited. (Before, WaitReady reported ready against the leftover
// when the stack had no health path, and could when it had one.)
func TestWaitReadyLeftoverServerAfterTheStackExited(t *testing.T) {
	for _, path := range []string{"/health", "none"} {
		t.Run("health "+path, func(t *testing.T) {
			hs := newHealthServer(t, unhealthyUntil(0)) // the leftover: always healthy
			inst, err := Start(context.Background(), processStack("sh", "-c",
				`echo "ERROR: [Errno 98] error while attempting to bind on address: address already in use" >&2; exit 1`),
				Options{LogPath: filepath.Join(t.TempDir(), "stack.log"), Grace: eventTimeout})
			require.NoError(t, err)
			t.Cleanup(func() { _ = inst.Stop(context.Background()) })
			waitExit(t, inst)

			h := Health{BaseURL: hs.URL, Path: path, Interval: 10 * time.Millisecond}
			_, err = WaitReady(context.Background(), inst, h, Wait{Timeout: eventTimeout}, okProbe)

			var nre *NotReadyError
			require.ErrorAs(t, err, &nre, "WaitReady = %v, want a *NotReadyError", err)
			var ee *ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, 1, ee.Code)
			assert.Less(t, nre.After, eventTimeout/2, "an exit ends the wait at once")
			msg := err.Error()
			assert.Contains(t, msg, "stack exited before it was ready")
			assert.Contains(t, msg, "address already in use")
			if nre.OtherAnswered {
				assert.Contains(t, msg, "yet something else answers at the target")
			}
		})
	}
}

// The stack exits while a check that then succeeds is in flight: not ready,
// and the message says something else answered.
func TestWaitReadyExitDuringASuccessfulCheck(t *testing.T) {
	for _, path := range []string{"/health", "none"} {
		t.Run("health "+path, func(t *testing.T) {
			hs := newHealthServer(t, unhealthyUntil(0))
			inst := newFakeInstance("tail")
			exit := &ExitError{What: "process vllm", Code: 1, Tail: []string{"address already in use"}}
			probe := func(context.Context) error {
				inst.exit(exit) // the stack dies; what answers the probe is something else
				return nil
			}
			h := Health{BaseURL: hs.URL, Path: path, Interval: 10 * time.Millisecond}
			_, err := WaitReady(context.Background(), inst, h, Wait{Timeout: eventTimeout}, probe)

			var nre *NotReadyError
			require.ErrorAs(t, err, &nre, "WaitReady = %v, want a *NotReadyError", err)
			assert.Same(t, exit, nre.Exit)
			assert.True(t, nre.OtherAnswered)
			assert.Contains(t, err.Error(), "stack exited before it was ready (after ")
			assert.Contains(t, err.Error(), "), yet something else answers at the target (a server left over from an earlier run, holding the port the stack needed?): process vllm exited with status 1")
		})
	}
}

// The probe's own failure reads as a sentence in the not-ready message: a
// reply with no output (client.ErrNoOutput) included.
func TestWaitReadyProbeFailureMessage(t *testing.T) {
	noOutput := errors.New("no_output: the response carried no output text")
	tests := []struct {
		path, want string
	}{
		{"/health", "last check: health is OK but a one-token completion failed: no_output: the response carried no output text"},
		{"none", "last check: a one-token completion failed: no_output: the response carried no output text"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			hs := newHealthServer(t, unhealthyUntil(0))
			h := Health{BaseURL: hs.URL, Path: tt.path, Interval: 10 * time.Millisecond}
			_, err := WaitReady(context.Background(), newFakeInstance(), h, Wait{Timeout: time.Second},
				func(context.Context) error { return noOutput })
			var nre *NotReadyError
			require.ErrorAs(t, err, &nre)
			assert.ErrorIs(t, nre.Last, noOutput, "the probe's error is kept, for errors.Is")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// A stack that exited before its watch was stopped crashed, even if the
// watch had not seen it yet (it was busy with a health check that a server
// still answers): the cause says so, for a caller that looks after stop.
// (Before, the cause was ErrStopped: the exit was lost.)
func TestWatchStopAfterTheStackExited(t *testing.T) {
	inFlight := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case inFlight <- struct{}{}:
		default:
		}
		<-r.Context().Done() // a check that hangs until the watch gives up on it
	}))
	t.Cleanup(srv.Close)
	inst := newFakeInstance()
	h := Health{BaseURL: srv.URL, Path: "/health", Interval: 10 * time.Millisecond}
	watched, stop := Watch(context.Background(), inst, h, 3)
	select {
	case <-inFlight:
	case <-time.After(eventTimeout):
		t.Fatal("the watch never checked the health path")
	}
	exit := &ExitError{What: "process vllm", Code: 1}
	inst.exit(exit) // the watch is inside its check and cannot see it
	stopWatch(t, stop)
	var ce *CrashError
	require.ErrorAs(t, context.Cause(watched), &ce, "cause = %v, want a *CrashError", context.Cause(watched))
	assert.Same(t, exit, ce.Exit)
}

// exitingInstance is an Instance whose exit the test decides.
type exitingInstance struct {
	done chan struct{}
	err  error
}

func (e *exitingInstance) Done() <-chan struct{}      { return e.done }
func (e *exitingInstance) Err() error                 { return e.err }
func (e *exitingInstance) Tail(int) []string          { return nil }
func (e *exitingInstance) Identity() result.Stack     { return result.Stack{} }
func (e *exitingInstance) Stop(context.Context) error { return nil }

// ExitedWithin reports an exit that comes while it waits, or one that came
// before; it does not invent one, and a cancelled context ends the wait.
func TestExitedWithin(t *testing.T) {
	t.Run("exits while waited for", func(t *testing.T) {
		inst := &exitingInstance{done: make(chan struct{}), err: &ExitError{What: "process engine", Code: 139}}
		go close(inst.done)
		crash := ExitedWithin(context.Background(), inst, time.Hour)
		require.NotNil(t, crash)
		assert.Contains(t, crash.Error(), "the stack went down during the run: process engine exited with status 139")
	})
	t.Run("never exits", func(t *testing.T) {
		inst := &exitingInstance{done: make(chan struct{})}
		assert.Nil(t, ExitedWithin(context.Background(), inst, time.Millisecond))
	})
	t.Run("cancelled", func(t *testing.T) {
		inst := &exitingInstance{done: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.Nil(t, ExitedWithin(ctx, inst, time.Hour), "a cancelled wait must end at once, not after the grace")
	})
	t.Run("no stack", func(t *testing.T) {
		assert.Nil(t, ExitedWithin(context.Background(), nil, time.Hour))
	})
}
