package run

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
	"slices"
)

// SessionErrorKind is the error kind of a session turn that was not sent
// because an earlier turn of its session failed (result.SessionErrorKind).
const SessionErrorKind = result.SessionErrorKind

// thinkStream seeds the think-time draws of a unit, apart from the
// schedule's (the plan's seed with another stream).
const thinkStream = 0x7468696e6b

// dispatch is one repetition in progress: what Run shares between the load
// shape's loop and the units it starts.
type dispatch struct {
	d       *Dispatcher
	p       *Plan
	clk     Clock
	start   time.Time
	records chan<- *result.Record
	res     *reserver
	units   int // units in a pass
	// think draws a think time in milliseconds (load.think_time); nil for none.
	think func(*rand.Rand) int
	// slots caps the open-loop requests in flight (MaxInFlight); nil for no cap.
	slots chan struct{}
	evals atomic.Int64
	wg    sync.WaitGroup
	// coldSent are the adapters a request was sent to already, with
	// Plan.ColdAdapters.
	coldMu   sync.Mutex
	coldSent map[string]bool
}

// firstToAdapter reports whether req is the plan's first request to its
// adapter, with Plan.ColdAdapters; it is decided when the request is
// sent, so that the first sent is the cold one.
func (x *dispatch) firstToAdapter(req *workload.Request) bool {
	if req.Model == "" || !slices.Contains(x.p.ColdAdapters, req.Model) {
		return false
	}
	x.coldMu.Lock()
	defer x.coldMu.Unlock()
	if x.coldSent[req.Model] {
		return false
	}
	if x.coldSent == nil {
		x.coldSent = map[string]bool{}
	}
	x.coldSent[req.Model] = true
	return true
}

// thinkSampler is the sampler of the load's think_time, nil when it has none.
func thinkSampler(l config.Load) (func(*rand.Rand) int, error) {
	d, err := l.ThinkDist()
	if err != nil || d == nil {
		return nil, err
	}
	return d.Sampler("")
}

// closedLoop runs Concurrency users, each starting its next unit as soon as
// its last one ended (and sending the eval item due beside each turn, if any).
func (x *dispatch) closedLoop(ctx context.Context) {
	for range x.p.Load.Concurrency {
		x.wg.Go(func() {
			for ctx.Err() == nil {
				if x.p.Duration > 0 && x.clk.Now().Sub(x.start) >= x.p.Duration {
					return
				}
				r, ok := x.res.take()
				if !ok {
					return
				}
				x.runUnit(ctx, r, time.Time{}, false)
			}
		})
	}
}

// openLoop starts unit k at start+sched.At(k), never waiting for responses
// (except for a free slot when MaxInFlight caps them, which shows as send
// lag). An eval item due beside a turn is sent at the same time, outside the
// MaxInFlight cap.
func (x *dispatch) openLoop(ctx context.Context, sched Schedule) {
	if x.p.Load.MaxInFlight > 0 {
		x.slots = make(chan struct{}, x.p.Load.MaxInFlight)
	}
	for {
		r, ok := x.res.take()
		if !ok {
			return
		}
		at, ok := sched.At(r.k)
		if !ok || (x.p.Duration > 0 && at >= x.p.Duration) {
			return
		}
		scheduled := x.start.Add(at)
		if x.clk.SleepUntil(ctx, scheduled) != nil {
			return
		}
		if x.p.Evals.due(r.first) {
			x.wg.Go(func() { x.sendEval(ctx, r.first) })
		}
		if !x.acquire(ctx) {
			return
		}
		x.wg.Go(func() { x.runUnit(ctx, r, scheduled, true) })
	}
}

