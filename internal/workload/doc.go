// Package workload defines perfgate's request trace format (JSONL, one request a
// line), loads and validates it with line numbers, identifies it by a content
// hash, and synthesises workloads from length distributions (see synth.go).
//
// A workload file looks like:
//
//	{"id":"q1","messages":[{"role":"user","content":"Hi"}],"max_tokens":64}
//	{"id":"d7","prompt":"Summarise: ...","max_tokens":256,"arrival_ms":1200.5}
//
// Load and Parse are strict, and report every problem with its file, line and
// key ("workloads/chat.jsonl:12: max_tokens: want an integer from 1 to
// 1048576, got 0"), each a *LineError joined with errors.Join (at most 50,
// then a count); a JSON syntax error also has its column
// ("workloads/chat.jsonl:4:42: invalid JSON: ..."). A line is one JSON object
// with only the keys of Request; exactly one of messages (roles system, user,
// assistant, tool; a user message's content non-empty) and prompt
// (non-empty); max_tokens from 1 to MaxLength; arrival_ms from 0 to
// MaxArrivalMS; temperature from 0 to 2; top_p in (0, 1]; 0 <= min_tokens <=
// max_tokens; model a non-empty name of at most MaxModelName bytes without
// control characters; response_format an object; tools an array and
// tool_choice a string or an object; tags non-empty strings; ids unique (a missing id
// becomes "line-N"); session_id and turn together (turn from 1 to
// MaxTurns, each session's turns 1..n once each, only its first turn with
// arrival_ms, think_ms from 0 to MaxArrivalMS on a later turn only). An integer may be written as any JSON number
// with a whole value (1e2). A null value is the same as leaving the key out.
// Blank lines are skipped and still counted; a UTF-8 byte-order mark at the
// start of the file is read as one.
//
// Every reader is bounded (limits.go): Load reads only a regular file (a
// named pipe or /dev/zero is refused at once), at most MaxFileBytes, in lines
// of at most MaxLineBytes.
//
// Write gives the canonical form of a workload (one compact line a request, keys
// in field order), and Hash is the SHA-256 of that form, so whitespace and key
// order in a file do not change a workload's identity.
//
// Synthesize makes a workload from length distributions (Dist, also written in
// the CLI syntax that ParseDist reads, "lognormal:mean=512,stddev=300"), with
// optional shared prefixes, from a seed.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package workload
