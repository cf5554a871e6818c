package run

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// End to end against the simulator: sessions of three turns replay with
// their history, so the simulator sees each session's prompt grow turn by
// turn and serves the earlier turns from its prefix cache, and the
// repetition's SessionStats count them.
func TestSessionsAgainstSimulator(t *testing.T) {
	srv, c, truth := cachingSim(t)
	var reqs []workload.Request
	const sessions, turns = 4, 3
	for k := range sessions {
		for n := 1; n <= turns; n++ {
			r := turn(fmt.Sprintf("s%d-%d", k, n), fmt.Sprint("s", k), n, nil,
				fmt.Sprintf("Session %d, turn %d: tell me about the number %d in a few words, please, with some detail.", k, n, k*10+n))
			if n > 1 {
				r.ThinkMS = ms(5)
			}
			r.MaxTokens = 8
			reqs = append(reqs, r)
		}
	}
	sc := scenario("chat", config.Load{Type: config.LoadClosed, Concurrency: 2, ThinkTime: "fixed:5"}, reqs)
	sc.Config.MaxErrorRate = 0
	var records []*result.Record
	m := &Measurement{Dispatcher: &Dispatcher{Sender: c}, Repetitions: config.Repetitions{Min: 1, Max: 1}, Seed: 5, RunID: "m",
		OnRecord: func(r *result.Record) { records = append(records, r) }}
	reps, err := m.Measure(t.Context(), sc)
	require.NoError(t, err)
	require.NoError(t, srv.Close())

	require.Len(t, reps, 1)
	s := reps[0].Sessions
	require.NotNil(t, s, "Sessions of a repetition of sessions")
	assert.Equal(t, sessions, s.Started, "sessions started")
	assert.Equal(t, sessions, s.Completed, "sessions completed")
	assert.InDelta(t, turns, s.TurnsMean, 1e-9, "turns per session")
	assert.Equal(t, int64(sessions), s.FirstTurnTTFT.Count, "first-turn TTFTs")
	assert.Equal(t, int64(sessions*(turns-1)), s.LaterTurnTTFT.Count, "later-turn TTFTs")
	assert.Equal(t, int64(sessions), s.E2E.Count, "session E2Es")

	got := truth.records(t)
	require.Len(t, records, sessions*turns)
	prompt := map[string]map[int]int{} // session → turn → prompt tokens
	cached := map[string]map[int]int{}
	for _, r := range records {
		tr, ok := got[r.RequestID]
		require.True(t, ok, "no truth for %s", r.RequestID)
		require.Empty(t, tr.Error, r.RequestID)
		if prompt[r.Session] == nil {
			prompt[r.Session], cached[r.Session] = map[int]int{}, map[int]int{}
		}
		prompt[r.Session][r.Turn], cached[r.Session][r.Turn] = tr.PromptTokens, tr.CachedTokens
	}
	for sid, p := range prompt {
		for n := 2; n <= turns; n++ {
			// Turn n carries turn n-1's prompt, its answer and its own text.
			assert.Greater(t, p[n], p[n-1]+8, "session %s: turn %d's prompt (%d tokens) over turn %d's (%d) and its answer", sid, n, p[n], n-1, p[n-1])
			assert.Positive(t, cached[sid][n], "session %s turn %d: the cache served none of the earlier turns", sid, n)
		}
	}
}
