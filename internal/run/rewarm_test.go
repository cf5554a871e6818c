package run

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// textsSender answers every request after 2 ms and keeps the text of
// each, by request id.
type textsSender struct {
	mu    sync.Mutex
	texts map[string]string
}

func (s *textsSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	s.mu.Lock()
	if s.texts == nil {
		s.texts = map[string]string{}
	}
	s.texts[id] = fullText(*req)
	s.mu.Unlock()
	var calls atomic.Int64
	return steadySender(2*time.Millisecond, 4, false, &calls).Do(ctx, req, id)
}

// sent is the set of texts sent.
func (s *textsSender) sent() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, t := range s.texts {
		out[t] = true
	}
	return out
}

// TestWarmupSaltTag: a warm-up's SaltTag salts its passes apart from every
// other warm-up's (another tag, or none) and from every measured
// repetition's, so that warming one stack up again sends nothing a prompt
// cache holds; without a tag the warm-up sends what it always sent (its
// first pass salted by SaltSeed(seed, scenario, 0, 1)), the same for a
// baseline and a candidate run with one seed.
func TestWarmupSaltTag(t *testing.T) {
	reqs := warmRequests(4)
	sc := scenario("chat", config.Load{Type: config.LoadClosed, Concurrency: 2}, reqs)
	sc.Salt = true
	cfg := config.Warmup{Method: config.WarmupWindows, Window: 20 * time.Millisecond, Windows: 2, Tolerance: 10,
		Max: 60 * time.Millisecond, OnUnsteady: "warn"}
	warm := func(tag string, short bool) map[string]bool {
		s := &textsSender{}
		w := &Warmup{Dispatcher: &Dispatcher{Sender: s}, Config: cfg, Seed: 3, RunID: "w", SaltTag: tag, Short: short}
		_, err := w.Run(t.Context(), sc)
		require.NoError(t, err, "tag %q", tag)
		got := s.sent()
		require.NotEmpty(t, got, "tag %q sent nothing", tag)
		return got
	}
	measured := func(rep int) map[string]bool {
		s := &textsSender{}
		m := &Measurement{Dispatcher: &Dispatcher{Sender: s}, Seed: 3, RunID: "m"}
		_, err := m.Repetition(t.Context(), sc, rep, "rep")
		require.NoError(t, err)
		return s.sent()
	}

	untagged := warm("", false)
	first := fullText(reqs[0].Salted(workload.SaltText(SaltSeed(3, "chat", 0, 1))))
	assert.True(t, untagged[first], "an untagged warm-up's first pass is salted as before: SaltSeed(seed, scenario, 0, 1)")

	again := warm("base/round-2", false)
	assert.True(t, again[fullText(reqs[0].Salted(workload.SaltText(SaltSeed(3, "chat/warmup/base/round-2", 0, 1))))],
		"one seed and tag, one salt")
	sets := map[string]map[string]bool{
		"untagged":                  untagged,
		"base/round-2":              again,
		"base/round-3 (short)":      warm("base/round-3", true),
		"candidate/round-2":         warm("candidate/round-2", false),
		"candidate/round-3 (short)": warm("candidate/round-3", true),
		"measured repetition 1":     measured(1),
		"measured repetition 2":     measured(2),
	}
	for a, sa := range sets {
		for b, sb := range sets {
			if a >= b {
				continue
			}
			for text := range sa {
				assert.False(t, sb[text], "%s and %s both sent %q", a, b, text)
			}
		}
	}
}

// TestShortRewarm: a short re-warm sends the scenario's load for one
// window (every closed-loop user at least once), judges nothing (a
// warm-up that a full one could never call steady, its warmup.min past its
// warmup.max, is no error), drains, and says so in its record; an open
// loop gets no overload verdict from it.
func TestShortRewarm(t *testing.T) {
	never := config.Warmup{Method: config.WarmupWindows, Window: 100 * time.Millisecond, Windows: 2,
		Tolerance: 0.5, Min: time.Second, Max: 300 * time.Millisecond, OnUnsteady: config.DefaultOnUnsteady}
	for _, tc := range []struct {
		name string
		load config.Load
		min  int // requests at least
	}{
		{"closed", config.Load{Type: config.LoadClosed, Concurrency: 4}, 4},
		{"poisson", config.Load{Type: config.LoadPoisson, Rate: 200}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scenario("s", tc.load, warmRequests(10))
			sc.Salt = true
			var calls atomic.Int64
			var steadyCalls atomic.Int64
			w := &Warmup{Dispatcher: &Dispatcher{Sender: steadySender(5*time.Millisecond, 10, false, &calls)}, Config: never,
				Short: true, RunID: "r",
				OnWindow: func(_ result.WarmupWindow, steady bool, _ string) {
					if steady {
						steadyCalls.Add(1)
					}
				}}
			got, err := w.Run(t.Context(), sc)
			require.NoError(t, err, "a short re-warm is not judged")
			assert.Equal(t, result.WarmupShort, got.Method)
			assert.False(t, got.Steady)
			assert.LessOrEqual(t, len(got.Windows), 1, "one window at most")
			assert.GreaterOrEqual(t, got.Requests, tc.min)
			assert.Zero(t, got.Failed)
			assert.Nil(t, got.Overload)
			require.NotNil(t, got.Drain, "drained")
			assert.Zero(t, steadyCalls.Load())

			// Warmed up fully, it is never steady: it fails at warmup.max.
			w.Short = false
			_, err = w.Run(t.Context(), sc)
			var unsteady *UnsteadyError
			assert.True(t, errors.As(err, &unsteady), "full warm-up: %v", err)
		})
	}
}

// A short re-warm of warmup.method none sends nothing, as any warm-up of
// it.
func TestShortRewarmMethodNone(t *testing.T) {
	var calls atomic.Int64
	w := &Warmup{Dispatcher: &Dispatcher{Sender: steadySender(time.Millisecond, 1, false, &calls)},
		Config: config.Warmup{Method: config.WarmupNone}, Short: true}
	got, err := w.Run(t.Context(), scenario("s", config.Load{Type: config.LoadClosed, Concurrency: 2}, warmRequests(3)))
	require.NoError(t, err)
	assert.Equal(t, &result.Warmup{Method: config.WarmupNone, Steady: true}, got)
	assert.Zero(t, calls.Load(), fmt.Sprint("sent ", calls.Load()))
}
