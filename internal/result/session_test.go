package result

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// turnRecord is a turn of run k of session s that took ttft and e2e
// milliseconds from sent (ms since the start), or failed.
func turnRecord(s string, k, turn, of int, sentMS, ttftMS, e2eMS int64, kind string) *Record {
	const ms = int64(1e6)
	r := &Record{Session: s, SessionRun: k, Turn: turn, SessionTurns: of, SentNS: sentMS * ms, EndNS: (sentMS + e2eMS) * ms,
		ErrorKind: kind, OutputTokens: 2, TokensFrom: "usage"}
	if kind == "" {
		r.FirstTokenNS = (sentMS + ttftMS) * ms
	}
	return r
}

func TestSessionStats(t *testing.T) {
	a := NewAggregator(SLO{}, false, 0)
	for _, r := range []*Record{
		// s1: two turns, both fine, from 0 to 1000+200 ms.
		turnRecord("s1", 1, 1, 2, 0, 100, 200, ""),
		turnRecord("s1", 1, 2, 2, 1000, 30, 200, ""),
		// s2: turn 2 failed, turn 3 failed with it.
		turnRecord("s2", 2, 1, 3, 10, 120, 150, ""),
		turnRecord("s2", 2, 2, 3, 500, 0, 5, "http"),
		turnRecord("s2", 2, 3, 3, 505, 0, 0, "session"),
		// s1 again, in pass 2: one turn of its two (the duration stopped it).
		turnRecord("s1", 3, 1, 2, 2000, 80, 100, ""),
		// A lone request.
		{SentNS: 0, FirstTokenNS: 5e6, EndNS: 9e6, OutputTokens: 2},
	} {
		a.Add(r)
	}
	rep := a.Summary(1)
	s := rep.Sessions
	require.NotNil(t, s, "Summary().Sessions")
	assert.Equal(t, 3, s.Started, "started")
	assert.Equal(t, 1, s.Completed, "completed")
	assert.InDelta(t, 2.0, s.TurnsMean, 1e-9, "turns mean (2+3+1)/3")
	assert.Equal(t, 3, s.TurnsMax, "turns max")
	assert.Equal(t, int64(3), s.FirstTurnTTFT.Count, "first-turn TTFTs")
	assert.InDelta(t, 100, s.FirstTurnTTFT.P50, 0.5, "first-turn TTFT p50 of 80, 100, 120")
	assert.Equal(t, int64(1), s.LaterTurnTTFT.Count, "later-turn TTFTs (the failed ones have none)")
	assert.InDelta(t, 30, s.LaterTurnTTFT.Max, 0.1, "later-turn TTFT")
	assert.Equal(t, int64(1), s.E2E.Count, "session E2Es: the completed sessions'")
	assert.InDelta(t, 1200, s.E2E.Max, 1, "s1's E2E: first send to last end, think time included")
	assert.Equal(t, 7, rep.Sent, "every turn is a request")
	assert.Equal(t, map[string]int{"http": 1, "session": 1}, rep.Errors, "errors by kind")

	plain := NewAggregator(SLO{}, false, 0)
	plain.Add(&Record{SentNS: 0, FirstTokenNS: 5e6, EndNS: 9e6, OutputTokens: 2})
	assert.Nil(t, plain.Summary(1).Sessions, "Sessions of a repetition without sessions")
}

