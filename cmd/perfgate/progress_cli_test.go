package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/sim"
)

// perfgate run's progress on a log that is no terminal: each repetition's
// line says the scenario k of N, the repetition r of R and an ETA, each
// scenario ends with a summary line, and nothing is redrawn in place;
// --quiet prints none of it.
func TestRunProgressLines(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.StepBase = time.Millisecond
	url, _ := startSim(t, cfg)
	conf := writeConfig(t, fmt.Sprintf(`
target: {base_url: %q}
warmup: {method: none}
repetitions: 2
scenarios:
  - name: first
    synth: {requests: 6, input: {type: uniform, min: 8, max: 16}, output: {type: uniform, min: 4, max: 8}}
    load: {type: closed, concurrency: 2}
  - name: second
    synth: {requests: 6, input: {type: uniform, min: 8, max: 16}, output: {type: uniform, min: 4, max: 8}}
    load: {type: closed, concurrency: 2}
`, url))
	out := filepath.Join(filepath.Dir(conf), "r.json")

	var stdout, stderr bytes.Buffer
	require.NoError(t, Main(context.Background(), []string{"run", "-c", conf, "-o", out}, &stdout, &stderr), stderr.String())
	log := stderr.String()
	for _, want := range []string{
		`(?m)^first repetition 1 of 2 \(scenario 1 of 2\)  6/6 requests  .* ETA ~\d`,
		`(?m)^first repetition 2 of 2 \(scenario 1 of 2\)  6/6 requests  .* ETA ~0s$`,
		`(?m)^first done in \S+: 2 repetitions, 12 requests, 0 errors, TTFT p99 \d+ ms, \d+ tok/s$`,
		`(?m)^second repetition 1 of 2 \(scenario 2 of 2\)  6/6 requests  `,
		`(?m)^second done in \S+: 2 repetitions, 12 requests, 0 errors, TTFT p99 \d+ ms, \d+ tok/s$`,
	} {
		assert.Regexp(t, regexp.MustCompile(want), log)
	}
	assert.NotContains(t, log, "\r")

	stdout.Reset()
	stderr.Reset()
	require.NoError(t, Main(context.Background(), []string{"run", "-q", "-c", conf, "-o", out}, &stdout, &stderr), stderr.String())
	assert.Empty(t, stderr.String())
	assert.Empty(t, stdout.String())
}
