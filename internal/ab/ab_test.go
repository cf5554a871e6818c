package ab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/kube"
	"github.com/perfgate/perfgate/internal/kube/kubetest"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/session"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/simstack"
	"github.com/perfgate/perfgate/internal/stack"
)

// simStarter starts the in-process simulator at each arm's address, with
// short steps, a 50 ms cold start, and a slowdown by address.
type simStarter struct {
	*simstack.Starter
	slowdown map[string]float64
}

func newSimStarter() *simStarter {
	st := &simStarter{slowdown: map[string]float64{}}
	st.Starter = simstack.New(func(addr string) sim.Config {
		sc := sim.DefaultConfig()
		sc.StepBase, sc.Jitter = time.Millisecond, 0.02
		sc.ColdStart = 50 * time.Millisecond
		if f := st.slowdown[addr]; f > 0 {
			sc.Slowdown = f
		}
		return sc
	})
	return st
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

// armConfig is a config of one small scenario against a process stack at
// addr (started by a simStarter), with extra YAML appended.
func armConfig(t *testing.T, addr, extra string) (*config.Config, []run.Scenario) {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`
target: {base_url: "http://%s", model: auto}
stack:
  kind: process
  process: {command: [sim, --addr, %q]}
  log: %s
  health_interval: 100ms
warmup: {window: 100ms, windows: 2, tolerance: 0.5, max: 10s}
telemetry: {metrics: off, gpu: off}
gates: {ttft.p99: off, e2e.p99: off, goodput: off, error_rate: off, tpot.p99: +10%%, output_throughput: -5%%}
%s`, addr, addr, filepath.Join(dir, "stack.log"), extra)
	if !strings.Contains(extra, "scenarios:") {
		yaml += `
scenarios:
  - name: chat
    synth: {requests: 12, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed, concurrency: 3}
`
	}
	if !strings.Contains(extra, "seed:") {
		yaml += "seed: 7\n"
	}
	switch {
	case strings.Contains(extra, "rounds:"):
	case strings.Contains(yaml, "ab: {"):
		yaml = strings.Replace(yaml, "ab: {", "ab: {rounds: 6, ", 1)
	default:
		yaml += "ab: {rounds: 6}\n"
	}
	path := filepath.Join(dir, "perfgate.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
	cfg, err := config.Parse([]byte(yaml), path)
	require.NoError(t, err)
	scs, err := run.Prepare(cfg, nil)
	require.NoError(t, err)
	return cfg, scs
}

// A co-resident A/B of a 1.5x slower candidate: both stacks started once,
// six rounds in ABBA order, the candidate's regression found pair by pair,
// both results marked with their arm, and both stacks stopped.
func TestCoResidentFindsASlowerCandidate(t *testing.T) {
	baseAddr, candAddr := freeAddr(t), freeAddr(t)
	st := newSimStarter()
	st.slowdown[candAddr] = 1.5
	baseCfg, baseSc := armConfig(t, baseAddr, "")
	candCfg, candSc := armConfig(t, candAddr, "")
	require.NoError(t, Check(baseCfg, candCfg, baseSc, candSc))
	var log bytes.Buffer
	out, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{
		BaseName: "base.yaml", CandidateName: "perfgate.yaml",
		Session: session.Options{StartStack: st.Start, Log: &log, Phases: run.NewPhases(&log, false)},
	})
	require.NoError(t, err, "log:\n%s", log.String())

	assert.Equal(t, []string{baseAddr, candAddr}, st.Starts(), "co-resident: each stack starts once")
	for _, addr := range []string{baseAddr, candAddr} {
		assert.True(t, st.Running(addr).Stopped(), "the stack at %s is still running after the A/B", addr)
	}
	v := out.Verdict
	require.NotNil(t, v.AB)
	assert.Equal(t, config.ABCoResident, v.AB.Mode)
	assert.Equal(t, 6, v.AB.Rounds)
	assert.Equal(t, []string{"AB", "BA", "AB", "BA", "AB", "BA"}, v.AB.Order)
	assert.Equal(t, "base.yaml", v.AB.Base)
	assert.Equal(t, "regression", string(v.Outcome), "a 1.5x slower candidate")
	for _, res := range []*result.Result{out.Base, out.Candidate} {
		require.Len(t, res.Scenarios, 1)
		assert.Len(t, res.Scenarios[0].Repetitions, 6)
		for i, rep := range res.Scenarios[0].Repetitions {
			assert.Equal(t, i+1, rep.Index, "repetition %d is round %d", i, i+1)
		}
	}
	assert.Equal(t, &result.ABArm{Arm: Base, Mode: config.ABCoResident, First: []bool{true, false, true, false, true, false}}, out.Base.AB)
	assert.Equal(t, &result.ABArm{Arm: Candidate, Mode: config.ABCoResident, First: []bool{false, true, false, true, false, true}}, out.Candidate.AB)
	assert.Contains(t, log.String(), "==> base: chat: measuring round 1")
	assert.Contains(t, log.String(), "==> candidate: chat: measuring round 6")
}