func TestValidateSessions(t *testing.T) {
	valid := func() *Result {
		return &Result{Schema: Schema, Scenarios: []ScenarioResult{{Name: "chat", Load: Load{Type: "closed", Concurrency: 1}, Repetitions: []Repetition{{
			Index: 1, Sent: 6, Completed: 6, TokensFrom: "usage",
			Sessions: &SessionStats{Started: 3, Completed: 2, TurnsMean: 2, TurnsMax: 3,
				FirstTurnTTFT: Stats{Count: 3, Mean: 10, Min: 5, P50: 10, P90: 15, P95: 15, P99: 15, P999: 15, Max: 15},
				E2E:           Stats{Count: 2, Mean: 100, Min: 90, P50: 90, P90: 110, P95: 110, P99: 110, P999: 110, Max: 110}},
		}}}}}
	}
	require.NoError(t, valid().Validate(), "the valid fixture")
	for _, tc := range []struct {
		name  string
		spoil func(s *SessionStats)
		want  string
	}{
		{"negative", func(s *SessionStats) { s.Started = -1 }, "scenarios[0].repetitions[0].sessions.started: want a count >= 0, got -1"},
		{"more completed", func(s *SessionStats) { s.Completed = 4 }, "scenarios[0].repetitions[0].sessions.completed: 4 completed of 3 started"},
		{"mean over max", func(s *SessionStats) { s.TurnsMean = 3.5 }, "scenarios[0].repetitions[0].sessions.turns_mean: a mean of 3.5 turns with at most 3"},
		{"mean under one", func(s *SessionStats) { s.TurnsMean = 0.5 }, "scenarios[0].repetitions[0].sessions.turns_mean: a mean of 0.5 turns with at most 3"},
		{"negative latency", func(s *SessionStats) { s.LaterTurnTTFT.P99 = -2 }, "scenarios[0].repetitions[0].sessions.later_turn_ttft_ms.p99: want a finite number >= 0, got -2"},
		{"more E2Es", func(s *SessionStats) { s.E2E.Count = 3 }, "scenarios[0].repetitions[0].sessions.e2e_ms.count: 3 session E2Es of 2 completed sessions"},
		{"more first turns", func(s *SessionStats) { s.FirstTurnTTFT.Count = 4 }, "scenarios[0].repetitions[0].sessions.first_turn_ttft_ms.count: 4 first turns of 3 sessions"},
	} {
		r := valid()
		tc.spoil(r.Scenarios[0].Repetitions[0].Sessions)
		err := r.Validate()
		require.Error(t, err, tc.name)
		assert.True(t, strings.Contains(err.Error(), tc.want), "Validate(%s) = %v, want %q", tc.name, err, tc.want)
	}
}

// A session the request count cut short is started, not completed, and its
// shorter E2E stays out of the sessions' E2E; a turn never sent (kind
// session) is a failure that stays out of the schedule's statistics.
func TestSessionCutShortAndUnsentTurns(t *testing.T) {
	a := NewAggregator(SLO{}, true, 10)
	a.Add(turnRecord("s1", 1, 1, 3, 0, 100, 200, ""))
	a.Add(turnRecord("s1", 1, 2, 3, 1000, 30, 200, "")) // turn 3 was never reserved
	a.Add(turnRecord("s2", 2, 1, 2, 100, 0, 5, "http"))
	unsent := turnRecord("s2", 2, 2, 2, 0, 0, 0, SessionErrorKind)
	unsent.ScheduledNS, unsent.SentNS, unsent.EndNS = 9e9, 9e9, 9e9 // when it was given up
	a.Add(unsent)
	rep := a.Summary(1)
	require.NotNil(t, rep.Sessions)
	assert.Equal(t, 2, rep.Sessions.Started, "started")
	assert.Equal(t, 0, rep.Sessions.Completed, "completed: s1 sent 2 of its 3 turns, s2 failed")
	assert.Equal(t, int64(0), rep.Sessions.E2E.Count, "no completed session, no session E2E")
	assert.Equal(t, 4, rep.Sent, "the unsent turn counts as a failed request")
	assert.Equal(t, 2, rep.Failed, "failed: the http error and the unsent turn")
	require.NotNil(t, rep.Schedule)
	assert.Equal(t, int64(3), rep.Schedule.SendLag.Count, "send lags: the three turns sent, not the unsent one")
	assert.Less(t, float64(rep.Duration), 2.0, "the window ends with the last sent turn, not when the unsent one was given up")
}
