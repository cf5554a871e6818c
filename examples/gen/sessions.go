package main

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/workload"
)

// followUps close a session after its script's user turns run out.
var followUps = []string{
	"Thanks. Can you sum that up in two sentences?",
	"Great, and what would you do first tomorrow morning?",
	"Could you put that as a short checklist?",
}

// sessions makes the sessions workload: 50 conversations of 2-5 turns, one
// line a turn (session_id, turn), each turn only the user's new message
// (turn 1 with its system prompt): perfgate sends a later turn with the
// turns before it and the server's own answers. Later turns pause 1-8 s
// (think_ms) after the previous answer, but one in five leaves think_ms out
// so that the config's load.think_time applies.
func (g *gen) sessions() []workload.Request {
	var reqs []workload.Request
	for s := range 50 {
		c := pick(g.r, conversations)
		var users []string
		for i := 0; i < len(c.turns); i += 2 {
			users = append(users, c.turns[i])
		}
		users = append(users, pick(g.r, followUps))
		n := between(g.r, 2, min(5, len(users)))
		sid := fmt.Sprintf("s%02d", s+1)
		for t := 1; t <= n; t++ {
			r := workload.Request{
				ID: fmt.Sprintf("%s-%d", sid, t), SessionID: sid, Turn: t,
				Messages:  []workload.Message{{Role: "user", Content: g.fill(users[t-1])}},
				MaxTokens: pick(g.r, []int{64, 96, 128}),
				Tags:      []string{"session"},
			}
			if t == 1 {
				r.Messages = append([]workload.Message{{Role: "system", Content: g.fill(pick(g.r, c.systems))}}, r.Messages...)
			} else if g.r.IntN(5) > 0 {
				think := float64(between(g.r, 1000, 8000))
				r.ThinkMS = &think
			}
			reqs = append(reqs, r)
		}
	}
	return reqs
}
