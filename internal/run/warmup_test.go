package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/workload"
)

// win is a window of a hand-written series.
func win(requests int, tput, ttft float64) result.WarmupWindow {
	return result.WarmupWindow{Requests: requests, OutputThroughput: tput, TTFT: ttft}
}

// judgedOf is ws as the windows rule sees them, each alone, with se the
// standard errors of their median TTFT (nil: none).
func judgedOf(ws []result.WarmupWindow, se []float64) []judged {
	out := make([]judged, len(ws))
	for i, w := range ws {
		out[i] = judged{requests: w.Requests, tput: w.OutputThroughput, ttft: w.TTFT, waiting: w.Waiting, firstRawWindow: i,
			start: float64(i), end: float64(i + 1)}
		if i < len(se) {
			out[i].ttftSE = se[i]
		}
	}
	return out
}

func TestSteadyWindows(t *testing.T) {
	tests := []struct {
		name     string
		ws       []result.WarmupWindow
		se       []float64 // standard errors of the windows' median TTFT; nil: none
		n        int
		tol      float64
		steady   bool
		wantFrom int
	}{
		{
			name: "steady after a transient",
			ws:   []result.WarmupWindow{win(3, 50, 300), win(8, 90, 120), win(10, 100, 100), win(10, 104, 98), win(9, 97, 103)},
			n:    3, tol: 0.1, steady: true, wantFrom: 2,
		},
		{
			name: "one window out of tolerance in throughput",
			ws:   []result.WarmupWindow{win(10, 100, 100), win(10, 100, 100), win(10, 125, 100)},
			n:    3, tol: 0.1, steady: false,
		},
		{
			name: "one window out of tolerance in TTFT",
			ws:   []result.WarmupWindow{win(10, 100, 100), win(10, 100, 130), win(10, 100, 100)},
			n:    3, tol: 0.1, steady: false,
		},
		{
			name: "the transient is still in the last windows",
			ws:   []result.WarmupWindow{win(3, 50, 300), win(8, 90, 120), win(10, 100, 100), win(10, 100, 100)},
			n:    3, tol: 0.1, steady: false,
		},
		{
			name: "an empty window is never steady",
			ws:   []result.WarmupWindow{win(10, 100, 100), win(0, 0, 0), win(10, 100, 100)},
			n:    3, tol: 1, steady: false,
		},
		{
			name: "all windows empty",
			ws:   []result.WarmupWindow{win(0, 0, 0), win(0, 0, 0), win(0, 0, 0)},
			n:    3, tol: 0.1, steady: false,
		},
		{
			name: "fewer windows than needed",
			ws:   []result.WarmupWindow{win(10, 100, 100), win(10, 100, 100)},
			n:    3, tol: 0.1, steady: false,
		},
		{
			name: "exactly at the tolerance",
			ws:   []result.WarmupWindow{win(10, 90, 100), win(10, 110, 100), win(10, 100, 100)},
			n:    3, tol: 0.1, steady: true, wantFrom: 0,
		},
		{
			// The windows of a run that took the simulator's 20 s transient
			// for steady, 8 s before its end: each within 10% of the mean,
			// throughput climbing through the band; TTFT within twice the
			// standard error of its medians (about 8 ms for ~24 requests of
			// mixed prompts).
			name: "a climb through the band is a trend",
			ws:   []result.WarmupWindow{win(26, 299, 377.6), win(24, 366, 97.1), win(22, 390, 91.2), win(26, 418, 80.7)},
			se:   []float64{40, 8, 8, 8},
			n:    3, tol: 0.1, steady: false,
		},
		{
			// Medians of ten requests of very different prompts: 40 ms from
			// the mean of 100 is 40%, but within twice the window's standard
			// error of 25 ms.
			name: "TTFT noisy within its standard error",
			ws:   []result.WarmupWindow{win(10, 50, 300), win(10, 1000, 60), win(10, 1000, 140), win(10, 1000, 100)},
			se:   []float64{5, 25, 25, 25},
			n:    3, tol: 0.1, steady: true, wantFrom: 1,
		},
		{
			name: "TTFT beyond twice its standard error",
			ws:   []result.WarmupWindow{win(10, 1000, 60), win(10, 1000, 140), win(10, 1000, 100)},
			se:   []float64{15, 15, 15},
			n:    3, tol: 0.1, steady: false,
		},
		{
			name: "a 3x TTFT transient is far outside a noisy window's band",
			ws:   []result.WarmupWindow{win(10, 1000, 300), win(10, 1000, 100), win(10, 1000, 100)},
			se:   []float64{30, 20, 20},
			n:    3, tol: 0.1, steady: false,
		},
		{
			name: "the standard error widens TTFT's band only, never throughput's",
			ws:   []result.WarmupWindow{win(10, 700, 100), win(10, 1000, 100), win(10, 1000, 100)},
			se:   []float64{1000, 1000, 1000},
			n:    3, tol: 0.1, steady: false,
		},
		{
			name: "a zero standard error (too few requests) leaves tol alone",
			ws:   []result.WarmupWindow{win(3, 1000, 60), win(3, 1000, 140), win(3, 1000, 100)},
			se:   []float64{0, 0, 0},
			n:    3, tol: 0.1, steady: false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := steadyWindows(judgedOf(tc.ws, tc.se), tc.n, tc.tol)
			assert.Equal(t, tc.steady, v.steady, v.why)
			if tc.steady {
				assert.Equal(t, tc.wantFrom, v.from)
				assert.Empty(t, v.why)
			} else {
				assert.NotEmpty(t, v.why, "an unsteady verdict says why")
			}
		})
	}
}

