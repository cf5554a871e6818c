package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"

	"github.com/perfgate/perfgate/internal/stat"
)

// Warmup brings a scenario's stack to steady state by sending the scenario's
// own load shape; nothing it sends is measured.
//
// Warm-up time is cut into consecutive windows of Config.Window from its
// start. Each window is summarised by what happened in it, at the time it
// happened, so that a window's values do not depend on how long the requests
// around it were:
//
//   - Output throughput: the output tokens that arrived in the window, over its
//     length. A request's tokens are spread evenly over its content chunks and
//     each chunk counts in the window in which it arrived (a request with no
//     first token counts its tokens at its end).
//   - TTFT: the median TTFT of the requests whose first token arrived in the
//     window; Requests is how many those are.
//
// A window is final, and judged, only once no request that could still add
// to it is in flight: every request still running was sent at or after the
// window's end (or the dispatch has ended). At every window boundary all the
// windows that have become final are judged in order, by Config.Method, so
// they come some time after their end (about the longest request), several
// at a time. Warm-up stops (cancelling what is still in flight) at the first
// final window that makes the series steady and ends no earlier than
// Config.Min. Config.Max bounds everything: when the last boundary within it
// is passed without steady state, including when the last windows could not
// become final before it, it gives up.
//
// Method windows (see judgeWindows and steadyWindows) asks the last
// Config.Windows windows, each holding at least minJudgeRequests requests
// (consecutive windows are merged until they do), to agree and not to
// trend: throughput and TTFT each within the larger of Config.Tolerance of
// their mean and twice that window's standard error (throughput's from the
// arrivals of an open loop, from the window's own token stream in a closed
// one: see tputNoise); first and last no further apart than the same
// allowance; no monotone run of monotoneRun windows in TTFT, nor in the
// engine's waiting queue where Queue reads it. Method mser5 (see
// steadyMSER5) applies MSER-5 to the same two series. Each judgement that
// is not steady says which rule refused it, with its figures (OnWindow,
// UnsteadyError.Why).
//
// Warm-up then drains (see Run): it stops sending, lets what is in flight
// end, and waits for the engine's queue to empty, so that no warm-up
// request runs during the first repetition.
type Warmup struct {
	Dispatcher *Dispatcher
	Config     config.Warmup
	// Clock times the windows; nil means the Dispatcher's clock, or RealClock{}
	// when that is nil too, so that windows and records share one notion of now.
	Clock Clock
	// Seed is the run's seed: warm-up draws its open-loop schedule from
	// planSeed(Seed, scenario, 0), distinct from every measured repetition's.
	Seed int64
	// RunID makes warm-up request ids unique in the run (X-Request-Id).
	RunID string
	// SaltTag, when not empty, is mixed into the salts of the warm-up's
	// passes, and into nothing else: a stack that warms one scenario up
	// more than once (perfgate ab, once a round on each arm) gives each
	// warm-up a tag of its own, so that no warm-up sends the text an
	// earlier one sent and a prompt cache cannot answer it. Empty: the
	// salts of a run's one warm-up of the scenario, which a baseline and a
	// candidate run with one seed share. A warm-up's salts are never a
	// measured repetition's, tagged or not (SaltSeed's rep is 0).
	SaltTag string
	// Short makes Run a short re-warm of a stack that has not been
	// restarted since it was warmed up to steady state: it sends the
	// scenario's load for one Config.Window (a closed loop's users each
	// send at least one request, all at once), judges nothing, then drains
	// as after any warm-up. Its record has Method result.WarmupShort and
	// Steady false; it returns no *UnsteadyError, *FailingError or overload
	// evidence, since the repetition after it judges the server.
	Short bool
	// OnWindow, if set, is called for every window as it becomes final and is
	// judged (for progress; that is some time after its end, and possibly for
	// several windows at once), with that window, whether the series so far
	// is steady (and past Config.Min, so the last call of a steady warm-up says
	// true) and, when it is not, why: the rule that refused it, with its
	// figures. It is called from the goroutine that called Run.
	OnWindow func(w result.WarmupWindow, steadySoFar bool, why string)
	// Drain bounds the drain after a warm-up that measurement follows
	// (target.timeout): the requests still in flight then are cancelled.
	// Zero is config.DefaultTimeout.
	Drain time.Duration
	// Queue, if set, reads the engine's own count of requests running and
	// waiting (its metrics page); ok is false when it cannot tell. Warm-up
	// samples it at each window's end (a waiting queue that grows is not
	// steady) and, as it drains, waits for both to reach zero.
	Queue func(ctx context.Context) (running, waiting float64, ok bool)
	// OnDrain, if set, is called about every drainProgress while a drain
	// lasts (for progress): the time since warm-up stopped sending, the
	// warm-up requests still in flight, and what the engine still holds
	// (nil while the client's requests drain, or when Queue cannot tell).
	// It is called from the goroutine that called Run.
	OnDrain func(elapsed time.Duration, inFlight int, engine *float64)
}

// queuePoll is how often a drain asks the engine whether its queue is empty.
const queuePoll = 200 * time.Millisecond

// queueDrainMax bounds the wait for the engine's queue to empty once the
// warm-up's own requests have ended (within Drain too): a gauge that
// stays up then counts another client's requests, or is stale.
const queueDrainMax = 30 * time.Second

// queueStalePolls is how many polls in a row the engine's queue may not
// fall, once the warm-up's own requests have all ended, before the drain
// stops waiting for it: nothing of ours is left for it to finish.
const queueStalePolls = 3

// drainProgress is how often a drain that lasts says so (OnDrain).
const drainProgress = 5 * time.Second

// FailingError says the warm-up windows judged steady failed more of their
// requests than the scenario's max_error_rate: what would be measured next
// describes only the survivors. The run stops before measuring (exit 3).
type FailingError struct {
	Scenario string
	// Failed and Requests are the judged windows' failed and completed
	// requests; MaxErrorRate the scenario's limit.
	Failed, Requests int
	MaxErrorRate     float64
	// Errors and FirstError are the whole warm-up's, as in result.Warmup.
	Errors     map[string]int
	FirstError string
}

// Error names the share that failed, the limit and the errors.
func (e *FailingError) Error() string {
	n := e.Failed + e.Requests
	msg := fmt.Sprintf("scenario %s warm-up: %d of %d requests failed in the windows judged steady (%.1f%%, over max_error_rate %.1f%%)",
		e.Scenario, e.Failed, n, 100*float64(e.Failed)/float64(max(n, 1)), 100*e.MaxErrorRate)
	return msg + describeErrors(e.Errors, e.FirstError) + "; the server fails under this load before anything is measured"
}

// describeErrors is ": http ×3, timeout ×1; the first: ..." for errors by
// kind and the first message, or "" when there are none.
func describeErrors(errs map[string]int, first string) string {
	var b strings.Builder
	if len(errs) > 0 {
		b.WriteString(": ")
		b.WriteString(ErrorKinds(errs))
	}
	if first != "" {
		fmt.Fprintf(&b, "; the first: %s", first)
	}
	return b.String()
}

// ErrorKinds is "http ×3, timeout ×1": failed requests by kind, in the
// order of the kinds' names.
func ErrorKinds(errs map[string]int) string {
	kinds := make([]string, 0, len(errs))
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		kinds = append(kinds, fmt.Sprintf("%s ×%d", k, errs[k]))
	}
	return strings.Join(kinds, ", ")
}

