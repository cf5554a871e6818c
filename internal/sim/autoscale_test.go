package sim

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A queue as long as --autoscale-queue starts a second replica, ready a
// cold start later: the requests admitted before it see one replica, those
// after two, and the batch it admits is twice as wide. The truth says which.
func TestAutoscaleAddsAReplicaAfterItsColdStart(t *testing.T) {
	cfg := testConfig()
	cfg.MaxBatch, cfg.AutoscaleMax, cfg.AutoscaleQueue, cfg.AutoscaleColdStart = 2, 2, 3, 150*time.Millisecond
	cfg.StepBase, cfg.PerSeq = 2*time.Millisecond, 0
	s := startSim(t, cfg)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() { streamChat(t, s.Server, fmt.Sprintf("r%02d", i), 4, 40) })
	}
	wg.Wait()
	_, metrics := get(t, s.URL()+"/metrics")
	assert.Contains(t, string(metrics), `perfgate_sim_replicas{model_name="perfgate-sim-8b"} 2`)
	recs := s.records(t)
	require.Len(t, recs, 12)
	var one, two []TruthRecord
	for _, r := range recs {
		switch r.Replicas {
		case 1:
			one = append(one, r)
		case 2:
			two = append(two, r)
		default:
			t.Errorf("%s: replicas %d, want 1 or 2", r.RequestID, r.Replicas)
		}
	}
	require.NotEmpty(t, one, "the first requests are admitted by one replica")
	require.NotEmpty(t, two, "the queue started a second")
	// Two sequences at a time until the cold start is over: 40 tokens at
	// 2 ms a step is 80 ms a pair, so the second replica is ready while
	// the queue still holds requests, which it admits in fours.
	var firstTwo int64 = 1 << 62
	for _, r := range two {
		firstTwo = min(firstTwo, r.FirstTokenNS)
	}
	assert.GreaterOrEqual(t, time.Duration(firstTwo), cfg.AutoscaleColdStart, "no request is served by the second replica before its cold start")

	plain := startSim(t, testConfig())
	streamChat(t, plain.Server, "solo", 4, 4)
	_, metrics = get(t, plain.URL()+"/metrics")
	assert.NotContains(t, string(metrics), "perfgate_sim_replicas")
	assert.Zero(t, plain.records(t)["solo"].Replicas, "no autoscaling, no replicas in the truth")
}

func TestAutoscaleFlagsAreChecked(t *testing.T) {
	for _, c := range []struct {
		max, queue int
		cold       time.Duration
		want       string
	}{
		{2, 0, time.Second, "--autoscale-queue: must be >= 1"},
		{0, 4, 0, "--autoscale-queue, --autoscale-cold-start and --autoscale-idle need --autoscale-max 2 or more"},
		{65, 4, 0, "--autoscale-max: must be from 0 to 64"},
		{2, 4, -time.Second, "--autoscale-cold-start: must be >= 0"},
	} {
		cfg := DefaultConfig()
		cfg.AutoscaleMax, cfg.AutoscaleQueue, cfg.AutoscaleColdStart = c.max, c.queue, c.cold
		assert.ErrorContains(t, cfg.Validate(), c.want)
	}
}

// The autoscaler on the engine's own times: a queue as long as
// --autoscale-queue starts a replica, ready a cold start later, one at a
// time up to --autoscale-max; idle for --autoscale-idle, the engine is back
// to one replica and a replica starting is cancelled.
// Idle for --autoscale-idle, a scaled-up simulator is back to one replica
// by itself: /metrics says so before any next request.
func TestAutoscaleScalesDownWhileIdle(t *testing.T) {
	cfg := testConfig()
	cfg.MaxBatch, cfg.AutoscaleMax, cfg.AutoscaleQueue, cfg.AutoscaleColdStart, cfg.AutoscaleIdle = 1, 2, 2, 50*time.Millisecond, 100*time.Millisecond
	cfg.StepBase, cfg.PerSeq = 2*time.Millisecond, 0
	s := startSim(t, cfg)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { streamChat(t, s.Server, fmt.Sprintf("r%02d", i), 4, 40) })
	}
	wg.Wait()
	replicas := func(n int) string { return fmt.Sprintf(`perfgate_sim_replicas{model_name="perfgate-sim-8b"} %d`, n) }
	require.Eventually(t, func() bool {
		_, metrics := get(t, s.URL()+"/metrics")
		return strings.Contains(string(metrics), replicas(1))
	}, 10*time.Second, 10*time.Millisecond, "idle past --autoscale-idle, the gauge reads one replica without a request")
	var two bool
	for _, r := range s.records(t) { // closes the simulator
		two = two || r.Replicas == 2
	}
	assert.True(t, two, "the queue had started a second replica")
}

func TestAutoscaleOnTheEnginesClock(t *testing.T) {
	cfg := testConfig()
	cfg.MaxBatch, cfg.AutoscaleMax, cfg.AutoscaleQueue, cfg.AutoscaleColdStart, cfg.AutoscaleIdle = 2, 3, 2, time.Second, 10*time.Second
	t0 := time.Now()
	e := newEngine(cfg, t0, newMetrics(cfg))
	e.waiting = []*seq{{}}
	e.autoscale(t0)
	assert.True(t, e.scaleReady.IsZero(), "one waiting, under --autoscale-queue: no replica starts")
	e.waiting = append(e.waiting, &seq{})
	e.autoscale(t0)
	assert.Equal(t, t0.Add(time.Second), e.scaleReady, "two waiting: a replica starts, ready a cold start later")
	e.autoscale(t0.Add(500 * time.Millisecond))
	assert.Equal(t, 1, e.replicas, "not before its cold start")
	assert.Equal(t, t0.Add(time.Second), e.scaleReady, "one replica starts at a time")
	e.autoscale(t0.Add(time.Second))
	assert.Equal(t, 2, e.replicas)
	assert.Equal(t, t0.Add(2*time.Second), e.scaleReady, "the queue is still long: the next starts")
	e.autoscale(t0.Add(2 * time.Second))
	e.autoscale(t0.Add(3 * time.Second))
	assert.Equal(t, 3, e.replicas, "up to --autoscale-max")
	assert.True(t, e.scaleReady.IsZero(), "none past --autoscale-max")

	e.waiting = nil
	e.idleSince = t0.Add(3 * time.Second)
	e.scaleDown(t0.Add(12 * time.Second))
	assert.Equal(t, 3, e.replicas, "idle 9 s, under --autoscale-idle")
	e.scaleReady = t0.Add(14 * time.Second)
	e.scaleDown(t0.Add(13 * time.Second))
	assert.Equal(t, 1, e.replicas, "idle 10 s: one replica")
	assert.True(t, e.scaleReady.IsZero(), "and the one starting cancelled")
}
