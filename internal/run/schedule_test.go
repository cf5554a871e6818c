package run

import (
	"math"
	"testing"
	"time"
)

// gapStats returns the mean (seconds) and coefficient of variation of the
// first n inter-arrival gaps of s.
func gapStats(t *testing.T, s Schedule, n int) (mean, cv float64) {
	t.Helper()
	var sum, sumSq float64
	prev, _ := s.At(0)
	for i := 1; i <= n; i++ {
		at, ok := s.At(i)
		if !ok {
			t.Fatalf("At(%d) not ok", i)
		}
		if at < prev {
			t.Fatalf("At(%d) = %v before At(%d) = %v", i, at, i-1, prev)
		}
		g := (at - prev).Seconds()
		sum += g
		sumSq += g * g
		prev = at
	}
	mean = sum / float64(n)
	sd := math.Sqrt(sumSq/float64(n) - mean*mean)
	return mean, sd / mean
}

func TestRenewalDistribution(t *testing.T) {
	tests := []struct {
		name       string
		rate       float64
		burstiness float64
		wantCV     float64
	}{
		{"poisson", 50, 1, 1},
		{"bursty gamma", 20, 0.25, 2},
		{"smooth gamma", 100, 4, 0.5},
	}
	const n = 20000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewRenewal(tt.rate, tt.burstiness, 42, 0)
			if err != nil {
				t.Fatal(err)
			}
			mean, cv := gapStats(t, s, n)
			if want := 1 / tt.rate; math.Abs(mean-want)/want > 0.01 {
				t.Errorf("mean gap = %.6fs, want %.6fs ±1%%", mean, want)
			}
			if math.Abs(cv-tt.wantCV)/tt.wantCV > 0.05 {
				t.Errorf("gap CV = %.3f, want %.3f ±5%%", cv, tt.wantCV)
			}
		})
	}
}

// The realised rate of a Renewal schedule is the configured rate, for every
// seed, to within the position of the first and last requests of a block.
func TestRenewalRealisedRate(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		s, _ := NewRenewal(40, 1, seed, 0)
		const n = 2000
		last, _ := s.At(n - 1)
		got := float64(n-1) / last.Seconds()
		if math.Abs(got-40)/40 > 0.01 {
			t.Errorf("seed %d: realised rate over %d requests = %.3f/s, want 40 ±1%%", seed, n, got)
		}
	}
}

func TestRenewalDeterministic(t *testing.T) {
	a, _ := NewRenewal(10, 0.5, 7, 0)
	b, _ := NewRenewal(10, 0.5, 7, 0)
	c, _ := NewRenewal(10, 0.5, 8, 0)
	differs := false
	// Ask b in reverse order: memoisation must not change the values.
	for i := 999; i >= 0; i-- {
		bi, _ := b.At(i)
		ai, _ := a.At(i)
		if ai != bi {
			t.Fatalf("At(%d): %v and %v for the same seed", i, ai, bi)
		}
		if ci, _ := c.At(i); ci != ai {
			differs = true
		}
	}
	if !differs {
		t.Errorf("seeds 7 and 8 gave the same schedule")
	}
	if at, _ := a.At(0); at != 0 {
		t.Errorf("At(0) = %v, want 0", at)
	}
}

func TestNewRenewalRejectsBadArgs(t *testing.T) {
	for _, tt := range []struct{ rate, shape float64 }{{0, 1}, {-1, 1}, {1, 0}, {math.NaN(), 1}, {1, math.Inf(1)}} {
		if _, err := NewRenewal(tt.rate, tt.shape, 1, 0); err == nil {
			t.Errorf("NewRenewal(%v, %v, 0) = nil error, want one", tt.rate, tt.shape)
		}
	}
}

func TestConstantAndTrace(t *testing.T) {
	c := Constant{Rate: 4}
	for i, want := range []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 2500 * time.Millisecond} {
		idx := []int{0, 1, 2, 10}[i]
		if got, ok := c.At(idx); !ok || got != want {
			t.Errorf("Constant{4}.At(%d) = %v, %v, want %v, true", idx, got, ok, want)
		}
	}
	tr := Trace{Arrivals: []time.Duration{0, time.Second, 3 * time.Second}, Speedup: 2}
	if got, _ := tr.At(2); got != 1500*time.Millisecond {
		t.Errorf("Trace.At(2) with speedup 2 = %v, want 1.5s", got)
	}
	if _, ok := tr.At(3); ok {
		t.Errorf("Trace.At(3) ok past the end of the trace")
	}
}

// A repetition shorter than a block draws one block of its own size, so it
// spans its n/rate: 32 requests at 6/s end by 32/6 s (the last gap of the
// block is the one before the next block), not wherever 256 draws would put them.
func TestRenewalShortBlock(t *testing.T) {
	span := time.Second * 32 / 6
	for seed := uint64(1); seed <= 10; seed++ {
		s, _ := NewRenewal(6, 1, seed, 32)
		last, _ := s.At(31)
		if last > span || last < span*3/4 {
			t.Errorf("seed %d: 32 requests at 6/s: last at %v, want within [%v, %v]", seed, last, span*3/4, span)
		}
	}
}

// A step load offers each step's rate over its span: the arrivals of each
// step, counted where it holds, are its rate times its length (within the
// block rescaling's rounding), and the same seed draws the same arrivals.
func TestStepsOfferEachRate(t *testing.T) {
	s, err := NewSteps([]float64{4, 16, 2}, []time.Duration{60 * time.Second, 90 * time.Second}, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, 3)
	var prev time.Duration
	for i := 0; ; i++ {
		at, ok := s.At(i)
		if !ok {
			t.Fatalf("At(%d) has no arrival: the last step goes on", i)
		}
		if at < prev {
			t.Fatalf("At(%d) = %s, before At(%d) = %s", i, at, i-1, prev)
		}
		prev = at
		if at >= 150*time.Second {
			break
		}
		switch {
		case at < 60*time.Second:
			counts[0]++
		case at < 90*time.Second:
			counts[1]++
		default:
			counts[2]++
		}
	}
	// 240, 480 and 120 arrivals; a block of 256 spans block/rate exactly,
	// so a step's count is off by at most the part of a block it cuts.
	for i, want := range []float64{240, 480, 120} {
		if got := float64(counts[i]); got < 0.9*want || got > 1.1*want {
			t.Errorf("step %d: %v arrivals, want about %v", i+1, got, want)
		}
	}
	again, err := NewSteps([]float64{4, 16, 2}, []time.Duration{60 * time.Second, 90 * time.Second}, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 100, 500, 800} {
		a, _ := s.At(i)
		b, _ := again.At(i)
		if a != b {
			t.Errorf("At(%d) = %s and %s with one seed", i, a, b)
		}
	}
	for _, bad := range []struct {
		rates []float64
		at    []time.Duration
	}{
		{[]float64{4}, nil},
		{[]float64{4, 16}, nil},
		{[]float64{4, 16, 8}, []time.Duration{60 * time.Second, 30 * time.Second}},
		{[]float64{4, 0}, []time.Duration{time.Second}},
	} {
		if _, err := NewSteps(bad.rates, bad.at, 1, 1); err == nil {
			t.Errorf("NewSteps(%v, %v) = nil error, want one", bad.rates, bad.at)
		}
	}
}
