package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"

	"github.com/perfgate/perfgate/internal/ab"
)

// abScenario is the arms' common part: short warm-ups, fixed rounds, and two
// gates, so that six pairs can decide (2^-6 · 2 gates < 0.05).
const abScenario = `warmup: {window: 200ms, windows: 2, tolerance: 0.5, max: 20s}
ab: {rounds: 6}
seed: 3
gates: {ttft.p95: off, ttft.p99: off, tpot.p99: off, e2e.p99: off, goodput: off, error_rate: off, cold_start: off,
        tpot.p90: +10%, output_throughput: -5%}
scenarios:
  - name: chat
    synth: {requests: 12, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed, concurrency: 3}
`

// abArm is one arm's config: this binary as `perfgate sim` with quick steps
// and simArgs, wrapped so its process group can be checked after the run.
func abArm(t *testing.T, simArgs []string, extra string) (conf, log string) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	addr := freeAddr(t)
	argv := append([]string{"sh", "-c", stackScript, self, "sim", "--addr", addr,
		"--step-base", "3ms", "--per-prefill-token", "20us", "--cold-start", "100ms"}, simArgs...)
	return processConfig(t, addr, argv, extra)
}

// readResult reads a result file the test expects to exist.
func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var r result.Result
	require.NoError(t, json.Unmarshal(b, &r))
	return &r
}

// perfgate ab against two simulators started as process stacks, in both
// modes: a 2x slower candidate (every pair must show it: six pairs decide
// only when all six agree, so the step is large enough for a busy 2-core
// machine's wake-up delays not to flip one) is a regression (exit 1) co-resident; an
// A/A in swap mode restarts the stacks at every change of arm and records
// every cold start. Both write both arms' results and the reports, and leave
// no process behind.
func TestABProcessStacks(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		candArgs []string
		check    func(t *testing.T, err error, base, cand *result.Result, stdout string)
	}{
		{
			name: "co-resident, a slower candidate", mode: "co-resident", candArgs: []string{"--slowdown", "2"},
			check: func(t *testing.T, err error, base, cand *result.Result, stdout string) {
				assert.Equal(t, exit.Regression, exit.Code(err), "err: %v", err)
				assert.Contains(t, stdout, "REGRESSION")
				assert.Equal(t, []bool{false, true, false, true, false, true}, cand.AB.First)
				assert.Empty(t, cand.Scenarios[0].ColdStartsMS, "co-resident: one start an arm")
			},
		},
		{
			name: "swap, A/A", mode: "swap",
			check: func(t *testing.T, err error, base, cand *result.Result, stdout string) {
				assert.NotEqual(t, exit.RunFailed, exit.Code(err), "err: %v", err)
				// ABBA over six rounds: base starts in rounds 1, 2, 4, 6; the
				// candidate in 1, 3, 5.
				assert.Len(t, base.Scenarios[0].ColdStartsMS, 4)
				assert.Len(t, cand.Scenarios[0].ColdStartsMS, 3)
				assert.Equal(t, "swap", base.AB.Mode)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			baseConf, baseLog := abArm(t, nil, abScenario)
			candConf, candLog := abArm(t, tt.candArgs, abScenario)
			dir := t.TempDir()
			out, baseOut := filepath.Join(dir, "result.json"), filepath.Join(dir, "base-result.json")
			html, rep := filepath.Join(dir, "ab.html"), filepath.Join(dir, "report.json")
			var stdout, stderr bytes.Buffer
			err := Main(context.Background(), []string{"ab", "--base", baseConf, "--config", candConf, "--mode", tt.mode,
				"-o", out, "--base-output", baseOut, "--html", html, "--report", rep}, &stdout, &stderr)
			require.NotEqual(t, exit.Usage, exit.Code(err), "err: %v\n%s", err, stderr.String())
			base, cand := readResult(t, baseOut), readResult(t, out)
			require.NotNil(t, base.AB)
			require.NotNil(t, cand.AB)
			assert.Equal(t, "base", base.AB.Arm)
			assert.Equal(t, "candidate", cand.AB.Arm)
			assert.Len(t, base.Scenarios[0].Repetitions, 6)
			assert.Len(t, cand.Scenarios[0].Repetitions, 6)
			assert.FileExists(t, html)
			b, rerr := os.ReadFile(rep)
			require.NoError(t, rerr)
			assert.True(t, bytes.Contains(b, []byte(`"ab": {`)), "the report file does not say it is an A/B")
			tt.check(t, err, base, cand, stdout.String())
			requireGroupGone(t, stackGroup(t, baseLog))
			requireGroupGone(t, stackGroup(t, candLog))
		})
	}
}

