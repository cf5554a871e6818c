package run

import (
	"slices"
	"strings"
	"sync"

	"github.com/perfgate/perfgate/internal/workload"
)

// A unit is what a load shape schedules: the turns of one session, in turn
// order, or one request that belongs to no session (a unit of one turn).
// Its elements index Plan.Requests. A closed-loop user runs one unit at a
// time, an open-loop arrival starts one, and a trace starts each at its
// first turn's arrival_ms.
type unit []int

// groupUnits groups reqs into units, in the order of each unit's first line
// in reqs; a session's turns are put in turn order. A workload without
// sessions is one unit per request, in order, so that it replays exactly as
// it did before sessions existed.
func groupUnits(reqs []workload.Request) []unit {
	units := make([]unit, 0, len(reqs))
	at := map[string]int{} // session id → its unit
	for i := range reqs {
		id := reqs[i].SessionID
		if id == "" {
			units = append(units, unit{i})
			continue
		}
		k, ok := at[id]
		if !ok {
			at[id] = len(units)
			units = append(units, unit{i})
			continue
		}
		units[k] = append(units[k], i)
	}
	for _, u := range units {
		if len(u) > 1 {
			slices.SortStableFunc(u, func(a, b int) int { return reqs[a].Turn - reqs[b].Turn })
		}
	}
	return units
}

// hasSessions reports whether any request belongs to a session.
func hasSessions(reqs []workload.Request) bool {
	return slices.ContainsFunc(reqs, func(r workload.Request) bool { return r.SessionID != "" })
}

// exchange is one earlier turn of a session as it went: the turn's own
// request as it was sent (turn 1's salted) and the text the server answered.
type exchange struct {
	req    *workload.Request
	answer string
}

// withHistory returns the request to send for a session's turn: req with
// the conversation so far before its own text, so that the server sees what
// a chat client sends (every earlier turn's messages, each followed by the
// assistant's answer as the server gave it) and its prefix cache can reuse
// the session's earlier turns. For a prompt (the completions API) the
// conversation is the concatenation of the earlier prompts, each followed
// by its answer and a blank line, then req's prompt. A turn with messages after prompt turns gets each earlier
// prompt as a user message; a prompt turn after message turns gets the
// earlier messages' contents, each ended by a blank line. req itself is left
// as it is.
func withHistory(history []exchange, req *workload.Request) *workload.Request {
	if len(history) == 0 {
		return req
	}
	out := *req
	if len(req.Messages) > 0 {
		var msgs []workload.Message
		for _, h := range history {
			if len(h.req.Messages) > 0 {
				msgs = append(msgs, h.req.Messages...)
			} else {
				msgs = append(msgs, workload.Message{Role: "user", Content: h.req.Prompt})
			}
			msgs = append(msgs, workload.Message{Role: "assistant", Content: h.answer})
		}
		out.Messages = append(msgs, req.Messages...)
		return &out
	}
	var b strings.Builder
	for _, h := range history {
		if len(h.req.Messages) > 0 {
			for _, m := range h.req.Messages {
				b.WriteString(m.Content)
				b.WriteString("\n\n")
			}
		} else {
			b.WriteString(h.req.Prompt) // the answer continues the prompt, as a completion does
		}
		b.WriteString(h.answer)
		b.WriteString("\n\n") // so that the next turn's first word is not glued to the answer's last
	}
	b.WriteString(req.Prompt)
	out.Prompt = b.String()
	return &out
}

// reservation is a unit as one repetition runs it: the k-th unit started
// (counting on over passes), its turns, the index of its first turn among
// all the turns the repetition sends (request ids and eval mixing count
// turns), and how many of its turns it sends (fewer than it has when the
// request count ran out).
type reservation struct {
	k     int
	turns unit
	first int
	n     int
}

// reserver hands out units in order, cycling over them, and reserves their
// turns against the request count, so that a repetition sends exactly Count
// requests: a unit that starts takes min(remaining, its turns). It is safe
// for concurrent use.
type reserver struct {
	mu    sync.Mutex
	units []unit
	limit int // turns in all; < 0 unbounded
	next  int // units started
	turns int // turns reserved
}

// take reserves the next unit; ok is false when the count has been reached.
func (r *reserver) take() (res reservation, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.units[r.next%len(r.units)])
	if r.limit >= 0 {
		n = min(n, r.limit-r.turns)
	}
	if n <= 0 {
		return reservation{}, false
	}
	res = reservation{k: r.next, turns: r.units[r.next%len(r.units)], first: r.turns, n: n}
	r.next++
	r.turns += n
	return res, true
}

// unitsFor is how many units a repetition of limit turns starts (limit when
// there are no sessions), or -1 when limit is unbounded.
func unitsFor(units []unit, limit int) int {
	if limit < 0 {
		return -1
	}
	k := 0
	for turns := 0; turns < limit; k++ {
		turns += len(units[k%len(units)])
	}
	return k
}
