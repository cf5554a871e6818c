package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
)

// abScenario is the arms' common part: short warm-ups, fixed rounds, and two
// gates, so that six pairs can decide (2^-6 · 2 gates < 0.05).
const abScenario = `warmup: {window: 200ms, windows: 2, tolerance: 0.5, max: 20s}
repetitions: 6
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
		"--step-base", "1ms", "--per-prefill-token", "20us", "--cold-start", "100ms"}, simArgs...)
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
// modes: a 1.5x slower candidate is a regression (exit 1) co-resident; an
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
			name: "co-resident, a slower candidate", mode: "co-resident", candArgs: []string{"--slowdown", "1.5"},
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
