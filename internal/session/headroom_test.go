package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/simstack"
	"github.com/perfgate/perfgate/internal/stat"
)

// startKVSim starts the simulator with a KV cache of kv tokens and short
// steps: a request whose prompt and output do not fit the whole cache is
// refused with a 400, the truth the search must find at one user.
func startKVSim(t *testing.T, kv int) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.Jitter, cfg.KVCacheTokens = time.Millisecond, 0, kv
	cfg.PerPrefillToken = 0
	srv, err := sim.Start(context.Background(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv.URL()
}

// A headroom search over context at one user lands within one resolution
// step of the context the simulator refuses past, keeps the refusal's
// message as its boundary, and gives a result that validates and survives
// JSON.
func TestRunHeadroomSearch(t *testing.T) {
	const kv = 1000
	res, log := refusalSearch(t, kv, "2", 64)
	got := res.Scenarios[0]
	c := got.Capacity
	require.NotNil(t, c, "log:\n%s", log)
	assert.Equal(t, result.HeadroomContext, c.Search.Metric)
	require.NotNil(t, c.Search.Headroom)
	assert.Equal(t, 1, c.Search.Headroom.Users)
	assert.Equal(t, 16, c.Search.Headroom.OutputTokens)
	require.NotNil(t, c.Calibration)
	assert.True(t, c.Calibration.Measured, "the simulator reports usage")
	assert.InDelta(t, 1, c.Calibration.TokensPerWord, 1e-9, "one token a word")
	assert.InDelta(t, 5, c.Calibration.OverheadTokens, 1e-9, "the salt's five words")

	assert.Equal(t, result.CapacityBracketed, c.Outcome, "log:\n%s", log)
	assert.LessOrEqual(t, c.Holds, float64(kv))
	assert.Greater(t, c.Breaks, float64(kv))
	assert.LessOrEqual(t, c.Breaks/c.Holds, 1+c.Search.Resolution+1e-9, "within one step")
	assert.Contains(t, c.Boundary, "http 400")
	assert.Contains(t, c.Boundary, "failed")
	for _, p := range c.Probes {
		if p.Load > kv {
			assert.False(t, p.Held, "probe at %v", p.Load)
			assert.Contains(t, p.Why, "http 400", "probe at %v", p.Load)
		} else {
			assert.True(t, p.Held, "probe at %v: %s", p.Load, p.Why)
			for _, r := range p.Repetitions {
				assert.Equal(t, 2, r.Sent, "two requests a user")
				assert.Equal(t, int(p.Load), (r.PromptTokens+r.OutputTokens)/r.Completed, "the context asked, by the server's count")
			}
		}
	}
	require.Len(t, c.Samples, 2)
	for _, smp := range c.Samples {
		assert.True(t, smp.Load >= c.Holds && smp.Load <= c.Breaks, "sample %v in [%v, %v]", smp.Load, c.Holds, c.Breaks)
	}
	assert.Contains(t, c.Warnings, "the engine's metrics page did not report the requests running (whether every user ran at once) or preemptions (headroom.max_preemptions): the probes were judged on refusals, cut answers, crashes and SLOs alone")
	assert.Contains(t, log, fmt.Sprintf("headroom %v tokens", c.Holds))
	values, err := got.Values("headroom")
	require.NoError(t, err)
	assert.Len(t, values, 2)
	_, err = got.Values("capacity")
	assert.Error(t, err, "a headroom search has no capacity")

	require.NoError(t, res.Validate())
	data, err := json.Marshal(res)
	require.NoError(t, err)
	back, err := result.Decode(data, "result.json")
	require.NoError(t, err)
	assert.Equal(t, c, back.Scenarios[0].Capacity)
}

// refusalSearch runs a headroom search over context at one user, from min
// to 8192 tokens with 16 output tokens, against a simulator that refuses
// past kv tokens, with reps repetitions a probe; it returns the result and
// the run's log.
func refusalSearch(t *testing.T, kv int, reps string, min int) (*result.Result, string) {
	t.Helper()
	url := startKVSim(t, kv)
	cfg, scenarios := prepare(t, url, reps, fmt.Sprintf(`  - name: long
    headroom: {users: 1, output_tokens: 16, min: %d, max: 8192}
`, min))
	var log bytes.Buffer
	res, err := Run(context.Background(), cfg, scenarios, Options{
		RunID: "hr", StartStack: (&starter{}).start, Phases: run.NewPhases(&log, false), Log: &log,
	})
	require.NoError(t, err, "log:\n%s", log.String())
	return res, log.String()
}

// The spec a headroom section runs as: whole numbers, any failure breaks
// a probe, no SLO needed, the limits as the search's Limit.
func TestHeadroomSpec(t *testing.T) {
	one := 1.0
	sc := config.Scenario{Headroom: &config.Headroom{Search: config.HeadroomUsers, Context: 4096, OutputTokens: 64,
		Min: 1, Max: 64, Start: 8, Resolution: 0.05, Holds: config.HoldsEvery, Repetitions: 3, MaxPreemptions: &one, MaxKVCache: 0.9}}
	s := headroomSpec(sc, false)
	require.NoError(t, s.Check())
	assert.Equal(t, config.CapacityConcurrency, s.Metric)
	assert.True(t, s.Integer)
	assert.Zero(t, s.MaxErrorRate)
	assert.Empty(t, s.SLO)
	assert.Equal(t, &result.HeadroomSearch{Context: 4096, OutputTokens: 64, MaxPreemptions: 1, MaxKVCache: 0.9}, s.Headroom)

	f := func(x float64) *float64 { return &x }
	for _, tc := range []struct {
		name string
		rep  result.Repetition
		want string
	}{
		{"holds", result.Repetition{Index: 1, Sent: 4, Completed: 4, OutputTokens: 256, TokensFrom: "usage",
			Engine: &result.EngineTelemetry{Preemptions: f(1), KVCachePeak: f(0.9), RunningPeak: f(4)}}, ""},
		{"refused", result.Repetition{Index: 2, Sent: 4, Completed: 3, Failed: 1, OutputTokens: 192, TokensFrom: "usage",
			FirstError: "http 400: too long"}, "rep 2: 1 of 4 requests failed: http 400: too long"},
		{"cut", result.Repetition{Index: 1, Sent: 4, Completed: 4, OutputTokens: 250, TokensFrom: "usage"},
			"rep 1: answers cut short: 250 output tokens of the 256 asked (4 requests × 64): the server stopped early (out of context, or it ignores min_tokens and ignore_eos)"},
		{"cut, counted from chunks: not judged", result.Repetition{Index: 1, Sent: 4, Completed: 4, OutputTokens: 250, TokensFrom: "chunks"}, ""},
		{"preempted", result.Repetition{Index: 3, Sent: 4, Completed: 4, OutputTokens: 256, TokensFrom: "usage",
			Engine: &result.EngineTelemetry{Preemptions: f(2)}}, "rep 3: the engine preempted 2 requests (the limit is 1): its KV cache could not hold every context"},
		{"waited", result.Repetition{Index: 1, Sent: 4, Completed: 4, OutputTokens: 256, TokensFrom: "usage",
			Engine: &result.EngineTelemetry{RunningPeak: f(3), Scrapes: 5}}, "rep 1: the engine ran at most 3 of the 4 users at once: the others waited for room (its KV cache, or its batch, holds fewer contexts)"},
		{"waited, too few scrapes to tell", result.Repetition{Index: 1, Sent: 4, Completed: 4, OutputTokens: 256, TokensFrom: "usage",
			Engine: &result.EngineTelemetry{RunningPeak: f(3), Scrapes: 4}}, ""},
		{"kv", result.Repetition{Index: 1, Sent: 4, Completed: 4, OutputTokens: 256, TokensFrom: "usage",
			Engine: &result.EngineTelemetry{KVCachePeak: f(0.95)}}, "rep 1: KV-cache usage peaked at 95.0% (the limit is 90.0%)"},
		{"crashed", result.Repetition{Index: 2, FirstError: "the server died: boom"}, "rep 2: the server died: boom"},
		{"died after its requests", result.Repetition{Index: 2, Sent: 4, Completed: 4, OutputTokens: 256, TokensFrom: "usage", FirstError: "the server died: boom"},
			"rep 2: the server died: boom, after its requests"},
		{"no engine page, none read", result.Repetition{Index: 1, Sent: 4, Completed: 4, OutputTokens: 256, TokensFrom: "usage"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, s.Limit(4, &tc.rep))
		})
	}

	// With the engine's page read, a repetition it was not read in is not
	// judged as holding.
	read := headroomSpec(sc, true)
	assert.Equal(t, "rep 1: the engine's metrics page was not read during it (a server under stress may stop answering it): nothing says it held",
		read.Limit(4, &result.Repetition{Index: 1, Sent: 4, Completed: 4, OutputTokens: 256, TokensFrom: "usage"}))
	assert.Equal(t, "rep 1: the engine's metrics page was not read during it (a server under stress may stop answering it): nothing says it held",
		read.Limit(4, &result.Repetition{Index: 1, Sent: 4, Completed: 4, OutputTokens: 256, TokensFrom: "usage", Engine: &result.EngineTelemetry{Scrapes: 1}}))
	assert.Empty(t, read.Limit(4, &result.Repetition{Index: 1, Sent: 4, Completed: 4, OutputTokens: 256, TokensFrom: "usage", Engine: &result.EngineTelemetry{Scrapes: 2}}))
}

