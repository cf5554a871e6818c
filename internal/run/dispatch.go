package run

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/structured"
	"github.com/perfgate/perfgate/internal/workload"
)

// Sender sends one request and measures it. *client.Client is the real one.
type Sender interface {
	Do(ctx context.Context, req *workload.Request, requestID string) *client.Response
}

// Plan is one repetition of one scenario: what to send and at what load shape.
type Plan struct {
	Scenario   string
	Repetition int // 1-based
	// Requests are sent in order, cycling when Count exceeds them. For a trace
	// load they are sent in order of arrival_ms instead.
	Requests []workload.Request
	// Count is the number of requests to send. Zero means one pass over
	// Requests, unless Duration is set, which then alone bounds the repetition.
	Count int
	// Duration stops the sending of new requests this long after the start;
	// requests in flight then run to their end. Zero means no limit.
	Duration time.Duration
	Load     config.Load
	// Seed draws the open-loop arrival schedule.
	Seed uint64
	// RunID makes request ids unique across runs (X-Request-Id).
	RunID string
	// Evals, if set, mixes eval items into the load (quality mode
	// interleaved); they do not count towards Count.
	Evals *EvalMix
	// Salt, unless zero, salts every pass over Requests (the k-th cycle
	// through them is pass k): each request of a pass starts with the
	// pass's own salt text (workload.SaltText), so that no request is
	// served from a prompt cache that an earlier pass filled, while the
	// requests of one pass keep the prefixes they share. Eval items are
	// never salted. See SaltSeed.
	Salt uint64
	// Fault, if set, is made once, at its time into the plan.
	Fault *PlannedFault
	// ColdAdapters are the adapters reloaded just before the plan
	// (cold_adapters): the first request the plan sends to each is marked
	// result.Record.ColdAdapter.
	ColdAdapters []string
}

// SaltSeed derives the salt of one plan from the run's seed: repetition rep
// of scenario (0 for the warm-up) and, for a warm-up that replays its
// workload in several plans, the plan's number. A baseline and a candidate
// run with the same seed send the same salted text.
func SaltSeed(seed int64, scenario string, rep, plan int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "salt/%d/%s/%d/%d", seed, scenario, rep, plan)
	return max(h.Sum64(), 1) // zero means no salt
}

// salted returns the text to send for turn 1 of the k-th unit started
// (counting from 0): the workload's own request, or its copy salted with
// the salt of the unit's pass (the k/units-th cycle over the units). Only a
// unit's first turn is salted: a session's later turns carry it in their
// history, so they share the session's prefix as they would in production.
func (p *Plan) salted(orig *workload.Request, k, units int) *workload.Request {
	if p.Salt == 0 {
		return orig
	}
	pass := uint64(k / units)
	salted := orig.Salted(workload.SaltText(p.Salt + pass*0x9e3779b97f4a7c15))
	return &salted
}

// OpenLoop reports whether the plan's load shape sends on a schedule.
func (p *Plan) OpenLoop() bool { return p.Load.Type != config.LoadClosed }

func (p *Plan) limit() int {
	switch {
	case p.Count > 0:
		return p.Count
	case p.Duration > 0 && p.Load.Type != config.LoadTrace:
		return -1 // unbounded: the duration ends it
	default:
		return len(p.Requests)
	}
}

// schedule builds the plan's open-loop schedule of units (nil for a
// closed loop), and the units in the order they start.
func (p *Plan) schedule() (Schedule, []unit, error) {
	units := groupUnits(p.Requests)
	block := DefaultBlock
	if n := unitsFor(units, p.limit()); n > 0 && n < block {
		block = n // a short repetition offers exactly its rate too
	}
	switch p.Load.Type {
	case config.LoadPoisson:
		s, err := NewRenewal(p.Load.Rate, 1, p.Seed, block)
		return s, units, err
	case config.LoadGamma:
		s, err := NewRenewal(p.Load.Rate, p.Load.Burstiness, p.Seed, block)
		return s, units, err
	case config.LoadStep:
		s, err := NewSteps(p.Load.Steps, p.Load.At, p.Load.Burstiness, p.Seed)
		return s, units, err
	case config.LoadTrace:
		// A unit arrives at its first turn's arrival_ms.
		arrival := func(u unit) time.Duration {
			if a := p.Requests[u[0]].ArrivalMS; a != nil {
				return time.Duration(*a * float64(time.Millisecond))
			}
			return 0
		}
		sort.SliceStable(units, func(a, b int) bool { return arrival(units[a]) < arrival(units[b]) })
		t := Trace{Speedup: p.Load.Speedup, Arrivals: make([]time.Duration, len(units))}
		for k, u := range units {
			t.Arrivals[k] = arrival(u)
		}
		if t.Speedup <= 0 {
			t.Speedup = 1
		}
		return t, units, nil
	case config.LoadClosed:
		return nil, units, nil
	default:
		return nil, nil, fmt.Errorf("unknown load type %q", p.Load.Type)
	}
}

// Dispatcher runs plans against a Sender.
type Dispatcher struct {
	Sender Sender
	Clock  Clock
}

