package run

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/perfgate/perfgate/internal/result"
)

// The overload detector's tolerances (docs/gating.md, "Sustainable load").
// A repetition is overloaded when both hold:
//
//   - the server fell behind: it served under OverloadServedShare of the
//     offered rate, served counting the completions over the send span
//     plus the backlog time, from the last scheduled send to the last first token
//     (a server that keeps up takes the last request up within about one
//     TTFT; one that does not needs its whole backlog's time; the decode
//     after the first token is the workload's length, not the load's, and
//     is left out, or one long answer at the end of a short repetition
//     would look like a backlog);
//   - the queue grew: TTFT, measured from the scheduled send so that a
//     queue in the client counts too, rose with the send time (one-sided
//     Mann-Kendall test at OverloadTrendP), and its median over the last
//     third of the send span is at least OverloadTTFTGrowth times that of
//     the first third.
//
// Either alone is not enough: a short repetition's backlog time is a large part
// of its span (the served share falls with no queue), and a stationary
// server's TTFT drifts with the workload's lengths or the server's own
// state without any backlog. A server that cannot keep up shows both, and
// both grow with the length of the repetition.
const (
	// OverloadServedShare is the least share of the offered rate a server
	// that keeps up serves.
	OverloadServedShare = 0.90
	// OverloadTrendP is the Mann-Kendall test's one-sided level.
	OverloadTrendP = 0.001
	// OverloadTTFTGrowth is the least ratio of the last third's median TTFT
	// to the first third's that counts as a queue growing.
	OverloadTTFTGrowth = 1.5
	// OverloadMinRequests is the fewest sent requests a repetition is
	// judged on; fewer carry no trend worth the name.
	OverloadMinRequests = 50
	// trendMaxPoints bounds the Mann-Kendall test's points (it compares
	// every pair): a longer series is thinned evenly.
	trendMaxPoints = 2000
)

// overloadWatch collects what the overload detector needs of an open-loop
// repetition's records. It is not safe for concurrent use: feed it from the
// goroutine that collects records, as the aggregator is.
type overloadWatch struct {
	points []overloadPoint
}

// overloadPoint is one sent request: its scheduled send, first token and
// end (ns from the repetition's start), and whether it completed.
type overloadPoint struct {
	sched, first, end int64
	ok                bool
}

// takenUp is when the server took the request up: its first token, or its
// end when it had none (it failed).
func (p overloadPoint) takenUp() int64 {
	if p.first > 0 {
		return p.first
	}
	return p.end
}

// add notes one record; a session turn never sent (its session had
// failed) carries no times and is left out.
func (w *overloadWatch) add(r *result.Record) {
	if r.ErrorKind == result.SessionErrorKind {
		return
	}
	w.points = append(w.points, overloadPoint{sched: r.ScheduledNS, first: r.FirstTokenNS, end: r.EndNS, ok: r.OK()})
}

// judge is the repetition's overload evidence and verdict; nil when it sent
// fewer than OverloadMinRequests requests, or all at one instant (no rate
// was offered).
func (w *overloadWatch) judge() *result.Overload {
	return detectOverload(w.points)
}

// DetectOverload judges an open-loop repetition from its records (eval
// items and never-sent session turns are left out) as Measurement does:
// see the Overload constants. nil when there are too few to judge.
func DetectOverload(recs []result.Record) *result.Overload {
	var w overloadWatch
	for i := range recs {
		if recs[i].Eval == "" {
			w.add(&recs[i])
		}
	}
	return w.judge()
}

func detectOverload(pts []overloadPoint) *result.Overload {
	n := len(pts)
	if n < OverloadMinRequests {
		return nil
	}
	pts = slices.Clone(pts)
	slices.SortStableFunc(pts, func(a, b overloadPoint) int { return cmp.Compare(a.sched, b.sched) })
	first, last := pts[0].sched, pts[n-1].sched
	span := last - first
	if span <= 0 {
		return nil
	}
	var lastTaken int64
	completed := 0
	ends := make([]int64, 0, n)
	for _, p := range pts {
		lastTaken = max(lastTaken, p.takenUp())
		ends = append(ends, p.end)
		if p.ok {
			completed++
		}
	}
	slices.Sort(ends)
	backlog := max(0, lastTaken-last)
	o := &result.Overload{
		Requests:    n,
		OfferedRate: float64(n-1) / seconds(span),
		ServedRate:  float64(completed) / seconds(span+backlog),
		BacklogS:    result.Seconds(seconds(backlog)),
	}

	// Thirds of the send span; in flight at each scheduled send: the
	// requests scheduled before it, less those already ended (a request
	// that ended by then was scheduled before it).
	cut1, cut2 := first+span/3, last-span/3
	var ttftFirst, ttftLast, inFirst, inLast []float64
	var series []float64 // TTFT from schedule, ms, in send order
	for i, p := range pts {
		done, _ := slices.BinarySearch(ends, p.sched+1) // ends <= sched
		inFlight := float64(i - min(done, i))
		var ttft float64
		has := p.ok && p.first > 0
		if has {
			ttft = float64(p.first-p.sched) / float64(time.Millisecond)
			series = append(series, ttft)
		}
		switch {
		case p.sched < cut1:
			inFirst = append(inFirst, inFlight)
			if has {
				ttftFirst = append(ttftFirst, ttft)
			}
		case p.sched >= cut2:
			inLast = append(inLast, inFlight)
			if has {
				ttftLast = append(ttftLast, ttft)
			}
		}
	}
	o.TTFTFirstMS, o.TTFTLastMS = median(ttftFirst), median(ttftLast)
	o.InFlightFirst, o.InFlightLast = meanFloat(inFirst), meanFloat(inLast)
	o.TrendP = mannKendallP(series)

	behind := o.ServedRate < OverloadServedShare*o.OfferedRate
	grew := o.TrendP < OverloadTrendP && len(ttftFirst) > 0 && len(ttftLast) > 0 &&
		o.TTFTLastMS >= OverloadTTFTGrowth*o.TTFTFirstMS
	o.Overloaded = behind && grew
	return o
}

// mannKendallP is the one-sided p-value of the Mann-Kendall test for an
// increasing trend of xs in their order: S, the sum of the signs of every
// later value minus every earlier one, against its null distribution's
// normal approximation (variance n(n-1)(2n+5)/18, with the continuity
// correction; ties only lower the variance, so leaving them out keeps the
// test conservative). A series longer than trendMaxPoints is thinned evenly
// first. 1 for fewer than three values.
func mannKendallP(xs []float64) float64 {
	if len(xs) > trendMaxPoints {
		thin := make([]float64, trendMaxPoints)
		for i := range thin {
			thin[i] = xs[i*len(xs)/trendMaxPoints]
		}
		xs = thin
	}
	n := len(xs)
	if n < 3 {
		return 1
	}
	s := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			switch {
			case xs[j] > xs[i]:
				s++
			case xs[j] < xs[i]:
				s--
			}
		}
	}
	if s <= 0 {
		return 1
	}
	nf := float64(n)
	z := (float64(s) - 1) / math.Sqrt(nf*(nf-1)*(2*nf+5)/18)
	return min(1, max(0, 0.5*math.Erfc(z/math.Sqrt2)))
}

func seconds(ns int64) float64 { return float64(ns) / float64(time.Second) }

// meanFloat is the mean of xs; 0 for none.
func meanFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
