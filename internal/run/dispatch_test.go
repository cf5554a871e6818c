package run

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// fakeClock advances only when slept on. Every wake-up is late by lateness,
// as real timers are, so a dispatcher that slept relative durations would
// drift by i×lateness by request i.
type fakeClock struct {
	mu       sync.Mutex
	now      time.Time
	lateness time.Duration
	targets  []time.Time // every time slept until, in order
}

func newFakeClock(lateness time.Duration) *fakeClock {
	return &fakeClock{now: time.Unix(1_000_000, 0), lateness: lateness}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.targets = append(c.targets, t)
	if t.After(c.now) {
		c.now = t.Add(c.lateness)
	}
	return ctx.Err()
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// instantSender answers at once, stamping the fake clock's time.
type instantSender struct {
	clk  *fakeClock
	mu   sync.Mutex
	sent []string
}

func (s *instantSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	s.mu.Lock()
	s.sent = append(s.sent, req.ID)
	s.mu.Unlock()
	now := s.clk.Now()
	return &client.Response{RequestID: id, Sent: now, FirstToken: now.Add(time.Millisecond), End: now.Add(2 * time.Millisecond),
		ChunkTimes: []time.Time{now.Add(time.Millisecond), now.Add(2 * time.Millisecond)}, OutputTokens: 2, TokensFrom: client.TokensFromUsage}
}

func requests(n int) []workload.Request {
	reqs := make([]workload.Request, n)
	for i := range reqs {
		reqs[i] = workload.Request{ID: string(rune('a' + i%26)), Prompt: "x", MaxTokens: 2}
	}
	return reqs
}

func collect(t *testing.T, d *Dispatcher, p Plan) []*result.Record {
	t.Helper()
	var recs []*result.Record
	if err := d.Run(context.Background(), p, func(r *result.Record) { recs = append(recs, r) }); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return recs
}

// Open-loop sends keep to the absolute schedule even though every timer fires
// late: the dispatcher sleeps until start+At(i), so the lateness of one wake-up
// never shifts the next (a loop of relative sleeps would drift by i×lateness).
func TestOpenLoopDoesNotDrift(t *testing.T) {
	const lateness = 3 * time.Millisecond
	clk := newFakeClock(lateness)
	start := clk.Now()
	d := &Dispatcher{Sender: &instantSender{clk: clk}, Clock: clk}
	p := Plan{Scenario: "s", Repetition: 1, Requests: requests(10), Count: 500,
		Load: config.Load{Type: config.LoadPoisson, Rate: 100}, Seed: 3}
	recs := collect(t, d, p)
	if len(recs) != 500 {
		t.Fatalf("got %d records, want 500", len(recs))
	}
	sched, _ := NewRenewal(100, 1, 3, 0)
	if len(clk.targets) != 500 {
		t.Fatalf("slept %d times, want 500", len(clk.targets))
	}
	seen := map[int64]bool{}
	for _, r := range recs {
		seen[r.ScheduledNS] = true
	}
	for i, target := range clk.targets {
		at, _ := sched.At(i)
		if got := target.Sub(start); got != at {
			t.Fatalf("request %d: slept until start+%v, want start+%v", i, got, at)
		}
		if !seen[int64(at)] {
			t.Fatalf("no record scheduled at At(%d) = %v", i, at)
		}
	}
}

func TestOpenLoopDurationBound(t *testing.T) {
	clk := newFakeClock(0)
	d := &Dispatcher{Sender: &instantSender{clk: clk}, Clock: clk}
	p := Plan{Scenario: "s", Repetition: 1, Requests: requests(3), Duration: 2 * time.Second,
		Load: config.Load{Type: config.LoadPoisson, Rate: 50}, Seed: 9}
	recs := collect(t, d, p)
	sched, _ := NewRenewal(50, 1, 9, 0)
	want := 0
	for {
		at, _ := sched.At(want)
		if at >= 2*time.Second {
			break
		}
		want++
	}
	if len(recs) != want {
		t.Errorf("sent %d requests in 2s at 50/s, want %d (the schedule's count)", len(recs), want)
	}
}

// blockingSender holds every request until released, and tracks the most in
// flight at once.
type blockingSender struct {
	release           chan struct{}
	mu                sync.Mutex
	inFlight, maxSeen int
	started           chan struct{}
}

func (s *blockingSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	s.mu.Lock()
	s.inFlight++
	s.maxSeen = max(s.maxSeen, s.inFlight)
	s.mu.Unlock()
	s.started <- struct{}{}
	<-s.release
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	now := time.Now()
	return &client.Response{RequestID: id, Sent: now, End: now}
}

func TestOpenLoopMaxInFlight(t *testing.T) {
	clk := newFakeClock(0)
	s := &blockingSender{release: make(chan struct{}), started: make(chan struct{}, 100)}
	d := &Dispatcher{Sender: s, Clock: clk}
	p := Plan{Scenario: "s", Repetition: 1, Requests: requests(5), Count: 20,
		Load: config.Load{Type: config.LoadPoisson, Rate: 1000, MaxInFlight: 3}}
	done := make(chan []*result.Record)
	go func() {
		var recs []*result.Record
		_ = d.Run(context.Background(), p, func(r *result.Record) { recs = append(recs, r) })
		done <- recs
	}()
	for range 20 {
		<-s.started
		s.release <- struct{}{}
	}
	recs := <-done
	if len(recs) != 20 {
		t.Fatalf("got %d records, want 20", len(recs))
	}
	if s.maxSeen > 3 {
		t.Errorf("max in flight = %d, want <= 3", s.maxSeen)
	}
}

func TestClosedLoopConcurrency(t *testing.T) {
	const users = 4
	s := &blockingSender{release: make(chan struct{}), started: make(chan struct{}, 100)}
	d := &Dispatcher{Sender: s, Clock: newFakeClock(0)}
	p := Plan{Scenario: "s", Repetition: 1, Requests: requests(7), Count: 30,
		Load: config.Load{Type: config.LoadClosed, Concurrency: users}}
	done := make(chan []*result.Record)
	go func() {
		var recs []*result.Record
		_ = d.Run(context.Background(), p, func(r *result.Record) { recs = append(recs, r) })
		done <- recs
	}()
	// Wait until all users are blocked in a request, then release one at a time.
	for range users {
		<-s.started
	}
	s.mu.Lock()
	if s.inFlight != users {
		t.Errorf("in flight with all users started = %d, want %d", s.inFlight, users)
	}
	s.mu.Unlock()
	for i := range 30 {
		s.release <- struct{}{}
		if i < 30-users {
			<-s.started // the freed user sends its next request
		}
	}
	recs := <-done
	if len(recs) != 30 {
		t.Fatalf("got %d records, want 30", len(recs))
	}
	if s.maxSeen != users {
		t.Errorf("max in flight = %d, want %d", s.maxSeen, users)
	}
	ids := map[string]bool{}
	for _, r := range recs {
		if ids[r.RequestID] {
			t.Errorf("request id %s used twice", r.RequestID)
		}
		ids[r.RequestID] = true
		if r.ScheduledNS != r.SentNS {
			t.Errorf("closed loop: scheduled %d != sent %d", r.ScheduledNS, r.SentNS)
		}
	}
}

func TestClosedLoopDuration(t *testing.T) {
	clk := newFakeClock(0)
	// Each request takes 100ms of fake time.
	sender := senderFunc(func(ctx context.Context, req *workload.Request, id string) *client.Response {
		start := clk.Now()
		clk.advance(100 * time.Millisecond)
		return &client.Response{RequestID: id, Sent: start, End: clk.Now()}
	})
	d := &Dispatcher{Sender: sender, Clock: clk}
	p := Plan{Scenario: "s", Repetition: 1, Requests: requests(2), Duration: time.Second,
		Load: config.Load{Type: config.LoadClosed, Concurrency: 1}}
	if recs := collect(t, d, p); len(recs) != 10 {
		t.Errorf("1 user, 100ms requests, 1s duration: %d requests, want 10", len(recs))
	}
}

func TestTraceOrderAndOnePass(t *testing.T) {
	clk := newFakeClock(0)
	s := &instantSender{clk: clk}
	d := &Dispatcher{Sender: s, Clock: clk}
	ms := func(v float64) *float64 { return &v }
	reqs := []workload.Request{
		{ID: "late", Prompt: "x", MaxTokens: 1, ArrivalMS: ms(900)},
		{ID: "first", Prompt: "x", MaxTokens: 1, ArrivalMS: ms(0)},
		{ID: "mid", Prompt: "x", MaxTokens: 1, ArrivalMS: ms(400)},
	}
	p := Plan{Scenario: "s", Repetition: 1, Requests: reqs, Load: config.Load{Type: config.LoadTrace, Speedup: 2}}
	recs := collect(t, d, p)
	want := map[string]int64{"first": 0, "mid": int64(200 * time.Millisecond), "late": int64(450 * time.Millisecond)}
	if len(recs) != 3 {
		t.Fatalf("got %d records, want 3 (one pass)", len(recs))
	}
	for _, r := range recs {
		if r.ScheduledNS != want[r.ID] {
			t.Errorf("%s scheduled at %v, want %v", r.ID, time.Duration(r.ScheduledNS), time.Duration(want[r.ID]))
		}
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	sender := senderFunc(func(ctx context.Context, req *workload.Request, id string) *client.Response {
		cancel()
		<-ctx.Done()
		now := time.Now()
		return &client.Response{RequestID: id, Sent: now, End: now, Err: &client.Error{Kind: client.ErrCanceled, Err: ctx.Err()}}
	})
	d := &Dispatcher{Sender: sender}
	p := Plan{Scenario: "s", Repetition: 1, Requests: requests(3), Count: 1000,
		Load: config.Load{Type: config.LoadClosed, Concurrency: 2}}
	var n int
	err := d.Run(ctx, p, func(r *result.Record) {
		n++
		if r.ErrorKind != string(client.ErrCanceled) {
			t.Errorf("record error kind %q, want canceled", r.ErrorKind)
		}
	})
	if err == nil {
		t.Errorf("Run after cancel = nil, want the context's error")
	}
	if n == 0 || n > 2 {
		t.Errorf("emitted %d records after cancel, want 1 or 2 (the requests in flight)", n)
	}
}

type senderFunc func(ctx context.Context, req *workload.Request, id string) *client.Response

func (f senderFunc) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	return f(ctx, req, id)
}