// A verdict that is not steady names the rule that refused the series and
// its figures; windows are named by their span (here window i is i to i+1 s).
func TestSteadyWindowsWhy(t *testing.T) {
	queue := func(ws []result.WarmupWindow) []result.WarmupWindow {
		for i := range ws {
			ws[i].Waiting = new(float64(i + 1))
		}
		return ws
	}
	tests := []struct {
		name string
		ws   []result.WarmupWindow
		se   []float64
		want string
	}{
		{"throughput off the band",
			[]result.WarmupWindow{win(10, 100, 100), win(10, 100, 100), win(10, 125, 100)}, nil,
			"output throughput 125.0 tok/s in 2–3s is 15.4% above the mean of the last 3 windows (108.3 tok/s), beyond the band ±10.0% (tolerance 10%)"},
		{"TTFT off a band its noise widens",
			[]result.WarmupWindow{win(10, 1000, 60), win(10, 1000, 140), win(10, 1000, 100)}, []float64{15, 15, 15},
			"median TTFT 60.0 ms in 0–1s is 40.0% below the mean of the last 3 windows (100.0 ms), beyond the band ±30.0% (tolerance 10%, sampling noise ±30.0%)"},
		{"a climb through the band",
			[]result.WarmupWindow{win(24, 366, 90), win(22, 390, 90), win(26, 418, 90)}, nil,
			"output throughput rose from 366.0 tok/s in 0–1s to 418.0 tok/s in 2–3s, by 13.3% of the mean, beyond the band ±10.0% (tolerance 10%): a trend"},
		{"TTFT falling all the way",
			[]result.WarmupWindow{win(10, 100, 104), win(10, 100, 103), win(10, 100, 102), win(10, 100, 101), win(10, 100, 100)}, nil,
			"median TTFT fell in each of the last 5 windows, from 104.0 ms in 0–1s to 100.0 ms in 4–5s"},
		{"a growing queue",
			queue([]result.WarmupWindow{win(10, 100, 100), win(10, 100, 101), win(10, 100, 100), win(10, 100, 101), win(10, 100, 100)}), nil,
			"the engine's waiting queue grew in each of the last 5 windows, from 1 at 1s to 5 at 5s"},
		{"a window without a first token",
			[]result.WarmupWindow{win(10, 100, 100), win(0, 0, 0), win(10, 100, 100)}, nil,
			"no request had its first token in 1–2s"},
		{"too few windows",
			[]result.WarmupWindow{win(10, 100, 100), win(10, 100, 100)}, nil,
			"3 windows to judge, 2 so far"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := steadyWindows(judgedOf(tc.ws, tc.se), 3, 0.1)
			assert.False(t, v.steady)
			assert.Equal(t, tc.want, v.why)
		})
	}
	t.Run("fewer than 5 requests a window, even merged", func(t *testing.T) {
		ws := make([]result.WarmupWindow, 7)
		samples := make([]windowSample, 7)
		for i := range ws {
			ws[i] = result.WarmupWindow{End: result.Seconds(i + 1), Requests: 1, OutputThroughput: 10, TTFT: 50}
			samples[i] = windowSample{ttfts: []float64{50}}
		}
		v := judgeWindows(ws, samples, 3, 0.1, time.Second, tputNoise{})
		assert.False(t, v.steady)
		assert.Equal(t, "fewer than 5 requests a window in some of the last 3 windows, even merged 2 at a time", v.why)
		v = judgeWindows(ws[:5], samples[:5], 3, 0.1, time.Second, tputNoise{})
		assert.Equal(t, "fewer than 5 requests a window in some of the last 3 windows", v.why, "no merge fits in 5 windows")
	})
	t.Run("steady on merged windows says so", func(t *testing.T) {
		// 8, 8, 4, 8, 8, 0 requests a window (a slow engine, four users
		// mid-request at the last): merged 2 at a time, 16, 12 and 8.
		counts := []int{8, 8, 4, 8, 8, 0}
		ws := make([]result.WarmupWindow, len(counts))
		samples := make([]windowSample, len(counts))
		for i, c := range counts {
			ws[i] = result.WarmupWindow{End: result.Seconds(i + 1), Requests: c, OutputThroughput: 40, TTFT: 1500}
			samples[i] = windowSample{ttfts: slices.Repeat([]float64{1500}, c)}
		}
		v := judgeWindows(ws, samples, 3, 0.1, time.Second, tputNoise{})
		require.True(t, v.steady, v.why)
		assert.Equal(t, "judged 2 windows merged at a time", v.why)
		assert.Equal(t, 0, v.from)
	})
}

// mixedTTFTs draws n TTFTs (ms) of a heterogeneous workload against a steady
// server, scaled by factor: mostly short prompts, some medium, a few long
// documents whose prefill takes several times longer.
func mixedTTFTs(rng *rand.Rand, n int, factor float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		var x float64
		switch u := rng.Float64(); {
		case u < 0.55:
			x = 25 + 4*rng.NormFloat64()
		case u < 0.85:
			x = 45 + 8*rng.NormFloat64()
		default:
			x = 130 + 25*rng.NormFloat64()
		}
		out[i] = factor * max(x, 5)
	}
	return out
}

// mixedWindows makes n windows of requests TTFTs each from mixedTTFTs, the
// first scaled by first, with a steady throughput, and their standard errors.
func mixedWindows(rng *rand.Rand, n, requests int, first float64) ([]result.WarmupWindow, []float64) {
	ws := make([]result.WarmupWindow, n)
	se := make([]float64, n)
	for i := range ws {
		f := 1.0
		if i == 0 {
			f = first
		}
		xs := mixedTTFTs(rng, requests, f)
		ws[i] = win(requests, 1000*(1+0.02*rng.NormFloat64()), median(xs))
		se[i] = medianSE(xs)
	}
	return ws, se
}

// With ten requests a window from a workload of short and long prompts, the
// median TTFT of a steady server moves by far more than 10% from window to
// window. The plain rule sees three such windows agree about one time in
// five; the noise-aware one about three times in four (the IQR of ten
// samples is itself a rough estimate, and a window whose se comes out small is
// judged strictly); and it still refuses a 3x transient in one window nearly
// always. (A 2x one it passes about one time in five when throughput does not
// move with it: with ten samples this spread, a 2x median is only some 2-3 se
// off. A real server transient lowers throughput too, which keeps its 10%.)
func TestSteadyWindowsSamplingNoise(t *testing.T) {
	const trials = 400
	count := func(first float64, useSE bool) int {
		rng := rand.New(rand.NewPCG(11, uint64(first*10)))
		steady := 0
		for range trials {
			ws, se := mixedWindows(rng, 3, 10, first)
			if !useSE {
				se = nil
			}
			if steadyWindows(judgedOf(ws, se), 3, 0.1).steady {
				steady++
			}
		}
		return steady
	}
	plain, aware := count(1, false), count(1, true)
	t.Logf("stationary: plain rule steady %d/%d, noise-aware %d/%d", plain, trials, aware, trials)
	assert.Less(t, plain, trials*2/5, "the plain rule waits on noise")
	assert.GreaterOrEqual(t, aware, trials*13/20, "the noise-aware rule mostly sees a steady server as steady")
	t.Logf("2x transient in the first window: noise-aware steady %d/%d", count(2, true), trials)
	n := count(3, true)
	t.Logf("3x transient in the first window: noise-aware steady %d/%d", n, trials)
	assert.LessOrEqual(t, n, trials/25, "a 3x transient is refused")
}

