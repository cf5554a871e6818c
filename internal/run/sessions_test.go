package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

func ms(v float64) *float64 { return &v }

// turn is a chat request of a session (turn 1 when sid is "" is a lone request).
func turn(id, sid string, n int, think *float64, text string) workload.Request {
	return workload.Request{ID: id, SessionID: sid, Turn: n, ThinkMS: think, MaxTokens: 4,
		Messages: []workload.Message{{Role: "user", Content: text}}}
}

func TestGroupUnits(t *testing.T) {
	for _, tc := range []struct {
		name string
		reqs []workload.Request
		want []unit
	}{
		{"no sessions", []workload.Request{turn("a", "", 0, nil, "x"), turn("b", "", 0, nil, "x"), turn("c", "", 0, nil, "x")},
			[]unit{{0}, {1}, {2}}},
		{"sessions out of order", []workload.Request{
			turn("s1-2", "s1", 2, ms(5), "x"), turn("lone", "", 0, nil, "x"), turn("s2-1", "s2", 1, nil, "x"),
			turn("s1-1", "s1", 1, nil, "x"), turn("s1-3", "s1", 3, nil, "x"), turn("s2-2", "s2", 2, nil, "x")},
			[]unit{{3, 0, 4}, {1}, {2, 5}}},
	} {
		assert.Equal(t, tc.want, groupUnits(tc.reqs), "groupUnits(%s)", tc.name)
	}
}

func TestWithHistory(t *testing.T) {
	t1 := workload.Request{ID: "1", Messages: []workload.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}}}
	t2 := workload.Request{ID: "2", Messages: []workload.Message{{Role: "user", Content: "More"}}, MaxTokens: 9}
	got := withHistory([]exchange{{req: &t1, answer: "Hello"}}, &t2)
	assert.Equal(t, []workload.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"},
		{Role: "assistant", Content: "Hello"}, {Role: "user", Content: "More"}}, got.Messages, "withHistory(chat).Messages")
	assert.Equal(t, 9, got.MaxTokens, "withHistory keeps the turn's own parameters")
	assert.Len(t, t2.Messages, 1, "withHistory changed the turn's own request")
	assert.Same(t, &t2, withHistory(nil, &t2), "withHistory(no history) = a copy, want the request itself")

	p1 := workload.Request{ID: "p1", Prompt: "Once upon"}
	p2 := workload.Request{ID: "p2", Prompt: "Then"}
	assert.Equal(t, "Once upon a time.\n\nThen", withHistory([]exchange{{req: &p1, answer: " a time."}}, &p2).Prompt,
		"withHistory(prompt): the answer continues its prompt; a blank line before the next turn's")
}

// sessionSender answers every request at once with the text "ans:<request
// id>", stamping the fake clock's time (and advancing it by cost per request),
// and fails the workload requests named in fail.
type sessionSender struct {
	clk  *fakeClock
	cost time.Duration
	fail map[string]bool

	mu   sync.Mutex
	sent []workload.Request // as sent, in order
	ids  []string
}

func (s *sessionSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	s.mu.Lock()
	s.sent = append(s.sent, *req)
	s.ids = append(s.ids, id)
	s.mu.Unlock()
	start := s.clk.Now()
	s.clk.advance(s.cost)
	end := s.clk.Now().Add(2 * time.Millisecond)
	if s.fail[req.ID] {
		return &client.Response{RequestID: id, Sent: start, End: end, Err: &client.Error{Kind: client.ErrHTTP, Status: 500, Err: errors.New("500 Internal Server Error")}}
	}
	return &client.Response{RequestID: id, Sent: start, FirstToken: end.Add(-time.Millisecond), End: end, Text: "ans:" + id,
		ChunkTimes: []time.Time{end.Add(-time.Millisecond), end}, OutputTokens: 2, TokensFrom: client.TokensFromUsage}
}

func (s *sessionSender) sentByID() map[string][]workload.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]workload.Request{}
	for _, r := range s.sent {
		out[r.ID] = append(out[r.ID], r)
	}
	return out
}

