package main

import (
	"os"
	"path/filepath"
	"regexp"
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

// A config whose gates cannot decide is refused, with the repetitions that
// decide: the shape of the README's example before issue 22, two scenarios
// of seven gates at 5 repetitions, where Holm's first step needs p <
// 0.05/2/7 and 5 a side give 1/252 at the least.
func TestValidateRefusesUndecidable(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "perfgate.yaml")
	require.NoError(t, os.WriteFile(conf, []byte(`scenarios:
  - name: chat-c8
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 8}
  - name: chat-bursty
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 8}}
    load: {type: gamma, rate: 4, burstiness: 0.5, max_in_flight: 64}
repetitions: 5
`), 0o644))
	stdout, stderr, err := perfgate("validate", "-c", conf)
	require.Error(t, err)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.Empty(t, stdout)
	assert.NotContains(t, stderr, "warning:", "an error, not a warning")
	assert.Contains(t, err.Error(), "perfgate.yaml:8:14: repetitions: 5 repetitions cannot show a significant difference on the 7 gates of each of scenarios chat-c8, chat-bursty: "+
		"Holm's first step needs p < 0.00357 (alpha 0.05 shared by 2 scenarios with gates), and the U test's smallest p with 5 a side is 0.00397: "+
		"every gate would be inconclusive, neither a regression nor a pass. Set repetitions: 6 or more, or gate fewer metrics")

	// A range decides when one of its looks can. {min: 4, max: 6} looks at
	// 4, 5 and 6 and spends alpha over them: at none do 7 gates reach both
	// outcomes, though a fixed 6 does; {min: 4, max: 7} does at its last.
	require.NoError(t, os.WriteFile(conf, []byte(`scenarios:
  - name: chat
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 8}
  - name: bursty
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 8}}
    load: {type: poisson, rate: 4}
repetitions: {min: 4, max: 6}
`), 0o644))
	_, _, err = perfgate("validate", "-c", conf)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "repetitions: 4..6 repetitions cannot show a significant difference")
	assert.Contains(t, err.Error(), "Set repetitions: {min: 4, max: 7} or repetitions: 6, or gate fewer metrics")

	// Fewer gates decide with fewer repetitions: the report shows the rest.
	require.NoError(t, os.WriteFile(conf, []byte(`scenarios:
  - name: chat
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 8}
repetitions: 4
gates: {ttft.p95: off, ttft.p99: off, goodput: off, error_rate: off}
`), 0o644))
	_, stderr, err = perfgate("validate", "-c", conf)
	require.NoError(t, err, stderr)
}

// The README's perfgate.yaml example and every config under examples/ can
// decide: validate accepts them, with no warning that a gate cannot.
func TestValidateExamplesDecide(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	kube, err := filepath.Glob("../../examples/kubernetes/*.yaml")
	require.NoError(t, err)
	require.Len(t, kube, 2, "the plain Deployment's and the KServe InferenceService's")
	files = append(files, kube...)

	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)### perfgate.yaml\n.*?```yaml\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, m, "README.md has no perfgate.yaml example")
	dir := t.TempDir()
	examples, err := filepath.Abs("../../examples/workloads")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(examples, filepath.Join(dir, "workloads")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "perfgate.yaml"), m[1], 0o644))
	files = append(files, filepath.Join(dir, "perfgate.yaml"))

	for _, f := range files {
		_, stderr, err := perfgate("validate", "-c", f)
		require.NoError(t, err, "perfgate validate -c %s", f)
		assert.NotContains(t, stderr, "cannot show a significant difference", f)
	}
}

// With the baselines, validate says what each gate can confirm, and warns
// for a gate whose tolerance is within its baseline's noise; promote warns
// of it as it writes the baseline.
func TestValidateWithBaselines(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "perfgate.yaml")
	require.NoError(t, os.WriteFile(conf, []byte(`scenarios:
  - name: chat
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 4}
repetitions: 6
compare: {estimator: sample}
`), 0o644))
	res := filepath.Join(dir, "result.json")
	// The README's chat-c8 TTFT p99 over one run: a spread no +20% survives.
	writeResult(t, res, nil, 283, 287, 353, 187, 281, 284)
	stdout, stderr, err := perfgate("baseline", "promote", res, "-c", conf, "-b", filepath.Join(dir, "baselines"), "--commit", "c")
	require.NoError(t, err, stderr)
	assert.Contains(t, stdout, "wrote")
	assert.Contains(t, stderr, "warning: an unchanged candidate is unlikely to pass: TTFT p99 of chat varies ±")
	assert.Contains(t, stderr, "at +20% an unchanged candidate passes in about")

	stdout, stderr, err = perfgate("validate", "-c", conf, "--baselines", filepath.Join(dir, "baselines"))
	require.NoError(t, err, "a warning, not a problem: %s", stderr)
	assert.Contains(t, stderr, "TTFT p99 of chat varies")
	assert.Contains(t, stdout, "output throughput of chat varies ±0% between repetitions; -5% is confirmable")
	assert.Contains(t, stdout, "ok: 2 files checked", "the config and its one baseline")

	_, _, err = perfgate("validate", "-c", conf, "--baselines", filepath.Join(dir, "none"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no baseline of any scenario")
}

// A kubernetes stack's manifests are read by validate: a document without
// a kind, or a serving object the manifests lack, is said before any run.
func TestValidateReadsKubernetesManifests(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "perfgate.yaml")
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("perfgate.yaml", `stack:
  kind: kubernetes
  kubernetes: {manifests: [k8s.yaml], serving: [Deployment/vllm], service: "vllm:8000"}
scenarios:
  - name: chat
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 4}
repetitions: 6
`)
	write("k8s.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: vllm}\n---\napiVersion: apps/v1\nmetadata: {name: x}\n")
	_, _, err := perfgate("validate", "-c", conf)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "k8s.yaml, document 2: want an object with apiVersion and kind")

	write("k8s.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: vllm}\n")
	_, _, err = perfgate("validate", "-c", conf)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "serving names Deployment/vllm, which is not among the manifests' objects")

	write("k8s.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec: {replicas: 1}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: vllm}\n")
	out, _, err := perfgate("validate", "-c", conf)
	require.NoError(t, err)
	assert.Contains(t, out, "ok: 2 files checked")
}
