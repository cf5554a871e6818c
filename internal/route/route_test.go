package route

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/workload"
)

// fakeReplica answers with err (nil: success) and counts what it got.
type fakeReplica struct {
	mu    sync.Mutex
	err   *client.Error
	got   int
	idles int
}

func (f *fakeReplica) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got++
	return &client.Response{RequestID: id, Err: f.err}
}

func (f *fakeReplica) ListModels(ctx context.Context) ([]string, error) { return []string{"m"}, nil }
func (f *fakeReplica) CloseIdleConnections()                            { f.mu.Lock(); f.idles++; f.mu.Unlock() }

func (f *fakeReplica) set(err *client.Error) { f.mu.Lock(); f.err = err; f.mu.Unlock() }
func (f *fakeReplica) count() int            { f.mu.Lock(); defer f.mu.Unlock(); return f.got }

// gate is a probe a test opens: it fails until healthy is set.
type gate struct{ healthy atomic.Bool }

func (g *gate) probe(ctx context.Context, i int) error {
	if g.healthy.Load() {
		return nil
	}
	return errors.New("not yet")
}

func send(t *testing.T, p *Pool, n int) (failed int) {
	t.Helper()
	for range n {
		if p.Do(t.Context(), &workload.Request{}, "r").Err != nil {
			failed++
		}
	}
	return failed
}

func TestRoundRobin(t *testing.T) {
	reps := []*fakeReplica{{}, {}, {}}
	p, err := New([]Member{reps[0], reps[1], reps[2]}, (&gate{}).probe, time.Millisecond)
	require.NoError(t, err)
	defer p.Close()
	assert.Zero(t, send(t, p, 9))
	for i, r := range reps {
		assert.Equal(t, 3, r.count(), "replica %d", i+1)
	}
	p.CloseIdleConnections()
	for _, r := range reps {
		assert.Equal(t, 1, r.idles)
	}
}

// A replica that refuses connections (or answers 503) fails the request
// that found it so, and is left out until its probe passes; other failures
// (a broken stream, a 500) are the server's answer and leave it in.
func TestLeftOutUntilHealthy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     *client.Error
		leftOut bool
	}{
		{"refused", &client.Error{Kind: client.ErrConnect}, true},
		{"not ready", &client.Error{Kind: client.ErrHTTP, Status: http.StatusServiceUnavailable}, true},
		{"server error", &client.Error{Kind: client.ErrHTTP, Status: http.StatusInternalServerError}, false},
		{"broken stream", &client.Error{Kind: client.ErrStream}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := &fakeReplica{}, &fakeReplica{}
			g := &gate{}
			p, err := New([]Member{a, b}, g.probe, time.Millisecond)
			require.NoError(t, err)
			defer p.Close()
			b.set(tc.err)
			assert.Equal(t, 1, send(t, p, 2), "the request that found the replica failing fails: it is not sent again")
			in, _ := p.In(1)
			assert.Equal(t, !tc.leftOut, in)
			failed := send(t, p, 10)
			if !tc.leftOut {
				assert.Equal(t, 5, failed, "a replica left in takes its share")
				return
			}
			assert.Zero(t, failed, "the rest go to the replica left")
			assert.Equal(t, 11, a.count())

			b.set(nil)
			g.healthy.Store(true)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			require.NoError(t, p.WaitIn(ctx, 1), "back once its probe passes")
			assert.Zero(t, send(t, p, 4))
			assert.Equal(t, 3, b.count(), "back in the rotation")
		})
	}
}

// With every replica left out, requests still go somewhere, and fail there
// as the server's failures: the router never answers for a server.
func TestAllLeftOut(t *testing.T) {
	a, b := &fakeReplica{}, &fakeReplica{}
	refused := &client.Error{Kind: client.ErrConnect}
	a.set(refused)
	b.set(refused)
	p, err := New([]Member{a, b}, (&gate{}).probe, time.Hour)
	require.NoError(t, err)
	defer p.Close()
	assert.Equal(t, 6, send(t, p, 6))
	assert.Equal(t, 3, a.count())
	assert.Equal(t, 3, b.count())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, p.WaitIn(ctx, 0), context.Canceled)
}

func TestNewRefuses(t *testing.T) {
	_, err := New(nil, (&gate{}).probe, time.Second)
	assert.Error(t, err)
	_, err = New([]Member{&fakeReplica{}}, nil, time.Second)
	assert.Error(t, err)
	_, err = New([]Member{&fakeReplica{}}, (&gate{}).probe, 0)
	assert.Error(t, err)
}