// A prompt's words from the calibration: tokens less the overhead, over
// the tokens a word, at least one.
func TestPromptWords(t *testing.T) {
	c := &result.Calibration{TokensPerWord: 1.5, OverheadTokens: 10}
	assert.Equal(t, 100, promptWords(c, 160))
	assert.Equal(t, 1, promptWords(c, 5))
	assert.Equal(t, 64, promptWords(&result.Calibration{TokensPerWord: 1}, 64))
}

// The headroom gate decides on the searches' samples as pairs (the sides
// share a seed): an A/A passes, and a simulator with half the KV cache is
// a headroom regression.
func TestHeadroomGate(t *testing.T) {
	search := func(kv int) *result.Result {
		t.Helper()
		res, _ := refusalSearch(t, kv, "6", 256)
		return res
	}
	base := search(2000)
	for _, tc := range []struct {
		name string
		kv   int
		want stat.Outcome
	}{{"A/A", 2000, stat.Pass}, {"half the KV cache", 1000, stat.Regression}} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := compare.Compare([]*result.Result{base}, search(tc.kv), compare.Options{})
			require.NoError(t, err)
			require.Len(t, v.Scenarios, 1)
			require.Len(t, v.Scenarios[0].Gates, 1)
			g := v.Scenarios[0].Gates[0]
			assert.Equal(t, "headroom", g.Metric)
			assert.Equal(t, tc.want, g.Outcome, "%s", g.Reason)
			t.Logf("%s: %s", tc.name, g.Reason)
		})
	}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// headroomRun runs a headroom scenario against in-process simulators of
