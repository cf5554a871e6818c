package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/proctest"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
)

// stackScript wraps the simulator in a shell that prints its process group
// and waits for it, so the stack is two processes (the group must be gone
// after a run, not only its leader) and the test knows the group's id.
const stackScript = `echo "group $$"; "$0" "$@" & wait $!`

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// simStack is a perfgate.yaml whose stack is `perfgate sim simArgs...` (this
// test binary acting as perfgate), with extra YAML appended; it returns the
// config's path and the stack log's path.
func simStack(t *testing.T, simArgs []string, extra string) (conf, log string) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	addr := freeAddr(t)
	return processConfig(t, addr, append([]string{"sh", "-c", stackScript, self, "sim", "--addr", addr}, simArgs...), extra)
}

// stackGroup reads the process group the stack script printed.
func stackGroup(t *testing.T, log string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^group (\d+)$`).FindSubmatch(b)
	require.NotNil(t, m, "stack log has no group line:\n%s", b)
	pgid, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)
	return pgid
}

// requireGroupGone fails unless no process of group pgid is left.
func requireGroupGone(t *testing.T, pgid int) {
	t.Helper()
	require.Eventually(t, func() bool { return !proctest.GroupAlive(pgid) },
		10*time.Second, 20*time.Millisecond, "process group %d is still alive after the run", pgid)
}

// A stack that crashes, one that never becomes ready, and one whose health
// check starts failing each end the run with exit 3, a message naming what
// happened and the log tail, no result file, and no process left behind.
func TestStackFailuresFailTheRun(t *testing.T) {
	short := `
scenarios:
  - name: s
    synth: {requests: 100000, input: {type: fixed, value: 16}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 4}
    duration: 2m
`
	tests := []struct {
		name    string
		simArgs []string
		extra   string
		want    []string
	}{
		{
			name:    "exits mid-run",
			simArgs: []string{"--exit-after", "2s"},
			extra:   "warmup: {method: none}\nrepetitions: 1\n" + short,
			want:    []string{"went down during the run", "exited with status 3", "simulated crash after 2s"},
		},
		{
			name:    "exits during warm-up",
			simArgs: []string{"--exit-after", "2s"},
			extra:   "warmup: {window: 500ms, max: 1m, tolerance: 0.001}\nrepetitions: 1\n" + short,
			want:    []string{"went down during the run", "exited with status 3", "simulated crash"},
		},
		{
			name:    "never ready",
			simArgs: []string{"--cold-start", "1h"},
			extra:   "stack: {}\n" + short,
			want:    []string{"not ready after 2s", "HTTP 503", "model is loading", "perfgate sim: serving"},
		},
		{
			name:    "health starts failing",
			simArgs: []string{"--unhealthy-after", "2s"},
			extra:   "warmup: {method: none}\nrepetitions: 1\n" + short,
			want:    []string{"health check failed 3 times in a row", "HTTP 503", "unhealthy", "perfgate sim: serving"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			extra := strings.Replace(tt.extra, "stack: {}\n", "", 1)
			conf, log := simStack(t, tt.simArgs, extra)
			if strings.Contains(tt.extra, "stack: {}") { // never ready: a short ready timeout
				patchYAML(t, conf, "  stop_grace: 10s\n", "  stop_grace: 10s\n  ready_timeout: 2s\n")
			}
			patchYAML(t, conf, "  stop_grace: 10s\n", "  stop_grace: 10s\n  health_interval: 200ms\n")
			out := filepath.Join(filepath.Dir(conf), "result.json")
			var stdout, stderr bytes.Buffer
			err := Main(context.Background(), []string{"run", "-c", conf, "-o", out}, &stdout, &stderr)
			require.Error(t, err)
			assert.Equal(t, exit.RunFailed, exit.Code(err), "exit code; err: %v", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NoFileExists(t, out, "a failed run must write no result")
			requireGroupGone(t, stackGroup(t, log))
		})
	}
}

// patchYAML replaces old with new in the config file, once.
func patchYAML(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), old)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644))
}

// SIGINT to perfgate while the stack runs stops the stack: non-zero exit, no
// result, no process of the stack left.
func TestInterruptStopsTheStack(t *testing.T) {
	conf, log := simStack(t, nil, `warmup: {method: none}
repetitions: 1
scenarios:
  - name: s
    synth: {requests: 100000, input: {type: fixed, value: 16}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 2}
    duration: 2m
`)
	out := filepath.Join(filepath.Dir(conf), "result.json")
	// Wait until perfgate is measuring, then interrupt it.
	interruptWhen(t, "measuring", nil, "run", "-c", conf, "-o", out)
	assert.NoFileExists(t, out)
	requireGroupGone(t, stackGroup(t, log))
}

// interruptWhen runs perfgate (this binary, as main) with args, sends it
// SIGINT once a line of its stderr holds marker (after calling before,
// when not nil), and checks that it exited 3 saying it was interrupted.
// It returns every line perfgate wrote to stderr.
func interruptWhen(t *testing.T, marker string, before func(), args ...string) []string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), beMain+"=1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	var seen []string
	said := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			seen = append(seen, sc.Text())
			if !signalled && strings.Contains(sc.Text(), marker) {
				signalled = true
				close(said)
			}
		}
	}()
	select {
	case <-said:
	case <-time.After(60 * time.Second):
		t.Fatalf("perfgate never said %q", marker)
	}
	if before != nil {
		before()
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	<-drained
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "perfgate exited 0 after SIGINT; stderr:\n%s", strings.Join(seen, "\n"))
	assert.Equal(t, exit.RunFailed, ee.ExitCode())
	assert.True(t, slices.ContainsFunc(seen, func(l string) bool { return strings.Contains(l, "interrupted") }),
		"stderr does not say it was interrupted:\n%s", strings.Join(seen, "\n"))
	return seen
}

// The simulator started as a process stack with a 3 s cold start and a 20 s
// warm-up transient: perfgate records the cold start, holds measurement until
// the transient is over, and the measured requests show no trace of it.
func TestStackColdStartAndWarmUp(t *testing.T) {
	if raceEnabled {
		t.Skip("timing is checked without -race (make test runs it so)")
	}
	dir := t.TempDir()
	truth := filepath.Join(dir, "truth.jsonl")
	const coldStart, warmUp = 3 * time.Second, 20 * time.Second
	conf, _ := simStack(t, []string{"--cold-start", coldStart.String(), "--warm-up", warmUp.String(),
		"--warm-up-factor", "3", "--truth", truth}, `
warmup: {window: 2s, windows: 3, tolerance: 0.1, max: 90s}
repetitions: 2
scenarios:
  - name: c16
    synth:
      requests: 96
      input: {type: uniform, min: 64, max: 128}
      output: {type: uniform, min: 16, max: 48}
    load: {type: closed, concurrency: 16}
`)
	out, records := filepath.Join(dir, "result.json"), filepath.Join(dir, "records.jsonl")
	var stdout, stderr bytes.Buffer
	probe := startLagProbe(t)
	err := Main(context.Background(), []string{"run", "-c", conf, "-o", out, "--records", records}, &stdout, &stderr)
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	probe.Stop()
	// The wall-clock bounds below widen by the scheduling lag measured
	// during the run (lagProbe): quiet, by tens of µs.
	lagP50, lagMax := probe.Quantile(0.5), probe.Quantile(1)
	t.Logf("scheduling lag during the run: p50 %v, max %v", lagP50, lagMax)

	res, err := result.Read(out)
	require.NoError(t, err)
	s := res.Scenarios[0]
	assert.Equal(t, "process", res.Identity.Stack.Kind)
	assert.Equal(t, "perfgate-sim", res.Identity.Server.Engine)
	assert.Equal(t, "/version", res.Identity.Server.Endpoint)
	assert.Contains(t, res.Identity.Stack.Command, "--cold-start")

	// Cold start: readiness is polled every 200 ms, plus one tiny completion;
	// each poll a timer wake-up of perfgate and a request the simulator
	// answers, so late by a few wake-ups at most.
	assert.GreaterOrEqual(t, s.ColdStartMS, 3000.0)
	assert.Less(t, s.ColdStartMS, 4500+ms(3*lagMax), "cold start (ms), scheduling lag max %v", lagMax)

	// Warm-up saw the transient and outlasted it.
	w := s.Warmup
	require.NotNil(t, w)
	assert.True(t, w.Steady)
	require.NotEmpty(t, w.Windows)
	// What the warm-up saw, when the test fails: which windows it judged
	// steady, for the failure's reader (a transient taken for steady).
	t.Cleanup(func() {
		if t.Failed() {
			for _, win := range w.Windows {
				t.Logf("warm-up window ending at %.1f s: %d requests, output %.0f tok/s, TTFT p50 %.1f ms",
					float64(win.End), win.Requests, win.OutputThroughput, win.TTFT)
			}
		}
	})
	steadyTTFT := w.Windows[len(w.Windows)-1].TTFT
	assert.Greater(t, w.Windows[0].TTFT, 1.5*steadyTTFT, "the first warm-up window should show the 3x transient")

	recs := readRecords(t, records)
	tr, err := os.Open(truth)
	require.NoError(t, err)
	defer tr.Close()
	byID, err := sim.ReadTruth(tr)
	require.NoError(t, err)
	end := (coldStart + warmUp).Nanoseconds()
	var client, server []float64
	rep1 := []float64{}                     // client TTFT of repetition 1 (ms)
	gaps := map[int][]float64{1: {}, 2: {}} // the server's inter-token gaps by repetition (ms)
	early := 0                              // measured requests that arrived inside the transient
	for _, r := range recs {
		if r.Repetition == 0 {
			continue
		}
		tru, ok := byID[r.RequestID]
		require.True(t, ok, "no truth for %s", r.RequestID)
		if tru.ArrivalNS < end {
			early++
		}
		client = append(client, float64(r.TTFTUS)/1000)
		server = append(server, float64(tru.FirstTokenNS-tru.ArrivalNS)/1e6)
		if r.Repetition == 1 {
			rep1 = append(rep1, float64(r.TTFTUS)/1000)
		}
		for k := 1; k < len(tru.TokenNS); k++ {
			gaps[r.Repetition] = append(gaps[r.Repetition], float64(tru.TokenNS[k]-tru.TokenNS[k-1])/1e6)
		}
	}
	require.Len(t, client, 2*96)
	t.Logf("cold start %.0f ms; warm-up %.1f s over %d windows, TTFT p50 %.1f ms first window, %.1f ms last; measured TTFT p50 client %.2f ms, server %.2f ms; server's median token gap %.2f ms in repetition 1, %.2f ms in 2; %d measured requests arrived inside the transient",
		s.ColdStartMS, float64(w.Duration), len(w.Windows), w.Windows[0].TTFT, steadyTTFT, median(client), median(server), median(gaps[1]), median(gaps[2]), early)

	// The measured requests show no trace of the transient, in the
	// simulator's own truth: the server decoded the first repetition as fast
	// as the second, within the warm-up's tolerance (10%) and the lag of the
	// step loop's wake-ups. Measured from the start of the transient (3x,
	// then 2.9x...), the first repetition's steps would be 10-30% slower.
	assert.LessOrEqual(t, median(gaps[1]), 1.1*median(gaps[2])+ms(2*lagP50),
		"the server's median token gap (ms) in repetition 1, against 1.1x repetition 2's (scheduling lag p50 %v)", lagP50)
	// On a quiet machine perfgate sees the transient end where the simulator
	// ends it: warm-up lasts the transient and no measured request arrives
	// inside it. On a busy one the machine, not the model, sets the pace of
	// the transient's last seconds, and the check above is the one that
	// holds: the server was steady when measurement began.
	if lagP99 := probe.Quantile(0.99); lagP99 <= time.Millisecond {
		assert.GreaterOrEqual(t, w.Duration.Dur(), 18*time.Second, "warm-up ended inside the 20 s transient")
		assert.Zero(t, early, "measured requests that arrived during the simulator's warm-up")
	} else {
		t.Logf("scheduling lag p99 %v: not checking that warm-up outlasted the transient", lagP99)
	}

	// The client's and the server's clocks are read by goroutines that each
	// wake late by a draw of the lag.
	assert.InDelta(t, median(server), median(client), 5+ms(2*lagP50), "median TTFT, client vs server (ms), scheduling lag p50 %v", lagP50)
	// The result's repetition 1 summarises its records.
	assert.InDelta(t, median(rep1), s.Repetitions[0].TTFT.P50, 0.05*median(rep1)+1, "repetition 1's TTFT p50 (ms), records against result")
}

// A scenario with fresh_stack gets a start of its own, with its own cold
// start and log; the scenario before it ran on the first start.
func TestFreshStackPerScenario(t *testing.T) {
	conf, log := simStack(t, []string{"--cold-start", "500ms"}, `warmup: {method: none}
repetitions: 1
scenarios:
  - name: first
    synth: {requests: 8, input: {type: fixed, value: 16}, output: {type: fixed, value: 4}}
    load: {type: closed, concurrency: 2}
  - name: second
    fresh_stack: true
    synth: {requests: 8, input: {type: fixed, value: 16}, output: {type: fixed, value: 4}}
    load: {type: closed, concurrency: 2}
`)
	out := filepath.Join(filepath.Dir(conf), "result.json")
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"run", "-c", conf, "-o", out, "-q"}, &stdout, &stderr)
	require.NoError(t, err)
	res, err := result.Read(out)
	require.NoError(t, err)
	require.Len(t, res.Scenarios, 2)
	for _, s := range res.Scenarios {
		assert.GreaterOrEqual(t, s.ColdStartMS, 500.0, "scenario %s", s.Name)
		assert.Len(t, s.Repetitions, 1)
	}
	second := strings.TrimSuffix(log, ".log") + ".2.log"
	g1, g2 := stackGroup(t, log), stackGroup(t, second)
	assert.NotEqual(t, g1, g2, "the second scenario must run on a stack of its own")
	requireGroupGone(t, g1)
	requireGroupGone(t, g2)
}