// UnsteadyError says warm-up reached its maximum without steady state: what
// would be measured next would still include the stack's transient, so by
// default (warmup.on_unsteady: fail) the run stops rather than report it.
type UnsteadyError struct {
	Scenario string
	Method   string
	Max      time.Duration
	// Windows is the whole series steadiness was judged on.
	Windows []result.WarmupWindow
	// Why is why the last series judged was not steady: the rule that
	// refused it and its figures (see verdict); empty when no window was.
	Why string
	// Unfinal is how many more windows ended within Max but never became
	// final: requests sent before their end were still in flight at the last
	// window boundary within Max.
	Unfinal int
	// Failed, Errors and FirstError are the warm-up's failed requests.
	Failed     int
	Errors     map[string]int
	FirstError string
}

// unsteadyShown is how many of the last windows an UnsteadyError prints.
const unsteadyShown = 5

// Error names the method, the maximum, the rule that refused the last
// series judged, the last windows' values and what to change.
func (e *UnsteadyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s warm-up: no steady state after warmup.max %s (method %s)", e.Scenario, e.Max, e.Method)
	if len(e.Windows) == 0 {
		b.WriteString(": no window was completed")
	} else {
		if e.Why != "" {
			fmt.Fprintf(&b, "; at the last window judged, %s", e.Why)
		}
		from := max(len(e.Windows)-unsteadyShown, 0)
		fmt.Fprintf(&b, "; last %d of %d windows (end s: requests, output tok/s, median TTFT ms):", len(e.Windows)-from, len(e.Windows))
		for _, w := range e.Windows[from:] {
			fmt.Fprintf(&b, " [%.2f: %d, %.1f, %s]", float64(w.End), w.Requests, w.OutputThroughput, windowTTFT(w))
		}
	}
	if e.Unfinal > 0 {
		fmt.Fprintf(&b, "; %d later windows were never final (requests sent before their end were still in flight)", e.Unfinal)
	}
	if e.Failed > 0 {
		fmt.Fprintf(&b, "; %d warm-up requests failed%s", e.Failed, describeErrors(e.Errors, e.FirstError))
	}
	b.WriteString("; try a longer warmup.max")
	if e.Method == config.WarmupWindows {
		b.WriteString(", a larger warmup.window or a larger warmup.tolerance")
	} else {
		b.WriteString(" or a larger warmup.window")
	}
	b.WriteString(", or warmup.on_unsteady: warn")
	return b.String()
}

// windowTTFT is a window's median TTFT in ms ("41.5"), or "—" when no
// request had its first token in it: it has none, not one of 0 ms.
func windowTTFT(w result.WarmupWindow) string {
	if w.Requests == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", w.TTFT)
}

// errWarmupStopped is the cause with which warm-up cancels its own dispatch:
// requests cut off by it are neither failures nor an error of the warm-up.
var errWarmupStopped = errors.New("warm-up stopped")

// maxWindowGrace bounds how long after a window's end warm-up waits before
// looking at which windows are final, and how long it then waits for the
// records of requests that have just returned but are still on their way
// through the dispatcher.
const maxWindowGrace = 20 * time.Millisecond

// errDrainBound is the cause with which a drain that reached its bound
// cancels the warm-up requests still in flight.
var errDrainBound = errors.New("warm-up drain reached its bound")

// Run warms up scenario s and returns the record of the warm-up.
//
// When it stops (steady, failing, or at Config.Max) it drains: it sends
// nothing more, lets the requests in flight end, and, where Queue reads the
// engine, waits for the engine's running and waiting requests to reach
// zero, all within Drain (the engine's queue within queueDrainMax too, and
// no longer than queueStalePolls polls that it does not fall once the
// warm-up's requests have ended); then it returns. What is still in flight
// at that bound is cancelled and counted (DrainCut). A cancelled ctx
// cancels the requests in flight at once.
//
// When Config.Max passes without steady state it returns the record (Steady
// false) and an *UnsteadyError, unless Config.OnUnsteady is "warn", when the
// error is nil. An open loop that is not steady is judged by the overload
// detector (see DetectOverload) over all its warm-up requests
// (rec.Overload): when the server could not keep up, its warm-up cannot be
// steady however long, and Run returns the record and no error, so that
// the repetitions are measured and the overload told as theirs is (the
// scenario's verdict counts the warm-up's evidence too). When the windows judged steady failed more than the
// scenario's max_error_rate of their requests it returns the record and a
// *FailingError. Method "none" returns {Method: none, Steady: true} at once,
// without sending anything. When ctx is cancelled Run returns an error that
// wraps both context.Cause(ctx) and ctx.Err(); a dispatch error is returned
// wrapped. With either of those the record is nil.
func (w *Warmup) Run(ctx context.Context, s Scenario) (*result.Warmup, error) {
	cfg := w.Config
	name := s.Config.Name
	if cfg.Method == config.WarmupNone {
		return &result.Warmup{Method: config.WarmupNone, Steady: true}, nil
	}
	judge, err := newJudge(cfg, s.Config.Load.WarmupLoad())
	if err != nil {
		return nil, fmt.Errorf("scenario %s warm-up: %w", name, err)
	}
	if w.Dispatcher == nil {
		return nil, fmt.Errorf("scenario %s warm-up: no dispatcher", name)
	}
	if ctx.Err() != nil {
		return nil, w.canceled(ctx, name)
	}
	clk := w.clock()
	grace := min(cfg.Window/10, maxWindowGrace)

	st := newWarmupState(cfg.Window)
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// sendCtx is what requests are sent with: ending the warm-up's dispatch
	// (runCtx) stops new sends but lets those in flight end; only the
	// caller's ctx or the drain's bound cancels them.
	sendCtx, cut := context.WithCancelCause(ctx)
	defer cut(nil)
	// sleepCtx wakes the window loop when the dispatch ends on its own.
	sleepCtx, wake := context.WithCancel(ctx)
	defer wake()

	start := clk.Now()
	// The warm-up's own dispatcher sends through a tracker of what is in
	// flight, which tells which windows are final, and times records on the
	// windows' clock.
	tracker := newFlightTracker(w.Dispatcher.Sender, clk, start)
	tracker.sendCtx = sendCtx
	d := *w.Dispatcher
	d.Sender, d.Clock = tracker, clk
	done := make(chan error, 1)
	go func() {
		defer wake()
		done <- w.dispatch(runCtx, &d, clk, start, s, st)
	}()

	rec := &result.Warmup{Method: cfg.Method}
	if w.Short {
		rec.Method = result.WarmupShort
	}
	var samples []windowSample               // what each judged window keeps for judging
	var waiting []*float64                   // the engine's waiting queue at each boundary
	windows := int(w.sendFor() / cfg.Window) // the windows that fit in Max (one for Short)
	finished := false                        // the dispatch has ended: every record is in
	why := ""                                // why the last judged series was not steady
	for k := 0; k < windows && !rec.Steady && !finished; k++ {
		boundary := time.Duration(k+1) * cfg.Window
		if clk.SleepUntil(sleepCtx, start.Add(boundary+grace)) != nil {
			if ctx.Err() != nil {
				break
			}
			finished = true
		}
		waiting = append(waiting, w.waiting(ctx, cfg.Window))
		var final int
		if finished {
			// Every record is in: the windows that ran to their end are final.
			final = int(clk.Now().Sub(start) / cfg.Window)
		} else {
			h, returned := tracker.horizon()
			st.waitRecords(ctx, returned, maxWindowGrace)
			final = finalWindows(h, cfg.Window)
		}
		for j := len(rec.Windows); j < min(final, windows); j++ {
			win, sample := st.closeWindow(j)
			if j < len(waiting) {
				win.Waiting = waiting[j]
			}
			rec.Windows = append(rec.Windows, win)
			samples = append(samples, sample)
			var v verdict // a short re-warm judges nothing
			if !w.Short {
				v = judge(rec.Windows, samples)
				if v.steady && time.Duration(j+1)*cfg.Window < cfg.Min {
					v = verdict{why: fmt.Sprintf("steady, but before warmup.min %s", cfg.Min)}
				}
			}
			why = v.why
			if w.OnWindow != nil {
				w.OnWindow(win, v.steady, v.why)
			}
			if v.steady {
				rec.Steady, rec.SteadyFrom = true, v.from
				break
			}
		}
	}
	stopped := clk.Now()
	rec.Duration = result.Seconds(stopped.Sub(start).Seconds())
	// Stopped first: a request refused or cut off from here on is the end
	// of warm-up, not a failure of the server.
	st.markStopped()
	tracker.stopSending()
	stop(errWarmupStopped)

	failing := w.failing(s, rec)
	// An open loop the server could not keep up with has a backlog that
	// no useful drain clears: llama-server offered 25 req/s against the 11
	// it serves held 1,700 warm-up requests when warm-up ended, and a
	// drain to target.timeout (2 minutes) ended every one of them in a
	// timeout. Such a backlog is cut at once; the engine's own queue is
	// still waited for, as after any drain.
	var overload *result.Overload
	if !rec.Steady && !w.Short && s.Config.Load.Type != config.LoadClosed {
		overload = st.overload()
	}
	drain := ctx.Err() == nil
	if !drain {
		cut(errWarmupStopped)
	}
	bound := stopped.Add(w.drainBound())
	clientBound := bound
	if overload != nil && overload.Overloaded {
		clientBound = stopped
	}
	if drain {
		if rec.DrainCut = w.drainClient(sleepCtx, clk, tracker, stopped, clientBound); rec.DrainCut > 0 {
			cut(errDrainBound)
		}
	}
	dispatchErr := <-done
	if drain && ctx.Err() == nil {
		rec.DrainQueue = w.drainQueue(ctx, clk, stopped, bound, rec.DrainCut == 0)
		rec.Drain = new(result.Seconds(clk.Now().Sub(stopped).Seconds()))
	}

	if ctx.Err() != nil {
		return nil, w.canceled(ctx, name)
	}
	if dispatchErr != nil && !(errors.Is(dispatchErr, context.Canceled) && context.Cause(runCtx) == errWarmupStopped) {
		return nil, fmt.Errorf("scenario %s warm-up: %w", name, dispatchErr)
	}
	rec.Requests, rec.Failed, rec.Errors, rec.FirstError = st.counts()
	if failing != nil {
		failing.Errors, failing.FirstError = rec.Errors, rec.FirstError
		return rec, failing
	}
	rec.Overload = overload // judged before the drain: a backlog cut short is not the server's
	if rec.Steady || w.Short || cfg.OnUnsteady == "warn" || rec.Overload != nil && rec.Overload.Overloaded {
		return rec, nil
	}
	return rec, &UnsteadyError{Scenario: name, Method: cfg.Method, Max: cfg.Max, Windows: rec.Windows, Why: why,
		Unfinal: max(windows-len(rec.Windows), 0), Failed: rec.Failed, Errors: rec.Errors, FirstError: rec.FirstError}
}

