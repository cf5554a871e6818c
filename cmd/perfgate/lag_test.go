package main

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// lagProbe measures this machine's scheduling lag while a timing test
// runs: a goroutine asks to wake up every millisecond and records how late
// each wake-up was. On an idle machine that is tens of microseconds; while
// other programs keep the cores busy it is milliseconds, and every goroutine
// of the test (perfgate's sender, its stream readers, the simulator's step
// loop) is woken just as late. Timing bounds derived from it stay tight on
// an idle machine and widen only as far as the machine itself is slow, so a
// test judges perfgate's timing rather than the machine's load.
type lagProbe struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
	late []time.Duration // sorted once stopped
}

// startLagProbe starts a probe that runs until Stop or the test's end.
func startLagProbe(t *testing.T) *lagProbe {
	t.Helper()
	p := &lagProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		const every = time.Millisecond
		timer := time.NewTimer(every)
		defer timer.Stop()
		due := time.Now().Add(every)
		for {
			select {
			case <-p.stop:
				return
			case <-timer.C:
			}
			now := time.Now()
			p.late = append(p.late, now.Sub(due))
			// Each wake-up is measured from its own request, so that one
			// late wake-up is counted once, not carried into the next.
			due = now.Add(every)
			timer.Reset(every)
		}
	}()
	t.Cleanup(func() { p.Stop() })
	return p
}

// Stop ends the probe and returns the lateness of its wake-ups, sorted.
func (p *lagProbe) Stop() []time.Duration {
	p.once.Do(func() {
		close(p.stop)
		<-p.done
		slices.Sort(p.late)
	})
	return p.late
}

// Stalled is the time the probe's wake-ups were late beyond threshold,
// summed, once stopped: how long the machine ran nothing of this process
// (a GC pause, another tenant), beyond its ordinary timer lag. A send
// scheduled in such a stall is late by it, whatever the dispatcher does.
func (p *lagProbe) Stalled(threshold time.Duration) time.Duration {
	var sum time.Duration
	for _, l := range p.Stop() {
		if l > threshold {
			sum += l - threshold
		}
	}
	return sum
}

// Quantile is the q-quantile (0 <= q <= 1) of the probe's lateness, once
// stopped; zero when it never woke.
func (p *lagProbe) Quantile(q float64) time.Duration {
	late := p.Stop()
	if len(late) == 0 {
		return 0
	}
	return late[min(int(q*float64(len(late))), len(late)-1)]
}
