package result

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// A step load (load.type step) offers one rate and then, from a step time,
// another: a spike. What it measures beyond a repetition's usual figures is
// the recovery: how long after the first step TTFT p95 was back within
// slo.ttft for good, and how many requests broke the SLO meanwhile.
//
// TTFT p95 is taken over windows of the requests' planned send times
// (load.recovery_window wide), one starting every fifth of a window from
// the step to the last whole window of the repetition. A request that
// failed or produced no first token counts as one that broke the SLO: a
// server that refuses the spike has not absorbed it. The recovery is the
// start of the first window from which every window after it (holding
// requests) has its p95 within the SLO; 0 when the p95 never left it. A
// window starting at t is the requests from t on, so it holds once fewer
// than 5% of them are slow: the recovery is found within a stride of the
// moment the slow requests ended.

// Recovery is how a repetition of a step load came back from its step.
type Recovery struct {
	// StepS is when the first step began, in seconds from the start of the
	// repetition: the recovery is counted from it.
	StepS float64 `json:"step_s"`
	// WindowS is the recovery window, in seconds.
	WindowS float64 `json:"window_s"`
	// Recovered is false when TTFT p95 was still over the SLO in the last
	// window: the server did not recover within the repetition, and
	// Seconds is a lower bound (the step to the last window's start).
	Recovered bool `json:"recovered"`
	// Seconds is the recovery time: from the step until TTFT p95 was back
	// within the SLO for good; 0 when it never left it.
	Seconds float64 `json:"recovery_s"`
	// Breaches are the requests sent from the step until the recovery
	// that broke slo.ttft, failed ones included.
	Breaches int `json:"breaches"`
	// BeforeP95MS is TTFT p95 of the requests sent before the step (the
	// failed ones left out), in milliseconds; 0 when none completed. Over
	// the SLO, the load before the step was already too much.
	BeforeP95MS float64 `json:"before_ttft_p95_ms"`
	// PeakP95MS is the highest window TTFT p95 after the step, of the
	// completed requests, in milliseconds.
	PeakP95MS float64 `json:"peak_ttft_p95_ms"`
	// Windows are the windows the recovery was judged on, in order.
	Windows []RecoveryWindow `json:"windows,omitempty"`
}

// RecoveryWindow is one window of a step load's recovery.
type RecoveryWindow struct {
	// AtS is the window's start, in seconds from the start of the
	// repetition.
	AtS float64 `json:"at_s"`
	// Requests is how many requests the window holds, Failed how many of
	// them failed or produced no first token.
	Requests int `json:"requests"`
	Failed   int `json:"failed,omitempty"`
	// P95MS is TTFT p95 of its completed requests, in milliseconds.
	P95MS float64 `json:"ttft_p95_ms"`
	// Held says the window's TTFT p95, the failed requests counted as
	// over any SLO, was within the SLO.
	Held bool `json:"held"`
}

// recoverySample is one request of a step load: its planned send time
// (ns from the start of the repetition) and TTFT (ns); ok is false for a
// request that failed or produced no first token.
type recoverySample struct {
	atNS, ttftNS int64
	ok           bool
}

// windowStrides is how many window starts each window's width holds.
const windowStrides = 5

// measureRecovery judges the recovery from a step at step, with windows of
// window, against the TTFT SLO slo, from the samples of a repetition whose
// last send was planned at end. nil when no window fits after the step.
func measureRecovery(samples []recoverySample, step, window, end, slo time.Duration) *Recovery {
	slices.SortFunc(samples, func(a, b recoverySample) int { return cmp.Compare(a.atNS, b.atNS) })
	rec := &Recovery{StepS: step.Seconds(), WindowS: window.Seconds()}
	var before []float64
	for _, s := range samples {
		if s.atNS < int64(step) && s.ok {
			before = append(before, float64(s.ttftNS))
		}
	}
	rec.BeforeP95MS = nearestRank(before, 0.95) / 1e6
	stride := window / windowStrides
	last := end - window
	if last < step {
		return nil
	}
	recoveredAt := -1          // the first window of the run of windows that held to the end
	var starts []time.Duration // each window's start, as rec.Windows
	for at := step; at <= last; at += stride {
		lo, hi := int64(at), int64(at+window)
		w := RecoveryWindow{AtS: at.Seconds()}
		var ttfts []float64
		i, _ := slices.BinarySearchFunc(samples, lo, func(s recoverySample, t int64) int { return cmp.Compare(s.atNS, t) })
		for ; i < len(samples) && samples[i].atNS < hi; i++ {
			w.Requests++
			if samples[i].ok {
				ttfts = append(ttfts, float64(samples[i].ttftNS))
			} else {
				w.Failed++
			}
		}
		if w.Requests == 0 {
			continue // nothing sent: neither held nor broke
		}
		w.P95MS = nearestRank(ttfts, 0.95) / 1e6
		rec.PeakP95MS = max(rec.PeakP95MS, w.P95MS)
		// The failed requests are the slowest: p95 over all of them.
		rank := int(math.Ceil(0.95 * float64(w.Requests)))
		w.Held = rank <= len(ttfts) && nearestRankOf(ttfts, rank) <= float64(slo)
		switch {
		case !w.Held:
			recoveredAt = -1
		case recoveredAt < 0:
			recoveredAt = len(rec.Windows)
		}
		rec.Windows = append(rec.Windows, w)
		starts = append(starts, at)
	}
	if len(rec.Windows) == 0 {
		return nil
	}
	until := int64(end) + 1 // not recovered: every request from the step on
	if recoveredAt >= 0 {
		rec.Recovered = true
		rec.Seconds = (starts[recoveredAt] - step).Seconds()
		until = int64(starts[recoveredAt])
	} else {
		rec.Seconds = (starts[len(starts)-1] - step).Seconds()
	}
	for _, s := range samples {
		if s.atNS >= int64(step) && s.atNS < until && (!s.ok || s.ttftNS > int64(slo)) {
			rec.Breaches++
		}
	}
	return rec
}

