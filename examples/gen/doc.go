// Command gen writes perfgate's example workloads. Everything in them (the
// questions, the documents, the code, the conversations) is text written for
// this generator and assembled from templates by a seeded random source, so
// the output is the same on every run:
//
//	go run ./examples/gen > examples/workloads/chat.jsonl
//	go run ./examples/gen -kind trace > examples/workloads/trace.jsonl
//	go run ./examples/gen -kind sessions > examples/workloads/sessions.jsonl
//	go run ./examples/gen -kind agents > examples/workloads/agents.jsonl
//
// chat: about 300 chat requests of four kinds, tagged by kind: short questions
// (10-60 words), documents to summarise (600-2500 words), code tasks in Go,
// Python and SQL (80-600 words), and multi-turn conversations with a system
// prompt. trace: about 200 short-to-medium requests with arrival_ms, arriving
// in Poisson bursts, for the trace load mode. sessions: 50 conversations of
// 2-5 turns, one line a turn, with think times. agents: 60 requests of an
// agent, contact extraction with a JSON schema and a travel agent's tool
// calls.
package main
