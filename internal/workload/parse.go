package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/perfgate/perfgate/internal/safeio"
)

// LineError is one problem in a workload (or lengths) file. Every error that
// Parse and Load report about a file's content is a *LineError, joined with
// errors.Join when there are several.
type LineError struct {
	File string
	// Line is 1-based; 0 when the problem is about the whole file.
	Line int
	// Field is the JSON key path, e.g. "max_tokens" or "messages[1].role"; empty
	// when the problem is about the whole line.
	Field string
	Msg   string
	// Column is the 1-based character column a JSON syntax error is at; 0
	// for every other problem.
	Column int
}

// Error formats the problem as "file:line:column: field: message", leaving
// out the line, the column and the field when they are zero.
func (e *LineError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(":")
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads and validates the workload file at path. The returned Workload has
// Path set; errors name the file (and the line and field where there is one).
// Only a regular file is read (a named pipe or a device such as /dev/zero is
// refused at once), and only up to MaxFileBytes.
func Load(path string) (*Workload, error) {
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("read workload: %w", err)
	}
	defer f.Close()
	w, err := Parse(f, path)
	if err != nil {
		return nil, err
	}
	w.Path = path
	return w, nil
}

// Parse reads a workload in the JSONL format from r; name is the file name used
// in errors. It reports every problem it finds (up to 50, then a count), each a
// *LineError, joined with errors.Join. Blank lines are skipped but still count
// towards line numbers. A request without an id gets "line-N". It reads at
// most MaxFileBytes, and lines of at most MaxLineBytes.
func Parse(r io.Reader, name string) (*Workload, error) {
	if name == "" {
		name = "workload"
	}
	p := &parser{Problems: Problems{File: name}, ids: map[string]idUse{}, turns: map[string]map[int]int{}}
	if err := ReadLines(safeio.LimitReader(r, MaxFileBytes, name), name, p.parseLine); err != nil {
		if le, ok := err.(*LineError); ok {
			p.Add(le) // with the problems of the lines before it
			return nil, p.Err()
		}
		return nil, err
	}
	if p.Count() == 0 && len(p.reqs) == 0 {
		p.errorf(0, "", "no requests")
	}
	p.checkTurnGaps()
	if err := p.Err(); err != nil {
		return nil, err
	}
	return &Workload{Requests: p.reqs, Hash: Hash(p.reqs)}, nil
}

// idUse records where an id was first used, and whether it was assigned.
type idUse struct {
	line     int
	assigned bool
}

type parser struct {
	Problems
	reqs []Request
	ids  map[string]idUse
	// turns maps each session to the line of each of its turns.
	turns map[string]map[int]int
	// sessionOrder lists the sessions in order of first appearance.
	sessionOrder []string
}

func (p *parser) errorf(line int, field, format string, args ...any) {
	p.Errorf(line, field, format, args...)
}

// keys lists the keys of a request line, in the order the docs give them.
var keys = []string{"id", "model", "messages", "prompt", "max_tokens", "arrival_ms", "session_id", "turn", "think_ms", "temperature", "top_p", "seed", "ignore_eos", "min_tokens", "response_format", "tools", "tool_choice", "tags"}

var roles = []string{"system", "user", "assistant", "tool"}