// Swap mode runs one stack at a time: one start per change of arm (ABBA
// makes that one per round after the first), every start's cold start in
// the results, and never two simulators up at once.
func TestSwapRestartsAtEveryChangeOfArm(t *testing.T) {
	baseAddr, candAddr := freeAddr(t), freeAddr(t)
	st := newSimStarter()
	baseCfg, baseSc := armConfig(t, baseAddr, "ab: {rounds: 5}\n")
	candCfg, candSc := armConfig(t, candAddr, "ab: {mode: swap, rounds: 5}\n")
	var log bytes.Buffer
	out, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{
		Session: session.Options{StartStack: st.Start, Log: &log, Phases: run.NewPhases(&log, false)},
	})
	require.NoError(t, err, "log:\n%s", log.String())
	// Rounds AB BA AB BA AB: base, cand | (cand) base | (base) cand | (cand) base | (base) cand.
	assert.Equal(t, []string{baseAddr, candAddr, baseAddr, candAddr, baseAddr, candAddr}, st.Starts())
	assert.Len(t, out.Base.Scenarios[0].ColdStartsMS, 3)
	assert.Len(t, out.Candidate.Scenarios[0].ColdStartsMS, 3)
	for _, c := range append(out.Base.Scenarios[0].ColdStartsMS, out.Candidate.Scenarios[0].ColdStartsMS...) {
		assert.GreaterOrEqual(t, c, 50.0, "a cold start includes the simulator's 50 ms")
	}
	assert.Equal(t, config.ABSwap, out.Verdict.AB.Mode)
	assert.Equal(t, config.ABSwap, out.Base.AB.Mode)
}

// A crash of the idle stack in co-resident mode stops the run while the
// other arm measures: exit 3, the crashed arm named, both stacks stopped.
func TestCoResidentCrashOfTheIdleArmFailsTheRun(t *testing.T) {
	baseAddr, candAddr := freeAddr(t), freeAddr(t)
	st := newSimStarter()
	long := `
scenarios:
  - name: chat
    synth: {requests: 100000, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed, concurrency: 2}
    duration: 1s
`
	baseCfg, baseSc := armConfig(t, baseAddr, long)
	candCfg, candSc := armConfig(t, candAddr, long)
	crashed := make(chan struct{})
	var once sync.Once
	// The base arm crashes as soon as the candidate completes a request of
	// its first round: the base stack is idle then.
	candCfg.Warmup.Method = config.WarmupNone
	baseCfg.Warmup.Method = config.WarmupNone
	var log bytes.Buffer
	_, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{
		Session: session.Options{RunID: "t", StartStack: st.Start, Log: &log, Phases: run.NewPhases(&log, false),
			OnRecord: func(r *result.Record) {
				if strings.HasPrefix(r.RequestID, "t-candidate-") {
					once.Do(func() { close(crashed); go st.Running(baseAddr).Crash() })
				}
			}},
	})
	require.Error(t, err)
	assert.Equal(t, exit.RunFailed, exit.Code(err), "err: %v", err)
	assert.Contains(t, err.Error(), "the base stack")
	assert.Contains(t, err.Error(), "while the candidate arm was measured")
	assert.NotContains(t, err.Error(), "interrupted")
	var crash *stack.CrashError
	assert.True(t, errors.As(err, &crash), "a *stack.CrashError in %v", err)
	<-crashed
	for _, addr := range []string{baseAddr, candAddr} {
		assert.True(t, st.Running(addr).Stopped(), "the stack at %s is still running after the failed A/B", addr)
	}
}

