package result

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spike is a repetition of 120 s at 10 requests a second whose TTFT is
// ttft(t) for a request planned at t; fail(t) marks failed ones.
func spike(ttft func(t time.Duration) time.Duration, fail func(t time.Duration) bool) []recoverySample {
	var out []recoverySample
	for t := time.Duration(0); t < 120*time.Second; t += 100 * time.Millisecond {
		s := recoverySample{atNS: int64(t), ttftNS: int64(ttft(t)), ok: true}
		if fail != nil && fail(t) {
			s.ok, s.ttftNS = false, 0
		}
		out = append(out, s)
	}
	return out
}

func TestMeasureRecovery(t *testing.T) {
	const slo = 500 * time.Millisecond
	step, window := 30*time.Second, 5*time.Second
	fast := func(time.Duration) time.Duration { return 100 * time.Millisecond }
	// slowUntil is over the SLO from the step until u, then fast.
	slowUntil := func(u time.Duration) func(time.Duration) time.Duration {
		return func(t time.Duration) time.Duration {
			if t >= step && t < u {
				return 2 * time.Second
			}
			return 100 * time.Millisecond
		}
	}
	never := func(time.Duration) bool { return false }
	for _, c := range []struct {
		name      string
		ttft      func(time.Duration) time.Duration
		fail      func(time.Duration) bool
		recovered bool
		seconds   float64 // within one stride (a fifth of a window)
		breaches  int
	}{
		{"never left the SLO", fast, never, true, 0, 0},
		{"back 20 s after the step", slowUntil(50 * time.Second), never, true, 20, 200},
		{"never back", slowUntil(time.Hour), never, false, 84.9, 900},
		// Failures are over any SLO: 20 s of them is 20 s of breach, though
		// the requests that did answer were fast.
		{"refused for 20 s", fast, func(t time.Duration) bool { return t >= step && t < 50*time.Second }, true, 20, 200},
		// 2% of requests slow is within p95: the p95 never left the SLO,
		// though the slow requests broke it.
		{"a few slow", func(t time.Duration) time.Duration {
			if t >= step && int64(t/(100*time.Millisecond))%50 == 0 {
				return 2 * time.Second
			}
			return 100 * time.Millisecond
		}, never, true, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			samples := spike(c.ttft, c.fail)
			end := time.Duration(samples[len(samples)-1].atNS)
			r := measureRecovery(samples, step, window, end, slo)
			require.NotNil(t, r)
			assert.Equal(t, c.recovered, r.Recovered)
			assert.InDelta(t, c.seconds, r.Seconds, window.Seconds()/windowStrides+1e-9)
			// The windows straddling the recovery hold some of the slow
			// requests: within one window's requests of the truth.
			assert.InDelta(t, c.breaches, r.Breaches, 10*window.Seconds())
			assert.InDelta(t, 100, r.BeforeP95MS, 1e-9)
			assert.Equal(t, step.Seconds(), r.StepS)
			assert.Equal(t, 5.0, r.WindowS)
		})
	}

	// No window fits after a step at the end: nothing to say.
	samples := spike(fast, never)
	assert.Nil(t, measureRecovery(samples, 119*time.Second, window, 119900*time.Millisecond, slo))
}

// The aggregator measures a recovery only with a TTFT SLO to measure it
// against, and from the records' planned send times.
func TestAggregatorRecovery(t *testing.T) {
	records := func(a *Aggregator) {
		for i := range 600 { // 60 s at 10 req/s, slow from 20 s to 35 s
			at := int64(i) * 1e8
			ttft := int64(100e6)
			if at >= 20e9 && at < 35e9 {
				ttft = 2e9
			}
			a.Add(&Record{ScheduledNS: at, SentNS: at, FirstTokenNS: at + ttft, EndNS: at + ttft + 1e6, TTFTUS: ttft / 1e3, E2EUS: (ttft + 1e6) / 1e3, OutputTokens: 2, TokensFrom: "usage"})
		}
	}
	a := NewAggregator(SLO{TTFT: 500}, true, 10).WithRecovery(20*time.Second, 5*time.Second)
	records(a)
	rep := a.Summary(1)
	require.NotNil(t, rep.Recovery)
	assert.True(t, rep.Recovery.Recovered)
	assert.InDelta(t, 15, rep.Recovery.Seconds, 1.01)
	v, err := rep.Value("recovery")
	require.NoError(t, err)
	assert.InDelta(t, 15000, v, 1010)

	none := NewAggregator(SLO{}, true, 10).WithRecovery(20*time.Second, 5*time.Second)
	records(none)
	assert.Nil(t, none.Summary(1).Recovery, "no TTFT SLO, no recovery")
}

// A recovery that cannot be true is refused when a result is read, each
// figure with its field path; a step load's settings too.
func TestRecoveryValidated(t *testing.T) {
	rep := Repetition{Index: 1, Sent: 10, Completed: 10, TokensFrom: "usage",
		Recovery: &Recovery{StepS: 20, WindowS: 0, Seconds: -1, Breaches: 11, Windows: []RecoveryWindow{
			{AtS: 20, Requests: 3, Failed: 4}, {AtS: 19, Requests: 2}}}}
	r := &Result{Schema: Schema, Scenarios: []ScenarioResult{{Name: "spike",
		Load:        Load{Type: "step", Steps: []float64{8, -30}, At: []time.Duration{20 * time.Second, 10 * time.Second}},
		Repetitions: []Repetition{rep}}}}
	err := r.Validate()
	require.Error(t, err)
	for _, want := range []string{
		"scenarios[0].repetitions[0].recovery.window_s",
		"scenarios[0].repetitions[0].recovery.recovery_s",
		"scenarios[0].repetitions[0].recovery.breaches: want at most the 10 requests sent, got 11",
		"scenarios[0].repetitions[0].recovery.windows[0].failed",
		"scenarios[0].repetitions[0].recovery.windows[1].at_s: want windows in order",
		"scenarios[0].load.steps[1]",
		"scenarios[0].load.at: want one time for each of the 1 steps after the first, got 2",
		"scenarios[0].load.at[1]",
	} {
		assert.ErrorContains(t, err, want)
	}
}