// failing is the *FailingError of a steady warm-up whose windows judged
// steady failed more than the scenario's max_error_rate of their requests
// (each window's failed over its failed and completed ones); nil otherwise.
func (w *Warmup) failing(s Scenario, rec *result.Warmup) *FailingError {
	if !rec.Steady {
		return nil
	}
	failed, ok := 0, 0
	for _, win := range rec.Windows[rec.SteadyFrom:] {
		failed += win.Failed
		ok += win.Requests
	}
	if failed == 0 || float64(failed) <= s.Config.MaxErrorRate*float64(failed+ok) {
		return nil
	}
	return &FailingError{Scenario: s.Config.Name, Failed: failed, Requests: ok, MaxErrorRate: s.Config.MaxErrorRate}
}

// sendFor is how long the warm-up may send: Config.Max, or one
// Config.Window for a short re-warm.
func (w *Warmup) sendFor() time.Duration {
	if w.Short {
		return w.Config.Window
	}
	return w.Config.Max
}

// saltName is the name the warm-up's salts derive from: the scenario's
// (its SaltTag included), with the warm-up's SaltTag when it has one.
func (w *Warmup) saltName(s *Scenario) string {
	if w.SaltTag == "" {
		return s.saltName()
	}
	return s.saltName() + "/warmup/" + w.SaltTag
}

// drainBound is how long a drain may take: Drain, or config.DefaultTimeout.
func (w *Warmup) drainBound() time.Duration {
	if w.Drain > 0 {
		return w.Drain
	}
	return config.DefaultTimeout
}

// waiting samples the engine's waiting queue now, within a bounded time;
// nil when Queue is not set or cannot tell.
func (w *Warmup) waiting(ctx context.Context, window time.Duration) *float64 {
	if w.Queue == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, max(min(window/2, 2*time.Second), 50*time.Millisecond))
	defer cancel()
	_, waiting, ok := w.Queue(ctx)
	if !ok {
		return nil
	}
	return &waiting
}

// drainClient waits, until bound, for the warm-up's requests in flight to
// end (the dispatch to end, which wakes sleepCtx), telling OnDrain every
// drainProgress. It returns how many were still in flight at the bound
// (0 when all ended).
func (w *Warmup) drainClient(sleepCtx context.Context, clk Clock, tracker *flightTracker, stopped, bound time.Time) int {
	next := stopped.Add(drainProgress)
	for {
		if clk.SleepUntil(sleepCtx, minTime(next, bound)) != nil {
			return 0 // the dispatch ended: nothing is in flight
		}
		now := clk.Now()
		if !now.Before(bound) {
			return tracker.inFlight()
		}
		if !now.Before(next) {
			if w.OnDrain != nil {
				w.OnDrain(now.Sub(stopped), tracker.inFlight(), nil)
			}
			next = next.Add(drainProgress)
		}
	}
}