// parseLine validates one line and, when it is valid, appends its request.
func (p *parser) parseLine(n int, line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	before := p.Count()
	bad := func() bool { return p.Count() > before }

	members, msg, col := ObjectMembers(line)
	if msg != "" {
		p.Add(&LineError{File: p.File, Line: n, Column: col, Msg: msg})
		return
	}
	var (
		req                   = Request{Line: n}
		seen                  = map[string]bool{}
		hasMessages, hasPrmpt bool
		hasMax, maxOK, minSet bool
	)
	for _, m := range members {
		if seen[m.Key] {
			p.errorf(n, m.Key, "key appears more than once")
			continue
		}
		seen[m.Key] = true
		if !slices.Contains(keys, m.Key) {
			p.errorf(n, m.Key, "unknown key%s; want one of %s", DidYouMean(m.Key, keys), strings.Join(keys, ", "))
			continue
		}
		if string(m.Raw) == "null" {
			continue // null is the same as absent
		}
		switch m.Key {
		case "id":
			p.Decode(n, m, &req.ID, "string")
		case "model":
			if p.Decode(n, m, &req.Model, "string") {
				switch {
				case req.Model == "":
					p.errorf(n, "model", "must not be empty (leave it out for the target's model)")
				case len(req.Model) > MaxModelName:
					p.errorf(n, "model", "%d bytes, more than the %d a model or adapter name may have", len(req.Model), MaxModelName)
				case strings.IndexFunc(req.Model, unicode.IsControl) >= 0:
					p.errorf(n, "model", "has a control character")
				}
			}
		case "messages":
			hasMessages = true
			req.Messages = p.messages(n, m.Raw)
		case "prompt":
			hasPrmpt = true
			if p.Decode(n, m, &req.Prompt, "string") && req.Prompt == "" {
				p.errorf(n, "prompt", "must not be empty")
			}
		case "max_tokens":
			hasMax = true
			maxOK = p.intIn(n, m, &req.MaxTokens, 1, MaxLength)
		case "arrival_ms":
			var v float64
			if p.floatIn(n, m, &v, 0, MaxArrivalMS, "from 0 to 1e9 (milliseconds from the start of the trace)") {
				req.ArrivalMS = &v
			}
		case "temperature", "top_p", "seed", "ignore_eos", "min_tokens", "response_format", "tools", "tool_choice":
			p.DecodeSampling(n, m.Key, m, &req)
			minSet = minSet || (m.Key == "min_tokens" && req.MinTokens != nil)
		case "session_id":
			if p.Decode(n, m, &req.SessionID, "string") && req.SessionID == "" {
				p.errorf(n, "session_id", "must not be empty")
			}
		case "turn":
			p.intIn(n, m, &req.Turn, 1, MaxTurns)
		case "think_ms":
			var v float64
			if p.floatIn(n, m, &v, 0, MaxArrivalMS, "from 0 to 1e9 (milliseconds after the previous turn's end)") {
				req.ThinkMS = &v
			}
		case "tags":
			req.Tags = p.tags(n, m.Raw)
		}
	}
	p.checkSession(n, &req, seen)

	switch {
	case hasMessages && hasPrmpt:
		p.errorf(n, "prompt", "not allowed together with messages; set exactly one of messages (chat) and prompt (completions)")
	case !hasMessages && !hasPrmpt:
		p.errorf(n, "messages", "required: set messages (chat) or prompt (completions)")
	}
	if !hasMax {
		p.errorf(n, "max_tokens", "required: an integer from 1 to %d", MaxLength)
	}
	if maxOK && minSet && *req.MinTokens > req.MaxTokens {
		p.errorf(n, "min_tokens", "want an integer from 0 to max_tokens (%d), got %d", req.MaxTokens, *req.MinTokens)
	}

	// Ids: an explicit one must be new; a missing one becomes "line-N".
	assigned := req.ID == ""
	if assigned {
		req.ID = "line-" + strconv.Itoa(n)
	}
	if prev, dup := p.ids[req.ID]; dup {
		what := ""
		if assigned {
			what = " (assigned because the request has no id)"
		}
		where := ""
		if prev.assigned {
			where = " (assigned there because that request has no id)"
		}
		p.errorf(n, "id", "%q%s already used on line %d%s", req.ID, what, prev.line, where)
	} else {
		p.ids[req.ID] = idUse{line: n, assigned: assigned}
	}

	if !bad() {
		p.reqs = append(p.reqs, req)
	}
}

// messages decodes and validates the messages array.
func (p *parser) messages(n int, raw json.RawMessage) []Message {
	var elems []json.RawMessage
	if raw[0] != '[' {
		p.errorf(n, "messages", "want an array of messages, got %s", Describe(raw))
		return nil
	}
	_ = json.Unmarshal(raw, &elems) // cannot fail: raw is a valid array
	if len(elems) == 0 {
		p.errorf(n, "messages", "must not be empty")
		return nil
	}
	msgs := make([]Message, len(elems))
	for i, e := range elems {
		path := fmt.Sprintf("messages[%d]", i)
		members, msg, _ := ObjectMembers(e)
		if msg != "" {
			p.errorf(n, path, "%s", strings.Replace(msg, "a JSON object", "an object", 1))
			continue
		}
		seen := map[string]bool{}
		contentOK := true
		for _, m := range members {
			field := path + "." + m.Key
			if seen[m.Key] {
				p.errorf(n, field, "key appears more than once")
				continue
			}
			seen[m.Key] = true
			switch m.Key {
			case "role":
				p.Decode(n, Member{field, m.Raw}, &msgs[i].Role, "string")
			case "content":
				contentOK = p.Decode(n, Member{field, m.Raw}, &msgs[i].Content, "string")
			default:
				p.errorf(n, field, "unknown key%s; want role, content", DidYouMean(m.Key, []string{"role", "content"}))
			}
		}
		switch role := msgs[i].Role; {
		case !seen["role"] || role == "":
			p.errorf(n, path+".role", "required; want one of %s", strings.Join(roles, ", "))
		case !slices.Contains(roles, role):
			p.errorf(n, path+".role", "must be one of %s, got %q", strings.Join(roles, ", "), role)
		case role == "user" && !seen["content"]:
			p.errorf(n, path+".content", "required in a user message")
		case role == "user" && contentOK && msgs[i].Content == "":
			p.errorf(n, path+".content", "must not be empty in a user message")
		}
	}
	return msgs
}