// acquire takes a slot of MaxInFlight, if it caps the load; false when ctx
// ended first.
func (x *dispatch) acquire(ctx context.Context) bool {
	if x.slots == nil {
		return true
	}
	select {
	case x.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (x *dispatch) release() {
	if x.slots != nil {
		<-x.slots
	}
}

// runUnit sends the reserved turns of a unit one after another: turn t+1 at
// turn t's end plus its think time (the turn's think_ms, else a draw from
// load.think_time, else none), carrying the conversation so far. scheduled
// is the unit's planned start (zero in a closed loop); open says the caller
// holds a MaxInFlight slot for the first turn and that later turns are
// scheduled at their due time. A failed turn ends the session: its
// remaining turns are recorded as SessionErrorKind failures. The duration
// ends it too: a turn due after it is not sent, nor counted.
func (x *dispatch) runUnit(ctx context.Context, r reservation, scheduled time.Time, open bool) {
	p := x.p
	var rng *rand.Rand
	var history []exchange
	var lastEnd time.Time // of the turn before
	for j := range r.n {
		orig := &p.Requests[r.turns[j]]
		own := orig
		i := r.first + j
		if j == 0 {
			own = p.salted(orig, r.k, x.units)
		} else {
			due := lastEnd.Add(x.thinkTime(orig, &rng, r.k))
			if p.Duration > 0 && due.Sub(x.start) >= p.Duration {
				return
			}
			if x.clk.SleepUntil(ctx, due) != nil {
				return
			}
			if open {
				scheduled = due
				if p.Evals.due(i) {
					x.wg.Go(func() { x.sendEval(ctx, i) })
				}
				if !x.acquire(ctx) {
					return
				}
			}
		}
		resp := x.send(ctx, orig, withHistory(history, own), i, scheduled, r, j)
		if open {
			x.release()
		} else if ctx.Err() == nil {
			x.sendEval(ctx, i)
		}
		lastEnd = resp.End
		if lastEnd.IsZero() {
			lastEnd = x.clk.Now()
		}
		history = append(history, exchange{req: own, answer: resp.Text})
		if resp.Err != nil {
			x.failRest(ctx, r, j, resp.Err)
			return
		}
	}
}

// thinkTime is the pause before a later turn: its think_ms, else a draw
// from load.think_time, else none. The draws of unit k come from the plan's
// seed and k alone, so a baseline and a candidate pause alike whatever the
// order units run in.
func (x *dispatch) thinkTime(req *workload.Request, rng **rand.Rand, k int) time.Duration {
	switch {
	case req.ThinkMS != nil:
		return time.Duration(*req.ThinkMS * float64(time.Millisecond))
	case x.think != nil:
		if *rng == nil {
			*rng = rand.New(rand.NewPCG(x.p.Seed, thinkStream^uint64(k)))
		}
		return time.Duration(x.think(*rng)) * time.Millisecond
	default:
		return 0
	}
}

// send sends turn j of reservation r, the i-th turn of the repetition, and
// records it.
func (x *dispatch) send(ctx context.Context, orig, text *workload.Request, i int, scheduled time.Time, r reservation, j int) *client.Response {
	id := x.requestID(i)
	cold := x.firstToAdapter(orig)
	attempt := x.clk.Now()
	resp := x.d.Sender.Do(ctx, text, id)
	if resp.Sent.IsZero() { // failed before the request was written
		resp.Sent = attempt
	}
	rec := newRecord(*x.p, orig, resp, x.start, scheduled)
	rec.ColdAdapter = cold
	x.placeInSession(rec, orig, r)
	x.records <- rec
	return resp
}

func (x *dispatch) requestID(i int) string {
	return fmt.Sprintf("%s-%s-r%d-%06d", x.p.RunID, x.p.Scenario, x.p.Repetition, i)
}

// placeInSession sets the session fields of a turn's record.
func (x *dispatch) placeInSession(rec *result.Record, orig *workload.Request, r reservation) {
	if orig.SessionID == "" {
		return
	}
	rec.Session, rec.Turn = orig.SessionID, orig.Turn
	rec.SessionTurns, rec.SessionRun = len(r.turns), r.k+1
}

// failRest records the turns of r after turn j, which failed with err, as
// SessionErrorKind failures, unless the run itself is ending (cancelled, or
// perfgate's own machine failed: the run stops and says so).
func (x *dispatch) failRest(ctx context.Context, r reservation, j int, err *client.Error) {
	if ctx.Err() != nil || string(err.Kind) == localErrorKind {
		return
	}
	now := x.clk.Now()
	if x.p.Duration > 0 && now.Sub(x.start) >= x.p.Duration {
		return
	}
	failed := &x.p.Requests[r.turns[j]]
	for m := j + 1; m < r.n; m++ {
		orig := &x.p.Requests[r.turns[m]]
		at := int64(now.Sub(x.start))
		rec := &result.Record{
			ID: orig.ID, RequestID: x.requestID(r.first + m), Scenario: x.p.Scenario, Repetition: x.p.Repetition,
			ScheduledNS: at, SentNS: at, EndNS: at, ITLUS: []int64{},
			ErrorKind: SessionErrorKind,
			Error:     fmt.Sprintf("turn %d of session %s failed: %s", failed.Turn, failed.SessionID, err.Error()),
			// Counted against its kind and model, as a sent turn is.
			Model: orig.Model, Structured: orig.Structured(),
		}
		x.placeInSession(rec, orig, r)
		x.records <- rec
	}
}

// sendEval sends the eval item due beside turn i, if any.
func (x *dispatch) sendEval(ctx context.Context, i int) {
	if !x.p.Evals.due(i) {
		return
	}
	it, ok := x.p.Evals.Queue.Pop()
	if !ok {
		return
	}
	k := x.evals.Add(1) - 1
	x.records <- x.d.sendEval(ctx, x.clk, *x.p, it, fmt.Sprintf("%s-%s-r%d-e%06d", x.p.RunID, x.p.Scenario, x.p.Repetition, k), x.start)
}
