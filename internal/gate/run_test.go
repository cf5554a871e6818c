package gate

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// Run is the whole gate in one call: it refuses before measuring when no
// scenario has a baseline, measures with the sequential looks (the measure
// sees More), and returns the verdict and the document of what it
// measured; a failed measurement is its error with no outcome.
func TestRun(t *testing.T) {
	cfg, scenarios := setup(t, onlyTTFT)
	store := baseline.Store{Dir: t.TempDir()}

	called := false
	measureNothing := func(context.Context, func(*result.ScenarioResult) bool) (*result.Result, error) {
		called = true
		return nil, errors.New("must not be called")
	}
	_, err := Run(t.Context(), cfg, scenarios, measureNothing, RunOptions{Store: store})
	require.Error(t, err, "no baseline at all")
	assert.False(t, called, "refused before anything is measured")

	promote(t, store, measured(cfg, scenarios[0], steady...))
	var looked bool
	slow := func(_ context.Context, more func(*result.ScenarioResult) bool) (*result.Result, error) {
		chat := measured(cfg, scenarios[0], 40, 41, 42)
		looked = !more(&chat) // a clear regression: no more repetitions
		return resultOf(chat, measured(cfg, scenarios[1], 20, 20, 20)), nil
	}
	var log bytes.Buffer
	var seen *result.Result
	out, err := Run(t.Context(), cfg, scenarios, slow, RunOptions{Store: store, Log: &log,
		Measured: func(r *result.Result) error { seen = r; return nil }})
	require.NoError(t, err)
	assert.True(t, looked, "the measure asked the sequential look")
	assert.Contains(t, log.String(), "look at 3 repetitions", "the look was taken, not an error")
	assert.Same(t, out.Result, seen, "Measured sees the result before the verdict")
	assert.Equal(t, stat.Regression, out.Verdict.Outcome)
	require.NotNil(t, out.Document)
	assert.Contains(t, log.String(), "scenario other has no baseline")

	failing := func(context.Context, func(*result.ScenarioResult) bool) (*result.Result, error) {
		return nil, errors.New("stack crashed")
	}
	out, err = Run(t.Context(), cfg, scenarios, failing, RunOptions{Store: store})
	assert.Nil(t, out)
	assert.EqualError(t, err, "stack crashed")
}
