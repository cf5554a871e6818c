package run

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// An estimate past int64 nanoseconds (292 years) reads "> 99h", never
// "~0s": time.Duration(float64) past int64 is undefined (MinInt64 on
// amd64), and 1e6 requests at one per 10 h once showed "ETA ~0s". A
// clock that stepped back, or none elapsed, estimates nothing left.
func TestProgressETAOutOfRange(t *testing.T) {
	for _, c := range []struct {
		name          string
		target        int
		done          int
		elapsed       time.Duration
		rep, reps     int
		cooldown      time.Duration
		repTimes      []time.Duration
		wantETA       string
		wantNotInLine string
	}{
		{name: "1e6 requests, one per 10 h", target: 1_000_000, done: 1, elapsed: 10 * time.Hour, wantETA: "ETA > 99h"},
		{name: "at the cap", target: 100, done: 1, elapsed: time.Hour, wantETA: "ETA ~99h0m0s"},
		{name: "just over the cap", target: 101, done: 1, elapsed: time.Hour, wantETA: "ETA > 99h"},
		{name: "later repetitions overflow", target: 2, done: 1, elapsed: time.Second, rep: 1, reps: 1 << 62,
			cooldown: time.Hour, wantETA: "ETA > 99h"},
		{name: "later repetitions' mean overflows a sum", target: 2, done: 1, elapsed: time.Second, rep: 3, reps: 4,
			repTimes: []time.Duration{1<<63 - 1, 1<<63 - 1}, wantETA: "ETA > 99h"},
		{name: "no time elapsed", target: 10, done: 5, elapsed: 0, wantETA: "ETA ~0s"},
		{name: "the clock stepped back", target: 10, done: 5, elapsed: -time.Hour, wantETA: "ETA ~0s"},
		{name: "an ordinary estimate", target: 10, done: 5, elapsed: 10 * time.Second, wantETA: "ETA ~10s"},
	} {
		clk := newFakeClock(0)
		var out bytes.Buffer
		p := NewProgress(&out, false)
		p.Clock, p.interval = clk, time.Hour
		if c.reps > 0 {
			p.repetition(c.rep, c.reps, c.cooldown)
		}
		p.begin("chat", c.target, 0)
		p.repTimes = c.repTimes
		for range c.done {
			p.Add(true)
		}
		clk.advance(c.elapsed)
		p.print(false)
		p.End()
		line, _, _ := strings.Cut(out.String(), "\n")
		assert.True(t, strings.HasSuffix(line, "  "+c.wantETA), "%s: %q, want it to end %q", c.name, line, c.wantETA)
	}
}