func TestMedianSE(t *testing.T) {
	xs := []float64{9, 1, 8, 2, 7, 3, 6, 4, 5}
	// Type-7 quartiles of 1..9 are 3 and 7.
	assert.InDelta(t, 1.2533*(4/1.349)/3, medianSE(xs), 1e-12)
	assert.Zero(t, medianSE([]float64{1, 50, 100}), "too few samples for an estimate")
	assert.Zero(t, medianSE([]float64{20, 20, 20, 20, 20}), "no spread")
	// One very slow request does not widen it: the IQR ignores it.
	a := []float64{20, 22, 24, 26, 28, 30, 32, 34}
	b := []float64{20, 22, 24, 26, 28, 30, 32, 3400}
	assert.InDelta(t, medianSE(a), medianSE(b), 1e-12)
}

func TestQuantile(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	assert.Equal(t, 1.0, quantile(xs, 0))
	assert.Equal(t, 4.0, quantile(xs, 1))
	assert.InDelta(t, 1.75, quantile(xs, 0.25), 1e-12)
	assert.InDelta(t, 3.25, quantile(xs, 0.75), 1e-12)
	assert.Equal(t, 7.0, quantile([]float64{7}, 0.5))
}

func TestBatchMeans(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 10, 10, 10, 10, 10, 7, 7}
	assert.Equal(t, []float64{3, 10}, batchMeans(xs, 5), "the incomplete trailing batch is dropped")
	assert.Empty(t, batchMeans(xs[:4], 5))
}

// noisy returns n values around level with relative noise sd, seeded.
func noisy(n int, level, sd float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = level * (1 + sd*rng.NormFloat64())
	}
	return out
}

func TestMSERStat(t *testing.T) {
	z := []float64{1, 2, 3, 4}
	assert.InDelta(t, 5.0/16, mserStat(z, 0), 1e-12, "squared deviations 2.25+0.25+0.25+2.25 over 4²")
	assert.InDelta(t, 2.0/9, mserStat(z, 1), 1e-12, "1+0+1 over 3²")
	assert.InDelta(t, 0.5/4, mserStat(z, 2), 1e-12, "0.25+0.25 over 2²")
}

func TestMSERTruncation(t *testing.T) {
	t.Run("decaying transient then noise", func(t *testing.T) {
		// Batches 0-3 decay from 4x towards the level, the rest is noise.
		z := append([]float64{400, 250, 160, 120}, noisy(12, 100, 0.02, 7)...)
		d, steady := mserTruncation(z)
		assert.True(t, steady)
		assert.GreaterOrEqual(t, d, 3, "the truncation point is after the transient")
		assert.Less(t, 2*d, len(z), "and in the first half")
	})
	t.Run("pure noise", func(t *testing.T) {
		d, steady := mserTruncation(noisy(8, 100, 0.05, 3))
		assert.True(t, steady)
		assert.LessOrEqual(t, d, 1, "a stationary series needs little or no truncation")
		d, steady = mserTruncation([]float64{5, 5, 5, 5})
		assert.True(t, steady)
		assert.Zero(t, d, "a constant series needs no truncation")
	})
	t.Run("pure noise is steady nearly always", func(t *testing.T) {
		// Searched over d = 0..k-2 (k = 16), MSER truncates about 4 stationary
		// series in 10 in their second half; searched over the first half, 1
		// in 25.
		steady := 0
		for seed := range uint64(200) {
			if _, ok := mserTruncation(noisy(16, 100, 0.05, seed)); ok {
				steady++
			}
		}
		assert.GreaterOrEqual(t, steady, 180, "of 200 noise series")
	})
	t.Run("still drifting", func(t *testing.T) {
		for _, k := range []int{4, 8, 16} {
			z := make([]float64, k)
			for i := range z {
				z[i] = 100 + 10*float64(i)
			}
			d, steady := mserTruncation(z)
			assert.False(t, steady, "k=%d", k)
			assert.Equal(t, min(k/2, k-2), d, "k=%d: MSER still falls at the edge of the first half", k)
		}
	})
	t.Run("decaying at the minimum length", func(t *testing.T) {
		// Four batches, still decaying: over d = 0..k-2 every point is in the
		// first half, so the rule must look at the edge of the search.
		_, steady := mserTruncation([]float64{400, 250, 160, 120})
		assert.False(t, steady)
	})
	t.Run("too short", func(t *testing.T) {
		for _, z := range [][]float64{nil, {1}, {1, 2}} {
			_, steady := mserTruncation(z)
			assert.False(t, steady, "%v", z)
		}
	})
}

// series makes a window series from TTFT and throughput values (same length),
// each window with 10 requests.
func series(ttft, tput []float64) []result.WarmupWindow {
	ws := make([]result.WarmupWindow, len(ttft))
	for i := range ws {
		ws[i] = win(10, tput[i], ttft[i])
	}
	return ws
}