// A crash of either arm fails the run with exit 3, names the arm, writes
// no result, and leaves no process of either stack behind.
func TestABCrashOfEitherArmFailsTheRun(t *testing.T) {
	long := strings.Replace(abScenario, "synth: {requests: 12,", "duration: 1500ms\n    synth: {requests: 100000,", 1)
	tests := []struct {
		name               string
		mode               string
		baseArgs, candArgs []string
		want               string
	}{
		{name: "candidate, co-resident", mode: "co-resident", candArgs: []string{"--exit-after", "2s"}, want: "the candidate stack"},
		{name: "base, swap", mode: "swap", baseArgs: []string{"--exit-after", "2s"}, want: "the base stack"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			baseConf, baseLog := abArm(t, tt.baseArgs, long)
			candConf, candLog := abArm(t, tt.candArgs, long)
			dir := t.TempDir()
			out, baseOut := filepath.Join(dir, "result.json"), filepath.Join(dir, "base-result.json")
			var stdout, stderr bytes.Buffer
			err := Main(context.Background(), []string{"ab", "--base", baseConf, "--config", candConf, "--mode", tt.mode,
				"-o", out, "--base-output", baseOut}, &stdout, &stderr)
			require.Error(t, err)
			assert.Equal(t, exit.RunFailed, exit.Code(err), "err: %v", err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "simulated crash")
			assert.NoFileExists(t, out)
			assert.NoFileExists(t, baseOut)
			for _, log := range []string{baseLog, candLog} {
				if _, err := os.Stat(log); err == nil { // swap: a crash in round 1 leaves the candidate unstarted
					requireGroupGone(t, stackGroup(t, log))
				}
			}
		})
	}
}

// cancelOn is a stderr that cancels a run's context the first time what
// was written to it contains marker: the run is stopped at a point it
// reached, not after a while.
type cancelOn struct {
	marker string
	cancel context.CancelFunc
	mu     sync.Mutex
	buf    bytes.Buffer
	done   bool
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done && strings.Contains(w.buf.String(), w.marker) {
		w.done = true
		w.cancel()
	}
	return len(p), nil
}

