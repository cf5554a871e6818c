package workload

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/suggest"
)

// The strict JSONL readers (workloads here, eval suites in internal/quality)
// share these: a line is split into its members in order, duplicates kept, so
// that a duplicate or unknown key is reported rather than silently merged.

// Member is one key of a JSON object, with its raw value.
type Member struct {
	Key string
	Raw json.RawMessage
}

// ObjectMembers splits a JSON object into its members, in order, keeping
// duplicates. When data is not valid JSON or not an object it returns a
// message (not an error: the caller adds the file and line) and, for a
// syntax error, the column of the offending character in data (1-based,
// in characters; 0 when there is none).
func ObjectMembers(data []byte) (members []Member, msg string, column int) {
	if !json.Valid(data) {
		var v json.RawMessage
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			offset := se.Offset
			if strings.HasPrefix(se.Error(), "unexpected end") {
				offset = int64(len(data)) + 1 // just after the last character
			}
			return nil, "invalid JSON: " + strings.TrimPrefix(se.Error(), "json: "), columnOf(data, offset)
		}
		return nil, "invalid JSON", 0
	}
	v := bytes.TrimSpace(data)
	if v[0] != '{' {
		return nil, "want a JSON object, got " + Describe(v), 0
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	if _, err := dec.Token(); err != nil { // '{': cannot fail, v is a valid object
		return nil, "invalid JSON", 0
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "invalid JSON", 0
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, "invalid JSON", 0
		}
		members = append(members, Member{Key: key, Raw: bytes.TrimSpace(raw)})
	}
	return members, "", 0
}

// columnOf is the 1-based character column of the byte a JSON syntax error
// stopped at: encoding/json's offset counts the bytes read, the offending
// one included.
func columnOf(data []byte, offset int64) int {
	if offset < 1 {
		return 1
	}
	if offset > int64(len(data)) {
		offset = int64(len(data)) + 1 // the end of the line
	}
	return utf8.RuneCount(data[:offset-1]) + 1
}

// Describe names a raw JSON value for messages, as a sentence says it: "a
// string", "an object", "an array", "true", "null", or the number itself
// ("12.5", cut after 32 characters).
func Describe(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	s := string(raw)
	if len(s) > 32 {
		s = s[:32] + "..."
	}
	return s
}

// kinds says, with its article, each kind of value Decode is asked for.
var kinds = map[string]string{
	"string":  "a string",
	"integer": "an integer",
	"number":  "a number",
	"boolean": "true or false",
}

// DidYouMean returns ` (did you mean "x"?)` for the closest of set within
// edit distance 2 of s, or "".
func DidYouMean(s string, set []string) string {
	best, ok := suggest.Closest(s, set)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// MaxProblems caps how many problems one file reports; the rest are counted.
const MaxProblems = 50

// Problems collects the problems of one file: the first MaxProblems as
// *LineError, the rest counted.
type Problems struct {
	File    string
	errs    []error
	dropped int
}

// Errorf records a problem at line (0: the whole file) and field ("" for
// the whole line).
func (p *Problems) Errorf(line int, field, format string, args ...any) {
	p.Add(&LineError{File: p.File, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Add records a problem.
func (p *Problems) Add(e *LineError) {
	if len(p.errs) >= MaxProblems {
		p.dropped++
		return
	}
	p.errs = append(p.errs, e)
}

// Count is how many problems were recorded, dropped ones included: a line
// parser compares it before and after a line to tell whether the line was bad.
func (p *Problems) Count() int { return len(p.errs) + p.dropped }

// Err joins the problems with errors.Join, ending with "... and N more"
// when some were dropped; nil when there are none.
func (p *Problems) Err() error {
	if len(p.errs) == 0 {
		return nil
	}
	errs := p.errs
	if p.dropped > 0 {
		errs = append(errs, &LineError{File: p.File, Msg: fmt.Sprintf("... and %d more", p.dropped)})
	}
	return errors.Join(errs...)
}

// ReadLines calls each with every line of r that holds anything, numbered
// from 1 (blank lines are counted, not passed), without a leading UTF-8 byte
// order mark (which is read as one, not as part of the first line). name
// names the file in errors.
//
// A line longer than MaxLineBytes stops the reading with a *LineError at
// that line; so does a reader that fails with a *safeio.TooLargeError (a
// file past its size limit), at the line the limit was passed.
func ReadLines(r io.Reader, name string, each func(n int, line []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := safeio.ReadLine(br, MaxLineBytes)
		if errors.Is(err, safeio.ErrLineTooLong) {
			return &LineError{File: name, Line: n, Msg: fmt.Sprintf(
				"the line is longer than %s, the most perfgate reads in one line", safeio.FormatBytes(MaxLineBytes))}
		}
		var tooLarge *safeio.TooLargeError
		if errors.As(err, &tooLarge) {
			return &LineError{File: name, Line: n, Msg: fmt.Sprintf(
				"the file is larger than %s, the most perfgate reads in such a file", safeio.FormatBytes(tooLarge.Limit))}
		}
		if len(line) > 0 {
			if n == 1 {
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // UTF-8 byte order mark
			}
			each(n, line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
}

// Decode unmarshals m.Raw into dst, recording a type error against m.Key at
// line n in the words of JSON ("want an integer, got a string"). want is
// "string", "integer", "number" or "boolean". An integer may be written as
// any JSON number whose value is whole (100, 1e2, 100.0). It reports whether
// it succeeded.
func (p *Problems) Decode(n int, m Member, dst any, want string) bool {
	err := json.Unmarshal(m.Raw, dst)
	if err == nil {
		return true
	}
	if want == "integer" && isNumber(m.Raw) {
		f, perr := strconv.ParseFloat(string(m.Raw), 64)
		if perr == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			if json.Unmarshal([]byte(strconv.FormatInt(int64(f), 10)), dst) == nil {
				return true
			}
		}
		if perr == nil && f != math.Trunc(f) {
			p.Errorf(n, m.Key, "want an integer, got %s", Describe(m.Raw))
			return false
		}
		p.Errorf(n, m.Key, "integer %s is out of range", Describe(m.Raw))
		return false
	}
	if want == "number" && isNumber(m.Raw) {
		p.Errorf(n, m.Key, "number %s is out of range", Describe(m.Raw))
		return false
	}
	p.Errorf(n, m.Key, "want %s, got %s", cmp.Or(kinds[want], want), Describe(m.Raw))
	return false
}

// isNumber reports whether raw is a JSON number.
func isNumber(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '-' || ('0' <= raw[0] && raw[0] <= '9'))
}