// In co-resident mode a second stack that cannot start says to try swap;
// two arms at one address are refused before anything starts.
func TestCoResidentRefusals(t *testing.T) {
	baseAddr, candAddr := freeAddr(t), freeAddr(t)
	st := newSimStarter()
	st.Refuse(candAddr, errors.New("CUDA out of memory"))
	baseCfg, baseSc := armConfig(t, baseAddr, "")
	candCfg, candSc := armConfig(t, candAddr, "")
	_, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{Session: session.Options{StartStack: st.Start}})
	require.Error(t, err)
	assert.Equal(t, exit.RunFailed, exit.Code(err))
	assert.Contains(t, err.Error(), "CUDA out of memory")
	assert.Contains(t, err.Error(), "use --mode swap")
	assert.Equal(t, []string{baseAddr}, st.Starts())

	same, sameSc := armConfig(t, baseAddr, "")
	st2 := newSimStarter()
	_, err = Run(context.Background(), baseCfg, same, baseSc, sameSc, Options{Session: session.Options{StartStack: st2.Start}})
	require.Error(t, err)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.Contains(t, err.Error(), "co-resident stacks need different ports")
	assert.Empty(t, st2.Starts(), "refused before anything starts")
}

// Configs that measure different things are refused with every difference
// named; the stack and the target may differ.
func TestCheckNamesEveryDifference(t *testing.T) {
	a, b := freeAddr(t), freeAddr(t)
	baseCfg, baseSc := armConfig(t, a, "")
	candCfg, candSc := armConfig(t, b, `seed: 8
scenarios:
  - name: chat
    synth: {requests: 12, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed, concurrency: 4}
    slo: {ttft: 1s}
`)
	err := Check(baseCfg, candCfg, baseSc, candSc)
	require.Error(t, err)
	assert.Equal(t, exit.Usage, exit.Code(err))
	for _, want := range []string{"load shape", "SLO", "seed: 7 → 8"} {
		assert.Contains(t, err.Error(), want)
	}

	other, otherSc := armConfig(t, b, `
scenarios:
  - name: other
    synth: {requests: 12, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed, concurrency: 3}
`)
	err = Check(baseCfg, other, baseSc, otherSc)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scenarios: base has chat, candidate has other")
}

// A capacity search is refused, naming the scenario; a sweep's points are
// checked like any scenario.
func TestCheckCapacityAndSweeps(t *testing.T) {
	a, b := freeAddr(t), freeAddr(t)
	const capacity = `
scenarios:
  - name: chat-capacity
    synth: {requests: 12, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed}
    capacity: {slo: {tpot.p99: 50ms}, min: 1, max: 8}
`
	baseCfg, baseSc := armConfig(t, a, capacity)
	candCfg, candSc := armConfig(t, b, capacity)
	err := Check(baseCfg, candCfg, baseSc, candSc)
	require.Error(t, err)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.Equal(t, "scenario chat-capacity searches its capacity or headroom, which perfgate ab does not do: gate it with perfgate gate", err.Error())

	const sweep = `
scenarios:
  - name: chat
    synth: {requests: 12, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed, concurrency: [1, 3]}
`
	baseCfg, baseSc = armConfig(t, a, sweep)
	candCfg, candSc = armConfig(t, b, sweep)
	require.Len(t, candSc, 2)
	assert.Equal(t, "chat.concurrency-3", candSc[1].Config.Name)
	assert.NoError(t, Check(baseCfg, candCfg, baseSc, candSc))

	otherCfg, otherSc := armConfig(t, b, strings.Replace(sweep, "[1, 3]", "[1, 4]", 1))
	err = Check(baseCfg, otherCfg, baseSc, otherSc)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scenarios: base has chat.concurrency-1, chat.concurrency-3, candidate has chat.concurrency-1, chat.concurrency-4")
}

