package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

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
// duplicates. It returns a message (not an error: the caller adds the location)
// when data is not valid JSON or not an object.
func ObjectMembers(data []byte) ([]Member, string) {
	var v json.RawMessage
	if err := json.Unmarshal(data, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Sprintf("invalid JSON (column %d): %s", se.Offset, se.Error())
		}
		return nil, "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	v = bytes.TrimSpace(v)
	if v[0] != '{' {
		return nil, "want a JSON object, got " + Describe(v)
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, "invalid JSON: " + err.Error()
	}
	var members []Member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "invalid JSON: " + err.Error()
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, "invalid JSON: " + err.Error()
		}
		members = append(members, Member{Key: key, Raw: bytes.TrimSpace(raw)})
	}
	return members, ""
}

// Describe names the JSON kind of a raw value for messages: "string",
// "number 12.5", "boolean", "array", "object", "null".
func Describe(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	s := string(raw)
	if len(s) > 32 {
		s = s[:32] + "..."
	}
	return "number " + s
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
// order mark. name names the file in a read error.
func ReadLines(r io.Reader, name string, each func(n int, line []byte)) error {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
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
// line n in terms of JSON kinds ("want integer, got string"). It reports
// whether it succeeded.
func (p *Problems) Decode(n int, m Member, dst any, want string) bool {
	err := json.Unmarshal(m.Raw, dst)
	if err == nil {
		return true
	}
	got := Describe(m.Raw)
	if strings.HasPrefix(got, "number") && (want == "number" || want == "integer") {
		f, perr := strconv.ParseFloat(string(m.Raw), 64)
		if want == "number" || (perr == nil && f == math.Trunc(f)) || errors.Is(perr, strconv.ErrRange) {
			p.Errorf(n, m.Key, "out of range, got %s", got)
			return false
		}
	}
	p.Errorf(n, m.Key, "want %s, got %s", want, got)
	return false
}