// Run executes one repetition and calls emit for every finished request, from
// a single goroutine, in order of completion. It returns when every request
// it started has ended. A cancelled ctx stops the sending of new requests and
// cancels those in flight (they are emitted as cancelled); Run then returns
// ctx's error.
//
// The load shape schedules units (see unit): a request of no session alone,
// or a session, whose turns go one after another, each after the previous
// turn's end and its think time, carrying the conversation so far.
func (d *Dispatcher) Run(ctx context.Context, p Plan, emit func(*result.Record)) error {
	if len(p.Requests) == 0 {
		return errors.New("plan has no requests")
	}
	sched, units, err := p.schedule()
	if err != nil {
		return err
	}
	think, err := thinkSampler(p.Load)
	if err != nil {
		return err
	}
	clk := d.Clock
	if clk == nil {
		clk = RealClock{}
	}
	outer := ctx
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)

	records := make(chan *result.Record, 256)
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for r := range records {
			stopOnLocal(r, stop)
			emit(r)
		}
	}()

	x := &dispatch{d: d, p: &p, clk: clk, start: clk.Now(), records: records, units: len(units), think: think,
		res: &reserver{units: units, limit: p.limit()}}
	// The fault is made on time, or not at all once the load has ended.
	endFault := func() {}
	if f := p.Fault; f != nil {
		fctx, cancel := context.WithCancel(ctx)
		made := make(chan struct{})
		go func() {
			defer close(made)
			f.make(fctx, clk, x.start, stop)
		}()
		endFault = func() { cancel(); <-made }
	}
	if sched == nil {
		x.closedLoop(ctx)
	} else {
		x.openLoop(ctx, sched)
	}
	x.wg.Wait()
	endFault()
	close(records)
	<-collected
	return runErr(outer, ctx)
}

// localErrorKind: perfgate's own machine failed the request (no file
// descriptor, no ephemeral port, no buffer space).
const localErrorKind = string(client.ErrLocal)

// LocalError stops a run whose own machine failed a request: perfgate ran
// out of something (open files, ephemeral ports, memory), so its requests
// would fail for its own reasons and be counted against the server. The run
// fails (exit 3) and names the cause.
type LocalError struct {
	// Scenario and Repetition (0: the warm-up or eval items answered alone)
	// say where it happened; Err is the request's error.
	Scenario   string
	Repetition int
	Err        string
}

// Error leaves out where it happened: the callers' wrapping says that
// ("scenario chat repetition 2: ...").
func (e *LocalError) Error() string {
	return "perfgate's own machine failed a request, so the run stops rather than blame the server: " + e.Err
}

// stopOnLocal stops the dispatch, with a *LocalError cause, at the first
// record perfgate's machine failed.
func stopOnLocal(r *result.Record, stop context.CancelCauseFunc) {
	if r.ErrorKind == localErrorKind {
		stop(&LocalError{Scenario: r.Scenario, Repetition: r.Repetition, Err: r.Error})
	}
}

// runErr is a dispatch's outcome: the *LocalError or *FaultError that
// stopped it, else the caller's ctx error.
func runErr(outer, inner context.Context) error {
	var le *LocalError
	if errors.As(context.Cause(inner), &le) {
		return le
	}
	var fe *FaultError
	if errors.As(context.Cause(inner), &fe) {
		return fe
	}
	return outer.Err()
}

// structuredAnswers checks the answers of structured requests; it compiles
// each distinct response_format and tools once for the process.
var structuredAnswers = structured.NewChecker()

// newRecord turns a response into a record with times relative to start,
// and checks a structured request's answer.
func newRecord(p Plan, req *workload.Request, resp *client.Response, start, scheduled time.Time) *result.Record {
	rel := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return int64(t.Sub(start))
	}
	r := &result.Record{
		ID:           req.ID,
		RequestID:    resp.RequestID,
		Scenario:     p.Scenario,
		Repetition:   p.Repetition,
		SentNS:       rel(resp.Sent),
		FirstTokenNS: rel(resp.FirstToken),
		EndNS:        rel(resp.End),
		PromptTokens: resp.PromptTokens,
		OutputTokens: resp.OutputTokens,
		TokensFrom:   string(resp.TokensFrom),
		UsageRefused: resp.UsageRefused,
		Retries:      resp.Retries,
		FinishReason: resp.FinishReason,
		Text:         resp.Text,
	}
	if resp.ReasoningChunks > 0 {
		r.ReasoningTokens = resp.ReasoningTokens
		r.FirstAnswerNS = rel(resp.FirstAnswer)
	}
	for _, tc := range resp.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, result.ToolCall{Index: tc.Index, ID: tc.ID, Type: tc.Type, Name: tc.Name, Arguments: tc.Arguments})
	}
	if resp.Err == nil {
		r.Structured, r.StructuredError = structuredAnswers.Check(req, resp.Text, r.ToolCalls, resp.FinishReason)
	} else {
		// A failure counts against its kind of request too.
		r.Structured = req.Structured()
	}
	r.Model = req.Model
	if scheduled.IsZero() {
		r.ScheduledNS = r.SentNS
	} else {
		r.ScheduledNS = rel(scheduled)
	}
	if r.FirstTokenNS > 0 {
		r.TTFTUS = (r.FirstTokenNS - r.SentNS) / 1e3
	}
	r.E2EUS = (r.EndNS - r.SentNS) / 1e3
	r.ITLUS = make([]int64, 0, max(len(resp.ChunkTimes)-1, 0))
	for k := 1; k < len(resp.ChunkTimes); k++ {
		r.ITLUS = append(r.ITLUS, int64(resp.ChunkTimes[k].Sub(resp.ChunkTimes[k-1])/time.Microsecond))
	}
	if resp.Err != nil {
		r.ErrorKind = string(resp.Err.Kind)
		r.Error = resp.Err.Error()
	}
	return r
}
