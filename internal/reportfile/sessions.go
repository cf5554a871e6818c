package reportfile

import (
	"github.com/perfgate/perfgate/internal/result"
)

// Sessions in the reports: a scenario whose workload has sessions shows a
// small table of them (sessions started and completed, turns, TTFT of first
// and later turns, the session E2E), each side's median over its
// repetitions. Its turns are requests, gated as every request is; these
// figures are shown, never gated.

// sessionRows are the rows of a scenario's sessions table, in the
// TelemetryRow shape so that the telemetry table renders them; nil when
// neither side replayed sessions.
func sessionRows(bs, cs *result.ScenarioResult) []TelemetryRow {
	b, c := ofRepetitions(bs, func(r *result.Repetition) *result.SessionStats { return r.Sessions }),
		ofRepetitions(cs, func(r *result.Repetition) *result.SessionStats { return r.Sessions })
	if b == nil && c == nil {
		return nil
	}
	rows := []struct {
		metric, title, unit string
		value               func(s *result.SessionStats) (float64, bool)
	}{
		{"sessions_started", "sessions started", "count", func(s *result.SessionStats) (float64, bool) { return float64(s.Started), true }},
		{"sessions_completed", "sessions completed", "%", func(s *result.SessionStats) (float64, bool) {
			return float64(s.Completed) / float64(s.Started), s.Started > 0
		}},
		{"session_turns", "turns a session", "", func(s *result.SessionStats) (float64, bool) { return s.TurnsMean, s.Started > 0 }},
		{"ttft_first_turn.p50", "TTFT p50, turn 1", "ms", sessionStat(func(s *result.SessionStats) result.Stats { return s.FirstTurnTTFT }, p50)},
		{"ttft_later_turns.p50", "TTFT p50, later turns", "ms", sessionStat(func(s *result.SessionStats) result.Stats { return s.LaterTurnTTFT }, p50)},
		{"ttft_first_turn.p99", "TTFT p99, turn 1", "ms", sessionStat(func(s *result.SessionStats) result.Stats { return s.FirstTurnTTFT }, p99)},
		{"ttft_later_turns.p99", "TTFT p99, later turns", "ms", sessionStat(func(s *result.SessionStats) result.Stats { return s.LaterTurnTTFT }, p99)},
		{"session_e2e.p50", "session E2E p50", "ms", sessionStat(func(s *result.SessionStats) result.Stats { return s.E2E }, p50)},
		{"session_e2e.p99", "session E2E p99", "ms", sessionStat(func(s *result.SessionStats) result.Stats { return s.E2E }, p99)},
	}
	out := make([]TelemetryRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, TelemetryRow{Metric: r.metric, Title: r.title, Unit: r.unit, Group: "sessions",
			Baseline: medianOver(b, r.value), Candidate: medianOver(c, r.value)})
	}
	return out
}

func p50(s result.Stats) float64 { return s.P50 }
func p99(s result.Stats) float64 { return s.P99 }

// sessionStat reads one percentile of one of a repetition's session Stats, when it
// has any values.
func sessionStat(of func(*result.SessionStats) result.Stats, pct func(result.Stats) float64) func(*result.SessionStats) (float64, bool) {
	return func(s *result.SessionStats) (float64, bool) {
		st := of(s)
		return pct(st), st.Count > 0
	}
}
