package run

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/internal/textsafe"
)

// Progress prints one status line per repetition while it runs: requests done
// of the target, completion rate, errors and elapsed time. On a terminal the
// line is redrawn in place a few times a second; otherwise (CI logs) a line
// is printed every few seconds and once at the end.
type Progress struct {
	w        io.Writer
	tty      bool
	interval time.Duration

	mu     sync.Mutex
	label  string
	target int
	start  time.Time
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

// Begin starts reporting a repetition; target < 0 means bounded by time.
func (p *Progress) Begin(label string, target int) {
	p.mu.Lock()
	p.label, p.target, p.start = textsafe.Line(label), target, time.Now()
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
}

func (p *Progress) print(final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	el := time.Since(p.start)
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
	line := fmt.Sprintf("%s  %d/%s requests%s  %.1f req/s  %d errors  %s",
		p.label, done, target, sessions, rate, p.failed.Load(), el.Round(100*time.Millisecond))
	switch {
	case p.tty && final:
		fmt.Fprintf(p.w, "\r\033[K%s\n", line)
	case p.tty:
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	default:
		fmt.Fprintln(p.w, line)
	}
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