// drainQueue waits for the engine's running and waiting requests to reach
// zero, asking every queuePoll, until bound or queueDrainMax from now,
// whichever is first; when idle (the warm-up's own requests have all
// ended) also no longer than queueStalePolls polls in a row that the
// queue does not fall. It tells OnDrain every drainProgress, from stopped.
// It returns nil when they reached zero (or Queue cannot tell), else what
// was left when it stopped waiting.
func (w *Warmup) drainQueue(ctx context.Context, clk Clock, stopped, bound time.Time, idle bool) *float64 {
	if w.Queue == nil {
		return nil
	}
	bound = minTime(bound, clk.Now().Add(queueDrainMax))
	next := stopped.Add(drainProgress)
	least, stale := math.Inf(1), 0
	for {
		running, waiting, ok := w.Queue(ctx)
		if !ok || running+waiting <= 0 {
			return nil
		}
		left := running + waiting
		if left < least {
			least, stale = left, 0
		} else {
			stale++
		}
		now := clk.Now()
		if !now.Before(bound) || idle && stale >= queueStalePolls {
			return &left
		}
		if !now.Before(next) {
			if w.OnDrain != nil {
				w.OnDrain(now.Sub(stopped), 0, &left)
			}
			for !now.Before(next) {
				next = next.Add(drainProgress)
			}
		}
		if clk.SleepUntil(ctx, minTime(now.Add(queuePoll), bound)) != nil {
			return nil
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// canceled is the error of a warm-up whose caller cancelled ctx: it wraps the
// cause (a crashed stack, say) and ctx's own error, so that errors.Is finds
// either.
func (w *Warmup) canceled(ctx context.Context, name string) error {
	cause, err := context.Cause(ctx), ctx.Err()
	if cause == nil || cause == err {
		return fmt.Errorf("scenario %s warm-up: %w", name, err)
	}
	return fmt.Errorf("scenario %s warm-up: %w (%w)", name, cause, err)
}

func (w *Warmup) clock() Clock {
	switch {
	case w.Clock != nil:
		return w.Clock
	case w.Dispatcher != nil && w.Dispatcher.Clock != nil:
		return w.Dispatcher.Clock
	default:
		return RealClock{}
	}
}

// dispatch sends the scenario's load through d until ctx is cancelled or
// Config.Max (a short re-warm: Config.Window) has passed since start. A
// trace may end before that; it is then replayed, pass after pass, with
// ids made unique by the pass number.
func (w *Warmup) dispatch(ctx context.Context, d *Dispatcher, clk Clock, start time.Time, s Scenario, st *warmupState) error {
	name := s.Config.Name
	for pass := 1; ; pass++ {
		offset := clk.Now().Sub(start)
		left := w.sendFor() - offset
		if left <= 0 {
			return nil
		}
		runID := w.RunID
		if pass > 1 {
			runID = fmt.Sprintf("%s-pass%d", w.RunID, pass)
		}
		p := Plan{
			Scenario: name, Repetition: 0, Requests: s.Requests,
			Count: 0, Duration: left, Load: s.Config.Load.WarmupLoad(),
			Seed: planSeed(w.Seed, name, 0), RunID: runID,
		}
		if s.Salt {
			p.Salt = SaltSeed(w.Seed, w.saltName(&s), 0, pass)
		}
		if err := d.Run(ctx, p, func(r *result.Record) { st.add(r, offset) }); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// flightTracker is the Sender of the warm-up's dispatch: it hands every
// request to the real Sender and, while it is in flight, keeps the time it was
// sent, so that the window loop knows which windows a request still running
// could add to. It is safe for concurrent use.
//
// Once stopSending is called it sends nothing more; the requests it sent
// go on, with sendCtx rather than the dispatch's context, so that the end
// of the warm-up's dispatch does not cancel them: they drain.
type flightTracker struct {
	inner Sender
	clk   Clock
	start time.Time
	// sendCtx, if set, is the context requests are sent with.
	sendCtx context.Context

	mu       sync.Mutex
	next     uint64
	flying   map[uint64]time.Duration // send time, from start
	returned int                      // requests whose Do has returned
	stopped  bool                     // stopSending was called
}

func newFlightTracker(inner Sender, clk Clock, start time.Time) *flightTracker {
	return &flightTracker{inner: inner, clk: clk, start: start, flying: map[uint64]time.Duration{}}
}

// Do implements Sender. The send time is read under the lock, so that a
// request not yet in the set when horizon looks is sent no earlier than the
// now that horizon reads. After stopSending, or once ctx is done, it sends
// nothing and answers with a cancelled response.
func (f *flightTracker) Do(ctx context.Context, req *workload.Request, requestID string) *client.Response {
	f.mu.Lock()
	if f.stopped || ctx.Err() != nil {
		f.mu.Unlock()
		now := f.clk.Now()
		return &client.Response{RequestID: requestID, Sent: now, End: now,
			Err: &client.Error{Kind: client.ErrCanceled, Err: errWarmupStopped}}
	}
	key := f.next
	f.next++
	f.flying[key] = f.clk.Now().Sub(f.start)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.flying, key)
		f.returned++
		f.mu.Unlock()
	}()
	if f.sendCtx != nil {
		ctx = f.sendCtx
	}
	return f.inner.Do(ctx, req, requestID)
}

// stopSending makes Do send nothing more.
func (f *flightTracker) stopSending() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
}

// inFlight is how many requests are in flight now.
func (f *flightTracker) inFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.flying)
}

// horizon returns the earliest send time, from start, of the requests in
// flight, or now when nothing is: no request in flight, nor any sent later,
// was sent before it. A request sent at or
// after the horizon has no chunk before it, so every window that ends by the
// horizon is final once the records of the requests that have returned are
// in. It returns how many those are too.
func (f *flightTracker) horizon() (h time.Duration, returned int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h = f.clk.Now().Sub(f.start)
	for _, sent := range f.flying {
		h = min(h, sent)
	}
	return h, f.returned
}

// finalWindows is how many windows of width, from the start of warm-up, are
// final at horizon h: window k, which ends at (k+1)*width, is when its end is
// no later than h.
func finalWindows(h, width time.Duration) int {
	if h <= 0 {
		return 0
	}
	return int(h / width)
}

// warmupState is what the dispatch's records add up to, shared between the
// dispatcher's emitting goroutine and the window loop.
type warmupState struct {
	mu         sync.Mutex
	bins       *windowBins
	ok         int
	failed     int
	errors     map[string]int // failed records by kind
	firstError string
	received   int           // every record, successful or not
	added      chan struct{} // signalled (never blocking) after each record
	stopped    bool          // warm-up cancelled its dispatch: cancelled requests are not failures
	watch      overloadWatch // every request sent, times from the start of warm-up
}

func newWarmupState(width time.Duration) *warmupState {
	return &warmupState{bins: newWindowBins(width), added: make(chan struct{}, 1)}
}

func (st *warmupState) add(r *result.Record, offset time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.received++
	select {
	case st.added <- struct{}{}:
	default:
	}
	canceled := r.ErrorKind == string(client.ErrCanceled)
	if r.ErrorKind != result.SessionErrorKind && !(st.stopped && canceled && r.EndNS == r.SentNS) {
		// Sent (not refused after the stop), on warm-up's time line.
		off := int64(offset)
		p := overloadPoint{sched: r.ScheduledNS + off, end: r.EndNS + off, ok: r.OK()}
		if r.FirstTokenNS > 0 {
			p.first = r.FirstTokenNS + off
		}
		st.watch.points = append(st.watch.points, p)
	}
	switch {
	case r.OK():
		st.ok++
		st.bins.add(r, offset)
	case st.stopped && canceled:
		// cut off by the end of warm-up
	default:
		st.failed++
		if st.errors == nil {
			st.errors = map[string]int{}
		}
		st.errors[r.ErrorKind]++
		if st.firstError == "" {
			st.firstError = r.Error
		}
		st.bins.fail(r, offset)
	}
}