// nearestRank is the q-quantile of xs by the nearest-rank rule (the
// ⌈q·n⌉-th smallest); 0 for none. It sorts xs.
func nearestRank(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return nearestRankOf(xs, max(1, int(math.Ceil(q*float64(len(xs))))))
}

// nearestRankOf is the rank-th smallest of xs (1-based), sorting xs.
func nearestRankOf(xs []float64, rank int) float64 {
	slices.Sort(xs)
	return xs[rank-1]
}

// WithRecovery makes the repetition measure its recovery from a step load's
// first step at step, TTFT p95 taken in windows of window against the TTFT
// SLO (Repetition.Recovery). Without a TTFT SLO it measures none.
func (a *Aggregator) WithRecovery(step, window time.Duration) *Aggregator {
	if a.sloTTFT > 0 && window > 0 {
		a.recoveryStep, a.window = step, window
	}
	return a
}

// summaryRecovery is the repetition's recovery; nil without WithRecovery.
func (a *Aggregator) summaryRecovery() *Recovery {
	if a.window == 0 || len(a.recovery) == 0 {
		return nil
	}
	return measureRecovery(a.recovery, a.recoveryStep, a.window, time.Duration(a.lastSched), a.sloTTFT)
}

// recovery checks a repetition's recovery: times and figures that can be
// true, breaches no more than the requests sent, windows in order.
func (v *checker) recovery(p string, rc *Recovery, r *Repetition) {
	v.nonNegative(p+".step_s", rc.StepS)
	v.positive(p+".window_s", rc.WindowS)
	v.nonNegative(p+".recovery_s", rc.Seconds)
	v.nonNegative(p+".before_ttft_p95_ms", rc.BeforeP95MS)
	v.nonNegative(p+".peak_ttft_p95_ms", rc.PeakP95MS)
	v.count(p+".breaches", rc.Breaches)
	if rc.Breaches > r.Sent {
		v.add(p+".breaches", "want at most the %d requests sent, got %d", r.Sent, rc.Breaches)
	}
	prev := math.Inf(-1)
	for i, w := range rc.Windows {
		wp := fmt.Sprintf("%s.windows[%d]", p, i)
		v.nonNegative(wp+".at_s", w.AtS)
		if w.AtS <= prev {
			v.add(wp+".at_s", "want windows in order, got %s after %s", fmtNum(w.AtS), fmtNum(prev))
		}
		prev = w.AtS
		v.count(wp+".requests", w.Requests)
		if w.Failed < 0 || w.Failed > w.Requests {
			v.add(wp+".failed", "want 0 to the window's %d requests, got %d", w.Requests, w.Failed)
		}
		v.nonNegative(wp+".ttft_p95_ms", w.P95MS)
	}
}

// stepLoad checks a step load's settings: rates that can be offered, a
// time for each step after the first, in order.
func (v *checker) stepLoad(p string, l Load) {
	for i, r := range l.Steps {
		v.positive(fmt.Sprintf("%s.steps[%d]", p, i), r)
	}
	if len(l.At) > 0 && len(l.At) != len(l.Steps)-1 {
		v.add(p+".at", "want one time for each of the %d steps after the first, got %d", max(len(l.Steps)-1, 0), len(l.At))
	}
	var prev time.Duration
	for i, at := range l.At {
		if at <= prev {
			v.add(fmt.Sprintf("%s.at[%d]", p, i), "want a time after %d ns, got %d", prev, at)
		}
		prev = at
	}
	if l.RecoveryWindow < 0 {
		v.add(p+".recovery_window", "want a duration >= 0, got %d", l.RecoveryWindow)
	}
}