// scfg, started (and started again) by perfgate, its engine telemetry on.
func headroomRun(t *testing.T, scfg sim.Config, reps, scenario string) (*result.Result, *simstack.Starter, string) {
	t.Helper()
	addr := freeAddr(t)
	st := simstack.New(func(string) sim.Config { return scfg })
	dir := t.TempDir()
	yaml := fmt.Sprintf(`
target: {base_url: "http://%s"}
stack:
  kind: process
  process: {command: [perfgate, sim]}
  log: %s
warmup: {method: none}
telemetry: {gpu: off, interval: 100ms}
repetitions: %s
scenarios:
%s`, addr, filepath.Join(dir, "stack.log"), reps, scenario)
	path := filepath.Join(dir, "perfgate.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	cfg, err := config.Parse([]byte(yaml), path)
	require.NoError(t, err)
	scenarios, err := run.Prepare(cfg, nil)
	require.NoError(t, err)
	var log bytes.Buffer
	res, err := Run(context.Background(), cfg, scenarios, Options{
		RunID: "hr", StartStack: st.Start, Phases: run.NewPhases(&log, false), Log: &log,
	})
	require.NoError(t, err, "log:\n%s", log.String())
	t.Log(log.String())
	return res, st, log.String()
}

// Under KV-cache pressure: at 4 users the search lands within one step of
// the context at which the simulator starts to preempt, the probes past it
// break on the engine's preemption counter, and a search over users at a
// context finds the users the cache holds.
func TestHeadroomFindsThePreemptionBoundary(t *testing.T) {
	scfg := sim.DefaultConfig()
	scfg.StepBase, scfg.Jitter, scfg.PerPrefillToken = time.Millisecond, 0, 0
	scfg.KVPolicy, scfg.KVCacheTokens = sim.KVPreempt, 4000
	const users, output = 4, 256
	truth := scfg.HeadroomContext(users, output)
	require.Greater(t, truth, 512)

	res, _, log := headroomRun(t, scfg, "1", fmt.Sprintf(`  - name: ctx
    headroom: {users: %d, output_tokens: %d, min: 300, max: 16384}
`, users, output))
	c := res.Scenarios[0].Capacity
	require.NotNil(t, c)
	assert.Equal(t, result.CapacityBracketed, c.Outcome, log)
	assert.LessOrEqual(t, c.Holds, float64(truth), "truth %d\n%s", truth, log)
	assert.Greater(t, c.Breaks, float64(truth), "truth %d\n%s", truth, log)
	assert.LessOrEqual(t, c.Breaks/c.Holds, 1+c.Search.Resolution+1e-9, "within one step")
	assert.Regexp(t, "the engine preempted|the engine ran at most", c.Boundary, log)
	for _, p := range c.Probes {
		for _, r := range p.Repetitions {
			require.NotNil(t, r.Engine, "engine telemetry at %v", p.Load)
			require.NotNil(t, r.Engine.Preemptions)
			if p.Load <= float64(truth) {
				assert.Zero(t, *r.Engine.Preemptions, "probe at %v", p.Load)
			}
		}
	}
	assert.Empty(t, c.Warnings, "preemptions were checked")

	usersTruth := scfg.HeadroomUsers(1000, output)
	res, _, log = headroomRun(t, scfg, "1", fmt.Sprintf(`  - name: users
    headroom: {search: users, context: 1000, output_tokens: %d, min: 1, max: 16}
`, output))
	c = res.Scenarios[0].Capacity
	require.NotNil(t, c)
	assert.Equal(t, config.CapacityConcurrency, c.Search.Metric)
	assert.Equal(t, float64(usersTruth), c.Holds, log)
	assert.Equal(t, float64(usersTruth+1), c.Breaks, log)
}

// A server that dies of an out-of-memory under a probe is that probe's
// answer: the search goes on after perfgate starts the stack again, lands
// within one step of the context the simulator dies past, and keeps the
// crash's message as its boundary.
func TestHeadroomOutOfMemoryIsTheAnswer(t *testing.T) {
	scfg := sim.DefaultConfig()
	scfg.StepBase, scfg.Jitter, scfg.PerPrefillToken = time.Millisecond, 0, 0
	scfg.OOMTokens = 1500
	truth := scfg.HeadroomContext(1, 16)
	require.Equal(t, 1500, truth)

	res, st, log := headroomRun(t, scfg, "2", `  - name: oom
    headroom: {users: 1, output_tokens: 16, min: 256, max: 8192}
`)
	c := res.Scenarios[0].Capacity
	require.NotNil(t, c)
	assert.Equal(t, result.CapacityBracketed, c.Outcome, log)
	assert.LessOrEqual(t, c.Holds, float64(truth), log)
	assert.Greater(t, c.Breaks, float64(truth), log)
	assert.LessOrEqual(t, c.Breaks/c.Holds, 1+c.Search.Resolution+1e-9)
	assert.Contains(t, c.Boundary, "CUDA out of memory", log)
	assert.Contains(t, c.Boundary, "the server died", log)
	restarts := 0
	for _, p := range c.Probes {
		if p.Restarted {
			restarts++
			assert.False(t, p.Held)
			assert.Greater(t, p.Load, float64(truth))
		}
	}
	assert.Positive(t, restarts)
	assert.Len(t, st.Starts(), restarts+1, "one start, and one after each death")
	assert.Contains(t, log, "starting the stack again")
	require.NoError(t, res.Validate())
}