func TestSteadyMSER5(t *testing.T) {
	// 10 windows of a decaying transient, then 30 of noise: 8 batches.
	transient := func(n int, from, to float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = to + (from-to)*math.Exp(-float64(i)/2)
		}
		return out
	}
	ttft := append(transient(10, 300, 100), noisy(30, 100, 0.03, 1)...)
	tput := append(transient(10, 400, 1000), noisy(30, 1000, 0.03, 2)...)

	t.Run("transient then steady", func(t *testing.T) {
		v := steadyMSER5(series(ttft, tput))
		require.True(t, v.steady, v.why)
		assert.GreaterOrEqual(t, v.from, 5, "the truncation point is past the first batch of the transient")
		assert.LessOrEqual(t, v.from, 20)
		assert.Zero(t, v.from%5, "a whole number of batches")
	})
	t.Run("fewer windows than MSER-5 can judge", func(t *testing.T) {
		n := config.MSER5MinWindows - 1
		v := steadyMSER5(series(noisy(n, 100, 0.01, 3), noisy(n, 1000, 0.01, 4)))
		assert.False(t, v.steady)
		assert.Equal(t, "MSER-5 judges 20 windows or more, 19 so far", v.why)
	})
	t.Run("still in the transient", func(t *testing.T) {
		// 40 windows of which the first 35 decay: the truncation point is late.
		slow := func(from, to float64) []float64 {
			out := make([]float64, 40)
			for i := range out {
				out[i] = to + (from-to)*max(0, 1-float64(i)/35)
			}
			return out
		}
		v := steadyMSER5(series(slow(300, 100), slow(400, 1000)))
		assert.False(t, v.steady)
		assert.NotEmpty(t, v.why)
	})
	t.Run("still decaying at the minimum length", func(t *testing.T) {
		// At 20 windows (4 batches) every searchable truncation point is in
		// the first half: the rule must still tell a decay from a steady state.
		decay := func(from, to float64) []float64 {
			out := make([]float64, config.MSER5MinWindows)
			for i := range out {
				out[i] = to + (from-to)*(1-float64(i)/float64(len(out)))
			}
			return out
		}
		v := steadyMSER5(series(decay(300, 100), decay(400, 1000)))
		assert.False(t, v.steady)
		assert.Equal(t, "median TTFT: MSER-5 would truncate 2 of 4 batches of 5 windows, the most it may (half): the series still drifts", v.why)
	})
	t.Run("one series steady, the other drifting", func(t *testing.T) {
		drift := make([]float64, 40)
		for i := range drift {
			drift[i] = 100 + 5*float64(i)
		}
		v := steadyMSER5(series(drift, noisy(40, 1000, 0.02, 5)))
		assert.False(t, v.steady)
		assert.Contains(t, v.why, "median TTFT: MSER-5 would truncate")
	})
	t.Run("an empty window after the truncation point", func(t *testing.T) {
		ws := series(ttft, tput)
		ws[35] = win(0, 0, 0)
		v := steadyMSER5(ws)
		assert.False(t, v.steady)
		assert.Contains(t, v.why, "no request had its first token in the window ending at 0s, after MSER-5's truncation point")
	})
}

// chunked is a successful record whose first token came first after the
// start of its dispatch, then one chunk after each gap, with a TTFT of ttft
// and tokens output tokens.
func chunked(first, ttft time.Duration, tokens int, gaps ...time.Duration) *result.Record {
	r := &result.Record{
		SentNS: int64(first - ttft), FirstTokenNS: int64(first), EndNS: int64(first),
		TTFTUS: ttft.Microseconds(), OutputTokens: tokens, ITLUS: []int64{},
	}
	for _, g := range gaps {
		r.ITLUS = append(r.ITLUS, g.Microseconds())
		r.EndNS += int64(g)
	}
	return r
}

func TestWindowBins(t *testing.T) {
	const width = 100 * time.Millisecond
	ms := time.Millisecond
	b := newWindowBins(width)
	// A: first token at 50 ms, chunks at 150 and 250 ms: its 30 tokens go 10
	// to each of windows 0, 1 and 2, its TTFT to window 0 only, although it
	// ended in window 2.
	assert.True(t, b.add(chunked(50*ms, 20*ms, 30, 100*ms, 100*ms), 0))
	// B, from a later pass (offset 150 ms): first token at 170 ms (window 1),
	// one more chunk at 210 ms (window 2); 4 tokens each.
	assert.True(t, b.add(chunked(20*ms, 40*ms, 8, 40*ms), 150*ms))
	// C: no first token: its tokens count at its end (120 ms, window 1), and
	// it is no request of any window.
	assert.True(t, b.add(&result.Record{SentNS: int64(10 * ms), EndNS: int64(120 * ms), OutputTokens: 6}, 0))
	// D: a single chunk on window 1's lower edge.
	assert.True(t, b.add(chunked(100*ms, 60*ms, 5), 0))
	// E: a first token with no tokens counted (usage missing) still gives
	// window 1 a TTFT.
	assert.True(t, b.add(chunked(130*ms, 80*ms, 0, 10*ms), 0))

	// Each record's tokens in a window, by its serial (A 0, B 1, C 2, D 3, E 4).
	mine := func(s windowSample) map[int]float64 {
		out := map[int]float64{}
		for _, r := range s.records {
			out[r.rec] = r.tokens
		}
		return out
	}
	w0, s0 := b.close(0)
	assert.Equal(t, result.WarmupWindow{End: 0.1, Requests: 1, OutputThroughput: 100, TTFT: 20}, w0)
	assert.Equal(t, []float64{20}, s0.ttfts)
	assert.Equal(t, map[int]float64{0: 10}, mine(s0))
	assert.Equal(t, []float64{0, 0, 10, 0, 0}, s0.parts, "A's first chunk, 50 ms into the window")
	w1, s1 := b.close(1)
	assert.Equal(t, 3, w1.Requests, "B, D and E had their first token in window 1")
	assert.InDelta(t, 250, w1.OutputThroughput, 1e-9, "10 of A, 4 of B, 6 of C, 5 of D in 0.1 s")
	assert.InDelta(t, 60, w1.TTFT, 1e-9, "median of 40, 60 and 80 ms")
	assert.Equal(t, map[int]float64{0: 10, 1: 4, 2: 6, 3: 5, 4: 0}, mine(s1))
	assert.Equal(t, []float64{5, 6, 10, 4, 0}, s1.parts, "D at 100 ms, C at 120, A at 150, B at 170")
	w2, _ := b.close(2)
	assert.Equal(t, result.WarmupWindow{End: 0.3, Requests: 0, OutputThroughput: 140, TTFT: 0}, w2,
		"tokens arrived (10 of A, 4 of B), but no first token")

	// F: first token at 250 ms (window 2, closed), a chunk at 350 ms.
	assert.False(t, b.add(chunked(250*ms, 10*ms, 4, 100*ms), 0), "a record with a part in a closed window")
	assert.Equal(t, 1, b.late)
	w3, _ := b.close(3)
	assert.Equal(t, result.WarmupWindow{End: 0.4, Requests: 0, OutputThroughput: 20, TTFT: 0}, w3,
		"the part in an open window is kept; the TTFT, in the closed one, is not")
}

