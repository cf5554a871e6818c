package report

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// The summary's warm-up line says how many warm-up requests failed, and of
// what, and how long the drain took.
func TestPreparationTellsWarmupFailures(t *testing.T) {
	drain := result.Seconds(0.42)
	s := &result.ScenarioResult{Warmup: &result.Warmup{Method: config.WarmupWindows, Duration: 8, Steady: true,
		Requests: 138, Failed: 104, Errors: map[string]int{"stream": 44, "http": 60}, Drain: &drain}}
	assert.Equal(t, "   warm-up 8.0 s, steady (windows, 242 requests, 104 failed: http 60, stream 44), drained in 0.4 s", preparation(s))

	s.Warmup = &result.Warmup{Method: config.WarmupWindows, Duration: 8, Steady: true, Requests: 138}
	assert.Equal(t, "   warm-up 8.0 s, steady (windows, 138 requests)", preparation(s), "nothing failed, a result from before drains")
}

// A drain's cancelled requests are told with why: at the bound, or at once
// for the backlog of a server that could not keep up.
func TestPreparationTellsWhyTheDrainCut(t *testing.T) {
	drain := result.Seconds(30.1)
	w := &result.Warmup{Method: config.WarmupWindows, Duration: 90, Steady: true, Requests: 614, Drain: &drain, DrainCut: 1623}
	assert.Contains(t, preparation(&result.ScenarioResult{Warmup: w}), "drained in 30.1 s (1623 cancelled at target.timeout)")
	w.Steady, w.Overload = false, &result.Overload{Overloaded: true}
	assert.Contains(t, preparation(&result.ScenarioResult{Warmup: w}), "drained in 30.1 s (1623 cancelled at once: a backlog the server could not clear)")
}