// Two configs that name one stack log (the default, perfgate-stack.log)
// get one each, so co-resident stacks do not write over each other; the
// configs, and so their hashes, are left as they are.
func TestSeparateLogs(t *testing.T) {
	base := &config.Config{Stack: config.Stack{Log: "perfgate-stack.log"}}
	cand := &config.Config{Stack: config.Stack{Log: "./perfgate-stack.log"}}
	b, c := separateLogs(base, cand)
	assert.Equal(t, "perfgate-stack.base.log", b)
	assert.Equal(t, "perfgate-stack.candidate.log", c)
	assert.Equal(t, "perfgate-stack.log", base.Stack.Log)

	other := &config.Config{Stack: config.Stack{Log: "logs/pr.log"}}
	b, c = separateLogs(base, other)
	assert.Empty(t, b+c, "distinct logs stay as they are")
}

// Co-resident arms at one address are refused however the address is
// written, any replica of one at any of the other's; swap refuses a stack
// perfgate cannot restart.
func TestHoldable(t *testing.T) {
	cfg := func(url, kind string) *config.Config {
		return &config.Config{Target: config.Target{BaseURL: url}, Stack: config.Stack{Kind: kind}}
	}
	replicas := func(urls ...string) *config.Config {
		return &config.Config{Target: config.Target{BaseURL: urls[0], BaseURLs: urls}, Stack: config.Stack{Kind: "process"}}
	}
	for _, tt := range []struct {
		base, cand *config.Config
		mode, want string
	}{
		{cfg("http://localhost:8000", "process"), cfg("http://127.0.0.1:8000/v1", "process"), config.ABCoResident, "both arms serve at"},
		{cfg("http://[::1]:8000", "process"), cfg("http://127.0.0.1:8000", "process"), config.ABCoResident, "both arms serve at"},
		{cfg("http://127.0.0.1:8000", "process"), cfg("http://127.0.0.1:8001", "process"), config.ABCoResident, ""},
		{cfg("http://127.0.0.1:8000", "process"), cfg("http://127.0.0.1:8000", "process"), config.ABSwap, ""},
		{cfg("http://127.0.0.1:8000", "external"), cfg("http://127.0.0.1:8001", "process"), config.ABSwap, "the base config's stack is external"},
		{replicas("http://127.0.0.1:8001", "http://127.0.0.1:8002"), replicas("http://127.0.0.1:8003", "http://localhost:8002"), config.ABCoResident, "both arms serve at http://localhost:8002"},
		{replicas("http://127.0.0.1:8001", "http://127.0.0.1:8002"), cfg("http://127.0.0.1:8001", "process"), config.ABCoResident, "both arms serve at"},
		{replicas("http://127.0.0.1:8001", "http://127.0.0.1:8002"), replicas("http://127.0.0.1:8003", "http://127.0.0.1:8004"), config.ABCoResident, ""},
		{cfg(config.DefaultBaseURL, config.StackKubernetes), cfg(config.DefaultBaseURL, config.StackKubernetes), config.ABCoResident, ""},
	} {
		err := holdable(tt.base, tt.cand, tt.mode)
		if tt.want == "" {
			assert.NoError(t, err)
			continue
		}
		require.Error(t, err)
		assert.Equal(t, exit.Usage, exit.Code(err))
		assert.Contains(t, err.Error(), tt.want)
	}
}

