package main

import (
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

// percentilesConfig is a quick config against url with extra top-level
// YAML.
func percentilesConfig(t *testing.T, url, extra string) string {
	t.Helper()
	return writeConfig(t, fmt.Sprintf(`
target: {base_url: %q}
warmup: {method: none}
repetitions: 3
%s
scenarios:
  - name: s
    synth: {requests: 40, input: {type: fixed, value: 8}, output: {type: fixed, value: 6}}
    load: {type: closed, concurrency: 4}
`, url, extra))
}

// A run of a config with percentiles: [p75, p99.99] carries them in its
// result and its summary; --percentiles replaces the list; an old result
// (no percentiles map) compares with a new one on a ttft.p99.99 gate.
func TestRunConfiguredPercentiles(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.StepBase = time.Millisecond
	url, _ := startSim(t, cfg)

	conf := percentilesConfig(t, url, "percentiles: [p99.99, p75]")
	dir := filepath.Dir(conf)
	out := filepath.Join(dir, "r.json")
	stdout, stderr, err := perfgate("run", "-c", conf, "-o", out)
	require.NoError(t, err, stderr)
	res, err := result.Read(out)
	require.NoError(t, err)
	assert.Equal(t, []string{"p75", "p99.99"}, res.Percentiles)
	for _, r := range res.Scenarios[0].Repetitions {
		for _, s := range []result.Stats{r.TTFT, r.TPOT, r.ITL, r.E2E} {
			require.Contains(t, s.Percentiles, "p75")
			require.Contains(t, s.Percentiles, "p99.99")
			assert.LessOrEqual(t, s.Percentiles["p75"], s.Percentiles["p99.99"])
			assert.LessOrEqual(t, s.Percentiles["p99.99"], s.Max)
		}
	}
	assert.Contains(t, stdout, "p75")
	assert.Contains(t, stdout, "p99.99")
	assert.NotContains(t, stdout, "p90", "the summary shows the listed percentiles only")
	assert.Contains(t, stderr, "scenarios[0].synth.requests: 40 requests a repetition are too few for p99.99")
	assert.NotContains(t, stderr, "default gate", "the list turns no default gate off")

	// --percentiles overrides the config.
	_, stderr, err = perfgate("run", "-c", conf, "-o", out, "--quiet", "--percentiles", "p50,p99.9")
	require.NoError(t, err, stderr)
	res, err = result.Read(out)
	require.NoError(t, err)
	assert.Equal(t, []string{"p50", "p99.9"}, res.Percentiles)
	assert.Nil(t, res.Scenarios[0].Repetitions[0].TTFT.Percentiles, "p50 and p99.9 have fields of their own")

	// A bad list is bad input, naming the flag.
	for _, bad := range []string{"p100", "p49", "p99.999", "p50,p50", "p9x"} {
		_, _, err = perfgate("run", "-c", conf, "-o", out, "--quiet", "--percentiles", bad)
		assert.Equal(t, exit.Usage, exit.Code(err), "--percentiles %s: %v", bad, err)
		assert.ErrorContains(t, err, "--percentiles: ", "--percentiles %s", bad)
	}
	// A gate on a percentile not measured is bad input, naming the gate and
	// the measured ones: in the file, or once --percentiles has left it out.
	_, _, err = perfgate("run", "-c", percentilesConfig(t, url, "gates: {ttft.p99.99: +20%}"), "-o", out, "--quiet")
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.ErrorContains(t, err, "gates.ttft.p99.99: ttft.p99.99 is not measured: the percentiles measured are p50, p90, p95, p99, p99.9")
	gated := percentilesConfig(t, url, "percentiles: [p50, p99, p99.99]\ngates: {ttft.p99.99: +20%}")
	_, _, err = perfgate("run", "-c", gated, "-o", out, "--quiet", "--percentiles", "p50,p75")
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.ErrorContains(t, err, "gates.ttft.p99.99: ttft.p99.99 is not measured: the percentiles measured are p50, p75")

	// An old result (the default percentiles, no map) against a new one
	// with a ttft.p99.99 gate: the baseline gives p99.99 from its
	// histograms.
	base := filepath.Join(dir, "base.json")
	_, stderr, err = perfgate("run", "-c", percentilesConfig(t, url, ""), "-o", base, "--quiet")
	require.NoError(t, err, stderr)
	old, err := result.Read(base)
	require.NoError(t, err)
	require.Nil(t, old.Percentiles)
	require.Nil(t, old.Scenarios[0].Repetitions[0].TTFT.Percentiles)
	cand := filepath.Join(dir, "cand.json")
	_, stderr, err = perfgate("run", "-c", gated, "-o", cand, "--quiet")
	require.NoError(t, err, stderr)
	stdout, stderr, err = perfgate("compare", "-b", base, "-r", cand, "--allow-mismatch")
	assert.NotEqual(t, exit.Usage, exit.Code(err), "compare: %v\n%s", err, stderr)
	assert.Contains(t, stdout, "TTFT p99.99")
	stdout, _, _ = perfgate("compare", "-b", base, "-r", cand, "--allow-mismatch", "--format", "markdown")
	assert.Contains(t, stdout, "p99.99")
	data, err := os.ReadFile(cand)
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(data), `"p99.99"`))
}

// percentiles: [p50] narrows what is shown, not what is gated: a compare
// under such a config still gates TTFT p95 and p99, and a candidate whose
// TTFT p99 regressed is a REGRESSION.
func TestNarrowPercentilesKeepDefaultGates(t *testing.T) {
	dir := t.TempDir()
	conf := writeConfig(t, `
percentiles: [p50]
scenarios:
  - name: chat
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 6}}
    load: {type: closed, concurrency: 4}
`)
	base, same, slow := filepath.Join(dir, "base.json"), filepath.Join(dir, "same.json"), filepath.Join(dir, "slow.json")
	writeResult(t, base, nil, 20, 21, 20.5, 19.8, 20.2, 20.1, 20.4, 19.9)
	writeResult(t, same, nil, 20.3, 20.6, 19.9, 20.1, 20.2, 20, 20.7, 20.2)
	// Only TTFT p99 regressed: p95 stays as the base's.
	writeResult(t, slow, func(r *result.Result) {
		for i := range r.Scenarios[0].Repetitions {
			r.Scenarios[0].Repetitions[i].TTFT.P95 = 20
		}
	}, 30, 31, 30.5, 29.8, 30.2, 30.1, 30.4, 29.9)

	out, stderr, err := perfgate("compare", "-c", conf, "-b", base, "-r", same)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "verdict: pass")
	for _, row := range []string{"TTFT p95", "TTFT p99", "TPOT p99", "E2E p99"} {
		assert.Contains(t, out, row, "the default gate rows")
	}

	out, stderr, err = perfgate("compare", "-c", conf, "-b", base, "-r", slow)
	assert.Equal(t, exit.Regression, exit.Code(err), "compare: %v\n%s\n%s", err, out, stderr)
	assert.Contains(t, out, "REGRESSION")
	assert.Regexp(t, `TTFT p99 \(ms\).*REGRESSION`, out)
}
