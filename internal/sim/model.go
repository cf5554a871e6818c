package sim

import (
	"math/rand/v2"
	"time"
)

// stepModel is the timing model of one engine step: a pure function of the
// knobs, the engine time at which the step starts, the batch and the
// prefill it schedules, and one seeded random source. It owns the step
// loop's random source, which also decides injected errors, so that the same
// seed and the same arrivals give the same behaviour. Drift draws nothing
// from it: it scales step time by a function of engine time and the drift
// epoch's offset from Start.
type stepModel struct {
	cfg       Config
	rng       *rand.Rand
	nextStall time.Duration // engine time (since Start) at which the next stall is due
	// sinceEpoch is the wall-clock time from the drift epoch to Start
	// (negative for an epoch after it): engine time at is at+sinceEpoch
	// after the epoch.
	sinceEpoch time.Duration
	// firstStep is the engine time of the first step, where the warm-up
	// transient begins; stepped says whether there has been one.
	firstStep time.Duration
	stepped   bool
}

// newStepModel returns the model of an engine started at start (the wall
// clock's reading there places Start relative to cfg.DriftEpoch).
func newStepModel(cfg Config, start time.Time) *stepModel {
	m := &stepModel{
		cfg: cfg,
		rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x9e3779b97f4a7c15)),
	}
	if !cfg.DriftEpoch.IsZero() {
		// An epoch parsed from a flag has no monotonic reading, so this is
		// wall-clock time (one from time.Now in the same process keeps
		// its monotonic reading and gives the same, steadier); engine time
		// after Start is monotonic from there on.
		m.sinceEpoch = start.Sub(cfg.DriftEpoch)
	}
	if cfg.StallEvery > 0 && cfg.Stall > 0 {
		m.nextStall = cfg.StallEvery
	}
	return m
}

// warmUpFactor is the step-time multiplier at engine time at (since Start):
// the transient runs for WarmUp from the first step.
func (m *stepModel) warmUpFactor(at time.Duration) float64 {
	if m.cfg.WarmUp <= 0 {
		return 1
	}
	since := at - m.firstStep
	if since < 0 {
		since = 0
	}
	if since >= m.cfg.WarmUp {
		return 1
	}
	frac := float64(since) / float64(m.cfg.WarmUp)
	return m.cfg.WarmUpFactor - (m.cfg.WarmUpFactor-1)*frac
}

// driftFactor is the drift multiplier at engine time at (since Start). It
// reads only what newStepModel set, so any goroutine may call it.
func (m *stepModel) driftFactor(at time.Duration) float64 {
	if m.cfg.Drift <= 0 {
		return 1
	}
	return driftFactor(m.cfg.Drift, at+m.sinceEpoch)
}

// step returns the duration of a step that starts at engine time at with
// running sequences and prefill prompt tokens scheduled.
func (m *stepModel) step(at time.Duration, running, prefill int) time.Duration {
	c := m.cfg
	if !m.stepped {
		m.firstStep, m.stepped = at, true
	}
	base := float64(c.StepBase + time.Duration(running)*c.PerSeq + time.Duration(prefill)*c.PerPrefillToken)
	f := c.Slowdown * m.warmUpFactor(at) * m.driftFactor(at)
	if c.Jitter > 0 {
		j := 1 + c.Jitter*m.rng.NormFloat64()
		// Clamp so that a step is never negative nor absurdly long.
		j = min(max(j, 0.05), 1+6*c.Jitter)
		f *= j
	}
	d := time.Duration(base * f)
	if m.nextStall > 0 && at >= m.nextStall {
		d += c.Stall
		for m.nextStall <= at {
			m.nextStall += c.StallEvery
		}
	}
	return d
}

// failure is how an injected error shows.
type failure int

const (
	failNone      failure = iota
	failHTTP              // HTTP 500 before any stream
	failMidStream         // an error event after failAfter tokens, no [DONE]
)

// fate draws whether a request of target output tokens fails, and after how
// many tokens a mid-stream failure happens (1..target).
func (m *stepModel) fate(target int) (failure, int) {
	if m.cfg.ErrorRate <= 0 {
		return failNone, 0
	}
	if m.rng.Float64() >= m.cfg.ErrorRate {
		return failNone, 0
	}
	if m.rng.IntN(2) == 0 {
		return failHTTP, 0
	}
	after := 1
	if target > 1 {
		after = 1 + m.rng.IntN(target-1) // leave at least one token unsent
	}
	return failMidStream, after
}