func closed(users int) config.Load { return config.Load{Type: config.LoadClosed, Concurrency: users} }

// A session's turns go in order, each with the conversation so far (the
// earlier turns' messages and the server's answers), after the previous
// turn's end plus its think_ms on the clock; a lone request is sent as it is.
func TestSessionTurnsCarryHistoryAndThink(t *testing.T) {
	clk := newFakeClock(0)
	s := &sessionSender{clk: clk}
	reqs := []workload.Request{
		turn("s1-1", "s1", 1, nil, "one"), turn("lone", "", 0, nil, "alone"),
		turn("s1-2", "s1", 2, ms(1000), "two"), turn("s1-3", "s1", 3, ms(250), "three"),
	}
	recs := collect(t, &Dispatcher{Sender: s, Clock: clk}, Plan{Scenario: "c", Repetition: 1, Requests: reqs, RunID: "r", Load: closed(1)})
	require.Len(t, recs, 4)
	assert.Equal(t, []string{"r-c-r1-000000", "r-c-r1-000001", "r-c-r1-000002", "r-c-r1-000003"}, s.ids, "request ids, in order sent")
	sent := s.sentByID()
	assert.Equal(t, []workload.Message{{Role: "user", Content: "one"}, {Role: "assistant", Content: "ans:r-c-r1-000000"},
		{Role: "user", Content: "two"}, {Role: "assistant", Content: "ans:r-c-r1-000001"}, {Role: "user", Content: "three"}},
		sent["s1-3"][0].Messages, "turn 3 as sent")
	assert.Equal(t, []workload.Message{{Role: "user", Content: "alone"}}, sent["lone"][0].Messages, "the lone request as sent")

	// The fake clock stands still but for sleeps: turn 1 ended at +2ms, turn
	// 2 waited until then plus 1000ms, ended 2ms later, and turn 3 waited 250ms.
	start := time.Unix(1_000_000, 0)
	assert.Equal(t, []time.Time{start.Add(1002 * time.Millisecond), start.Add(1254 * time.Millisecond)}, clk.targets, "think-time sleeps")
	byID := map[string]*result.Record{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	for id, want := range map[string][3]int{"s1-1": {1, 3, 1}, "s1-3": {3, 3, 1}} {
		r := byID[id]
		assert.Equal(t, want, [3]int{r.Turn, r.SessionTurns, r.SessionRun}, "%s: turn, session turns, session run", id)
		assert.Equal(t, "s1", r.Session, "%s session", id)
	}
	assert.Equal(t, "", byID["lone"].Session, "lone request's session")
}

// load.think_time gives the pause of a turn without think_ms, drawn from the
// plan's seed: the same seed pauses alike.
func TestThinkTimeFromLoad(t *testing.T) {
	reqs := []workload.Request{turn("a1", "a", 1, nil, "x"), turn("a2", "a", 2, nil, "y"), turn("a3", "a", 3, ms(10), "z")}
	sleeps := func(think string, seed uint64) []time.Duration {
		clk := newFakeClock(0)
		load := closed(1)
		load.ThinkTime = think
		collect(t, &Dispatcher{Sender: &sessionSender{clk: clk}, Clock: clk}, Plan{Scenario: "c", Repetition: 1, Requests: reqs, Load: load, Seed: seed})
		var out []time.Duration
		prev := time.Unix(1_000_000, 0)
		for _, at := range clk.targets {
			out = append(out, at.Sub(prev)-2*time.Millisecond) // each turn ends 2ms after it is sent
			prev = at
		}
		return out
	}
	assert.Equal(t, []time.Duration{1500 * time.Millisecond, 10 * time.Millisecond}, sleeps("fixed:1500", 1), "think times with think_time fixed:1500")
	ln := sleeps("lognormal:mean=3000,stddev=2000", 7)
	assert.Equal(t, ln, sleeps("lognormal:mean=3000,stddev=2000", 7), "the same seed must draw the same think times")
	assert.NotEqual(t, 3000*time.Millisecond, ln[0], "a lognormal draw of exactly its mean")
	assert.Equal(t, 10*time.Millisecond, ln[1], "think_ms wins over think_time")
	assert.Equal(t, []time.Duration{0, 10 * time.Millisecond}, sleeps("", 1), "no think_time: no pause")
}

// A failed turn ends its session: the turns after it are not sent, and each
// is a failed request of kind session that names the turn that failed.
func TestFailedTurnFailsTheSession(t *testing.T) {
	clk := newFakeClock(0)
	s := &sessionSender{clk: clk, fail: map[string]bool{"s9-2": true}}
	reqs := []workload.Request{turn("s9-1", "s9", 1, nil, "a"), turn("s9-2", "s9", 2, nil, "b"), turn("s9-3", "s9", 3, nil, "c"),
		turn("s9-4", "s9", 4, nil, "d"), turn("next", "", 0, nil, "e")}
	recs := collect(t, &Dispatcher{Sender: s, Clock: clk}, Plan{Scenario: "c", Repetition: 1, Requests: reqs, RunID: "r", Load: closed(1)})
	require.Len(t, recs, 5, "every turn is recorded")
	assert.Len(t, s.sent, 3, "sent: turns 1 and 2 of s9 and the next request")
	kinds := map[string]string{}
	for _, r := range recs {
		kinds[r.ID] = r.ErrorKind
		if r.ErrorKind == SessionErrorKind {
			assert.True(t, strings.HasPrefix(r.Error, "turn 2 of session s9 failed: http"), "%s error = %q, want it to name turn 2 of s9", r.ID, r.Error)
		}
	}
	assert.Equal(t, map[string]string{"s9-1": "", "s9-2": "http", "s9-3": "session", "s9-4": "session", "next": ""}, kinds, "error kinds")
}

// Closed-loop users run whole sessions: with 2 users, at most 2 sessions
// are under way at any time, and each session's turns go in order.
func TestClosedLoopRunsWholeSessions(t *testing.T) {
	clk := newFakeClock(0)
	s := &sessionSender{clk: clk}
	var reqs []workload.Request
	for k := range 5 {
		for n := 1; n <= 3; n++ {
			reqs = append(reqs, turn(fmt.Sprintf("s%d-%d", k, n), fmt.Sprint("s", k), n, nil, "x"))
		}
	}
	recs := collect(t, &Dispatcher{Sender: s, Clock: clk}, Plan{Scenario: "c", Repetition: 1, Requests: reqs, Load: closed(2)})
	require.Len(t, recs, 15)
	open, next := map[string]bool{}, map[string]int{}
	for _, r := range s.sent {
		sid := r.SessionID
		next[sid]++
		assert.Equal(t, fmt.Sprintf("%s-%d", sid, next[sid]), r.ID, "the next turn of %s", sid)
		open[sid] = next[sid] < 3
		under := 0
		for _, o := range open {
			if o {
				under++
			}
		}
		assert.LessOrEqual(t, under, 2, "sessions under way after sending %s", r.ID)
	}
}

// An open loop starts unit k at the schedule's k-th arrival; a session's
// later turns follow their previous turn, not the schedule.
func TestOpenLoopStartsUnitsOnSchedule(t *testing.T) {
	clk := newFakeClock(0)
	s := &sessionSender{clk: clk}
	reqs := []workload.Request{turn("a1", "a", 1, nil, "x"), turn("a2", "a", 2, ms(100), "y"), turn("b", "", 0, nil, "z"),
		turn("c1", "c", 1, nil, "x"), turn("c2", "c", 2, ms(100), "y")}
	p := Plan{Scenario: "c", Repetition: 1, Requests: reqs, Load: config.Load{Type: config.LoadPoisson, Rate: 5}, Seed: 4}
	recs := collect(t, &Dispatcher{Sender: s, Clock: clk}, p)
	require.Len(t, recs, 5)
	sched, err := NewRenewal(5, 1, 4, 3) // 3 units in a repetition of one pass
	require.NoError(t, err)
	byID := map[string]*result.Record{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	for k, id := range []string{"a1", "b", "c1"} {
		at, _ := sched.At(k)
		assert.Equal(t, int64(at), byID[id].ScheduledNS, "unit %d (%s) scheduled", k, id)
	}
	for _, id := range []string{"a", "c"} {
		first, second := byID[id+"1"], byID[id+"2"]
		assert.Equal(t, first.EndNS+int64(100*time.Millisecond), second.ScheduledNS, "%s turn 2 due at turn 1's end + think_ms", id)
	}
}

// Count counts turns: a unit takes what is left of the count, so a
// repetition sends exactly Count requests, the last session cut short; the
// next pass runs the sessions again, salting only their first turns (the
// history carries the salt).
func TestCountCountsTurnsAndSaltsTurnOne(t *testing.T) {
	clk := newFakeClock(0)
	s := &sessionSender{clk: clk}
	reqs := []workload.Request{turn("a1", "a", 1, nil, "alpha"), turn("a2", "a", 2, nil, "beta"), turn("a3", "a", 3, nil, "gamma"),
		turn("b1", "b", 1, nil, "delta"), turn("b2", "b", 2, nil, "epsilon")}
	p := Plan{Scenario: "c", Repetition: 1, Requests: reqs, Count: 7, Load: closed(1), Salt: SaltSeed(1, "c", 1, 1)}
	recs := collect(t, &Dispatcher{Sender: s, Clock: clk}, p)
	require.Len(t, recs, 7, "records of Count 7")
	last := recs[len(recs)-1]
	assert.Equal(t, [3]int{2, 3, 3}, [3]int{last.Turn, last.SessionTurns, last.SessionRun}, "the last record: turn 2 of a session of 3 turns cut to 2, the third run")

	for k, r := range s.sent {
		own := r.Messages[len(r.Messages)-1].Content
		first := r.Messages[0].Content
		if r.Turn == 1 {
			assert.True(t, strings.HasSuffix(own, reqs[indexOf(reqs, r.ID)].Messages[0].Content) && len(own) > len(reqs[indexOf(reqs, r.ID)].Messages[0].Content),
				"sent %d (%s) = %q, want the turn salted", k, r.ID, own)
			continue
		}
		assert.Equal(t, reqs[indexOf(reqs, r.ID)].Messages[0].Content, own, "sent %d (%s): a later turn's own message is not salted", k, r.ID)
		assert.NotEqual(t, "alpha", first, "sent %d (%s): the history starts with the salted turn 1", k, r.ID)
	}
	// Pass 2 (a again, from the third unit on) has its own salt.
	assert.NotEqual(t, s.sent[0].Messages[0].Content, s.sent[5].Messages[0].Content, "turn 1 of a in passes 1 and 2")
	assert.Equal(t, "a1", s.sent[5].ID)
}

func indexOf(reqs []workload.Request, id string) int {
	for i := range reqs {
		if reqs[i].ID == id {
			return i
		}
	}
	return -1
}

// The duration stops a session's turns that would be sent after it: they are
// neither sent nor counted.
func TestDurationStopsTurns(t *testing.T) {
	clk := newFakeClock(0)
	s := &sessionSender{clk: clk, cost: 100 * time.Millisecond}
	reqs := []workload.Request{turn("a1", "a", 1, nil, "x"), turn("a2", "a", 2, ms(400), "y"), turn("a3", "a", 3, ms(400), "z"),
		turn("a4", "a", 4, ms(400), "w")}
	recs := collect(t, &Dispatcher{Sender: s, Clock: clk}, Plan{Scenario: "c", Repetition: 1, Requests: reqs, Duration: time.Second, Load: closed(1)})
	// a1 ends at 102ms, a2 is sent at 502ms and ends at 604ms, a3 is due at
	// 1004ms: past the second, so the user starts the session again at
	// 602ms, whose turn 2 would be due at 1104ms, and so on: runs of a1
	// alone at 702, 802 and 902ms; at 1002ms the second is over.
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
		assert.True(t, r.OK(), "%s failed: %s", r.ID, r.Error)
	}
	assert.Equal(t, []string{"a1", "a2", "a1", "a1", "a1", "a1"}, ids, "turns sent in 1s")
}
