package run

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// localFailer answers like instantSender, but from request failAt on fails
// every request the way perfgate's own machine does when it is out of
// files (client.ErrLocal), as a run at `ulimit -n 300` with 512 users did.
type localFailer struct {
	clk    *fakeClock
	failAt int64
	n      atomic.Int64
}

func (s *localFailer) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	if s.n.Add(1) > s.failAt {
		now := s.clk.Now()
		return &client.Response{RequestID: id, Sent: now, End: now,
			Err: &client.Error{Kind: client.ErrLocal, Err: errors.New("perfgate's machine ran out of open files (socket: too many open files)")}}
	}
	return (&instantSender{clk: s.clk}).Do(ctx, req, id)
}

// TestLocalErrorStopsTheRun: the first request perfgate's own machine fails
// stops the repetition with a *LocalError, rather than a flood of "server"
// connect errors in a loop (once ~1M records at 67k requests/s).
func TestLocalErrorStopsTheRun(t *testing.T) {
	clk := newFakeClock(0)
	s := &localFailer{clk: clk, failAt: 5}
	m := &Measurement{Dispatcher: &Dispatcher{Sender: s, Clock: clk}, Repetitions: config.Repetitions{Min: 3, Max: 3}, Clock: clk}
	sc := scenario("c8", config.Load{Type: config.LoadClosed, Concurrency: 8}, requests(10))
	sc.Config.Requests = 100000
	sc.Config.MaxErrorRate = 1 // not the error rate: the local error stops it
	reps, err := m.Measure(t.Context(), sc)
	var le *LocalError
	require.ErrorAs(t, err, &le, "Measure = %v", err)
	assert.Empty(t, reps)
	assert.Equal(t, "c8", le.Scenario)
	assert.Equal(t, 1, le.Repetition)
	assert.Less(t, s.n.Load(), int64(1000), "sending went on after the local error")
	for _, want := range []string{"scenario c8 repetition 1", "perfgate's own machine", "too many open files", "rather than blame the server"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestLocalErrorStopsEvalAnswers(t *testing.T) {
	clk := newFakeClock(0)
	s := &localFailer{clk: clk, failAt: 2}
	d := &Dispatcher{Sender: s, Clock: clk}
	items := make([]EvalItem, 5000)
	for i := range items {
		items[i] = EvalItem{Suite: "facts", Request: &workload.Request{ID: "q", Prompt: "x", MaxTokens: 1}}
	}
	var got int
	err := d.AnswerEvals(t.Context(), "chat", "r", items, 4, func(*result.Record) { got++ })
	var le *LocalError
	require.ErrorAs(t, err, &le)
	assert.True(t, strings.HasPrefix(le.Error(), "perfgate's own machine failed a request"), le.Error())
	assert.Equal(t, "chat", le.Scenario)
	assert.Zero(t, le.Repetition)
	assert.Less(t, got, 1000)
}
