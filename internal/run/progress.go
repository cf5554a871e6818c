package run

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// Progress prints one status line per repetition while it runs: where the
// run is (the scenario k of N, the repetition r of R), requests done of
// the target, completion rate, errors, elapsed time and an estimate of the
// time left; and one summary line per scenario as it finishes. On a
// terminal the line is redrawn in place a few times a second; otherwise
// (CI logs) a line is printed every few seconds and once at the end, never
// a carriage return.
//
// The estimate ("ETA ~1m20s") is of the current scenario's measurement:
// the repetition's rest at the rate so far (requests done over the time
// taken, or its duration's rest when time bounds it), and each later
// repetition as long as the finished ones took on average (before one has
// finished, as long as this one is estimated to take), cool-downs
// included. From the second scenario on, the rest of the run follows
// ("run ~5m10s"): each scenario still to come as long as the finished ones
// took on average, warm-ups included.
type Progress struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	// Clock, if set, is the time source of the elapsed times and the
	// estimates; nil is RealClock. Tests set a fake.
	Clock Clock

	mu     sync.Mutex
	label  string
	target int
	// dur is the repetition's planned duration when time bounds it.
	dur   time.Duration
	start time.Time
	// Where the run is; n == 0 when no scenario was announced.
	scenario      string
	k, n          int
	scenarioStart time.Time
	// rep of reps (0: not a repetition of Measure); cooldown before each.
	rep, reps int
	cooldown  time.Duration
	repTimes  []time.Duration // of the finished repetitions of this scenario
	scenTimes []time.Duration // of the finished scenarios

	done   atomic.Int64
	failed atomic.Int64
	// sessions counts the sessions started (their first turns finished).
	sessions atomic.Int64
	stop     chan struct{}
	ended    chan struct{}
}

// NewProgress returns a reporter writing to w; tty selects in-place redraws.
// A redraw is perfgate's own control sequence, so on a terminal the
// reporter writes to the stream under a textsafe.Writer; its label is
// cleaned with textsafe.Line.
func NewProgress(w io.Writer, tty bool) *Progress {
	iv := 5 * time.Second
	if tty {
		iv = 250 * time.Millisecond
		w = textsafe.Unwrap(w)
	}
	return &Progress{w: w, tty: tty, interval: iv}
}

func (p *Progress) now() time.Time {
	if p.Clock == nil {
		return time.Now()
	}
	return p.Clock.Now()
}

// Scenario says that scenario name, the k-th of n, starts (its warm-up
// first): the lines that follow say "scenario k of n", until ScenarioDone.
// A nil Progress does nothing.
func (p *Progress) Scenario(name string, k, n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scenario, p.k, p.n = textsafe.Line(name), k, n
	p.scenarioStart = p.now()
	p.repTimes = nil
	p.rep, p.reps = 0, 0
}

// repetition says that the next Begin is repetition rep of reps of the
// scenario (reps: as many as are planned; a sequential gate's minimum),
// with cooldown before each.
func (p *Progress) repetition(rep, reps int, cooldown time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rep, p.reps, p.cooldown = rep, reps, cooldown
}

// ScenarioDone prints the summary line of a finished scenario: "chat-c8
// done in 1m02s: 6 repetitions, 144 requests, 0 errors, TTFT p99 105 ms,
// 3863 tok/s" (medians over the repetitions), timed from Scenario. A nil
// Progress does nothing.
func (p *Progress) ScenarioDone(res *result.ScenarioResult) {
	if p == nil || res == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	took := time.Duration(0)
	if !p.scenarioStart.IsZero() {
		took = p.now().Sub(p.scenarioStart)
		p.scenTimes = append(p.scenTimes, took)
	}
	line := fmt.Sprintf("%s done in %s", textsafe.Line(res.Name), roundDur(took))
	if reps := res.Repetitions; len(reps) > 0 {
		sent, failed := 0, 0
		var ttft, tput []float64
		for _, r := range reps {
			sent += r.Sent
			failed += r.Failed
			ttft = append(ttft, r.TTFT.P99)
			tput = append(tput, r.OutputThroughput)
		}
		line += fmt.Sprintf(": %d repetitions, %d requests, %d errors, TTFT p99 %.0f ms, %.0f tok/s",
			len(reps), sent, failed, median(ttft), median(tput))
	}
	fmt.Fprintln(p.w, line)
	p.scenario, p.k, p.n, p.rep, p.reps = "", 0, 0, 0, 0
	p.scenarioStart = time.Time{}
}

// roundDur is d as the lines show it: to the tenth of a second under ten
// seconds, else to the second.
func roundDur(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// Begin starts reporting a repetition; target < 0 means bounded by time.
func (p *Progress) Begin(label string, target int) { p.begin(label, target, 0) }

// begin is Begin with the repetition's planned duration, when time bounds
// it, for the estimate.
func (p *Progress) begin(label string, target int, dur time.Duration) {
	p.mu.Lock()
	p.label, p.target, p.dur, p.start = textsafe.Line(label), target, dur, p.now()
	p.done.Store(0)
	p.failed.Store(0)
	p.sessions.Store(0)
	p.stop, p.ended = make(chan struct{}), make(chan struct{})
	stop, ended := p.stop, p.ended
	p.mu.Unlock()
	go func() {
		defer close(ended)
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.print(false)
			case <-stop:
				p.print(true)
				return
			}
		}
	}()
}

// Add counts one finished request.
func (p *Progress) Add(ok bool) {
	p.done.Add(1)
	if !ok {
		p.failed.Add(1)
	}
}

