package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
)

// `perfgate validate` finds, before any run, what a run would only find
// when it starts: a bad line in an empirical lengths file, a workload that
// is a named pipe, a rate no run could use.
func TestValidateFindsWhatARunWould(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lengths.txt"), []byte("10\nlots\n"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe.jsonl"), 0o644))
	conf := filepath.Join(dir, "perfgate.yaml")
	require.NoError(t, os.WriteFile(conf, []byte(`scenarios:
  - name: synth
    synth: {requests: 10, input: {type: empirical, file: lengths.txt}, output: {type: fixed, value: 8}}
    load: {concurrency: 1}
`), 0o644))

	done := make(chan error, 1)
	go func() { _, _, err := perfgate("validate", "-c", conf, filepath.Join(dir, "pipe.jsonl")); done <- err }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("perfgate validate of a named pipe still blocked after 30s")
	}
	require.Error(t, err)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.Contains(t, err.Error(), filepath.Join(dir, "lengths.txt")+`:2: want a length from 1 to 1048576, got "lots"`)
	assert.Contains(t, err.Error(), filepath.Join(dir, "pipe.jsonl")+": not a regular file (it is a named pipe)")

	require.NoError(t, os.WriteFile(conf, []byte(`scenarios:
  - name: huge
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 8}}
    load: {type: poisson, rate: 1.0e300}
`), 0o644))
	_, _, err = perfgate("validate", "-c", conf)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.ErrorContains(t, err, "perfgate.yaml:4:33: scenarios[0].load.rate: must be from 0.001 to 100000 requests per second, got 1e+300")
}

// validate says how a sweep and a capacity search will be measured: the
// sweep's point names (its results' and baselines' names), the search's
// defaulted range and budget.
func TestValidateDescribesSweepsAndSearches(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "perfgate.yaml")
	require.NoError(t, os.WriteFile(conf, []byte(`repetitions: 5
scenarios:
  - name: chat
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 8}}
    load: {type: poisson, rate: [0.5, 25]}
  - name: cap
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 8}}
    load: {type: poisson}
    capacity: {slo: {tpot.p99: 3ms}, min: 10, max: 640}
`), 0o644))
	stdout, _, err := perfgate("validate", "-c", conf)
	require.NoError(t, err)
	assert.Equal(t, "chat: a sweep of 2 points: chat.rate-0.5, chat.rate-25\n"+
		"cap: a capacity search of request_rate from 10 to 640 req/s, starting at 80, at most 8 probes (and up to 2 closing probes) of 5 repetitions\n"+
		"ok: 1 file checked\n", stdout)
}
