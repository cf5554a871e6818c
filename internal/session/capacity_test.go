package session

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/sim"
)

// startBatchSim starts the simulator with room for three sequences at a
// time and 4 ms steps: a fourth user waits for a whole answer (16 tokens,
// about 70 ms) before its first token, so a TTFT SLO of 35 ms breaks at 4
// users on any machine, however slow.
func startBatchSim(t *testing.T) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.MaxBatch, cfg.Jitter = 4*time.Millisecond, 3, 0
	srv, err := sim.Start(context.Background(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv.URL()
}

// A closed-loop capacity search against the simulator: probes within [min,
// max], an interval below the users at which requests must queue, one
// sample per repetition, the capacity point's repetitions as the
// scenario's, and a result that validates and survives JSON.
func TestRunCapacitySearch(t *testing.T) {
	url := startBatchSim(t)
	cfg, _ := prepare(t, url, "2", `  - name: chat-capacity
    synth: {requests: 16, input: {type: fixed, value: 8}, output: {type: fixed, value: 16}}
    load: {type: closed, concurrency: 1}
`)
	// The search chooses the users; defaults are left for capacitySpec.
	sc := &cfg.Scenarios[0]
	sc.Load.Concurrency = 0
	sc.Capacity = &config.Capacity{SLO: map[string]time.Duration{"ttft.p99": 35 * time.Millisecond}, Min: 1, Max: 8}
	scenarios, err := run.Prepare(cfg, nil)
	require.NoError(t, err)

	var log bytes.Buffer
	res, err := Run(context.Background(), cfg, scenarios, Options{
		RunID: "cap", StartStack: (&starter{}).start, Phases: run.NewPhases(&log, false), Log: &log,
		More: func(*result.ScenarioResult) bool { t.Error("More asked for a capacity scenario"); return false },
	})
	require.NoError(t, err, "log:\n%s", log.String())
	require.Len(t, res.Scenarios, 1)
	got := res.Scenarios[0]
	c := got.Capacity
	require.NotNil(t, c, "log:\n%s", log.String())

	spec := capacitySpec(cfg, cfg.Scenarios[0])
	assert.Equal(t, config.CapacityConcurrency, c.Search.Metric)
	assert.Equal(t, 3.0, c.Search.Start, "the default start: sqrt(1·8) rounded")
	assert.Equal(t, 2, c.Search.Repetitions, "the default: repetitions.max")
	assert.Equal(t, spec.Budget, c.Search.Budget)
	assert.Equal(t, map[string]float64{"ttft.p99": 35}, c.Search.SLO)

	assert.Equal(t, result.CapacityBracketed, c.Outcome, "log:\n%s", log.String())
	assert.GreaterOrEqual(t, c.Holds, 1.0)
	assert.LessOrEqual(t, c.Breaks, 4.0, "a fourth user must queue for a whole answer")
	assert.Less(t, c.Holds, c.Breaks)
	assert.LessOrEqual(t, len(c.Probes), c.Search.Budget)
	for i, p := range c.Probes {
		assert.True(t, p.Load >= 1 && p.Load <= 8 && p.Load == math.Round(p.Load), "probe %d at %v users", i, p.Load)
		assert.Len(t, p.Repetitions, 2, "probe %d", i)
		for _, r := range p.Repetitions {
			assert.Nil(t, r.Histograms)
			assert.Equal(t, 16, r.Sent)
		}
	}
	assert.Equal(t, c.Holds, c.Probes[c.At].Load)
	require.Len(t, c.Samples, 2)
	for i, smp := range c.Samples {
		assert.Equal(t, i+1, smp.Repetition)
		assert.True(t, smp.Load >= 1 && smp.Load <= 8, "sample %d at %v", i+1, smp.Load)
		assert.Greater(t, smp.RequestRate, 0.0)
	}
	assert.Greater(t, c.RequestRate, 0.0)
	assert.Greater(t, c.OutputThroughput, 0.0)
	assert.Nil(t, c.CostPerMTok, "no price configured")

	// The scenario: the capacity point's repetitions, whole; the shape
	// without users.
	require.Len(t, got.Repetitions, 2)
	assert.NotEmpty(t, got.Repetitions[0].Histograms)
	assert.Zero(t, got.Load.Concurrency)
	assert.Equal(t, config.LoadClosed, got.Load.Type)
	assert.Nil(t, got.Sweep)
	require.NotNil(t, got.Seed, "the seed a capacity gate pairs the samples by")
	assert.Equal(t, cfg.Seed, *got.Seed)
	assert.Contains(t, log.String(), "chat-capacity: probe 1/")
	assert.Contains(t, log.String(), "(bracket) 3 users: ")

	require.NoError(t, res.Validate())
	data, err := json.Marshal(res)
	require.NoError(t, err)
	back, err := result.Decode(data, "result.json")
	require.NoError(t, err)
	assert.Equal(t, c, back.Scenarios[0].Capacity)
	assert.Equal(t, got.Seed, back.Scenarios[0].Seed)
}

func TestCapacitySpecDefaults(t *testing.T) {
	cfg := &config.Config{Repetitions: config.Repetitions{Min: 3, Max: 6}}
	sc := config.Scenario{Load: config.Load{Type: config.LoadPoisson, MaxInFlight: 4}, MaxErrorRate: 0.02,
		Capacity: &config.Capacity{SLO: map[string]time.Duration{"tpot.p99": 3 * time.Millisecond, "ttft.p99": 1500 * time.Microsecond}, Min: 10, Max: 640}}
	s := capacitySpec(cfg, sc)
	assert.Equal(t, config.CapacityRequestRate, s.Metric)
	assert.False(t, s.Integer)
	assert.Equal(t, 80.0, s.Start)
	assert.Equal(t, 0.05, s.Resolution)
	assert.Equal(t, config.HoldsEvery, s.Rule)
	assert.Equal(t, 6, s.Repetitions)
	assert.Equal(t, 8, s.Budget)
	assert.True(t, s.Capped)
	assert.Equal(t, 0.02, s.MaxErrorRate)
	require.Len(t, s.SLO, 2)
	assert.Equal(t, "tpot.p99", s.SLO[0].Metric, "objectives in a fixed order")
	assert.Equal(t, 3.0, s.SLO[0].LimitMS)
	assert.Equal(t, 1.5, s.SLO[1].LimitMS)
	require.NoError(t, s.Check())

	sc.Capacity.Holds, sc.Capacity.Repetitions, sc.Capacity.Probes = config.HoldsBound, 4, 5
	s = capacitySpec(cfg, sc)
	assert.Equal(t, 0.95, s.Confidence)
	assert.Equal(t, 4, s.Repetitions)
	assert.Equal(t, 5, s.Budget)
}

// A closed loop's probe whose warm-up never gets steady fails the search
// as warmup.on_unsteady: fail says: its users wait for their answers, so
// an unsteady warm-up is no overload for the probe's repetitions to judge.
func TestCapacityClosedLoopUnsteadyFails(t *testing.T) {
	url := startBatchSim(t)
	cfg, _ := prepare(t, url, "2", `  - name: chat-capacity
    synth: {requests: 8, input: {type: fixed, value: 8}, output: {type: fixed, value: 16}}
    load: {type: closed, concurrency: 1}
`)
	sc := &cfg.Scenarios[0]
	sc.Load.Concurrency = 0
	sc.Capacity = &config.Capacity{SLO: map[string]time.Duration{"ttft.p99": 35 * time.Millisecond}, Min: 1, Max: 8}
	// One window fits in max: the windows method, which needs two, is never steady.
	cfg.Warmup = config.Warmup{Method: config.WarmupWindows, Window: 100 * time.Millisecond, Windows: 2,
		Tolerance: 0.5, Max: 150 * time.Millisecond, OnUnsteady: "fail"}
	scenarios, err := run.Prepare(cfg, nil)
	require.NoError(t, err)
	var log bytes.Buffer
	_, err = Run(context.Background(), cfg, scenarios, Options{
		RunID: "cap", StartStack: (&starter{}).start, Phases: run.NewPhases(&log, false), Log: &log,
	})
	var unsteady *run.UnsteadyError
	require.ErrorAs(t, err, &unsteady, "log:\n%s", log.String())
	assert.NotContains(t, log.String(), "measuring the probe anyway")
}
