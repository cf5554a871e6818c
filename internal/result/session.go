package result

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// SessionStats summarises the sessions a repetition replayed (workload
// lines with a session_id): how many started and completed, how long they
// were, and what their turns and the whole conversations took. Turns are
// requests too, and their latencies are in the repetition's own statistics;
// these figures are shown beside the gated ones, and gate nothing.
type SessionStats struct {
	// Started counts the sessions whose first turn was sent (a session the
	// repetition runs twice, in two passes, counts twice); Completed those
	// whose every turn it sent succeeded.
	Started   int `json:"started"`
	Completed int `json:"completed"`
	// TurnsMean and TurnsMax are the turns recorded per started session,
	// failed ones included (a turn the duration stopped is not recorded).
	TurnsMean float64 `json:"turns_mean"`
	TurnsMax  int     `json:"turns_max"`
	// FirstTurnTTFT is the TTFT of the sessions' first turns, and
	// LaterTurnTTFT that of their later turns, which carry the
	// conversation so far: a longer prompt, mostly in the prefix cache
	// when the server keeps one.
	FirstTurnTTFT Stats `json:"first_turn_ttft_ms"`
	LaterTurnTTFT Stats `json:"later_turn_ttft_ms"`
	// E2E is, for each completed session, the time from its first turn's
	// send to its last turn's end, think times included.
	E2E Stats `json:"e2e_ms"`
}

// sessionRun is what the aggregator knows of one run of a session.
type sessionRun struct {
	turns, want int
	failed      bool
	first, end  int64 // first send and last end, ns
}

// sessions folds the records of session turns into SessionStats.
type sessions struct {
	runs                      map[int]*sessionRun
	firstTTFT, laterTTFT, e2e *hdrhistogram.Histogram
}

func newSessions() *sessions {
	h := func() *hdrhistogram.Histogram { return hdrhistogram.New(histMinUS, histMaxUS, histDigits) }
	return &sessions{runs: map[int]*sessionRun{}, firstTTFT: h(), laterTTFT: h(), e2e: h()}
}

func record(h *hdrhistogram.Histogram, us int64) {
	_ = h.RecordValue(max(histMinUS, min(us, histMaxUS))) // cannot fail inside the range
}

// add folds one record of a session turn.
func (s *sessions) add(r *Record) {
	run := s.runs[r.SessionRun]
	if run == nil {
		run = &sessionRun{first: r.SentNS}
		s.runs[r.SessionRun] = run
	}
	run.turns++
	run.want = max(run.want, r.SessionTurns)
	run.failed = run.failed || !r.OK()
	run.first, run.end = min(run.first, r.SentNS), max(run.end, r.EndNS)
	if !r.OK() || r.FirstTokenNS == 0 {
		return
	}
	ttft := (r.FirstTokenNS - r.SentNS) / int64(time.Microsecond)
	if r.Turn == 1 {
		record(s.firstTTFT, ttft)
	} else {
		record(s.laterTTFT, ttft)
	}
}

// summary is the SessionStats of what was added; nil when no session was.
func (s *sessions) summary() *SessionStats {
	if len(s.runs) == 0 {
		return nil
	}
	out := &SessionStats{Started: len(s.runs)}
	turns := 0
	for _, run := range s.runs {
		turns += run.turns
		out.TurnsMax = max(out.TurnsMax, run.turns)
		if !run.failed && run.turns >= run.want {
			out.Completed++
			record(s.e2e, (run.end-run.first)/int64(time.Microsecond))
		}
	}
	out.TurnsMean = float64(turns) / float64(len(s.runs))
	out.FirstTurnTTFT, out.LaterTurnTTFT, out.E2E = stats(s.firstTTFT), stats(s.laterTTFT), stats(s.e2e)
	return out
}