func TestWindowBinsStandardError(t *testing.T) {
	b := newWindowBins(time.Second)
	ms := time.Millisecond
	for i, ttft := range []time.Duration{90, 10, 80, 20, 70, 30, 60, 40, 50} {
		require.True(t, b.add(chunked(time.Duration(100+i)*ms, ttft*ms, 1), 0))
	}
	w, sample := b.close(0)
	assert.Equal(t, 9, w.Requests)
	assert.InDelta(t, 50, w.TTFT, 1e-9)
	assert.InDelta(t, 1.2533*(40/1.349)/3, medianSE(sample.ttfts), 1e-9, "quartiles 30 and 70 ms")
}

func TestFinalWindows(t *testing.T) {
	const width = 100 * time.Millisecond
	assert.Zero(t, finalWindows(0, width))
	assert.Zero(t, finalWindows(-time.Second, width))
	assert.Zero(t, finalWindows(99*time.Millisecond, width))
	assert.Equal(t, 1, finalWindows(100*time.Millisecond, width), "a window whose end is the horizon is final")
	assert.Equal(t, 1, finalWindows(199*time.Millisecond, width))
	assert.Equal(t, 5, finalWindows(500*time.Millisecond, width))
}

// gatedSender blocks each request until its gate (by request id) is closed.
type gatedSender struct {
	entered chan string
	gates   map[string]chan struct{}
}

func (g *gatedSender) Do(_ context.Context, _ *workload.Request, id string) *client.Response {
	g.entered <- id
	<-g.gates[id]
	return &client.Response{RequestID: id}
}

// A request in flight holds open every window from the one in which it was
// sent, whatever the clock says, until it returns.
func TestFlightTrackerHorizon(t *testing.T) {
	const width = 100 * time.Millisecond
	ms := time.Millisecond
	clk := newFakeClock(0)
	g := &gatedSender{entered: make(chan string), gates: map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}}
	f := newFlightTracker(g, clk, clk.Now())
	send := func(id string) chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.Do(t.Context(), &workload.Request{}, id)
		}()
		require.Equal(t, id, <-g.entered)
		return done
	}
	final := func() (int, int) {
		h, returned := f.horizon()
		return finalWindows(h, width), returned
	}

	clk.advance(150 * ms)
	n, returned := final()
	assert.Equal(t, 1, n, "nothing in flight: every window that has ended is final")
	assert.Zero(t, returned)

	aDone := send("a") // sent at 150 ms, in window 1
	clk.advance(300 * ms)
	n, _ = final()
	assert.Equal(t, 1, n, "at 450 ms, a (sent at 150 ms) still holds windows 1-3 open")

	bDone := send("b") // sent at 450 ms
	clk.advance(100 * ms)
	n, _ = final()
	assert.Equal(t, 1, n, "the earliest send in flight sets the horizon")

	close(g.gates["a"])
	<-aDone
	n, returned = final()
	assert.Equal(t, 4, n, "a returned: windows 1-3 are final; b (sent at 450 ms) holds window 4 open")
	assert.Equal(t, 1, returned)

	close(g.gates["b"])
	<-bDone
	n, returned = final()
	assert.Equal(t, 5, n, "nothing in flight at 550 ms: windows 0-4 are final")
	assert.Equal(t, 2, returned)
}

func TestWarmupStateWaitRecords(t *testing.T) {
	st := newWarmupState(time.Second)
	assert.True(t, st.waitRecords(t.Context(), 0, time.Millisecond))
	assert.False(t, st.waitRecords(t.Context(), 1, time.Millisecond), "gives up after the timeout")
	go func() {
		st.add(chunked(time.Millisecond, time.Millisecond, 1), 0)
		st.add(&result.Record{ErrorKind: string(client.ErrHTTP), Error: "http 500"}, 0)
	}()
	assert.True(t, st.waitRecords(t.Context(), 2, 10*time.Second), "failed records count too")
	ok, failed, errs, first := st.counts()
	assert.Equal(t, 1, ok)
	assert.Equal(t, 1, failed)
	assert.Equal(t, map[string]int{"http": 1}, errs)
	assert.Equal(t, "http 500", first)
}

// A slow request sent at the start holds every window it could add to open:
// none is judged before it ends, and then those windows are judged together,
// with its tokens spread over them.
func TestWarmupInFlightHoldsWindows(t *testing.T) {
	const slow = 350 * time.Millisecond
	sender := warmSender(func(ctx context.Context, _ *workload.Request, id string) *client.Response {
		sent := time.Now()
		latency, chunks := 2*time.Millisecond, 2
		if strings.HasSuffix(id, "-000000") {
			latency, chunks = slow, 7
		}
		select {
		case <-time.After(latency):
		case <-ctx.Done():
			now := time.Now()
			return &client.Response{RequestID: id, Sent: sent, End: now, Err: &client.Error{Kind: client.ErrCanceled, Err: ctx.Err()}}
		}
		resp := &client.Response{RequestID: id, Sent: sent, End: time.Now(), OutputTokens: 10 * chunks, TokensFrom: client.TokensFromUsage}
		for i := range chunks {
			resp.ChunkTimes = append(resp.ChunkTimes, sent.Add(latency*time.Duration(i+1)/time.Duration(chunks)))
		}
		resp.FirstToken = resp.ChunkTimes[0]
		return resp
	})
	type call struct {
		at  time.Duration
		win result.WarmupWindow
	}
	var calls []call
	var start time.Time
	w := &Warmup{
		Dispatcher: &Dispatcher{Sender: sender},
		Config: config.Warmup{Method: config.WarmupWindows, Window: 100 * time.Millisecond, Windows: 3,
			Tolerance: 0.5, Max: 3 * time.Second},
		RunID:    "run",
		OnWindow: func(win result.WarmupWindow, _ bool, _ string) { calls = append(calls, call{time.Since(start), win}) },
	}
	start = time.Now()
	got, err := w.Run(t.Context(), scenario("s", config.Load{Type: config.LoadClosed, Concurrency: 2}, warmRequests(4)))
	require.NoError(t, err)
	require.True(t, got.Steady, "windows: %+v", got.Windows)
	require.GreaterOrEqual(t, len(calls), 3)
	assert.GreaterOrEqual(t, calls[0].at, slow, "no window was judged while the slow request was in flight")
	assert.Equal(t, 0.1, float64(calls[0].win.End), "then the first windows were judged, in order")
	assert.Equal(t, 0.2, float64(calls[1].win.End))
	assert.Equal(t, 0.3, float64(calls[2].win.End))
	assert.Less(t, calls[2].at-calls[0].at, 50*time.Millisecond, "at the same boundary")
}

