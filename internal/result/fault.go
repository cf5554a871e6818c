package result

import "time"

// A scenario with a fault (config fault: {kill: replica, at: 30s})
// disturbs each repetition on purpose. Beyond its recovery (Recovery,
// counted from the fault as a step load's is from its step), a repetition
// records what the fault did: when it was made, when the stack was whole
// again, the requests that failed from then on, and the throughput the
// replicas left served meanwhile against the throughput before.

// Fault is what a repetition's fault did.
type Fault struct {
	// Kill is what was killed (replica), Replica which one, counted from
	// 1 in the order of target.base_urls, of Replicas.
	Kill     string `json:"kill"`
	Replica  int    `json:"replica"`
	Replicas int    `json:"replicas"`
	// AtS is when the fault was planned, KilledS when it was made, in
	// seconds from the start of the repetition.
	AtS     float64 `json:"at_s"`
	KilledS float64 `json:"killed_s"`
	// BackS is when the killed replica answered its health check again,
	// in seconds from the start of the repetition; nil when it was not
	// back before the repetition's last request ended (or was not
	// restarted: Restarted false).
	BackS     *float64 `json:"back_s,omitempty"`
	Restarted bool     `json:"restarted"`
	// Errors are the requests that ended in failure from the fault on:
	// those the killed replica was serving, and those sent to it before
	// the router left it out.
	Errors int `json:"errors"`
	// BeforeRPS is the goodput of the requests sent before the fault:
	// those answered with their first token within slo.ttft (or cut by
	// the fault itself), per second of planned send times; DuringRPS the same of those sent from the
	// fault until the replica was back (or the last was sent). Under an
	// open loop, which offers the same rate throughout, their ratio is the
	// share of the load the stack kept serving well while a replica was
	// down (CapacityLeft). Each is nil when no request was sent in its
	// span (a replica back before the next request): not a goodput of 0.
	BeforeRPS *float64 `json:"before_rps,omitempty"`
	DuringRPS *float64 `json:"during_rps,omitempty"`
}

// FaultSample is one request of a fault scenario, for MeasureFault: its
// planned send time and its end, in nanoseconds from the start of the
// repetition; OK when it succeeded, Good when besides its first token came
// within slo.ttft.
type FaultSample struct {
	AtNS, EndNS int64
	OK, Good    bool
}

// MeasureFault fills f's Errors, BeforeRPS and DuringRPS from the
// repetition's requests, given f's KilledS and BackS.
func MeasureFault(f Fault, samples []FaultSample) Fault {
	kill := int64(f.KilledS * float64(time.Second))
	var lastSent int64
	for _, s := range samples {
		lastSent = max(lastSent, s.AtNS)
	}
	until := lastSent
	if f.BackS != nil {
		until = min(lastSent, int64(*f.BackS*float64(time.Second)))
	}
	var before, during, sentBefore, sentDuring int
	f.Errors = 0
	for _, s := range samples {
		if s.EndNS >= kill && !s.OK {
			f.Errors++
		}
		switch {
		case s.AtNS < kill:
			sentBefore++
		case s.AtNS < until:
			sentDuring++
		}
		switch {
		case s.AtNS < kill && (s.Good || !s.OK && s.EndNS >= kill):
			// A request the fault cut was served well until then: the
			// stack before the fault is not judged by it.
			before++
		case s.AtNS >= kill && s.AtNS < until && s.Good:
			during++
		}
	}
	f.BeforeRPS, f.DuringRPS = perSecond(before, sentBefore, kill), perSecond(during, sentDuring, until-kill)
	return f
}

// perSecond is n over ns nanoseconds, per second; nil when no request was
// sent in the span (sent), or it has no length.
func perSecond(n, sent int, ns int64) *float64 {
	if sent == 0 || ns <= 0 {
		return nil
	}
	return new(float64(n) / time.Duration(ns).Seconds())
}

// CapacityLeft is DuringRPS over BeforeRPS: the share of its goodput the
// stack kept while the replica was down; ok false when either was not
// measured, or nothing was good before.
func (f *Fault) CapacityLeft() (share float64, ok bool) {
	if f.BeforeRPS == nil || f.DuringRPS == nil || *f.BeforeRPS <= 0 {
		return 0, false
	}
	return *f.DuringRPS / *f.BeforeRPS, true
}

// fault checks a repetition's fault: a replica among the replicas, times
// in order, errors no more than the requests that failed.
func (v *checker) fault(p string, f *Fault, r *Repetition) {
	if f.Kill != "replica" {
		v.add(p+".kill", "want replica, got %q", f.Kill)
	}
	if f.Replicas < 2 || f.Replica < 1 || f.Replica > f.Replicas {
		v.add(p+".replica", "want a replica from 1 to replicas (at least 2), got %d of %d", f.Replica, f.Replicas)
	}
	v.nonNegative(p+".at_s", f.AtS)
	v.nonNegative(p+".killed_s", f.KilledS)
	if f.BackS != nil {
		v.finite(p+".back_s", *f.BackS)
		if *f.BackS < f.KilledS {
			v.add(p+".back_s", "want a time after the kill (%s s), got %s", fmtNum(f.KilledS), fmtNum(*f.BackS))
		}
	}
	v.count(p+".errors", f.Errors)
	if f.Errors > r.Failed {
		v.add(p+".errors", "want at most the %d requests that failed, got %d", r.Failed, f.Errors)
	}
	for _, r := range []struct {
		name string
		x    *float64
	}{{"before_rps", f.BeforeRPS}, {"during_rps", f.DuringRPS}} {
		if r.x != nil {
			v.nonNegative(p+"."+r.name, *r.x)
		}
	}
}
