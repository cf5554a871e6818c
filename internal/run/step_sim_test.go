package run

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/workload"
)

// End to end against the simulator: a step from 8 to 30 requests a second
// overloads one replica (20 a second), whose queue starts a second; once it
// is ready the queue drains and TTFT comes back within the SLO. The
// recovery perfgate measures from its own side (TTFT p95 in windows of the
// planned send times) is the simulator's truth within 20%: the moment after
// which no request the server took in waited past the SLO for its first
// token, counted from the step.
func TestStepRecoveryMatchesTheSimulatorsTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.MaxBatch, cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken, cfg.Jitter, cfg.PrefixCache = 4, 10*time.Millisecond, 0, 0, 0, false
	cfg.AutoscaleMax, cfg.AutoscaleQueue, cfg.AutoscaleColdStart = 2, 8, 2*time.Second
	srv, c, truth := truthSim(t, cfg, 256)

	var reqs []workload.Request
	for i := range 64 {
		r := workload.Request{ID: fmt.Sprintf("r%d", i), Prompt: fmt.Sprintf("Question %d: say something short.", i)}
		r.MaxTokens = 20
		reqs = append(reqs, r)
	}
	const slo = 500 * time.Millisecond
	step := 3 * time.Second
	load := config.Load{Type: config.LoadStep, Steps: []float64{8, 30}, At: config.StepTimes{step}, Burstiness: 1, RecoveryWindow: time.Second}
	sc := scenario("spike", load, reqs)
	sc.Config.SLO = config.SLO{TTFT: slo}
	sc.Config.Duration = 11 * time.Second
	sc.Config.MaxErrorRate = 0
	m := &Measurement{Dispatcher: &Dispatcher{Sender: c}, Repetitions: config.Repetitions{Min: 1, Max: 1}, Seed: 3, RunID: "step"}
	reps, err := m.Measure(t.Context(), sc)
	require.NoError(t, err)
	require.NoError(t, srv.Close())
	require.Len(t, reps, 1)
	rc := reps[0].Recovery
	require.NotNil(t, rc, "a step load's repetition has its recovery")

	// The truth: the server's own clock, from the first arrival (the
	// repetition's first request, planned at 0).
	recs := truth.records(t)
	start := int64(math.MaxInt64)
	for _, r := range recs {
		start = min(start, r.ArrivalNS)
	}
	var lastSlow int64 = -1
	var twoReplicas int64 = math.MaxInt64
	for _, r := range recs {
		at := r.ArrivalNS - start
		if r.Error == "" && r.FirstTokenNS-r.ArrivalNS > int64(slo) {
			lastSlow = max(lastSlow, at)
		}
		if r.Replicas == 2 {
			twoReplicas = min(twoReplicas, r.FirstTokenNS-start)
		}
	}
	require.Greater(t, lastSlow, int64(step), "the step must overload one replica, or there is nothing to recover from")
	require.Less(t, twoReplicas, int64(sc.Config.Duration), "the second replica must be ready within the repetition")
	want := time.Duration(lastSlow - int64(step)).Seconds()
	t.Logf("recovery %.2f s (perfgate), %.2f s (truth: last request over the SLO); breaches %d; peak TTFT p95 %.0f ms; second replica from %.2f s",
		rc.Seconds, want, rc.Breaches, rc.PeakP95MS, time.Duration(twoReplicas).Seconds())
	assert.True(t, rc.Recovered, "two replicas absorb 30 requests a second")
	assert.InEpsilon(t, want, rc.Seconds, 0.20, "perfgate's recovery against the truth's")
	assert.Positive(t, rc.Breaches)
	assert.Greater(t, rc.PeakP95MS, float64(slo/time.Millisecond))
	assert.Less(t, rc.BeforeP95MS, float64(slo/time.Millisecond), "8 requests a second is within one replica")
}
