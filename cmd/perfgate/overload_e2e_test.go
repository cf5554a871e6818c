package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
)

// oneSlotSim starts a simulator with one slot (max batch 1): a request of
// 16 prompt and 10 output tokens takes about 10 steps of step plus its
// prefill, so the server serves about 1/(10·step) requests a second.
func oneSlotSim(t *testing.T, step time.Duration) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.MaxBatch, cfg.StepBase = 1, step
	url, _ := startSim(t, cfg)
	return url
}

// overloadConfig is one Poisson scenario of n short requests at rate on a
// one-slot simulator, with load.overload set to overload (none when empty).
func overloadConfig(t *testing.T, url string, n int, rate float64, reps int, seed int, overload string) string {
	t.Helper()
	extra := ""
	if overload != "" {
		extra = ", overload: " + overload
	}
	return writeConfig(t, fmt.Sprintf(`
target: {base_url: %q}
warmup: {method: none}
repetitions: %d
seed: %d
scenarios:
  - name: flood
    synth: {requests: %d, input: {type: fixed, value: 16}, output: {type: fixed, value: 10}}
    load: {type: poisson, rate: %g%s}
`, url, reps, seed, n, rate, extra))
}

// The case, made quick: one slot serving about 45 req/s (2 ms
// steps), Poisson at 110 req/s. The run names the scenario with the
// offered and served rates, writes the result with the evidence, and
// exits 3; gate does too, its report labelled. Declared with
// load.overload: measure, the same run exits 0 and is labelled
// "overloaded (declared)".
func TestOverloadFailsTheRun(t *testing.T) {
	url := oneSlotSim(t, 2*time.Millisecond)
	conf := overloadConfig(t, url, 120, 110, 2, 1, "")
	dir := filepath.Dir(conf)
	out := filepath.Join(dir, "r.json")
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"run", "-c", conf, "-o", out}, &stdout, &stderr)
	require.Error(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Equal(t, exit.RunFailed, exit.Code(err), "%v", err)
	msg := err.Error()
	assert.Contains(t, msg, "scenario flood: offered 1")
	assert.Contains(t, msg, "req/s, served ")
	assert.Contains(t, msg, "the queue grew through every repetition")
	assert.Contains(t, msg, "load.overload: measure")
	assert.Contains(t, stdout.String(), "OVERLOADED: offered", "the summary labels it")

	res, rerr := result.Read(out)
	require.NoError(t, rerr, "the result is written so the user can look")
	for _, r := range res.Scenarios[0].Repetitions {
		require.NotNil(t, r.Overload, "repetition %d", r.Index)
		o := r.Overload
		assert.True(t, o.Overloaded, "repetition %d: %+v", r.Index, *o)
		assert.Less(t, o.ServedRate, 0.75*o.OfferedRate, "repetition %d: %+v", r.Index, *o)
		assert.Greater(t, o.TTFTLastMS, 2*o.TTFTFirstMS, "repetition %d: %+v", r.Index, *o)
	}
	t.Logf("%s", msg)

	// gate, against that result as the baseline: exit 3 over any verdict,
	// the report labelled.
	stdout.Reset()
	stderr.Reset()
	require.NoError(t, Main(context.Background(), []string{"baseline", "promote", out, "-c", conf, "--commit", "base"}, &stdout, &stderr), stderr.String())
	html := filepath.Join(dir, "report.html")
	err = Main(context.Background(), []string{"gate", "-q", "-c", conf, "-o", filepath.Join(dir, "cand.json"), "--format", "markdown", "--html", html}, &stdout, &stderr)
	assert.Equal(t, exit.RunFailed, exit.Code(err), "gate: %v\n%s", err, stderr.String())
	assert.Contains(t, fmt.Sprint(err), "the queue grew")
	page, rerr := os.ReadFile(html)
	require.NoError(t, rerr)
	assert.Contains(t, string(page), "Overloaded: offered")
	assert.Contains(t, string(page), "baseline: overloaded: offered")

	// Declared: measured, labelled, exit 0.
	declared := overloadConfig(t, url, 120, 110, 2, 1, "measure")
	stdout.Reset()
	stderr.Reset()
	err = Main(context.Background(), []string{"run", "-c", declared, "-o", filepath.Join(filepath.Dir(declared), "r.json")}, &stdout, &stderr)
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	assert.Contains(t, stdout.String(), "overloaded (declared): offered")
	assert.Contains(t, stdout.String(), "the queue grew through every repetition")
}

// A stationary server at a rate it sustains is never called overloaded:
// one slot serving about 80 req/s (1 ms steps), Poisson at 15 req/s, over
// several seeds.
func TestNoOverloadAtSustainableRate(t *testing.T) {
	url := oneSlotSim(t, time.Millisecond)
	for seed := 1; seed <= 3; seed++ {
		conf := overloadConfig(t, url, 60, 15, 1, seed, "")
		out := filepath.Join(filepath.Dir(conf), "r.json")
		var stdout, stderr bytes.Buffer
		err := Main(context.Background(), []string{"run", "-q", "-c", conf, "-o", out}, &stdout, &stderr)
		require.NoError(t, err, "seed %d: %s", seed, stderr.String())
		res, err := result.Read(out)
		require.NoError(t, err)
		o := res.Scenarios[0].Repetitions[0].Overload
		require.NotNil(t, o, "seed %d", seed)
		assert.False(t, o.Overloaded, "seed %d: %+v", seed, *o)
		assert.Greater(t, o.ServedRate, 0.9*o.OfferedRate, "seed %d: %+v", seed, *o)
		assert.False(t, strings.Contains(stdout.String(), "OVERLOADED"))
	}
}