func TestMedian(t *testing.T) {
	assert.Zero(t, median(nil))
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
}

// warmSender is a Sender from a function.
type warmSender func(ctx context.Context, req *workload.Request, id string) *client.Response

func (f warmSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	return f(ctx, req, id)
}

// steadySender answers every request after latency (TTFT half of it) with
// tokens output tokens, or fails it when fail is set; it counts its calls.
func steadySender(latency time.Duration, tokens int, fail bool, calls *atomic.Int64) Sender {
	return warmSender(func(ctx context.Context, _ *workload.Request, id string) *client.Response {
		calls.Add(1)
		sent := time.Now()
		resp := &client.Response{RequestID: id, Sent: sent}
		timer := time.NewTimer(latency)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			resp.End = time.Now()
			resp.Err = &client.Error{Kind: client.ErrCanceled, Err: ctx.Err()}
			return resp
		}
		resp.End = time.Now()
		if fail {
			resp.Err = &client.Error{Kind: client.ErrHTTP, Status: 500}
			return resp
		}
		resp.FirstToken = sent.Add(latency / 2)
		resp.ChunkTimes = []time.Time{resp.FirstToken, resp.End}
		resp.OutputTokens, resp.TokensFrom = tokens, client.TokensFromUsage
		return resp
	})
}

func warmRequests(n int) []workload.Request {
	reqs := make([]workload.Request, n)
	for i := range reqs {
		reqs[i] = workload.Request{
			ID:        fmt.Sprintf("w%d", i),
			Prompt:    fmt.Sprintf("warm-up prompt %d: %s", i, strings.Repeat("lorem ipsum ", 1+i%5)),
			MaxTokens: 4 + (i*5)%9, // 4..12, so that closed-loop users do not run in lockstep
		}
	}
	return reqs
}

func scenario(name string, load config.Load, reqs []workload.Request) Scenario {
	return Scenario{Config: config.Scenario{Name: name, Load: load}, Requests: reqs}
}

func TestWarmupNoneSendsNothing(t *testing.T) {
	var calls atomic.Int64
	w := &Warmup{
		Dispatcher: &Dispatcher{Sender: steadySender(time.Millisecond, 1, false, &calls)},
		Config:     config.Warmup{Method: config.WarmupNone},
		OnWindow:   func(result.WarmupWindow, bool, string) { t.Error("OnWindow called for method none") },
	}
	got, err := w.Run(t.Context(), scenario("s", config.Load{Type: config.LoadClosed, Concurrency: 4}, warmRequests(3)))
	require.NoError(t, err)
	assert.Equal(t, &result.Warmup{Method: config.WarmupNone, Steady: true}, got)
	assert.Zero(t, calls.Load())
}

// A constant server is steady as soon as enough windows are in, but never
// before Min; every load shape is replayed for as long as warm-up needs,
// including a trace shorter than warm-up.
func TestWarmupSteadyLoadShapes(t *testing.T) {
	trace := warmRequests(10)
	for i := range trace {
		a := float64(5 * i)
		trace[i].ArrivalMS = &a // a 45 ms trace
	}
	tests := []struct {
		name string
		load config.Load
		reqs []workload.Request
	}{
		{"closed", config.Load{Type: config.LoadClosed, Concurrency: 4}, warmRequests(10)},
		{"poisson", config.Load{Type: config.LoadPoisson, Rate: 400}, warmRequests(10)},
		{"trace", config.Load{Type: config.LoadTrace, Speedup: 1}, trace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			var seen []result.WarmupWindow
			var whys []string
			w := &Warmup{
				Dispatcher: &Dispatcher{Sender: steadySender(2*time.Millisecond, 10, false, &calls)},
				Config: config.Warmup{Method: config.WarmupWindows, Window: 100 * time.Millisecond, Windows: 2,
					Tolerance: 0.5, Min: 400 * time.Millisecond, Max: 5 * time.Second},
				RunID: "run",
				OnWindow: func(w result.WarmupWindow, _ bool, why string) {
					seen = append(seen, w)
					whys = append(whys, why)
				},
			}
			got, err := w.Run(t.Context(), scenario("s", tc.load, tc.reqs))
			require.NoError(t, err)
			require.True(t, got.Steady, "windows: %+v", got.Windows)
			assert.GreaterOrEqual(t, got.Duration.Dur(), 400*time.Millisecond, "never shorter than Min")
			assert.Less(t, got.Duration.Dur(), 2*time.Second, "stops once steady")
			assert.Len(t, got.Windows, 4, "steady at the first window that ends at Min")
			assert.Equal(t, got.Windows, seen, "OnWindow saw every window")
			assert.Empty(t, whys[len(whys)-1], "the steady window has nothing to explain")
			for i, why := range whys[:len(whys)-1] {
				assert.NotEmpty(t, why, "window %d was not steady, and says why", i)
			}
			// The last two windows, or the last two pairs of windows where one
			// held fewer than minJudgeRequests (a busy machine).
			assert.Contains(t, []int{len(got.Windows) - 2, len(got.Windows) - 4}, got.SteadyFrom, "windows: %+v", got.Windows)
			assert.Greater(t, got.Requests, len(tc.reqs), "the workload was replayed")
			assert.Zero(t, got.Failed, "requests cut off at the end of warm-up are not failures")
			assert.GreaterOrEqual(t, calls.Load(), int64(got.Requests))
		})
	}
}

func TestWarmupAllFailing(t *testing.T) {
	var calls atomic.Int64
	w := &Warmup{
		Dispatcher: &Dispatcher{Sender: steadySender(time.Millisecond, 10, true, &calls)},
		Config: config.Warmup{Method: config.WarmupWindows, Window: 50 * time.Millisecond, Windows: 2,
			Tolerance: 0.1, Max: 200 * time.Millisecond},
	}
	got, err := w.Run(t.Context(), scenario("broken", config.Load{Type: config.LoadClosed, Concurrency: 2}, warmRequests(3)))
	var ue *UnsteadyError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "broken", ue.Scenario)
	require.NotNil(t, got)
	assert.False(t, got.Steady)
	assert.Zero(t, got.Requests)
	assert.Positive(t, got.Failed)
	// A failing request holds its windows open until it fails too: the last
	// window may not be final at Max.
	require.GreaterOrEqual(t, len(got.Windows), 3)
	assert.Equal(t, 4, len(got.Windows)+ue.Unfinal, "every window that fits in Max is judged or counted as never final")
	for _, w := range got.Windows {
		assert.Zero(t, w.Requests)
	}
	assert.Contains(t, err.Error(), "[0.10: 0, 0.0, —]", "a window with no first token has no TTFT, not one of 0 ms")
	assert.Contains(t, ue.Why, "fewer than 5 requests a window")
	assert.Contains(t, err.Error(), "at the last window judged, fewer than 5 requests a window")
}

