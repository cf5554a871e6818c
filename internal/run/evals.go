package run

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// EvalItem is one eval item to send: its suite's name and its request.
type EvalItem struct {
	Suite   string
	Request *workload.Request
}

// EvalQueue hands out eval items, each once, in order, to the repetitions
// that mix them into their load. It is safe for concurrent use.
type EvalQueue struct {
	mu    sync.Mutex
	items []EvalItem
	next  int
}

// NewEvalQueue queues items in order.
func NewEvalQueue(items []EvalItem) *EvalQueue { return &EvalQueue{items: items} }

// Pop returns the next item, or false when none are left.
func (q *EvalQueue) Pop() (EvalItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.next >= len(q.items) {
		return EvalItem{}, false
	}
	q.next++
	return q.items[q.next-1], true
}

// Left is how many items are not yet handed out.
func (q *EvalQueue) Left() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.next
}

// Rest takes every item not yet handed out.
func (q *EvalQueue) Rest() []EvalItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	rest := q.items[q.next:]
	q.next = len(q.items)
	return rest
}

// EvalMix mixes eval items into a repetition's load (quality mode
// interleaved): they are sent beside the workload's requests, so that they
// are batched with real traffic, and emitted as records with Eval set, which
// the latency metrics leave out.
type EvalMix struct {
	Queue *EvalQueue
	// Share is the fraction of all requests sent that are eval items, in
	// (0, 1), while the queue lasts.
	Share float64
}

// due reports whether an eval item goes beside workload request i: after
// request i, the items sent so far are floor((i+1)·r) with r =
// Share/(1−Share) items per workload request, spread evenly.
func (m *EvalMix) due(i int) bool {
	if m == nil || m.Queue == nil || !(m.Share > 0 && m.Share < 1) {
		return false
	}
	r := m.Share / (1 - m.Share)
	return int(float64(i+1)*r) > int(float64(i)*r)
}

// AnswerEvals sends items alone, concurrency at a time (quality mode
// separate, and the items an interleaved run had no room for), and calls
// emit for each record from one goroutine. The records' Repetition is 0.
func (d *Dispatcher) AnswerEvals(ctx context.Context, scenario, runID string, items []EvalItem, concurrency int, emit func(*result.Record)) error {
	if len(items) == 0 {
		return nil
	}
	clk := d.Clock
	if clk == nil {
		clk = RealClock{}
	}
	outer := ctx
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	p := Plan{Scenario: scenario, RunID: runID}
	start := clk.Now()
	work := make(chan int)
	records := make(chan *result.Record)
	var wg sync.WaitGroup
	for range max(concurrency, 1) {
		wg.Go(func() {
			for k := range work {
				records <- d.sendEval(ctx, clk, p, items[k], fmt.Sprintf("%s-%s-q-e%06d", runID, scenario, k), start)
			}
		})
	}
	go func() {
		defer close(work)
		for k := range items {
			select {
			case work <- k:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(records) }()
	for r := range records {
		stopOnLocal(r, stop)
		emit(r)
	}
	return runErr(outer, ctx)
}

// sendEval sends one eval item and returns its record.
func (d *Dispatcher) sendEval(ctx context.Context, clk Clock, p Plan, it EvalItem, id string, start time.Time) *result.Record {
	attempt := clk.Now()
	resp := d.Sender.Do(ctx, it.Request, id)
	if resp.Sent.IsZero() {
		resp.Sent = attempt
	}
	r := newRecord(p, it.Request, resp, start, time.Time{})
	r.Eval = it.Suite
	return r
}
