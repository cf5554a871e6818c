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
	return overloadConfigWarm(t, url, "{method: none}", n, rate, reps, seed, overload)
}

// overloadConfigWarm is overloadConfig with the warmup section given.
func overloadConfigWarm(t *testing.T, url, warmup string, n int, rate float64, reps int, seed int, overload string) string {
	t.Helper()
	extra := ""
	if overload != "" {
		extra = ", overload: " + overload
	}
	return writeConfig(t, fmt.Sprintf(`
target: {base_url: %q}
warmup: %s
repetitions: %d
seed: %d
scenarios:
  - name: flood
    synth: {requests: %d, input: {type: fixed, value: 16}, output: {type: fixed, value: 10}}
    load: {type: poisson, rate: %g%s}
`, url, warmup, reps, seed, n, rate, extra))
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

// With the default warm-up (method windows, on_unsteady: fail), an
// overloaded open loop never settles; warm-up runs the overload detector
// over its own requests, measures anyway, and the run ends in the
// overload's exit 3 rather than warm-up's "no steady state". Repetitions
// too short for the detector (30 requests, under 50) are no escape: the
// warm-up's evidence counts in the verdict. Declared, the run is measured
// and labelled, exit 0.
func TestOverloadWithDefaultWarmup(t *testing.T) {
	url := oneSlotSim(t, 2*time.Millisecond) // about 45 req/s
	const warm = "{window: 500ms, max: 3s}"
	for _, tc := range []struct {
		name     string
		requests int
		where    string
	}{
		{"judged repetitions", 120, "the queue grew through warm-up and "},
		{"repetitions too short", 30, "the queue grew through warm-up (the repetitions were too short to judge)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := overloadConfigWarm(t, url, warm, tc.requests, 70, 2, 1, "")
			out := filepath.Join(filepath.Dir(conf), "r.json")
			var stdout, stderr bytes.Buffer
			err := Main(context.Background(), []string{"run", "-c", conf, "-o", out}, &stdout, &stderr)
			require.Error(t, err, "stderr:\n%s", stderr.String())
			assert.Equal(t, exit.RunFailed, exit.Code(err), "%v", err)
			msg := err.Error()
			assert.NotContains(t, msg, "warmup.max", "not warm-up's unsteady error")
			assert.Contains(t, msg, "scenario flood: offered ")
			assert.Contains(t, msg, tc.where)
			assert.Contains(t, stderr.String(), "the server could not keep up (offered ")
			for _, line := range strings.Split(stderr.String(), "\n") {
				if strings.Contains(line, "not steady after") {
					t.Logf("%s", line)
				}
			}
			t.Logf("%s", msg)
			res, rerr := result.Read(out)
			require.NoError(t, rerr, "the result is written")
			w := res.Scenarios[0].Warmup
			require.NotNil(t, w)
			assert.False(t, w.Steady)
			require.NotNil(t, w.Overload, "the warm-up keeps the detector's evidence")
			assert.True(t, w.Overload.Overloaded, "%+v", *w.Overload)
			require.NotNil(t, w.Drain, "warm-up drained before repetition 1")
			require.Len(t, res.Scenarios[0].Repetitions, 2)
		})
	}
	t.Run("declared", func(t *testing.T) {
		conf := overloadConfigWarm(t, url, warm, 30, 70, 2, 1, "measure")
		var stdout, stderr bytes.Buffer
		err := Main(context.Background(), []string{"run", "-c", conf, "-o", filepath.Join(filepath.Dir(conf), "r.json")}, &stdout, &stderr)
		require.NoError(t, err, "stderr:\n%s", stderr.String())
		assert.Contains(t, stdout.String(), "overloaded (declared): offered")
	})
}