func TestWarmupErrors(t *testing.T) {
	var calls atomic.Int64
	d := &Dispatcher{Sender: steadySender(time.Millisecond, 1, false, &calls)}
	good := config.Warmup{Method: config.WarmupWindows, Window: 50 * time.Millisecond, Windows: 2, Tolerance: 0.1, Max: time.Second}
	load := config.Load{Type: config.LoadClosed, Concurrency: 1}
	tests := []struct {
		name string
		cfg  config.Warmup
		s    Scenario
		want string
	}{
		{"no requests", good, scenario("empty", load, nil), "scenario empty warm-up: plan has no requests"},
		{"bad load", good, scenario("s", config.Load{Type: "square"}, warmRequests(2)), `scenario s warm-up: unknown load type "square"`},
		{"unknown method", config.Warmup{Method: "vibes", Window: time.Second, Max: time.Second}, scenario("s", load, warmRequests(2)), `unknown warmup.method "vibes"`},
		{"no window", config.Warmup{Method: config.WarmupMSER5, Max: time.Second}, scenario("s", load, warmRequests(2)), "warmup.window must be > 0"},
		{"one window", config.Warmup{Method: config.WarmupWindows, Window: time.Second, Windows: 1, Tolerance: 0.1, Max: time.Second}, scenario("s", load, warmRequests(2)), "warmup.windows must be >= 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := (&Warmup{Dispatcher: d, Config: tc.cfg}).Run(t.Context(), tc.s)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Nil(t, got)
			var ue *UnsteadyError
			assert.False(t, errors.As(err, &ue))
		})
	}
}

// The caller cancels warm-up with a cause when the stack crashes: the error
// carries that cause.
func TestWarmupCancelledWithCause(t *testing.T) {
	started := make(chan struct{}, 1)
	sender := warmSender(func(ctx context.Context, _ *workload.Request, id string) *client.Response {
		select {
		case started <- struct{}{}:
		default:
		}
		<-ctx.Done()
		now := time.Now()
		return &client.Response{RequestID: id, Sent: now, End: now, Err: &client.Error{Kind: client.ErrCanceled, Err: ctx.Err()}}
	})
	crash := errors.New("stack exited with status 137")
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	go func() {
		<-started
		cancel(crash)
	}()
	w := &Warmup{
		Dispatcher: &Dispatcher{Sender: sender},
		Config:     config.Warmup{Method: config.WarmupWindows, Window: time.Second, Windows: 2, Tolerance: 0.1, Max: time.Minute},
	}
	got, err := w.Run(ctx, scenario("s", config.Load{Type: config.LoadClosed, Concurrency: 2}, warmRequests(2)))
	require.Error(t, err)
	assert.Nil(t, got)
	assert.ErrorIs(t, err, crash)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "scenario s warm-up: stack exited with status 137")

	_, err = w.Run(ctx, scenario("s", config.Load{Type: config.LoadClosed, Concurrency: 2}, warmRequests(2)))
	assert.ErrorIs(t, err, crash, "an already cancelled context sends nothing and says why")
}

func TestUnsteadyErrorMessage(t *testing.T) {
	why := "median TTFT rose in each of the last 5 windows, from 30.0 ms in 17–17.5s to 41.5 ms in 19–19.5s"
	e := &UnsteadyError{Scenario: "chat", Method: config.WarmupWindows, Max: 20 * time.Second, Why: why,
		Windows: []result.WarmupWindow{{End: 19, OutputThroughput: 20}, {End: 19.5, Requests: 12, OutputThroughput: 812.25, TTFT: 41.5}}}
	msg := e.Error()
	for _, want := range []string{"scenario chat", "warmup.max 20s", "method windows", "[19.50: 12, 812.2, 41.5]", "warmup.max", "warmup.window", "warmup.tolerance",
		"(method windows); at the last window judged, " + why + "; last 2 of 2 windows",
		"[19.00: 0, 20.0, —]"} {
		assert.Contains(t, msg, want)
	}
	e.Why = ""
	assert.NotContains(t, e.Error(), "at the last window judged", "no reason where no window was judged")
	assert.NotContains(t, msg, "never final")
	e.Unfinal = 3
	assert.Contains(t, e.Error(), "; 3 later windows were never final (requests sent before their end were still in flight)")
	e.Method = config.WarmupMSER5
	assert.NotContains(t, e.Error(), "tolerance", "mser5 has no tolerance")
	e.Windows = nil
	assert.Contains(t, e.Error(), "no window was completed")
}