// waitRecords waits until n records are in, for at most timeout (real time:
// the records of requests that have returned are only on their way through
// the dispatcher's channel), or until ctx is done. It reports whether they
// are.
func (st *warmupState) waitRecords(ctx context.Context, n int, timeout time.Duration) bool {
	var timer *time.Timer
	for {
		st.mu.Lock()
		in := st.received >= n
		st.mu.Unlock()
		if in {
			return true
		}
		if timer == nil {
			timer = time.NewTimer(timeout)
			defer timer.Stop()
		}
		select {
		case <-st.added:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (st *warmupState) closeWindow(k int) (result.WarmupWindow, windowSample) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bins.close(k)
}

func (st *warmupState) markStopped() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.stopped = true
}

// overload is the overload detector's evidence over every request the
// warm-up sent; nil when there are too few.
func (st *warmupState) overload() *result.Overload {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.watch.judge()
}

func (st *warmupState) counts() (ok, failed int, errors map[string]int, first string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ok, st.failed, maps.Clone(st.errors), st.firstError
}

// windowBins sorts what successful records tell into consecutive windows of
// width, by the time it happened relative to the start of warm-up: output
// tokens by the arrival of the chunk that carried them, TTFT by the arrival of
// the first token. It summarises a window when it is closed. It is not safe
// for concurrent use.
type windowBins struct {
	width  time.Duration
	open   map[int]*bin
	closed int // windows 0..closed-1 are closed
	late   int // records that had something for a window already closed
	next   int // the serial number of the next record added
}

type bin struct {
	tokens float64         // output tokens that arrived in the window
	parts  []float64       // those of them that arrived in each of its tputParts equal parts
	mine   map[int]float64 // each record's tokens in the window, by its serial
	ttfts  []float64       // ms, of the records whose first token arrived in it
	failed int             // records that failed in it (by their end)
}

// windowSample is what a closed window keeps, beyond its summary, for
// judging it alone or merged with its neighbours.
type windowSample struct {
	ttfts []float64 // ms, of the requests whose first token came in it
	// parts are the output tokens that arrived in each of the window's
	// tputParts equal parts, in order.
	parts []float64
	// records are the window's records' output tokens in it, in the order
	// the records were added; a record's serial tells its tokens in
	// neighbouring windows apart from another's, so that a merge adds
	// them up.
	records []recordTokens
}

// recordTokens is a record's output tokens in a window; rec is its serial
// in windowBins.
type recordTokens struct {
	rec    int
	tokens float64
}

func newWindowBins(width time.Duration) *windowBins {
	return &windowBins{width: width, open: map[int]*bin{}}
}

// at returns the open window that contains time t (from the start of
// warm-up), or nil when that window is closed.
func (b *windowBins) at(t time.Duration) *bin {
	k := max(int(t/b.width), 0)
	if k < b.closed {
		return nil
	}
	w := b.open[k]
	if w == nil {
		w = &bin{parts: make([]float64, tputParts), mine: map[int]float64{}}
		b.open[k] = w
	}
	return w
}

// part is which of its window's tputParts parts time t lies in.
func (b *windowBins) part(t time.Duration) int {
	t = max(t, 0) % b.width
	return min(int(int64(t)*int64(tputParts)/int64(b.width)), tputParts-1)
}

// add puts a successful record into the windows in which its parts arrived.
// Its times are relative to the start of its dispatch, which began offset
// into warm-up. Its first token, at FirstTokenNS, gives its TTFT to that
// window; its OutputTokens are spread evenly over its chunks, the first at
// FirstTokenNS and each next one ITLUS later (all at EndNS when it had no
// first token). add reports false when a part of the record fell in a window
// already closed; that part is left out of the series, the rest is kept.
func (b *windowBins) add(r *result.Record, offset time.Duration) bool {
	late := false
	serial := b.next
	b.next++
	put := func(t time.Duration, tokens float64) *bin {
		w := b.at(t)
		if w == nil {
			late = true
			return nil
		}
		w.tokens += tokens
		w.parts[b.part(t)] += tokens
		w.mine[serial] += tokens
		return w
	}
	if r.FirstTokenNS <= 0 {
		put(offset+time.Duration(r.EndNS), float64(r.OutputTokens))
	} else {
		t := offset + time.Duration(r.FirstTokenNS)
		per := float64(r.OutputTokens) / float64(1+len(r.ITLUS))
		if w := put(t, per); w != nil {
			w.ttfts = append(w.ttfts, float64(r.TTFTUS)/1e3)
		}
		if r.OutputTokens > 0 {
			for _, gap := range r.ITLUS {
				t += time.Duration(gap) * time.Microsecond
				put(t, per)
			}
		}
	}
	if late {
		b.late++
	}
	return !late
}

// fail counts a failed record in the window in which it ended, unless that
// window is closed.
func (b *windowBins) fail(r *result.Record, offset time.Duration) {
	if w := b.at(offset + time.Duration(r.EndNS)); w != nil {
		w.failed++
	}
}

// close summarises window k and closes every window up to it, returning the
// window and what it keeps for judging (its TTFTs, sorted). Closing must go
// in order; a window with no first token gives Requests 0.
func (b *windowBins) close(k int) (result.WarmupWindow, windowSample) {
	w := b.open[k]
	for i := b.closed; i <= k; i++ {
		delete(b.open, i)
	}
	b.closed = max(b.closed, k+1)
	out := result.WarmupWindow{End: result.Seconds((time.Duration(k+1) * b.width).Seconds())}
	if w == nil {
		return out, windowSample{}
	}
	out.Requests = len(w.ttfts)
	out.OutputThroughput = w.tokens / b.width.Seconds()
	out.TTFT = median(w.ttfts)
	out.Failed = w.failed
	sample := windowSample{ttfts: w.ttfts, parts: w.parts, records: make([]recordTokens, 0, len(w.mine))}
	for _, rec := range slices.Sorted(maps.Keys(w.mine)) {
		sample.records = append(sample.records, recordTokens{rec: rec, tokens: w.mine[rec]})
	}
	return out, sample
}

// median is stat.Median, but 0 when xs is empty: a window, warm-up or
// progress line with no value shows 0, as it always has.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stat.Median(xs)
}

// minSEN is the fewest samples medianSE estimates a standard error from.
const minSEN = 4

// medianSE estimates the standard error of the median of xs (which it sorts)
// robustly, from the interquartile range rather than the standard deviation,
// so that one very slow request does not widen it: σ = IQR/1.349 (exact for
// a normal distribution) and se = 1.2533·σ/√n (the large-sample standard
// error of a median, √(π/2)·σ/√n). With fewer than minSEN samples it returns
// 0: no estimate.
func medianSE(xs []float64) float64 {
	n := len(xs)
	if n < minSEN {
		return 0
	}
	slices.Sort(xs)
	sigma := (quantile(xs, 0.75) - quantile(xs, 0.25)) / 1.349
	return 1.2533 * sigma / math.Sqrt(float64(n))
}