// AddSession counts one session started (its first turn finished); the
// line mentions sessions once there is one.
func (p *Progress) AddSession() { p.sessions.Add(1) }

// End stops reporting the current repetition and prints its last line.
func (p *Progress) End() {
	p.mu.Lock()
	stop, ended := p.stop, p.ended
	p.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-ended
	p.mu.Lock()
	if p.rep > 0 {
		p.repTimes = append(p.repTimes, p.now().Sub(p.start))
	}
	p.mu.Unlock()
}

func (p *Progress) print(final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	el := p.now().Sub(p.start)
	done := p.done.Load()
	target := "?"
	if p.target >= 0 {
		target = fmt.Sprint(p.target)
	}
	rate := 0.0
	if s := el.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	sessions := ""
	if n := p.sessions.Load(); n > 0 {
		sessions = fmt.Sprintf("  %d sessions", n)
	}
	where := ""
	if p.n > 0 {
		where = fmt.Sprintf(" (scenario %d of %d)", p.k, p.n)
	}
	line := fmt.Sprintf("%s%s  %d/%s requests%s  %.1f req/s  %d errors  %s%s",
		p.label, where, done, target, sessions, rate, p.failed.Load(), el.Round(100*time.Millisecond), p.eta(el, done, final))
	switch {
	case p.tty && final:
		fmt.Fprintf(p.w, "\r\033[K%s\n", line)
	case p.tty:
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	default:
		fmt.Fprintln(p.w, line)
	}
}

// maxETA is the longest estimate shown as a duration; a longer one reads
// "> 99h" (1e6 requests at one per 10 h is no estimate worth a number).
const maxETA = 99 * time.Hour

// eta is "  ETA ~1m20s" (and ", run ~5m10s" where the run's rest can be
// told), or "" while there is nothing to estimate from: see Progress.
// el and done are the repetition's so far; final says it has ended. It
// reckons in float nanoseconds, clamped to [0, maxETA] before any becomes
// a time.Duration: past int64, a conversion is undefined (MinInt64 on
// amd64), and it once read "ETA ~0s" for a run of centuries.
func (p *Progress) eta(el time.Duration, done int64, final bool) string {
	// The current repetition: what is left of it, and how long it takes.
	var left float64
	switch {
	case final:
	case p.target >= 0 && done > 0:
		if el > 0 {
			left = float64(el) * float64(int64(p.target)-done) / float64(done)
		}
	case p.target < 0 && p.dur > 0:
		left = float64(p.dur) - float64(el)
	default:
		return "" // nothing done yet to tell a rate from
	}
	left = max(left, 0)
	per := max(float64(el), 0) + left
	if len(p.repTimes) > 0 {
		per = meanNanos(p.repTimes)
	}
	if later := p.reps - p.rep; p.rep > 0 && later > 0 {
		left += float64(later) * (per + float64(max(p.cooldown, 0)))
	}
	if final && left == 0 && p.n == 0 {
		return "" // a lone repetition that has ended: nothing is left
	}
	out := "  ETA " + etaString(left)
	if p.n > p.k && len(p.scenTimes) > 0 {
		out += ", run " + etaString(left+float64(p.n-p.k)*meanNanos(p.scenTimes))
	}
	return out
}

// meanNanos is the mean of ds in nanoseconds (never negative), summed in
// float so that no sum overflows.
func meanNanos(ds []time.Duration) float64 {
	var sum float64
	for _, d := range ds {
		sum += float64(d)
	}
	return max(sum/float64(len(ds)), 0)
}

// etaString is an estimate of ns nanoseconds: "~1m20s", or "> 99h" past
// maxETA (NaN and negatives are "~0s").
func etaString(ns float64) string {
	switch {
	case ns > float64(maxETA):
		return "> " + strings.TrimSuffix(maxETA.String(), "0m0s")
	case !(ns > 0):
		return "~" + roundDur(0).String()
	}
	return "~" + roundDur(time.Duration(ns)).String()
}

// Phases prints where a long run is: starting the stack, ready after Xs,
// warming up, repetition k/N. Under GitHub Actions each phase is a
// collapsible log group (::group:: ... ::endgroup::), so a 20-minute job's log
// reads as a list of phases that open to their detail.
type Phases struct {
	w     io.Writer
	gha   bool
	open  bool
	start time.Time
}

// NewPhases returns a phase printer writing to w; githubActions selects log
// groups.
func NewPhases(w io.Writer, githubActions bool) *Phases {
	return &Phases{w: w, gha: githubActions, start: time.Now()}
}

// Begin ends the current phase and starts one titled title.
func (p *Phases) Begin(title string) {
	if p == nil {
		return
	}
	p.End()
	title = textsafe.Line(title)
	if p.gha {
		fmt.Fprintf(textsafe.Commands(p.w), "::group::%s\n", title)
		p.open = true
		return
	}
	fmt.Fprintf(p.w, "==> %s  [%s]\n", title, time.Since(p.start).Round(time.Second))
}

// Printf prints one line of detail within the current phase: the args can
// hold what a server said (a model id, an engine's version), so a newline
// or a control character in them is made a space.
func (p *Phases) Printf(format string, args ...any) {
	if p == nil {
		return
	}
	fmt.Fprintln(p.w, "    "+textsafe.Line(fmt.Sprintf(format, args...)))
}

// End closes the current phase's group, if one is open.
func (p *Phases) End() {
	if p == nil || !p.open {
		return
	}
	fmt.Fprintln(textsafe.Commands(p.w), "::endgroup::")
	p.open = false
}