// startSim starts the simulator with a warm-up transient of warmUp, during
// which step time starts factor times slower, and returns a client for it.
func startSim(t *testing.T, warmUp time.Duration, factor float64) (*client.Client, string) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.WarmUp, cfg.WarmUpFactor = warmUp, factor
	srv, err := sim.Start(t.Context(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	c, err := client.New(client.Options{BaseURL: srv.URL(), API: client.APIChat, Model: cfg.Model, MaxConns: 16})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c, cfg.Model
}

func TestWarmupSimulatorTransient(t *testing.T) {
	c, _ := startSim(t, 3*time.Second, 3)
	const window = 500 * time.Millisecond
	w := &Warmup{
		Dispatcher: &Dispatcher{Sender: c},
		Config: config.Warmup{Method: config.WarmupWindows, Window: window, Windows: 3, Tolerance: 0.1,
			Max: 20 * time.Second, OnUnsteady: "fail"},
		Seed:  1,
		RunID: "test",
	}
	got, err := w.Run(t.Context(), scenario("chat", config.Load{Type: config.LoadClosed, Concurrency: 16}, warmRequests(16)))
	require.NoError(t, err)
	for _, w := range got.Windows {
		t.Logf("%+v", w)
	}
	require.True(t, got.Steady)
	t.Logf("steady from window %d after %.2fs: %d requests, %d failed", got.SteadyFrom, float64(got.Duration), got.Requests, got.Failed)
	assert.GreaterOrEqual(t, got.Duration.Dur(), 2500*time.Millisecond, "warm-up waited the transient out")
	assert.Less(t, got.Duration.Dur(), 10*time.Second, "and stopped well before Max")
	assert.Zero(t, got.Failed)
	steadyTTFT := 0.0
	for _, w := range got.Windows[got.SteadyFrom:] {
		steadyTTFT += w.TTFT
	}
	steadyTTFT /= float64(len(got.Windows) - got.SteadyFrom)
	assert.Greater(t, got.Windows[0].TTFT, 1.8*steadyTTFT, "the transient was seen: first window TTFT %.2f ms, steady %.2f ms",
		got.Windows[0].TTFT, steadyTTFT)
}

// A transient longer than warmup.max: warm-up gives up at Max, and fails or
// (on_unsteady: warn) lets the run go on.
func TestWarmupSimulatorUnsteady(t *testing.T) {
	tests := []struct {
		onUnsteady string
		wantErr    bool
	}{
		{"fail", true},
		{"warn", false},
	}
	for _, tc := range tests {
		t.Run(tc.onUnsteady, func(t *testing.T) {
			c, _ := startSim(t, 10*time.Second, 3)
			w := &Warmup{
				Dispatcher: &Dispatcher{Sender: c},
				Config: config.Warmup{Method: config.WarmupWindows, Window: 300 * time.Millisecond, Windows: 3,
					Tolerance: 0.1, Max: time.Second, OnUnsteady: tc.onUnsteady},
				RunID: "test",
			}
			got, err := w.Run(t.Context(), scenario("chat", config.Load{Type: config.LoadClosed, Concurrency: 16}, warmRequests(16)))
			require.NotNil(t, got)
			for _, w := range got.Windows {
				t.Logf("%+v", w)
			}
			assert.False(t, got.Steady)
			// Requests of the 3x slower server take longer than a window:
			// the last windows are still held open by them at Max.
			assert.LessOrEqual(t, len(got.Windows), 3, "no window past Max is judged")
			assert.LessOrEqual(t, got.Duration.Dur(), time.Second+maxWindowGrace+200*time.Millisecond, "never far past Max")
			assert.Zero(t, got.Failed)
			if !tc.wantErr {
				assert.NoError(t, err)
				return
			}
			var ue *UnsteadyError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, "chat", ue.Scenario)
			assert.Equal(t, config.WarmupWindows, ue.Method)
			assert.Equal(t, time.Second, ue.Max)
			assert.Equal(t, got.Windows, ue.Windows)
			assert.Equal(t, 3, len(ue.Windows)+ue.Unfinal, "every window that fits in Max is judged or counted as never final")
			assert.Contains(t, err.Error(), "warmup.max 1s")
		})
	}
}

func TestWarmupMSER5Steady(t *testing.T) {
	var calls atomic.Int64
	const window = 25 * time.Millisecond
	var steadyFlags []bool
	w := &Warmup{
		Dispatcher: &Dispatcher{Sender: steadySender(2*time.Millisecond, 10, false, &calls)},
		Config:     config.Warmup{Method: config.WarmupMSER5, Window: window, Max: 5 * time.Second},
		OnWindow:   func(_ result.WarmupWindow, steady bool, _ string) { steadyFlags = append(steadyFlags, steady) },
	}
	got, err := w.Run(t.Context(), scenario("s", config.Load{Type: config.LoadClosed, Concurrency: 4}, warmRequests(5)))
	require.NoError(t, err)
	require.True(t, got.Steady, "windows: %+v", got.Windows)
	assert.GreaterOrEqual(t, len(got.Windows), config.MSER5MinWindows, "MSER-5 judges no fewer windows")
	assert.Less(t, got.Duration.Dur(), 2*time.Second)
	assert.LessOrEqual(t, 2*got.SteadyFrom, len(got.Windows), "truncation in the first half")
	require.NotEmpty(t, steadyFlags)
	assert.True(t, steadyFlags[len(steadyFlags)-1])
	for _, s := range steadyFlags[:len(steadyFlags)-1] {
		assert.False(t, s, "warm-up stops at the first steady window")
	}
}

// An overloaded server (one slot, Poisson arrivals at about twice what it
// serves) has a queue that grows for ever: its TTFT climbs every window,
// each step small beside the level once it has run a while. It is never
// steady, however long warm-up waits; the overload detector over its
// requests says why, and warm-up does not fail (on_unsteady: fail is for
// a transient, not a load the server cannot serve): the repetitions
// measure and judge the overload.
func TestWarmupOverloadedIsNotSteady(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.MaxBatch = 1
	srv, err := sim.Start(t.Context(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	c, err := client.New(client.Options{BaseURL: srv.URL(), API: client.APIChat, Model: cfg.Model, MaxConns: 256})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	w := &Warmup{
		Dispatcher: &Dispatcher{Sender: c},
		Config: config.Warmup{Method: config.WarmupWindows, Window: 100 * time.Millisecond, Windows: 3, Tolerance: 0.1,
			Max: 6 * time.Second, OnUnsteady: "fail"},
		Seed: 1, RunID: "test", Drain: time.Second,
	}
	got, err := w.Run(t.Context(), scenario("overload", config.Load{Type: config.LoadPoisson, Rate: 20}, warmRequests(16)))
	require.NotNil(t, got)
	for _, w := range got.Windows {
		t.Logf("%+v", w)
	}
	assert.False(t, got.Steady, "judged steady from window %d", got.SteadyFrom)
	require.NoError(t, err)
	require.NotNil(t, got.Overload, "the detector's evidence")
	assert.True(t, got.Overload.Overloaded, "%+v", *got.Overload)
	assert.Less(t, got.Overload.ServedRate, 0.9*got.Overload.OfferedRate)
	require.NotNil(t, got.Drain, "it drains before the repetitions")
	// A backlog the server cannot clear is cut at once, not drained to
	// the bound (1 s here, target.timeout in a run).
	assert.Positive(t, got.DrainCut, "the backlog in flight is cut")
	assert.Less(t, float64(*got.Drain), 0.5, "cut at once, not drained to the bound")
}
