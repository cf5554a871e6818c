package client

import (
	"bytes"
	"unicode/utf8"
)

// decoded is what perfgate reads from one streamed chunk.
type decoded struct {
	content   []byte // choices[0].delta.content
	text      []byte // choices[0].text
	reasoning bool   // choices[0].delta.reasoning_content or .reasoning is non-empty
	// reasoningBytes is the length of the reasoning text (as sent, escapes
	// and all: it only bounds the tokens a usage may claim).
	reasoningBytes int
	finish         []byte // choices[0].finish_reason
	usage          usage
	hasUsage       bool
	// tools are the elements of choices[0].delta.tool_calls, in order.
	tools []toolFragment
}

// toolFragment is one element of a chunk's delta.tool_calls: a piece of one
// tool call (see ToolCall).
type toolFragment struct {
	index    int
	hasIndex bool // an index was sent (a server that sends none is read in order)
	id, typ  []byte
	name     []byte
	args     []byte
}

// reset empties d for the next chunk, keeping its tools' storage.
func (d *decoded) reset() {
	tools := d.tools[:0]
	*d = decoded{tools: tools}
}

// fastDecode decodes a chunk without reflection or allocation, into slices of
// data or of *scratch. It handles the chunks servers send for tokens and
// reports ok = false for anything else: an error member, an "object" of
// "error", malformed JSON, a duplicate or case-folded key, a lone surrogate or
// invalid UTF-8 in a string it keeps, a type it does not expect. The caller
// then decodes the chunk with encoding/json, which is authoritative; a fuzz
// test checks that the two agree wherever the fast path answers.
func fastDecode(data []byte, scratch *[]byte, d *decoded) (ok bool) {
	d.reset()
	*scratch = (*scratch)[:0]
	s := scanner{b: data, scratch: scratch}
	s.ws()
	if !s.peek('{') {
		return false
	}
	first := true
	var seen uint8
	ok = s.object(func(key []byte) bool {
		switch k := knownKey(key, topKeys); k {
		case keyChoices:
			if seen&1 != 0 {
				return false
			}
			seen |= 1
			if s.null() {
				return true
			}
			return s.array(func() bool {
				var dst *decoded
				if first {
					dst, first = d, false
				}
				return s.choice(dst)
			})
		case keyUsage:
			if seen&2 != 0 {
				return false
			}
			seen |= 2
			if s.null() {
				return true
			}
			d.hasUsage = true
			return s.usage(&d.usage)
		case keyError:
			return s.null() // a real error goes the slow way
		case keyObject:
			v, ok := s.str(true)
			return ok && string(v) != "error"
		case keyUnknown:
			return s.skip(0)
		default: // keyFolded
			return false
		}
	})
	if !ok {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

// choice decodes one element of "choices" into d, or only checks it if d is nil.
func (s *scanner) choice(d *decoded) bool {
	if s.null() {
		return true
	}
	if !s.peek('{') {
		return false
	}
	return s.members(choiceKeys, func(k int) bool {
		switch k {
		case keyText:
			v, ok := s.optStr(d != nil)
			if d != nil {
				d.text = v
			}
			return ok
		case keyFinish:
			v, ok := s.optStr(d != nil)
			if d != nil {
				d.finish = v
			}
			return ok
		case keyDelta:
			return s.delta(d)
		}
		return false
	})
}

func (s *scanner) delta(d *decoded) bool {
	if s.null() {
		return true
	}
	if !s.peek('{') {
		return false
	}
	return s.members(deltaKeys, func(k int) bool {
		switch k {
		case keyContent:
			v, ok := s.optStr(d != nil)
			if d != nil {
				d.content = v
			}
			return ok
		case keyReasoningContent, keyReasoning:
			// Kept (decoded and checked) so that its length is the slow
			// path's: it bounds the tokens a usage may claim.
			v, ok := s.optStr(d != nil)
			if d != nil && len(v) > 0 {
				d.reasoning = true
				d.reasoningBytes += len(v)
			}
			return ok
		case keyToolCalls:
			if s.null() {
				return true
			}
			return s.array(func() bool { return s.toolCall(d) })
		}
		return false
	})
}

// toolCall decodes one element of delta.tool_calls, appending it to d.tools
// (or only checks it if d is nil). A null element, or an index that is not a
// small whole number, goes the slow way.
func (s *scanner) toolCall(d *decoded) bool {
	if !s.peek('{') {
		return false
	}
	var f toolFragment
	ok := s.members(toolKeys, func(k int) bool {
		switch k {
		case keyIndex:
			start := s.i
			if !s.number() {
				return false
			}
			n, ok := smallInt(s.b[start:s.i])
			f.index, f.hasIndex = n, true
			return ok
		case keyID:
			v, ok := s.optStr(d != nil)
			f.id = v
			return ok
		case keyType:
			v, ok := s.optStr(d != nil)
			f.typ = v
			return ok
		case keyFunction:
			return s.function(&f, d != nil)
		}
		return false
	})
	if ok && d != nil {
		d.tools = append(d.tools, f)
	}
	return ok
}

// function decodes a tool call's "function" member into f.
func (s *scanner) function(f *toolFragment, keep bool) bool {
	if s.null() {
		return true
	}
	if !s.peek('{') {
		return false
	}
	return s.members(functionKeys, func(k int) bool {
		switch k {
		case keyName:
			v, ok := s.optStr(keep)
			f.name = v
			return ok
		case keyArguments:
			v, ok := s.optStr(keep)
			f.args = v
			return ok
		}
		return false
	})
}

// smallInt reads a JSON number that is a whole number from 0 to 999999
// written plainly (no sign, fraction or exponent); ok is false otherwise.
func smallInt(b []byte) (n int, ok bool) {
	if len(b) == 0 || len(b) > 6 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// usage reads a usage value that is not null. A value that is not an object,
// or a count that is not a whole number, is kept as unreadable (see
// readCount) rather than failing the chunk: it is the usage that cannot be
// believed, not the stream.
func (s *scanner) usage(u *usage) bool {
	if !s.peek('{') {
		start := s.i
		if !s.skip(0) {
			return false
		}
		u.unreadable = notAnObject(s.b[start:s.i])
		return true
	}
	return s.members(usageKeys, func(k int) bool {
		switch k {
		case keyPrompt, keyCompletion:
			start := s.i
			if !s.skip(0) {
				return false
			}
			u.set(k, s.b[start:s.i])
			return true
		case keyDetails:
			if !s.peek('{') {
				return s.skip(0)
			}
			return s.members(detailKeys, func(int) bool { // reasoning_tokens, its one key
				start := s.i
				if !s.skip(0) {
					return false
				}
				u.setReasoning(s.b[start:s.i])
				return true
			})
		}
		return false
	})
}

// Key indexes in the tables below; keyUnknown is a key perfgate ignores and
// keyFolded one that only matches a known key case-insensitively (which
// encoding/json would accept: the slow path decides).
const (
	keyUnknown = -1
	keyFolded  = -2

	keyChoices, keyUsage, keyError, keyObject = 0, 1, 2, 3
	keyText, keyFinish, keyDelta              = 0, 1, 2
	keyContent, keyReasoningContent           = 0, 1
	keyReasoning, keyToolCalls                = 2, 3
	keyIndex, keyID, keyType, keyFunction     = 0, 1, 2, 3
	keyName, keyArguments                     = 0, 1
	keyPrompt, keyCompletion, keyDetails      = 0, 1, 2
)

var (
	topKeys      = []string{"choices", "usage", "error", "object", "message"}
	choiceKeys   = []string{"text", "finish_reason", "delta"}
	deltaKeys    = []string{"content", "reasoning_content", "reasoning", "tool_calls"}
	toolKeys     = []string{"index", "id", "type", "function"}
	functionKeys = []string{"name", "arguments"}
	usageKeys    = []string{"prompt_tokens", "completion_tokens", "completion_tokens_details"}
	detailKeys   = []string{"reasoning_tokens"}
)

func knownKey(key []byte, keys []string) int {
	for i, k := range keys {
		if string(key) == k {
			if i == 4 && len(keys) == len(topKeys) {
				return keyUnknown // "message": only read beside "object":"error"
			}
			return i
		}
	}
	for _, k := range keys {
		if bytes.EqualFold(key, []byte(k)) {
			return keyFolded
		}
	}
	return keyUnknown
}

// scanner walks JSON text. Its methods return false for anything they do not
// accept; whitespace before a value is skipped by the caller (object, array).
type scanner struct {
	b       []byte
	i       int
	scratch *[]byte
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

// next skips whitespace and consumes c if it comes next.
func (s *scanner) next(c byte) bool {
	s.ws()
	if s.peek(c) {
		s.i++
		return true
	}
	return false
}

// null consumes a null literal if one comes next.
func (s *scanner) null() bool {
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// object reads an object, calling f at each member's value with its key.
func (s *scanner) object(f func(key []byte) bool) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	for {
		s.ws()
		key, ok := s.str(false)
		if !ok || bytes.IndexByte(key, '\\') >= 0 || !s.next(':') {
			return false // an escaped key may decode to a known one: slow path
		}
		s.ws()
		if !f(key) {
			return false
		}
		if s.next(',') {
			continue
		}
		return s.next('}')
	}
}

// members reads an object whose known keys are keys, calling f with a
// known key's index at its value; an unknown key's value is skipped. A
// known key twice, or one that matches only case-insensitively, makes it
// decline (false): encoding/json decides those.
func (s *scanner) members(keys []string, f func(k int) bool) bool {
	var seen uint64
	return s.object(func(key []byte) bool {
		k := knownKey(key, keys)
		switch {
		case k == keyUnknown:
			return s.skip(0)
		case k < 0 || seen&(1<<k) != 0:
			return false
		}
		seen |= 1 << k
		return f(k)
	})
}

// array reads an array, calling f at each element.
func (s *scanner) array(f func() bool) bool {
	if !s.next('[') {
		return false
	}
	if s.next(']') {
		return true
	}
	for {
		s.ws()
		if !f() {
			return false
		}
		if s.next(',') {
			continue
		}
		return s.next(']')
	}
}

// optStr reads a string or null (as nil). keep asks for the decoded value,
// which must then be valid UTF-8.
func (s *scanner) optStr(keep bool) ([]byte, bool) {
	if s.null() {
		return nil, true
	}
	return s.str(keep)
}

// str reads a string. Without keep it only validates it, and returns its raw
// bytes when it has no escapes. With keep it returns the decoded bytes (a
// slice of the input when there is no escape, else of scratch).
func (s *scanner) str(keep bool) ([]byte, bool) {
	if !s.peek('"') {
		return nil, false
	}
	s.i++
	start := s.i
	esc := false
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !keep {
				return raw, true
			}
			if !esc {
				return raw, utf8.Valid(raw)
			}
			return s.unescape(raw)
		case c == '\\':
			esc = true
			if s.i+1 >= len(s.b) {
				return nil, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || hex4(s.b[s.i+2:s.i+6]) < 0 {
					return nil, false
				}
				s.i += 6
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		default:
			s.i++
		}
	}
	return nil, false
}

// unescape decodes a string's validated raw bytes into scratch.
func (s *scanner) unescape(raw []byte) ([]byte, bool) {
	if !utf8.Valid(raw) {
		return nil, false
	}
	start := len(*s.scratch)
	out := *s.scratch
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := bytes.IndexByte(raw[i:], '\\')
			if j < 0 {
				j = len(raw) - i
			}
			out = append(out, raw[i:i+j]...)
			i += j
			continue
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := rune(hex4(raw[i+2 : i+6]))
			if r >= 0xD800 && r < 0xE000 {
				return nil, false // surrogates: the slow path's rules apply
			}
			out = utf8.AppendRune(out, r)
			i += 6
			continue
		}
		i += 2
	}
	*s.scratch = out
	return out[start:], true
}

func hex4(b []byte) int {
	n := 0
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	return n
}

// number reads a JSON number.
func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	s.i = i
	return true
}

// skip reads and discards any value.
func (s *scanner) skip(depth int) bool {
	if depth > 200 || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str(false)
		return ok
	case c == '{':
		return s.object(func([]byte) bool { return s.skip(depth + 1) })
	case c == '[':
		return s.array(func() bool { return s.skip(depth + 1) })
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

func (s *scanner) literal(lit string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.i += len(lit)
		return true
	}
	return false
}