// Rounds too few for the pairs' test to ever decide are refused before
// anything starts, with the rounds that would decide (perfgate ab tested
// them only to end inconclusive on every gate); a first look that cannot
// decide is warned of.
func TestUndetectable(t *testing.T) {
	addr := freeAddr(t)
	sevenGates := `
scenarios:
  - name: chat
    synth: {requests: 12, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed, concurrency: 3}
  - name: ungated
    synth: {requests: 12, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed, concurrency: 3}
`
	tests := []struct {
		reps           string
		refused, warns string
	}{
		{reps: "ab: {rounds: 6}\n", refused: "6 rounds cannot show a significant difference on the 7 gates of scenario chat: Holm's first step needs p < 0.00714 (alpha 0.05), and the signed-rank test's smallest p with 6 pairs is 0.0156: every gate would be inconclusive, neither a regression nor a pass. Set ab.rounds: 8 or more, or gate fewer metrics"},
		{reps: "ab: {rounds: {min: 6, max: 16}}\n", warns: "scenario chat: the first look, at 6 rounds, cannot decide"},
		{reps: "ab: {rounds: 8}\n"},
	}
	for _, tt := range tests {
		cfg, sc := armConfig(t, addr, tt.reps+sevenGates)
		cfg.Gates = nil // the defaults: 7 gates besides cold start
		cfg.Scenarios[1].Gates = map[string]string{"ttft.p95": "off", "ttft.p99": "off", "tpot.p99": "off", "e2e.p99": "off",
			"output_throughput": "off", "goodput": "off", "error_rate": "off", "cold_start": "off"}
		err := Check(cfg, cfg, sc, sc)
		if tt.refused != "" {
			require.Error(t, err, tt.reps)
			assert.Equal(t, exit.Usage, exit.Code(err), tt.reps)
			assert.Contains(t, err.Error(), tt.refused, "the ungated scenario takes no share of alpha")
			continue
		}
		require.NoError(t, err, tt.reps)
		got := Warnings(cfg, sc, config.ABSwap)
		if tt.warns == "" {
			assert.Empty(t, got, tt.reps)
			continue
		}
		require.Len(t, got, 1, tt.reps)
		assert.Contains(t, got[0], tt.warns)
	}
}

// The rounds needed count a suite's score gate only for a continuous
// suite, as the comparison tests it: at 8 rounds (a pair's test reaches
// 2^-8) the 7 default gates and two pass/fail suites (accuracy and error
// rate: 11 gates, 0.05/11 = 0.0045) decide; two continuous ones (13) do not.
func TestUndetectableCountsScoreOnlyForContinuousSuites(t *testing.T) {
	addr := freeAddr(t)
	dir := t.TempDir()
	suite := func(name, scorer, expected string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(`{"id":"a","prompt":"Say hi","scorer":"`+scorer+`","expected":`+expected+`}`+"\n"), 0o644))
		return p
	}
	check := func(a, b string) error {
		cfg, sc := armConfig(t, addr, fmt.Sprintf("ab: {rounds: 8}\nquality: {suites: [%q, %q]}\n", a, b))
		cfg.Gates = nil
		return Check(cfg, cfg, sc, sc)
	}
	assert.NoError(t, check(suite("exact.jsonl", "exact", `"hi"`), suite("numeric.jsonl", "numeric", "2")))
	err := check(suite("ref1.jsonl", "reference", `"hi"`), suite("ref2.jsonl", "reference", `"yo"`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "8 rounds cannot show a significant difference on the 13 gates")
}

