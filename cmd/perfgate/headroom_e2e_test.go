package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

// A headroom search on a stack perfgate starts, whose `perfgate sim`
// process dies of a simulated CUDA out-of-memory past 1,500 tokens: the
// run ends cleanly (exit 0, a result), the search lands within a step of
// the wall with the process's last line as its boundary, every probe past
// it found the server dead and started it again, and no process of the
// stack is left.
func TestHeadroomRestartsAStackThatDied(t *testing.T) {
	conf, log := simStack(t, []string{"--oom-tokens", "1500", "--step-base", "1ms", "--jitter", "0"}, `warmup: {method: none}
repetitions: 2
scenarios:
  - name: long
    headroom: {users: 1, output_tokens: 16, min: 256, max: 4096}
`)
	patchYAML(t, conf, "  stop_grace: 10s\n", "  stop_grace: 10s\n  health_interval: 200ms\n")
	out := filepath.Join(filepath.Dir(conf), "result.json")
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"run", "-c", conf, "-o", out}, &stdout, &stderr)
	require.NoError(t, err, "stderr:\n%s", stderr.String())

	res, err := result.Read(out)
	require.NoError(t, err)
	c := res.Scenarios[0].Capacity
	require.NotNil(t, c)
	assert.LessOrEqual(t, c.Holds, 1500.0, stderr.String())
	assert.Greater(t, c.Breaks, 1500.0, stderr.String())
	assert.LessOrEqual(t, c.Breaks/c.Holds, 1+c.Search.Resolution+1e-9)
	assert.Contains(t, c.Boundary, "CUDA out of memory")
	assert.Contains(t, c.Boundary, "exited (status 1)")
	restarts := 0
	for _, p := range c.Probes {
		if p.Restarted {
			restarts++
		}
		assert.Equal(t, p.Load > 1500, p.Restarted, "probe at %v", p.Load)
	}
	assert.Positive(t, restarts)
	assert.Equal(t, restarts, strings.Count(stderr.String(), "starting the stack again"))
	assert.Contains(t, stdout.String(), "where it stopped holding: rep 1: 2 of 2 requests failed: the server died: process sh exited (status 1): perfgate: simulated engine crash: CUDA out of memory (--oom-tokens) (the last line of its log)")
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, string(b), "torch.OutOfMemoryError: CUDA out of memory", "the stack's log has the process's own words")
	requireGroupGone(t, stackGroup(t, log))
}
