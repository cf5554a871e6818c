package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

// A process stack of two simulators behind perfgate's router, the second
// killed two seconds into the repetition and started again: the run
// passes, its result says what the fault did (the errors, every one of
// them from the kill on; the replica back after its cold start; the
// goodput kept) and the recovery from it, each replica wrote its own log
// (the killed one's holding both lives), and nothing is left running.
func TestReplicaLossOnAProcessStack(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	log := filepath.Join(dir, "stack.log")
	var roots []string
	for range 2 {
		_, port, err := net.SplitHostPort(freeAddr(t))
		require.NoError(t, err)
		roots = append(roots, fmt.Sprintf("%q", "http://127.0.0.1:"+port))
	}
	conf := filepath.Join(dir, "perfgate.yaml")
	require.NoError(t, os.WriteFile(conf, fmt.Appendf(nil, `target: {base_urls: [%s]}
stack:
  kind: process
  engine: sim
  log: %q
  health_interval: 200ms
  process:
    command: [%q, sim, --addr, "127.0.0.1:${PERFGATE_PORT}", --cold-start, 1s, --max-batch, "8", --step-base, 5ms, --per-seq, 0s]
    env: {%s: "1"}
warmup: {method: none}
repetitions: 1
scenarios:
  - name: lost
    synth: {requests: 200, input: {type: fixed, value: 16}, output: {type: fixed, value: 40}}
    load: {type: poisson, rate: 40, recovery_window: 1s}
    duration: 8s
    max_error_rate: 0.5
    slo: {ttft: 1s}
    fault: {kill: replica, at: 2s}
`, strings.Join(roots, ", "), log, self, beMain), 0o644))

	out := filepath.Join(dir, "r.json")
	stdout, stderr, err := perfgate("run", "-c", conf, "-o", out)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	res, err := result.Read(out)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Identity.Stack.Replicas)
	rep := res.Scenarios[0].Repetitions[0]
	f := rep.Fault
	require.NotNil(t, f, "stderr:\n%s", stderr)
	t.Logf("%d of %d failed; %d errors from the kill at %.2f s on; recovery %.2f s", rep.Failed, rep.Sent, f.Errors, f.KilledS, rep.Recovery.Seconds)
	assert.Equal(t, 2, f.Replica)
	assert.True(t, f.Restarted)
	assert.InDelta(t, 2, f.KilledS, 0.5)
	require.NotNil(t, f.BackS, "the replica was back within the repetition")
	assert.InDelta(t, f.KilledS+1, *f.BackS, 1.0, "back after its 1 s cold start")
	assert.Positive(t, f.Errors, "the killed replica's streams in flight failed")
	assert.Equal(t, rep.Failed, f.Errors, "no request failed before the kill")
	require.NotNil(t, f.BeforeRPS)
	assert.Positive(t, *f.BeforeRPS)
	require.NotNil(t, rep.Recovery)
	assert.True(t, rep.Recovery.Recovered)
	assert.Contains(t, stdout+stderr, "replica 2 of 2 killed at 2s")
	assert.Contains(t, stdout+stderr, "errors from the fault on")

	for i := range 2 {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("stack-replica%d.log", i+1)))
		require.NoError(t, err)
		lives := strings.Count(string(b), "serving model")
		if i == 1 {
			assert.Equal(t, 2, lives, "the killed replica's log holds both its lives:\n%s", b)
		} else {
			assert.Equal(t, 1, lives, "replica 1's log:\n%s", b)
		}
	}
}