// Quality suites are answered by both arms, mixed into the rounds' load
// until each item was sent once and the rest after the last round, and
// compared item by item in the verdict.
func TestQualityAnsweredByBothArms(t *testing.T) {
	suitePath, err := filepath.Abs("../../examples/evals/arithmetic.jsonl")
	require.NoError(t, err)
	suites, err := sim.LoadAnswers([]string{suitePath})
	require.NoError(t, err)
	baseAddr, candAddr := freeAddr(t), freeAddr(t)
	st := simstack.New(func(addr string) sim.Config {
		sc := sim.DefaultConfig()
		sc.StepBase, sc.Jitter = time.Millisecond, 0.02
		sc.Answers = suites
		return sc
	})
	quality := fmt.Sprintf("quality: {suites: [%q], mode: interleaved, share: 0.2}\n", suitePath)
	baseCfg, baseSc := armConfig(t, baseAddr, quality)
	candCfg, candSc := armConfig(t, candAddr, quality)
	out, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{Session: session.Options{StartStack: st.Start}})
	require.NoError(t, err)
	items := len(suites[0].Items)
	for _, res := range []*result.Result{out.Base, out.Candidate} {
		require.Len(t, res.Scenarios[0].Quality, 1)
		q := res.Scenarios[0].Quality[0]
		assert.Len(t, q.Items, items, "every item answered once")
		assert.Positive(t, q.Interleaved, "some items rode along with the rounds' load")
		assert.Less(t, q.Interleaved, items, "the rest were answered after the last round")
	}
	require.Len(t, out.Verdict.Scenarios[0].Quality, 1)
	assert.Equal(t, items, out.Verdict.Scenarios[0].Quality[0].N, "items compared pair by pair")
}

// In swap mode each arm's engine telemetry goes on across its restarts:
// every repetition of both arms has it, and an engine gate can be tested.
func TestSwapKeepsTelemetry(t *testing.T) {
	baseAddr, candAddr := freeAddr(t), freeAddr(t)
	st := newSimStarter()
	extra := "ab: {mode: swap, rounds: 4}\n"
	baseCfg, baseSc := armConfig(t, baseAddr, extra)
	candCfg, candSc := armConfig(t, candAddr, extra)
	for _, c := range []*config.Config{baseCfg, candCfg} {
		c.Telemetry.Metrics = config.TelemetryAuto
		c.Telemetry.Interval = 50 * time.Millisecond
	}
	out, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{Session: session.Options{StartStack: st.Start}})
	require.NoError(t, err)
	assert.Len(t, st.Starts(), 5, "AB BA AB BA: base, cand, base, cand, base")
	for _, res := range []*result.Result{out.Base, out.Candidate} {
		for _, rep := range res.Scenarios[0].Repetitions {
			assert.NotNil(t, rep.Engine, "%s repetition %d has no engine telemetry", res.AB.Arm, rep.Index)
		}
	}
}

// sleepLog is the real clock, logging how long each SleepUntil asked for.
type sleepLog struct {
	run.RealClock
	mu     sync.Mutex
	sleeps []time.Duration
}

func (c *sleepLog) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, time.Until(t))
	c.mu.Unlock()
	return c.RealClock.SleepUntil(ctx, t)
}

// Every round of each arm pauses for the cool-down after its warm-up's
// drain, as a run does before each repetition, repetition 1 included.
func TestRoundsCoolDown(t *testing.T) {
	baseAddr, candAddr := freeAddr(t), freeAddr(t)
	st := newSimStarter()
	const cooldown = 137 * time.Millisecond
	extra := "ab: {rounds: 2}\ncooldown: 137ms\n"
	baseCfg, baseSc := armConfig(t, baseAddr, extra)
	candCfg, candSc := armConfig(t, candAddr, extra)
	clk := &sleepLog{}
	var log bytes.Buffer
	_, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{
		Session: session.Options{StartStack: st.Start, Log: &log, Phases: run.NewPhases(&log, false), Clock: clk},
	})
	require.NoError(t, err, "log:\n%s", log.String())
	n := 0
	clk.mu.Lock()
	for _, d := range clk.sleeps {
		if d > cooldown-20*time.Millisecond && d <= cooldown {
			n++
		}
	}
	clk.mu.Unlock()
	assert.Equal(t, 4, n, "one cool-down a round for each arm: 2 rounds, 2 arms")
}