func (w *cancelOn) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// An A/B interrupted in its second round (Ctrl-C, a cancelled job) exits 3,
// writes no result file and no verdict, and keeps what it measured beside
// them: result.partial.json and base-result.partial.json, each with round
// 1's repetition and every warm-up, marked incomplete; compare, baseline
// promote and export refuse them (exit 2), naming the file. Neither stack
// is left running.
func TestABInterruptedWritesPartialResults(t *testing.T) {
	baseConf, baseLog := abArm(t, nil, abScenario)
	candConf, candLog := abArm(t, nil, abScenario)
	dir := t.TempDir()
	out, baseOut := filepath.Join(dir, "result.json"), filepath.Join(dir, "base-result.json")
	partial, basePartial := filepath.Join(dir, "result.partial.json"), filepath.Join(dir, "base-result.partial.json")
	// An earlier run's partial file is replaced.
	require.NoError(t, os.WriteFile(basePartial, []byte("stale"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// ABBA: the candidate measures first in round 2.
	stderr := &cancelOn{marker: "==> candidate: chat: measuring round 2", cancel: cancel}
	var stdout bytes.Buffer
	err := Main(ctx, []string{"ab", "--base", baseConf, "--config", candConf, "-o", out, "--base-output", baseOut}, &stdout, stderr)
	require.Error(t, err)
	assert.Equal(t, exit.RunFailed, exit.Code(err), "err: %v\n%s", err, stderr.String())
	assert.Contains(t, err.Error(), "interrupted")
	assert.NoFileExists(t, out)
	assert.NoFileExists(t, baseOut)
	assert.Empty(t, stdout.String(), "no verdict")
	assert.Contains(t, stderr.String(), "the A/B did not finish: wrote what it measured (1 complete round) to "+partial+" (candidate) and "+basePartial+" (base), marked incomplete")
	for _, p := range []struct {
		path, arm string
	}{{partial, "candidate"}, {basePartial, "base"}} {
		r := readResult(t, p.path)
		require.NotNil(t, r.Incomplete, p.path)
		assert.Equal(t, 1, r.Incomplete.Rounds)
		assert.Contains(t, r.Incomplete.Reason, "interrupted")
		require.NotNil(t, r.AB)
		assert.Equal(t, p.arm, r.AB.Arm)
		require.Len(t, r.Scenarios, 1)
		assert.Len(t, r.Scenarios[0].Repetitions, 1, "%s: round 1's repetition", p.arm)
		require.NotEmpty(t, r.Scenarios[0].Warmups)
		assert.Equal(t, result.WarmupFull, r.Scenarios[0].Warmups[0].Kind)
	}

	// A complete result beside them: the partial candidate without its mark.
	whole := readResult(t, partial)
	whole.Incomplete = nil
	complete := filepath.Join(dir, "complete.json")
	require.NoError(t, result.Write(complete, whole))
	for _, tc := range []struct {
		args []string
		file string
	}{
		{[]string{"compare", "-b", complete, "-r", partial}, partial},
		{[]string{"compare", "-b", basePartial, "-r", complete}, basePartial},
		{[]string{"baseline", "promote", basePartial, "--baselines", filepath.Join(dir, "baselines")}, basePartial},
		{[]string{"export", "--format", "csv", partial}, partial},
	} {
		var o, e bytes.Buffer
		err := Main(context.Background(), tc.args, &o, &e)
		require.Error(t, err, "%v", tc.args)
		assert.Equal(t, exit.Usage, exit.Code(err), "%v: %v", tc.args, err)
		assert.Contains(t, err.Error(), tc.file+": an incomplete result: the run stopped after 1 complete round (", "%v", tc.args)
	}
	assert.NoDirExists(t, filepath.Join(dir, "baselines"), "nothing promoted")
	requireGroupGone(t, stackGroup(t, baseLog))
	requireGroupGone(t, stackGroup(t, candLog))
}

// An A/B that did not finish writes each arm's result beside its output,
// ".partial" before the extension; an output that is not a regular file
// has no such place; two outputs that would meet there are refused.
func TestPartialPath(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"result.json", "result.partial.json"},
		{"out/base-result.json", "out/base-result.partial.json"},
		{"results.d/result", "results.d/result.partial"},
		{"/dev/null", ""},
	} {
		assert.Equal(t, tt.want, ab.PartialPath(tt.in), tt.in)
	}
	o := abOptions{basePath: "base.yaml", format: "text", output: "a.json", baseOutput: "a.partial.json"}
	err := o.check()
	require.Error(t, err)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.Contains(t, err.Error(), "one is the other's partial result file")
	o = abOptions{basePath: "base.yaml", format: "text", output: "r.json", baseOutput: "b.json", rewarm: "warm"}
	err = o.check()
	require.Error(t, err)
	assert.Equal(t, `--rewarm: want short or full, got "warm"`, err.Error())
}
