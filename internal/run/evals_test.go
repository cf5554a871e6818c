package run

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

func evalItems(n int) []EvalItem {
	items := make([]EvalItem, n)
	for k := range items {
		items[k] = EvalItem{Suite: "arith", Request: &workload.Request{ID: fmt.Sprintf("q%03d", k), Prompt: "2+2?", MaxTokens: 4}}
	}
	return items
}

// Eval items are mixed in at the configured share, each sent once, in order,
// across repetitions; their records carry Eval and stay out of the latency
// summary; what the measurement had no room for is left in the queue.
func TestMeasureMixesEvals(t *testing.T) {
	for _, load := range []config.Load{
		{Type: config.LoadClosed, Concurrency: 4},
		{Type: config.LoadPoisson, Rate: 100},
	} {
		t.Run(load.Type, func(t *testing.T) {
			clk := newFakeClock(0)
			queue := NewEvalQueue(evalItems(30))
			var mu sync.Mutex
			var evals []*result.Record
			m := &Measurement{
				Dispatcher:  &Dispatcher{Sender: &instantSender{clk: clk}, Clock: clk},
				Repetitions: config.Repetitions{Min: 2, Max: 2}, Clock: clk, RunID: "t",
				Evals: &EvalMix{Queue: queue, Share: 0.2},
				OnEval: func(r *result.Record) {
					mu.Lock()
					defer mu.Unlock()
					evals = append(evals, r)
				},
			}
			s := Scenario{Config: config.Scenario{Name: "s", Load: load, Requests: 40, MaxErrorRate: 0.05}, Requests: requests(10)}
			reps, err := m.Measure(context.Background(), s)
			require.NoError(t, err)
			require.Len(t, reps, 2)
			for _, r := range reps {
				assert.Equal(t, 40, r.Sent, "eval items are not counted as workload requests")
			}
			// Share 0.2 is one eval item per 4 workload requests: 10 a
			// repetition, so 20 of the 30 items are sent.
			require.Len(t, evals, 20)
			var ids []string
			perRep := map[int]int{}
			for _, r := range evals {
				assert.Equal(t, "arith", r.Eval)
				ids = append(ids, r.ID)
				perRep[r.Repetition]++
			}
			slices.Sort(ids)
			assert.Equal(t, "q000", ids[0])
			assert.Equal(t, "q019", ids[19])
			assert.Equal(t, map[int]int{1: 10, 2: 10}, perRep)
			assert.Len(t, queue.Rest(), 10, "items left for answering alone")
			_, ok := queue.Pop()
			assert.False(t, ok)
		})
	}
}

// AnswerEvals sends every item once with at most concurrency in flight.
func TestAnswerEvals(t *testing.T) {
	clk := newFakeClock(0)
	sender := &instantSender{clk: clk}
	d := &Dispatcher{Sender: sender, Clock: clk}
	var recs []*result.Record
	require.NoError(t, d.AnswerEvals(context.Background(), "s", "t", evalItems(25), 3, func(r *result.Record) { recs = append(recs, r) }))
	require.Len(t, recs, 25)
	seen := map[string]bool{}
	for _, r := range recs {
		assert.Equal(t, "arith", r.Eval)
		assert.Equal(t, 0, r.Repetition)
		seen[r.ID] = true
	}
	assert.Len(t, seen, 25)
}

func TestEvalMixDue(t *testing.T) {
	m := &EvalMix{Queue: NewEvalQueue(nil), Share: 0.1}
	n := 0
	for i := range 900 {
		if m.due(i) {
			n++
		}
	}
	assert.Equal(t, 100, n, "share 0.1: 100 items beside 900 requests")
	var none *EvalMix
	assert.False(t, none.due(3))
}