// perfgate ab on a cluster: each arm's release in a namespace of its own,
// both up at once (co-resident), rounds as on one machine. The test plays
// the controllers; each arm's port-forward lands on a simulator of its
// own, the candidate's 1.5x slower, and the pairs find it.
func TestCoResidentOnKubernetes(t *testing.T) {
	cluster := kubetest.NewCluster()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cluster.Serve(ctx, "gpu-1")
	var mu sync.Mutex
	forwardedTo := map[string]bool{}
	start := func(ctx context.Context, cfg config.Stack, o stack.Options) (stack.Instance, error) {
		o.Kubernetes = stack.KubernetesOptions{Clients: cluster.Clients, Poll: 20 * time.Millisecond,
			Forward: func(_ context.Context, _ *kube.Clients, ns, pod string, _, _ int) (string, func(), error) {
				sc := sim.DefaultConfig()
				sc.StepBase, sc.Jitter = time.Millisecond, 0.02
				if strings.Contains(ns, "candidate") {
					sc.Slowdown = 1.5
				}
				srv, err := sim.Start(context.Background(), "127.0.0.1:0", sc)
				if err != nil {
					return "", nil, err
				}
				mu.Lock()
				forwardedTo[ns+"/"+pod] = true
				mu.Unlock()
				return strings.TrimPrefix(srv.URL(), "http://"), func() { _ = srv.Close() }, nil
			}}
		return stack.Start(ctx, cfg, o)
	}
	arm := func() (*config.Config, []run.Scenario) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "stack.yaml"), []byte(kubetest.SimManifests(1)), 0o644))
		yaml := `
stack:
  kind: kubernetes
  health_interval: 100ms
  kubernetes: {manifests: [stack.yaml], service: "sim:8000", access: port-forward}
warmup: {window: 100ms, windows: 2, tolerance: 0.5, max: 10s}
telemetry: {metrics: off, gpu: off}
gates: {ttft.p99: off, e2e.p99: off, goodput: off, error_rate: off, tpot.p99: +10%, output_throughput: -5%}
scenarios:
  - name: chat
    synth: {requests: 12, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed, concurrency: 3}
seed: 7
ab: {rounds: 6}
`
		path := filepath.Join(dir, "perfgate.yaml")
		require.NoError(t, os.WriteFile(path, []byte(yaml), 0o644))
		cfg, err := config.Parse([]byte(yaml), path)
		require.NoError(t, err)
		scs, err := run.Prepare(cfg, nil)
		require.NoError(t, err)
		return cfg, scs
	}
	baseCfg, baseSc := arm()
	candCfg, candSc := arm()
	require.NoError(t, Check(baseCfg, candCfg, baseSc, candSc))
	var log bytes.Buffer
	out, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{
		Session: session.Options{RunID: "ab", StartStack: start, Log: &log, Phases: run.NewPhases(&log, false)},
	})
	require.NoError(t, err, "log:\n%s", log.String())
	assert.Equal(t, "regression", string(out.Verdict.Outcome), "a 1.5x slower candidate")
	assert.Equal(t, config.ABCoResident, out.Verdict.AB.Mode)
	mu.Lock()
	assert.Equal(t, map[string]bool{"perfgate-ab-base-1/sim-a": true, "perfgate-ab-candidate-1/sim-a": true}, forwardedTo,
		"each arm's release in a namespace of its own, each started once")
	mu.Unlock()
	assert.Equal(t, "perfgate-ab-base-1", out.Base.Identity.Stack.Namespace)
	assert.Equal(t, "perfgate-ab-candidate-1", out.Candidate.Identity.Stack.Namespace)
	for _, ns := range []string{"perfgate-ab-base-1", "perfgate-ab-candidate-1"} {
		_, err := cluster.Typed.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
		assert.Error(t, err, "namespace %s is deleted at the end", ns)
	}
}
