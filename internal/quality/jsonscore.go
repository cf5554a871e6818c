package quality

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonScorer is json_valid (no schema, no expected value) and json_schema:
// it extracts the JSON value of an output, validates it against the schema
// and compares it with the expected value.
type jsonScorer struct {
	schema      *jsonschema.Schema // nil for json_valid
	expected    any                // decoded with json.Number; valid when hasExpected
	hasExpected bool
}

func (s *jsonScorer) score(output string) Score {
	v, err := extractJSON(output)
	if err != nil {
		return fail("not JSON: " + err.Error())
	}
	if d := valueDepth(v); d > MaxAnswerDepth {
		return fail(fmt.Sprintf("JSON nested %d levels deep, more than the %d perfgate checks", d, MaxAnswerDepth))
	}
	if s.schema != nil {
		if err := s.schema.Validate(v); err != nil {
			return fail("schema: " + schemaMessage(err))
		}
	}
	if s.hasExpected {
		if at, ok := jsonDiff(v, s.expected, ""); !ok {
			return fail("differs from expected at " + at)
		}
		return pass("matches expected")
	}
	if s.schema != nil {
		return pass("matches schema")
	}
	return pass("valid JSON")
}

func (s *jsonScorer) continuous() bool { return false }

// fenceRe matches a fenced code block: its language and its content (to the
// closing fence, or the end of the output when it was cut off).
var fenceRe = regexp.MustCompile("(?s)```[ \\t]*([A-Za-z0-9_+.-]*)[^\\n]*\\n(.*?)(?:```|\\z)")

// maxJSONStarts is how many opening brackets extractJSON tries.
const maxJSONStarts = 32

// extractJSON finds the JSON value of an output. It looks in the first
// fenced code block labelled json, else the first fenced block, else the
// whole output; there it takes the whole (trimmed) text if it is one JSON
// value, else the first value that starts at a "{" or "[" and parses (prose
// around the value is ignored). Numbers decode as json.Number.
func extractJSON(out string) (any, error) {
	text := out
	if ms := fenceRe.FindAllStringSubmatch(out, -1); len(ms) > 0 {
		text = ms[0][2]
		for _, m := range ms {
			if strings.EqualFold(m[1], "json") {
				text = m[2]
				break
			}
		}
	}
	text = strings.TrimSpace(text)
	if v, err := jsonschema.UnmarshalJSON(strings.NewReader(text)); err == nil {
		return v, nil
	}
	var first error
	tries := 0
	for i := 0; i < len(text) && tries < maxJSONStarts; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		tries++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		dec.UseNumber()
		var v any
		err := dec.Decode(&v)
		if err == nil {
			return v, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		return nil, errors.New("no JSON object or array found")
	}
	return nil, errors.New(strings.TrimPrefix(first.Error(), "json: "))
}

// jsonDiff compares two decoded JSON values, ignoring key order and comparing
// numbers by value. When they differ it returns the JSON pointer of the first
// difference ("/" for the whole value).
func jsonDiff(got, want any, at string) (string, bool) {
	where := at
	if where == "" {
		where = "/"
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return where, false
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			gv, gok := g[k]
			wv, wok := w[k]
			p := at + "/" + escapePointer(k)
			if gok != wok {
				return p, false
			}
			if d, ok := jsonDiff(gv, wv, p); !ok {
				return d, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return where, false
		}
		for i := range w {
			if d, ok := jsonDiff(g[i], w[i], at+"/"+strconv.Itoa(i)); !ok {
				return d, false
			}
		}
		return "", true
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !numbersEqual(g, w) {
			return where, false
		}
		return "", true
	default: // string, bool, nil
		if got != want {
			return where, false
		}
		return "", true
	}
}

// numbersEqual compares two JSON numbers by value (1 equals 1.0 and 1e0).
func numbersEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	fa, errA := strconv.ParseFloat(string(a), 64)
	fb, errB := strconv.ParseFloat(string(b), 64)
	return errA == nil && errB == nil && fa == fb
}

func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// schemaMessage makes a JSON Schema compilation or validation error one
// short line: the first leaf problem, "at /age: got string, want integer",
// with a count of the others.
func schemaMessage(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		err = sve.Err
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return clip(strings.ReplaceAll(err.Error(), "\n", " "), 160)
	}
	leaves := leafErrors(ve, nil)
	leaf := leaves[0]
	msg := leaf.Error() // "at '/age': got string, want integer"
	ptr := ""
	for _, tok := range leaf.InstanceLocation {
		ptr += "/" + escapePointer(tok)
	}
	if rest, ok := strings.CutPrefix(msg, "at "+schemaQuote(ptr)+": "); ok {
		msg = rest
		if ptr != "" {
			msg = "at " + ptr + ": " + rest
		}
	}
	msg = clip(strings.ReplaceAll(msg, "\n", " "), 140)
	if len(leaves) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(leaves)-1)
	}
	return msg
}

// leafErrors appends the errors of the tree at e that have no causes.
func leafErrors(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(out, e)
	}
	for _, c := range e.Causes {
		out = leafErrors(c, out)
	}
	return out
}

// schemaQuote quotes a JSON pointer as jsonschema's messages do.
func schemaQuote(s string) string {
	s = strconv.Quote(s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

// compiledSchema is a schema compiled once per suite file: the schema, its
// canonical content (for item hashes), or why it failed.
type compiledSchema struct {
	schema  *jsonschema.Schema
	content json.RawMessage
	err     string
	// nodes is how many subschemas it expands to.
	nodes int
}

// newCompiler returns a JSON Schema compiler: draft 2020-12 unless a schema
// says otherwise ($schema), references resolved as local files only.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(boundedLoader{})
	return c
}

// compileSchema compiles the schema doc, stored at path (references resolve
// relative to it), once it is known not to expand past MaxSchemaNodes. It
// returns the number of subschemas it expands to, for the suite's budget.
func compileSchema(path string, doc any) (*jsonschema.Schema, int, error) {
	nodes, err := checkSchemaSize(doc)
	if err != nil {
		return nil, nodes, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nodes, err
	}
	c := newCompiler()
	if err := c.AddResource(abs, doc); err != nil {
		return nil, nodes, err
	}
	sch, err := c.Compile(abs)
	return sch, nodes, err
}

// fileSchema compiles an options.schema_file, relative to the suite's
// directory, once per suite.
func (p *parser) fileSchema(name string) *compiledSchema {
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.dir, name)
	}
	if cs, ok := p.schemas[path]; ok {
		return cs
	}
	cs := &compiledSchema{}
	p.schemas[path] = cs
	doc, err := readSchemaFile(path)
	if err != nil {
		cs.err = err.Error()
		return cs
	}
	if cs.schema, cs.nodes, err = compileSchema(path, doc); err != nil {
		cs.err = fmt.Sprintf("invalid JSON Schema in %s: %s", path, schemaMessage(err))
		return cs
	}
	cs.content, _ = json.Marshal(doc) // canonical: keys sorted
	return cs
}
