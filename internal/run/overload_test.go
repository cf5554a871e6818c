package run

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

// queueRecords simulates an open-loop repetition against a server of slots
// slots, each serving a request in an exponential time of mean 1/mu seconds
// (its first token after a tenth of it), FIFO: n Poisson arrivals at rate
// lambda, seeded.
func queueRecords(seed uint64, n int, lambda, mu float64, slots int) []result.Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	free := make([]float64, slots) // when each slot is next free, s
	recs := make([]result.Record, n)
	at := 0.0
	for i := range recs {
		if i > 0 {
			at += rng.ExpFloat64() / lambda
		}
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		start := max(at, free[k])
		service := rng.ExpFloat64() / mu
		free[k] = start + service
		ns := func(s float64) int64 { return int64(s * float64(time.Second)) }
		recs[i] = result.Record{ID: fmt.Sprint(i), ScheduledNS: ns(at), SentNS: ns(at),
			FirstTokenNS: ns(start + service/10), EndNS: ns(start + service)}
	}
	return recs
}

// One slot serving 8.7 req/s offered Poisson 12 req/s (the case):
// overloaded at every seed, with the rates in the evidence.
func TestDetectOverloadFiresAboveCapacity(t *testing.T) {
	for seed := range uint64(10) {
		o := DetectOverload(queueRecords(seed, 600, 12, 8.7, 1))
		require.NotNil(t, o)
		assert.True(t, o.Overloaded, "seed %d: %+v", seed, *o)
		assert.InDelta(t, 12, o.OfferedRate, 1.5, "seed %d", seed)
		assert.InDelta(t, 8.7, o.ServedRate, 1, "seed %d", seed)
		assert.Greater(t, o.InFlightLast, 2*o.InFlightFirst, "seed %d", seed)
		assert.Less(t, o.TrendP, 1e-6, "seed %d", seed)
	}
}

// A server that keeps up is never called overloaded: at a low rate, near
// its capacity (utilisation 0.8, whose queue wanders), with many slots,
// and over a repetition short enough that the drain is a large part of it.
func TestDetectOverloadQuietWhenSustainable(t *testing.T) {
	cases := []struct {
		name       string
		n          int
		lambda, mu float64
		slots      int
	}{
		{"low rate", 200, 2, 8.7, 1},
		{"utilisation 0.8", 400, 7, 8.7, 1},
		{"batch of 8", 400, 40, 8, 8},
		{"short repetition", OverloadMinRequests, 10, 2, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for seed := range uint64(40) {
				o := DetectOverload(queueRecords(seed, c.n, c.lambda, c.mu, c.slots))
				require.NotNil(t, o)
				assert.False(t, o.Overloaded, "seed %d: %+v", seed, *o)
			}
		})
	}
}

// TTFT that rises through a repetition while the server keeps up (a
// workload whose prompts grow) is a trend, not overload: the served rate
// is the offered one.
func TestDetectOverloadNeedsBothSigns(t *testing.T) {
	recs := queueRecords(1, 200, 2, 20, 4)
	for i := range recs {
		grow := int64(i) * int64(5*time.Millisecond)
		recs[i].FirstTokenNS += grow
		recs[i].EndNS += grow
	}
	o := DetectOverload(recs)
	require.NotNil(t, o)
	assert.Less(t, o.TrendP, OverloadTrendP, "the trend is there")
	assert.False(t, o.Overloaded, "%+v", *o)
}

// Too few requests, or all sent at one instant, are not judged; eval items
// and never-sent session turns are left out.
func TestDetectOverloadTooFew(t *testing.T) {
	assert.Nil(t, DetectOverload(queueRecords(1, OverloadMinRequests-1, 12, 8.7, 1)))
	recs := queueRecords(1, 100, 12, 8.7, 1)
	for i := range recs {
		recs[i].ScheduledNS = 0
	}
	assert.Nil(t, DetectOverload(recs))
	recs = queueRecords(1, 40, 12, 8.7, 1)
	for i := range 15 {
		recs[i].Eval = "suite"
	}
	assert.Nil(t, DetectOverload(recs))
}

func TestMannKendallP(t *testing.T) {
	up := make([]float64, 50)
	down := make([]float64, 50)
	flat := make([]float64, 50)
	for i := range up {
		up[i], down[i], flat[i] = float64(i), float64(-i), 1
	}
	assert.Less(t, mannKendallP(up), 1e-10)
	assert.Equal(t, 1.0, mannKendallP(down))
	assert.Equal(t, 1.0, mannKendallP(flat))
	assert.Equal(t, 1.0, mannKendallP([]float64{1, 2}))
	// The exact null distribution of n = 4: S = 6 has probability 1/24;
	// the normal approximation with the continuity correction is near it.
	p := mannKendallP([]float64{1, 2, 3, 4})
	assert.InDelta(t, 1.0/24, p, 0.01)
	// A long series is thinned, not compared pair by pair.
	long := make([]float64, 100_000)
	for i := range long {
		long[i] = math.Sin(float64(i))
	}
	assert.Greater(t, mannKendallP(long), 0.001)
}