// quantile is the p-quantile of the sorted, non-empty xs, interpolated
// linearly between order statistics (Hyndman and Fan's type 7).
func quantile(sorted []float64, p float64) float64 {
	h := p * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// verdict is the judgement of a window series: steady, from the window of
// index from, or not steady, and why not: the rule that refused it with its
// figures ("median TTFT rose in each of the last 5 windows, from ..."), for
// the progress line and UnsteadyError, so that whoever reads it knows which
// knob, or which fault of the server, it is about.
type verdict struct {
	steady bool
	from   int
	why    string
}

// judgeFunc judges a window series. samples holds what each window keeps
// for judging, parallel to ws.
type judgeFunc func(ws []result.WarmupWindow, samples []windowSample) verdict

// newJudge returns the steadiness test of cfg.Method for load, after
// checking the knobs it needs (Run may be given a config that was never
// validated).
func newJudge(cfg config.Warmup, load config.Load) (judgeFunc, error) {
	if cfg.Window <= 0 {
		return nil, fmt.Errorf("warmup.window must be > 0, got %s", cfg.Window)
	}
	if cfg.Max <= 0 {
		return nil, fmt.Errorf("warmup.max must be > 0, got %s", cfg.Max)
	}
	switch cfg.Method {
	case config.WarmupWindows:
		if cfg.Windows < 2 {
			return nil, fmt.Errorf("warmup.windows must be >= 2, got %d", cfg.Windows)
		}
		if !(cfg.Tolerance > 0) {
			return nil, fmt.Errorf("warmup.tolerance must be > 0, got %v", cfg.Tolerance)
		}
		noise := noiseOf(load)
		return func(ws []result.WarmupWindow, samples []windowSample) verdict {
			return judgeWindows(ws, samples, cfg.Windows, cfg.Tolerance, cfg.Window, noise)
		}, nil
	case config.WarmupMSER5:
		return func(ws []result.WarmupWindow, _ []windowSample) verdict {
			return steadyMSER5(ws)
		}, nil
	default:
		return nil, fmt.Errorf("unknown warmup.method %q (want %s, %s or %s)",
			cfg.Method, config.WarmupWindows, config.WarmupMSER5, config.WarmupNone)
	}
}

// tputNoise says how the sampling noise of a window's output throughput is
// estimated for a load (see noiseOf).
type tputNoise struct {
	// cv scales the compound-Poisson noise of an open loop's arrivals
	// (countCV); 0 for none.
	cv float64
	// closed estimates a closed loop's noise from the window's own token
	// stream (closedNoise).
	closed bool
}

// noiseOf is the throughput noise model of load: an open loop's windows
// get however many arrivals they happen to get (countCV); a closed loop's
// get the prefills and answers of the few requests its users happen to be
// at (closedNoise); a trace's arrivals are fixed by the trace, and its
// throughput keeps the plain tolerance.
func noiseOf(load config.Load) tputNoise {
	return tputNoise{cv: countCV(load), closed: load.Type == config.LoadClosed}
}

// countCV is the coefficient of variation of the gaps between the arrivals
// of an open-loop load whose arrivals are drawn at random: 1 for Poisson,
// 1/√burstiness for gamma. The count of arrivals in a window of a renewal
// process varies with variance cv²·λ·W, so a window's output throughput
// has sampling noise in proportion. It is 0 for a closed loop and a trace,
// whose windows' counts are not drawn at random.
func countCV(load config.Load) float64 {
	switch load.Type {
	case config.LoadPoisson:
		return 1
	case config.LoadGamma:
		if load.Burstiness > 0 {
			return 1 / math.Sqrt(load.Burstiness)
		}
		return 1
	default:
		return 0
	}
}

// se is the standard error of the output tokens of a window, or of
// consecutive windows merged, from the tokens that arrived in each of its
// parts and each record's tokens in it.
func (n tputNoise) se(parts, records []float64) float64 {
	switch {
	case n.closed:
		return closedNoise(parts)
	case n.cv > 0:
		sq := 0.0
		for _, t := range records {
			sq += t * t
		}
		return n.cv * math.Sqrt(sq)
	default:
		return 0
	}
}

// tputParts is how many equal parts of a window closedNoise counts its
// tokens in: a second each in the default 5 s windows.
const tputParts = 5

// closedNoise is the standard error of the output tokens of a closed loop's
// window (or of windows merged), from the tokens that arrived in each of its
// k parts: √(k·s²), s² the parts' sample variance, as batch means estimate
// the variance of a sum over a stationary stream.
//
// A closed loop's users are always busy, so its windows' arrivals are not
// drawn at random, but its tokens are far from smooth where prefill is
// slow: while an engine prefills a prompt every user's decoding waits
// (llama-server batches the prompt with each slot's next token; the
// simulator's step is longer by every prompt token in it), and an engine
// that serves one request at a time holds the others' first tokens back.
// How many prompts, and how long ones, fall in a window moves its tokens.
// A closed loop of 4 users over examples/workloads/chat.jsonl, answers of
// 33 tokens on average, against a virtual-time model of an engine with one
// slot gives the figures (2 requests and 64 tok/s a 5 s window,
// median TTFT 1.6 s) and windows that vary by 12% from one to the next:
// a plain 10% band refused the throughput of 7 in 10 of its series of
// three windows, twice the standard error 1 in 4.
//
// The estimate has to come from the window's own token stream. In that
// model (TestClosedNoiseIsTheWindowsSpread), √(k·s²) over fifths of the
// window was 0.97 times the spread between windows; with four slots whose
// prefill stalls every user (28% between windows) 0.98 times; with 16
// users and the simulator's defaults (4.3%) 1.00 times; where long answers
// are decoded steadily (1.1%) it was 1.8%, within the tolerance. Counting
// each request's tokens as if it had arrived at random (√Σ tokens², the
// open loop's estimate) was 3.0, 1.4, 4.5 and 43 times the spread: a long
// answer decoded steadily adds about as much to every window. A
// renewal-reward estimate from each request's tokens and time in flight in
// the window, tried on the same model, was 0.2-0.5 times where prefill
// stalls every user (it counts each user's wait apart, while one prompt
// makes them all wait) and 1.9 times with one slot. Parts of a fifth
// rather than a tenth keep a prompt's stall within one part more often
// (tenths came to 0.7 times with the slowest prefill); windows merged from
// m windows have 5m parts. A trend within the window widens s² a little:
// throughput that changes by 20% across a window adds 3.5% to its
// standard error.
func closedNoise(parts []float64) float64 {
	k := len(parts)
	if k < 2 {
		return 0
	}
	mean := 0.0
	for _, x := range parts {
		mean += x
	}
	mean /= float64(k)
	ss := 0.0
	for _, x := range parts {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(float64(k) * ss / float64(k-1))
}

// minJudgeRequests is the fewest requests a judged window holds: fewer
// give a median, and a standard error of it, that say nothing (medianSE
// needs minSEN). At 2 req/s and the default 5 s windows a window holds
// fewer about 3% of the time.
const minJudgeRequests = 5

// monotoneRun is how many consecutive judged windows whose TTFT, or the
// engine's waiting queue, all rise (or all fall, for TTFT) make a trend
// however small each step: for windows of a stationary series, whose order
// is as likely as any other, a run of five in one direction comes by
// chance 2/5! ≈ 1.7% of the time (one direction, for the queue, 0.8%).
const monotoneRun = 5

// judged is one window, or several consecutive ones merged, as the windows
// rule sees it.
type judged struct {
	requests       int
	tput, tputSE   float64 // output tok/s, and its standard error (0: none)
	ttft, ttftSE   float64 // median TTFT (ms), and its standard error (0: none)
	waiting        *float64
	firstRawWindow int     // index in the series of its first window
	start, end     float64 // seconds from the start of warm-up
	merged         int     // how many windows it is (0 counts as 1)
}

// span names g for a reason: "290–295s", or "275–295s (4 windows merged)".
func (g judged) span() string {
	s := fmt.Sprintf("%s–%ss", secText(g.start), secText(g.end))
	if g.merged > 1 {
		s += fmt.Sprintf(" (%d windows merged)", g.merged)
	}
	return s
}

// secText is x seconds to the millisecond, without trailing zeros: "0.3", "295".
func secText(x float64) string {
	return strconv.FormatFloat(math.Round(x*1000)/1000, 'f', -1, 64)
}

// judgeWindows is method windows: it merges consecutive windows until each
// of the last n holds minJudgeRequests requests, and judges them by
// steadyWindows. The merge is by the smallest factor m (1 when the windows
// hold enough alone) that makes each of the last n groups of m windows
// hold enough; groups are counted back from the last window. A series that
// no m fits yet is not steady. width is a window's length and noise how its
// throughput's sampling noise is estimated. A steady verdict's from is the
// index of the first window of the first agreeing group.
func judgeWindows(ws []result.WarmupWindow, samples []windowSample, n int, tol float64, width time.Duration, noise tputNoise) verdict {
	if n < 1 || len(samples) != len(ws) {
		return verdict{why: fmt.Sprintf("no series to judge (%d windows to agree, %d windows, %d samples)", n, len(ws), len(samples))}
	}
	if len(ws) < n {
		return verdict{why: fmt.Sprintf("%d windows to judge, %d so far", n, len(ws))}
	}
	for m := 1; n*m <= len(ws); m++ {
		groups := mergeWindows(ws, samples, m, width, noise)
		enough := true
		for _, g := range groups[len(groups)-n:] {
			enough = enough && g.requests >= minJudgeRequests
		}
		if !enough {
			continue
		}
		v := steadyWindows(groups, n, tol)
		if v.steady {
			v.from = groups[v.from].firstRawWindow
			if m > 1 {
				// A window of the last n may hold no request at all; say
				// that the verdict is on merged windows, not on it.
				v.why = fmt.Sprintf("judged %d windows merged at a time", m)
			}
		}
		return v
	}
	why := fmt.Sprintf("fewer than %d requests a window in some of the last %d windows", minJudgeRequests, n)
	if m := len(ws) / n; m > 1 {
		why += fmt.Sprintf(", even merged %d at a time", m)
	}
	return verdict{why: why}
}

// mergeWindows merges ws into groups of m consecutive windows, counted back
// from the last (a first incomplete group is left out), in order.
func mergeWindows(ws []result.WarmupWindow, samples []windowSample, m int, width time.Duration, noise tputNoise) []judged {
	k := len(ws) / m
	out := make([]judged, k)
	secs := float64(m) * width.Seconds()
	for g := range k {
		lo := len(ws) - (k-g)*m
		var ttfts, parts, records []float64
		var tokens float64
		index := map[int]int{} // a record's place in records
		for i := lo; i < lo+m; i++ {
			ttfts = append(ttfts, samples[i].ttfts...)
			tokens += ws[i].OutputThroughput * width.Seconds()
			parts = append(parts, samples[i].parts...)
			for _, r := range samples[i].records {
				j, ok := index[r.rec]
				if !ok {
					j = len(records)
					index[r.rec] = j
					records = append(records, 0)
				}
				records[j] += r.tokens
			}
		}
		slices.Sort(ttfts)
		end := float64(ws[lo+m-1].End)
		out[g] = judged{
			requests: len(ttfts), tput: tokens / secs, tputSE: noise.se(parts, records) / secs,
			ttft: median(ttfts), ttftSE: medianSE(ttfts),
			waiting: ws[lo+m-1].Waiting, firstRawWindow: lo,
			start: end - secs, end: end, merged: m,
		}
	}
	return out
}

// judgedMetric is one of the two series the windows rule judges.
type judgedMetric struct {
	name, unit string
	value, se  func(judged) float64
}

// judgedMetrics are output throughput and median TTFT.
var judgedMetrics = [...]judgedMetric{
	{"output throughput", "tok/s", func(w judged) float64 { return w.tput }, func(w judged) float64 { return w.tputSE }},
	{"median TTFT", "ms", func(w judged) float64 { return w.ttft }, func(w judged) float64 { return w.ttftSE }},
}

// steadyWindows is perf_analyzer's stability rule, made aware of sampling
// noise and of trends. The last n windows of gs each had a request, and
// for output throughput and median TTFT alike, with se that window's
// standard error:
//
//   - each one is within max(tol*mean, 2*se) of those windows' mean;
//   - the last is within max(tol*mean, 2*√(se_first² + se_last²)) of the
//     first (no trend across them);
//   - and the last monotoneRun windows of gs (when there are that many) are
//     neither all rising nor all falling in TTFT, nor all rising in the
//     engine's waiting queue (where every one of them has it).
//
// A window's TTFT is the median of the few requests whose first token came
// in it; when their prompts differ widely, that median moves by more than
// tol from window to window against a steady server, and a 10% band would
// wait for ever. Twice its standard error is the band that sampling noise
// alone stays within about 19 times in 20, so what is out of it is a real
// change: a transient that doubles TTFT is still far outside. Throughput
// has the same allowance (tputSE, see tputNoise): an open loop's windows
// get however many arrivals they happen to get, a closed loop's the
// prefills and answer lengths of the few requests in them. The monotone
// run is what no band catches: a queue that grows without end (arrivals
// above capacity) climbs by the same few seconds every window, a step that
// becomes small beside the mean however long it runs, but never turns
// back. A steady verdict's from is the index in gs of the first of the n
// windows; one not steady names the first rule, in that order, that
// refused them.
func steadyWindows(gs []judged, n int, tol float64) verdict {
	if n < 1 || len(gs) < n {
		return verdict{why: fmt.Sprintf("%d windows to judge, %d so far", n, len(gs))}
	}
	from := len(gs) - n
	last := gs[from:]
	for _, w := range last {
		if w.requests < 1 {
			return verdict{why: fmt.Sprintf("no request had its first token in %s", w.span())}
		}
	}
	for _, m := range judgedMetrics {
		mean := 0.0
		for _, w := range last {
			mean += m.value(w)
		}
		mean /= float64(n)
		for _, w := range last {
			if why := m.offBand(w, mean, tol, n); why != "" {
				return verdict{why: why}
			}
		}
		// Nor a trend: a transient still settling climbs through the band
		// (366, 390, 418 tok/s are each within 10% of their mean, and the
		// simulator's 20 s transient was 8 s from its end).
		if why := m.trend(last[0], last[n-1], mean, tol); why != "" {
			return verdict{why: why}
		}
	}
	if len(gs) >= monotoneRun {
		run := gs[len(gs)-monotoneRun:]
		first, end := run[0], run[monotoneRun-1]
		if dir := monotone(run, func(w judged) float64 { return w.ttft }); dir != 0 {
			moved := "rose"
			if dir < 0 {
				moved = "fell"
			}
			return verdict{why: fmt.Sprintf("median TTFT %s in each of the last %d windows, from %.1f ms in %s to %.1f ms in %s",
				moved, monotoneRun, first.ttft, first.span(), end.ttft, end.span())}
		}
		queued := true
		for _, w := range run {
			queued = queued && w.waiting != nil
		}
		if queued && monotone(run, func(w judged) float64 { return *w.waiting }) > 0 {
			return verdict{why: fmt.Sprintf("the engine's waiting queue grew in each of the last %d windows, from %g at %ss to %g at %ss",
				monotoneRun, *first.waiting, secText(first.end), *end.waiting, secText(end.end))}
		}
	}
	return verdict{steady: true, from: from}
}

// offBand is why window w's value lies outside the band around mean of the
// last n windows (max(tol*mean, 2*se)), or "" when it lies within.
func (m judgedMetric) offBand(w judged, mean, tol float64, n int) string {
	v, se := m.value(w), m.se(w)
	band := max(tol*mean, 2*se)
	if math.Abs(v-mean) <= band {
		return ""
	}
	side := "above"
	if v < mean {
		side = "below"
	}
	return fmt.Sprintf("%s %.1f %s in %s is %.1f%% %s the mean of the last %d windows (%.1f %s), beyond the band ±%.1f%% (%s)",
		m.name, v, m.unit, w.span(), 100*math.Abs(v-mean)/mean, side, n, mean, m.unit, 100*band/mean, bandParts(tol, 2*se/mean))
}

// trend is why the last window's value lies further from the first's than
// the band (max(tol*mean, 2*√(se_first² + se_last²))), or "" when it does
// not.
func (m judgedMetric) trend(first, last judged, mean, tol float64) string {
	a, b := m.value(first), m.value(last)
	se := math.Hypot(m.se(first), m.se(last))
	band := max(tol*mean, 2*se)
	if math.Abs(b-a) <= band {
		return ""
	}
	dir := "rose"
	if b < a {
		dir = "fell"
	}
	return fmt.Sprintf("%s %s from %.1f %s in %s to %.1f %s in %s, by %.1f%% of the mean, beyond the band ±%.1f%% (%s): a trend",
		m.name, dir, a, m.unit, first.span(), b, m.unit, last.span(), 100*math.Abs(b-a)/mean, 100*band/mean, bandParts(tol, 2*se/mean))
}

// bandParts is "tolerance 10%, sampling noise ±8.1%": what a band is the
// larger of (noise, twice the standard error over the mean, left out when
// there is no estimate of it).
func bandParts(tol, noise float64) string {
	s := fmt.Sprintf("tolerance %.4g%%", 100*tol)
	if noise > 0 {
		s += fmt.Sprintf(", sampling noise ±%.1f%%", 100*noise)
	}
	return s
}

// monotone is 1 when f rises strictly from each window of gs to the next,
// -1 when it falls strictly, else 0.
func monotone(gs []judged, f func(judged) float64) int {
	up, down := true, true
	for i := 1; i < len(gs); i++ {
		a, b := f(gs[i-1]), f(gs[i])
		up = up && b > a
		down = down && b < a
	}
	switch {
	case up:
		return 1
	case down:
		return -1
	default:
		return 0
	}
}

// mserBatch is MSER-5's batch size.
const mserBatch = 5

// steadyMSER5 applies MSER-5 to both the TTFT and the throughput series once
// there are config.MSER5MinWindows windows: each series is batched into means
// of mserBatch windows, and it is steady when its MSER truncation point d*
// lies inside the first half of its k batches (see mserTruncation), so that
// the transient is over with more data after it than before. Every window from
// the later of the two points on must also have completed a request. A steady
// verdict's from is mserBatch * max(d*).
func steadyMSER5(ws []result.WarmupWindow) verdict {
	if len(ws) < config.MSER5MinWindows {
		return verdict{why: fmt.Sprintf("MSER-5 judges %d windows or more, %d so far", config.MSER5MinWindows, len(ws))}
	}
	ttft := make([]float64, len(ws))
	tput := make([]float64, len(ws))
	for i, w := range ws {
		ttft[i], tput[i] = w.TTFT, w.OutputThroughput
	}
	k := len(ws) / mserBatch
	dt, okT := mserTruncation(batchMeans(ttft, mserBatch))
	if !okT {
		return verdict{why: mserDrift("median TTFT", dt, k)}
	}
	dp, okP := mserTruncation(batchMeans(tput, mserBatch))
	if !okP {
		return verdict{why: mserDrift("output throughput", dp, k)}
	}
	from := mserBatch * max(dt, dp)
	for _, w := range ws[from:] {
		if w.Requests < 1 {
			return verdict{why: fmt.Sprintf("no request had its first token in the window ending at %ss, after MSER-5's truncation point",
				secText(float64(w.End)))}
		}
	}
	return verdict{steady: true, from: from}
}

// mserDrift is why a series whose MSER-5 truncation point d lies on the
// edge of the first half of its k batches is not steady.
func mserDrift(name string, d, k int) string {
	return fmt.Sprintf("%s: MSER-5 would truncate %d of %d batches of %d windows, the most it may (half): the series still drifts",
		name, d, k, mserBatch)
}

// batchMeans returns the means of consecutive batches of size values of xs,
// dropping an incomplete trailing batch.
func batchMeans(xs []float64, size int) []float64 {
	out := make([]float64, 0, len(xs)/size)
	for i := 0; i+size <= len(xs); i += size {
		s := 0.0
		for _, x := range xs[i : i+size] {
			s += x
		}
		out = append(out, s/float64(size))
	}
	return out
}

// mserStat is the MSER statistic of z truncated at d (White 1997):
//
//	MSER(d) = Σ_{i>d} (z_i - mean_{>d})² / (k-d)²
//
// where the sum and the mean run over the k-d values left after dropping the
// first d. It needs d <= k-2.
func mserStat(z []float64, d int) float64 {
	tail := z[d:]
	n := float64(len(tail))
	mean := 0.0
	for _, x := range tail {
		mean += x
	}
	mean /= n
	ss := 0.0
	for _, x := range tail {
		ss += (x - mean) * (x - mean)
	}
	return ss / (n * n)
}

// mserTruncation returns the MSER truncation point d of the k batch means z
// (the first d that minimises mserStat) searched over the first half, d = 0..h
// with h = min(⌊k/2⌋, k-2), and whether it is steady: d < h, the minimum lies
// inside the first half rather than on its edge.
//
// The search stops at the half way mark, as in Franklin and White's MSER-5
// practice, because over the whole range MSER has spurious minima at its very
// end: two or three last values that happen to lie close together give a tiny
// statistic, so a stationary series is truncated in its second half about
// four times in ten. And a minimum on the edge of the first half means MSER
// was still falling there: the series still drifts (a linear trend's MSER
// falls all the way to d = k-2). Accepting d* <= k/2 over d = 0..k-2 instead
// would be vacuous at the four batches of config.MSER5MinWindows, where every
// d that can be searched (0, 1, 2) is <= 2.
func mserTruncation(z []float64) (d int, steady bool) {
	k := len(z)
	h := min(k/2, k-2)
	if h < 1 {
		return 0, false
	}
	best := math.Inf(1)
	for i := 0; i <= h; i++ {
		if m := mserStat(z, i); m < best {
			best, d = m, i
		}
	}
	return d, d < h
}