// tags decodes the tags array, checking each element.
func (p *parser) tags(n int, raw json.RawMessage) []string {
	if raw[0] != '[' {
		p.errorf(n, "tags", "want an array of strings, got %s", Describe(raw))
		return nil
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems) // cannot fail: raw is a valid array
	if len(elems) == 0 {
		return nil
	}
	tags := make([]string, len(elems))
	for i, e := range elems {
		field := fmt.Sprintf("tags[%d]", i)
		if p.Decode(n, Member{field, e}, &tags[i], "string") && tags[i] == "" {
			p.errorf(n, field, "must not be empty")
		}
	}
	return tags
}

// checkSession checks the session keys of one line: session_id and turn
// together, each turn of a session once, arrival_ms on a first turn only,
// think_ms on a later turn only.
func (p *parser) checkSession(n int, req *Request, seen map[string]bool) {
	hasSession, hasTurn := req.SessionID != "", req.Turn > 0
	switch {
	case hasSession && !hasTurn && !seen["turn"]:
		p.errorf(n, "turn", "required with session_id: the turn's number in its session, from 1")
		return
	case hasTurn && !hasSession && !seen["session_id"]:
		p.errorf(n, "session_id", "required with turn: the session the turn belongs to")
		return
	case !hasSession || !hasTurn:
		return // already reported
	}
	if req.ThinkMS != nil && req.Turn == 1 {
		p.errorf(n, "think_ms", "not allowed on turn 1: a session's first turn is sent when the session arrives; think_ms is the pause before a later turn")
	}
	if req.ArrivalMS != nil && req.Turn > 1 {
		p.errorf(n, "arrival_ms", "only turn 1 of a session may set arrival_ms (turn %d is sent after turn %d's end plus think_ms)", req.Turn, req.Turn-1)
	}
	turns := p.turns[req.SessionID]
	if turns == nil {
		turns = map[int]int{}
		p.turns[req.SessionID] = turns
		p.sessionOrder = append(p.sessionOrder, req.SessionID)
	}
	if prev, dup := turns[req.Turn]; dup {
		p.errorf(n, "turn", "session %q already has turn %d, on line %d", req.SessionID, req.Turn, prev)
		return
	}
	turns[req.Turn] = n
}

// checkTurnGaps reports every session whose turns are not 1..n.
func (p *parser) checkTurnGaps() {
	for _, id := range p.sessionOrder {
		turns := p.turns[id]
		for t := 1; t <= len(turns); t++ {
			if _, ok := turns[t]; ok {
				continue
			}
			last, line := 0, 0
			for k, l := range turns {
				if k > last {
					last, line = k, l
				}
			}
			p.errorf(line, "turn", "session %q has turn %d but no turn %d: number a session's turns 1, 2, 3, ... without gaps", id, last, t)
			break
		}
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// intIn decodes an integer member into dst and checks it is in [lo, hi]:
// "want an integer from 1 to 1048576, got -5" for any value that is not.
func (p *Problems) intIn(n int, m Member, dst *int, lo, hi int) bool {
	var probe Problems // a type error is said with the bounds, below
	if probe.Decode(n, m, dst, "integer") && *dst >= lo && *dst <= hi {
		return true
	}
	p.Errorf(n, m.Key, "want an integer from %d to %d, got %s", lo, hi, Describe(m.Raw))
	return false
}

// floatIn decodes a number member into dst and checks it is in [lo, hi]
// (which bounds says in words): "want a number from 0 to 2, got 3".
func (p *Problems) floatIn(n int, m Member, dst *float64, lo, hi float64, bounds string) bool {
	var probe Problems
	if probe.Decode(n, m, dst, "number") && *dst >= lo && *dst <= hi {
		return true
	}
	p.Errorf(n, m.Key, "want a number %s, got %s", bounds, Describe(m.Raw))
	return false
}
