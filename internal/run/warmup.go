package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
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
// Method windows (see steadyWindows) asks the last Config.Windows windows to
// agree: throughput within Config.Tolerance of their mean, and TTFT within
// the larger of Config.Tolerance of their mean and twice the standard error
// of that window's median TTFT, so that a window of a few requests of very
// different prompts is not taken for a transient. Method mser5 (see
// steadyMSER5) applies MSER-5 to the same two series.
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
	// OnWindow, if set, is called for every window as it becomes final and is
	// judged (for progress; that is some time after its end, and possibly for
	// several windows at once), with that window and whether the series so far
	// is steady (and past Config.Min, so the last call of a steady warm-up says
	// true). It is called from the goroutine that called Run.
	OnWindow func(w result.WarmupWindow, steadySoFar bool)
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
	// Unfinal is how many more windows ended within Max but never became
	// final: requests sent before their end were still in flight at the last
	// window boundary within Max.
	Unfinal int
}

// unsteadyShown is how many of the last windows an UnsteadyError prints.
const unsteadyShown = 5

// Error names the method, the maximum, the last windows' values and what to
// change.
func (e *UnsteadyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s warm-up: no steady state after warmup.max %s (method %s)", e.Scenario, e.Max, e.Method)
	if len(e.Windows) == 0 {
		b.WriteString(": no window was completed")
	} else {
		from := max(len(e.Windows)-unsteadyShown, 0)
		fmt.Fprintf(&b, "; last %d of %d windows (end s: requests, output tok/s, median TTFT ms):", len(e.Windows)-from, len(e.Windows))
		for _, w := range e.Windows[from:] {
			fmt.Fprintf(&b, " [%.2f: %d, %.1f, %.1f]", float64(w.End), w.Requests, w.OutputThroughput, w.TTFT)
		}
	}
	if e.Unfinal > 0 {
		fmt.Fprintf(&b, "; %d later windows were never final (requests sent before their end were still in flight)", e.Unfinal)
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

// errWarmupStopped is the cause with which warm-up cancels its own dispatch:
// requests cut off by it are neither failures nor an error of the warm-up.
var errWarmupStopped = errors.New("warm-up stopped")

// maxWindowGrace bounds how long after a window's end warm-up waits before
// looking at which windows are final, and how long it then waits for the
// records of requests that have just returned but are still on their way
// through the dispatcher.
const maxWindowGrace = 20 * time.Millisecond

// Run warms up scenario s and returns the record of the warm-up.
//
// When Config.Max passes without steady state it returns the record (Steady
// false) and an *UnsteadyError, unless Config.OnUnsteady is "warn", when the
// error is nil. Method "none" returns {Method: none, Steady: true} at once,
// without sending anything. When ctx is cancelled Run returns an error that
// wraps both context.Cause(ctx) and ctx.Err(); a dispatch error is returned
// wrapped. With either of those the record is nil.
func (w *Warmup) Run(ctx context.Context, s Scenario) (*result.Warmup, error) {
	cfg := w.Config
	name := s.Config.Name
	if cfg.Method == config.WarmupNone {
		return &result.Warmup{Method: config.WarmupNone, Steady: true}, nil
	}
	judge, err := newJudge(cfg)
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
	// sleepCtx wakes the window loop when the dispatch ends on its own.
	sleepCtx, wake := context.WithCancel(ctx)
	defer wake()

	start := clk.Now()
	// The warm-up's own dispatcher sends through a tracker of what is in
	// flight, which tells which windows are final, and times records on the
	// windows' clock.
	tracker := newFlightTracker(w.Dispatcher.Sender, clk, start)
	d := *w.Dispatcher
	d.Sender, d.Clock = tracker, clk
	done := make(chan error, 1)
	go func() {
		defer wake()
		done <- w.dispatch(runCtx, &d, clk, start, s, st)
	}()

	rec := &result.Warmup{Method: cfg.Method}
	var ttftSE []float64                 // the standard error of each judged window's TTFT
	windows := int(cfg.Max / cfg.Window) // the windows that fit in Max
	finished := false                    // the dispatch has ended: every record is in
	for k := 0; k < windows && !rec.Steady && !finished; k++ {
		boundary := time.Duration(k+1) * cfg.Window
		if clk.SleepUntil(sleepCtx, start.Add(boundary+grace)) != nil {
			if ctx.Err() != nil {
				break
			}
			finished = true
		}
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
			win, se := st.closeWindow(j)
			rec.Windows = append(rec.Windows, win)
			ttftSE = append(ttftSE, se)
			steady, from := judge(rec.Windows, ttftSE)
			steady = steady && time.Duration(j+1)*cfg.Window >= cfg.Min
			if w.OnWindow != nil {
				w.OnWindow(win, steady)
			}
			if steady {
				rec.Steady, rec.SteadyFrom = true, from
				break
			}
		}
	}
	st.markStopped()
	stop(errWarmupStopped)
	dispatchErr := <-done
	rec.Duration = result.Seconds(clk.Now().Sub(start).Seconds())

	if ctx.Err() != nil {
		return nil, w.canceled(ctx, name)
	}
	if dispatchErr != nil && !(errors.Is(dispatchErr, context.Canceled) && context.Cause(runCtx) == errWarmupStopped) {
		return nil, fmt.Errorf("scenario %s warm-up: %w", name, dispatchErr)
	}
	rec.Requests, rec.Failed = st.counts()
	if rec.Steady {
		return rec, nil
	}
	if cfg.OnUnsteady == "warn" {
		return rec, nil
	}
	return rec, &UnsteadyError{Scenario: name, Method: cfg.Method, Max: cfg.Max, Windows: rec.Windows,
		Unfinal: max(windows-len(rec.Windows), 0)}
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
// Config.Max has passed since start. A trace may end before Max; it is then
// replayed, pass after pass, with ids made unique by the pass number.
func (w *Warmup) dispatch(ctx context.Context, d *Dispatcher, clk Clock, start time.Time, s Scenario, st *warmupState) error {
	name := s.Config.Name
	for pass := 1; ; pass++ {
		offset := clk.Now().Sub(start)
		left := w.Config.Max - offset
		if left <= 0 {
			return nil
		}
		runID := w.RunID
		if pass > 1 {
			runID = fmt.Sprintf("%s-pass%d", w.RunID, pass)
		}
		p := Plan{
			Scenario: name, Repetition: 0, Requests: s.Requests,
			Count: 0, Duration: left, Load: s.Config.Load,
			Seed: planSeed(w.Seed, name, 0), RunID: runID,
		}
		if s.Salt {
			p.Salt = SaltSeed(w.Seed, s.saltName(), 0, pass)
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
type flightTracker struct {
	inner Sender
	clk   Clock
	start time.Time

	mu       sync.Mutex
	next     uint64
	inFlight map[uint64]time.Duration // send time, from start
	returned int                      // requests whose Do has returned
}

func newFlightTracker(inner Sender, clk Clock, start time.Time) *flightTracker {
	return &flightTracker{inner: inner, clk: clk, start: start, inFlight: map[uint64]time.Duration{}}
}

// Do implements Sender. The send time is read under the lock, so that a
// request not yet in the set when horizon looks is sent no earlier than the
// now that horizon reads.
func (f *flightTracker) Do(ctx context.Context, req *workload.Request, requestID string) *client.Response {
	f.mu.Lock()
	key := f.next
	f.next++
	f.inFlight[key] = f.clk.Now().Sub(f.start)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.inFlight, key)
		f.returned++
		f.mu.Unlock()
	}()
	return f.inner.Do(ctx, req, requestID)
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
	for _, sent := range f.inFlight {
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
	mu       sync.Mutex
	bins     *windowBins
	ok       int
	failed   int
	received int           // every record, successful or not
	added    chan struct{} // signalled (never blocking) after each record
	stopped  bool          // warm-up cancelled its dispatch: cancelled requests are not failures
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
	switch {
	case r.OK():
		st.ok++
		st.bins.add(r, offset)
	case st.stopped && r.ErrorKind == string(client.ErrCanceled):
		// cut off by the end of warm-up
	default:
		st.failed++
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

func (st *warmupState) closeWindow(k int) (result.WarmupWindow, float64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bins.close(k)
}

func (st *warmupState) markStopped() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.stopped = true
}

func (st *warmupState) counts() (ok, failed int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ok, st.failed
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
}

type bin struct {
	tokens float64   // output tokens that arrived in the window
	ttfts  []float64 // ms, of the records whose first token arrived in it
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
		w = &bin{}
		b.open[k] = w
	}
	return w
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
	put := func(t time.Duration, tokens float64) *bin {
		w := b.at(t)
		if w == nil {
			late = true
			return nil
		}
		w.tokens += tokens
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

// close summarises window k and closes every window up to it, returning the
// window and the standard error of its median TTFT (see medianSE). Closing
// must go in order; a window with no first token gives Requests 0.
func (b *windowBins) close(k int) (result.WarmupWindow, float64) {
	w := b.open[k]
	for i := b.closed; i <= k; i++ {
		delete(b.open, i)
	}
	b.closed = max(b.closed, k+1)
	out := result.WarmupWindow{End: result.Seconds((time.Duration(k+1) * b.width).Seconds())}
	if w == nil {
		return out, 0
	}
	out.Requests = len(w.ttfts)
	out.OutputThroughput = w.tokens / b.width.Seconds()
	out.TTFT = median(w.ttfts)
	return out, medianSE(w.ttfts)
}

// median of xs (which it sorts); 0 when empty.
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	slices.Sort(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
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

// judgeFunc says whether a window series is steady and, if so, the index of
// its first steady window. ttftSE holds the standard error of each window's
// median TTFT (0 where there is no estimate), parallel to ws.
type judgeFunc func(ws []result.WarmupWindow, ttftSE []float64) (steady bool, from int)

// newJudge returns the steadiness test of cfg.Method, after checking the
// knobs it needs (Run may be given a config that was never validated).
func newJudge(cfg config.Warmup) (judgeFunc, error) {
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
		return func(ws []result.WarmupWindow, ttftSE []float64) (bool, int) {
			return steadyWindows(ws, ttftSE, cfg.Windows, cfg.Tolerance)
		}, nil
	case config.WarmupMSER5:
		return func(ws []result.WarmupWindow, _ []float64) (bool, int) {
			return steadyMSER5(ws)
		}, nil
	default:
		return nil, fmt.Errorf("unknown warmup.method %q (want %s, %s or %s)",
			cfg.Method, config.WarmupWindows, config.WarmupMSER5, config.WarmupNone)
	}
}

// steadyWindows is perf_analyzer's stability rule, made aware of the sampling
// noise of a median: the last n windows each had at least one request, and
//
//   - each one's output throughput is within tol of those windows' mean:
//     |x - mean| <= tol*mean, and the last's within tol*mean of the first's
//     (no trend);
//   - each one's median TTFT is within max(tol*mean, 2*se) of their mean,
//     where se is ttftSE of that window, the standard error of its median (see
//     medianSE; 0, so tol alone, when the window had fewer than minSEN
//     requests or ttftSE is short).
//
// A window's TTFT is the median of the few requests whose first token came in
// it; when their prompts differ widely, that median moves by more than tol
// from window to window against a steady server, and a 10% band would wait
// for ever. Twice its standard error is the band that sampling noise alone
// stays within about 19 times in 20, so what is out of it is a real change:
// a transient that doubles TTFT is still far outside. Throughput, counted by
// token arrival time, is smooth and keeps the plain rule. from is the index of
// the first of the n windows.
func steadyWindows(ws []result.WarmupWindow, ttftSE []float64, n int, tol float64) (steady bool, from int) {
	if n < 1 || len(ws) < n {
		return false, 0
	}
	from = len(ws) - n
	last := ws[from:]
	var tput, ttft float64
	for _, w := range last {
		if w.Requests < 1 {
			return false, 0
		}
		tput += w.OutputThroughput
		ttft += w.TTFT
	}
	tput /= float64(n)
	ttft /= float64(n)
	for i, w := range last {
		band := tol * ttft
		if j := from + i; j < len(ttftSE) {
			band = max(band, 2*ttftSE[j])
		}
		if math.Abs(w.OutputThroughput-tput) > tol*tput || math.Abs(w.TTFT-ttft) > band {
			return false, 0
		}
	}
	// Nor a trend: a transient still settling climbs through the band
	// (366, 390, 418 tok/s are each within 10% of their mean, and the
	// simulator's 20 s transient was 8 s from its end), while a steady
	// server's smooth throughput ends about where it began.
	if math.Abs(last[n-1].OutputThroughput-last[0].OutputThroughput) > tol*tput {
		return false, 0
	}
	return true, from
}

// mserBatch is MSER-5's batch size.
const mserBatch = 5

// steadyMSER5 applies MSER-5 to both the TTFT and the throughput series once
// there are config.MSER5MinWindows windows: each series is batched into means
// of mserBatch windows, and it is steady when its MSER truncation point d*
// lies inside the first half of its k batches (see mserTruncation), so that
// the transient is over with more data after it than before. Every window from
// the later of the two points on must also have completed a request. from is
// mserBatch * max(d*).
func steadyMSER5(ws []result.WarmupWindow) (steady bool, from int) {
	if len(ws) < config.MSER5MinWindows {
		return false, 0
	}
	ttft := make([]float64, len(ws))
	tput := make([]float64, len(ws))
	for i, w := range ws {
		ttft[i], tput[i] = w.TTFT, w.OutputThroughput
	}
	dt, okT := mserTruncation(batchMeans(ttft, mserBatch))
	dp, okP := mserTruncation(batchMeans(tput, mserBatch))
	if !okT || !okP {
		return false, 0
	}
	from = mserBatch * max(dt, dp)
	for _, w := range ws[from:] {
		if w.Requests < 1 {
			return false, 0
		}
	}
	return true, from
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
