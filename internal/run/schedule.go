package run

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Schedule gives the planned send time of request i (0-based) as an offset
// from the start of the repetition; ok is false when there is no request i.
type Schedule interface {
	At(i int) (at time.Duration, ok bool)
}

// Constant sends at a fixed rate: request i at i/Rate seconds.
type Constant struct{ Rate float64 }

var _ Schedule = Constant{}

// At implements Schedule.
func (c Constant) At(i int) (time.Duration, bool) {
	return time.Duration(float64(i) / c.Rate * float64(time.Second)), true
}

// Trace sends each request at its recorded arrival time divided by Speedup.
type Trace struct {
	Arrivals []time.Duration // sorted ascending
	Speedup  float64
}

var _ Schedule = Trace{}

// At implements Schedule.
func (t Trace) At(i int) (time.Duration, bool) {
	if i >= len(t.Arrivals) {
		return 0, false
	}
	return time.Duration(float64(t.Arrivals[i]) / t.Speedup), true
}

// DefaultBlock is the number of arrivals Renewal draws at a time; see Renewal.
const DefaultBlock = 256

// Renewal is an open-loop renewal process: inter-arrival gaps drawn i.i.d.
// from a gamma distribution with shape Burstiness (1 is exponential, so
// Poisson arrivals; below 1 burstier, above 1 smoother; the gaps' coefficient
// of variation is 1/√shape) and mean 1/Rate.
//
// Gaps are drawn in blocks (of 256, or of the request count when a repetition
// sends fewer) and each block is scaled so that it spans exactly block/Rate
// seconds. For exponential gaps that is exactly a Poisson
// process conditioned on its count per block (uniform order statistics), and
// for gamma gaps the shape of the distribution is kept (the CV shrinks by
// less than 0.5%). What it removes is the ±1/√n wander of the realised rate
// between repetitions, and between a baseline and a candidate run with the
// same seed: both offer the load they were configured for.
//
// At is deterministic in (seed, i); it memoises the drawn offsets and is not
// safe for concurrent use.
type Renewal struct {
	rate, shape float64
	rng         *rand.Rand
	offsets     []time.Duration
	scratch     []float64
}

var _ Schedule = (*Renewal)(nil)

// NewRenewal returns the schedule for rate requests/s with gamma shape
// burstiness (1 for Poisson), seeded, drawn in blocks of block arrivals
// (DefaultBlock when block <= 0).
func NewRenewal(rate, burstiness float64, seed uint64, block int) (*Renewal, error) {
	if block <= 0 {
		block = DefaultBlock
	}
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("rate must be > 0, got %v", rate)
	}
	if !(burstiness > 0) || math.IsInf(burstiness, 0) {
		return nil, fmt.Errorf("burstiness must be > 0, got %v", burstiness)
	}
	return &Renewal{
		rate:    rate,
		shape:   burstiness,
		rng:     rand.New(rand.NewPCG(seed, 0x70657266676174)),
		scratch: make([]float64, block),
	}, nil
}

// At implements Schedule.
func (r *Renewal) At(i int) (time.Duration, bool) {
	for len(r.offsets) <= i {
		r.drawBlock()
	}
	return r.offsets[i], true
}

func (r *Renewal) drawBlock() {
	var start float64 // seconds
	if n := len(r.offsets); n > 0 {
		start = float64(r.offsets[n-1]) / float64(time.Second)
	}
	sum := 0.0
	for k := range r.scratch {
		g := gamma(r.rng, r.shape)
		r.scratch[k] = g
		sum += g
	}
	span := float64(len(r.scratch)) / r.rate
	// The first request of the run goes at 0; after that each offset is the
	// previous plus a gap scaled so that every block of gaps spans exactly span.
	t := start
	for k, g := range r.scratch {
		if len(r.offsets) == 0 && k == 0 {
			r.offsets = append(r.offsets, 0)
			continue
		}
		t += g / sum * span
		r.offsets = append(r.offsets, time.Duration(t*float64(time.Second)))
	}
}

// Steps is a step load's schedule: a renewal process (Renewal) at each
// step's rate, the first from 0 and each next from its step time, each
// drawn from a seed of its own. A step's arrivals end where the next step
// begins; the last step's go on. At is deterministic in (seed, i), memoises
// its offsets, and is not safe for concurrent use.
type Steps struct {
	steps   []*Renewal
	from    []time.Duration // when each step begins; from[0] is 0
	step, j int             // the step of the next arrival, and its index in it
	offsets []time.Duration
}

var _ Schedule = (*Steps)(nil)

// NewSteps returns the schedule of rates (requests/s), each after the first
// from its time in at (one fewer than rates, ascending), with gamma shape
// burstiness (1 for Poisson), seeded.
func NewSteps(rates []float64, at []time.Duration, burstiness float64, seed uint64) (*Steps, error) {
	if len(rates) < 2 || len(at) != len(rates)-1 {
		return nil, fmt.Errorf("a step load needs two or more rates and a time for each after the first, got %d rates and %d times", len(rates), len(at))
	}
	s := &Steps{from: append([]time.Duration{0}, at...)}
	for i, r := range rates {
		if i > 0 && s.from[i] <= s.from[i-1] {
			return nil, fmt.Errorf("step %d begins at %s, not after the step before (%s)", i+1, s.from[i], s.from[i-1])
		}
		// A seed of its own for each step, so that step k's arrivals do
		// not depend on how many step k-1 had.
		r, err := NewRenewal(r, burstiness, seed+uint64(i)*0x9e3779b97f4a7c15, DefaultBlock)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		s.steps = append(s.steps, r)
	}
	return s, nil
}

// At implements Schedule.
func (s *Steps) At(i int) (time.Duration, bool) {
	for len(s.offsets) <= i {
		off, _ := s.steps[s.step].At(s.j)
		t := s.from[s.step] + off
		if s.step+1 < len(s.steps) && t >= s.from[s.step+1] {
			s.step, s.j = s.step+1, 0
			continue
		}
		s.j++
		s.offsets = append(s.offsets, t)
	}
	return s.offsets[i], true
}

// gamma draws from Gamma(shape, 1) by Marsaglia and Tsang's method (2000),
// with the usual boost for shape < 1.
func gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gamma(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
