package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
