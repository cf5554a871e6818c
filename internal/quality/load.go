package quality

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/workload"
)

// keys lists the keys of an item line, in the order docs/evals.md gives them.
var keys = []string{"id", "messages", "prompt", "max_tokens", "temperature", "top_p", "seed", "response_format", "tools", "tool_choice", "tags",
	"scorer", "expected", "ideal", "options"}

// scorerNames lists the scorer names, in the order docs/evals.md gives them.
var scorerNames = []string{"exact", "contains", "regex", "choice", "numeric", "json_valid", "json_schema", "tool_call", "reference"}

// Load reads and validates the eval suite at path. Errors name the file (and
// the line and field where there is one); see Parse. Only a regular file is
// read (a named pipe or /dev/zero is refused at once, naming the path).
func Load(path string) (*Suite, error) {
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("read eval suite: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads an eval suite in the JSONL format from r. path names the file in
// errors, gives the suite its name (the base name without extension) and
// anchors options.schema_file. It reports every problem it finds (up to 50,
// then a count), each a *workload.LineError, joined with errors.Join. Blank
// lines are skipped but still count towards line numbers. It reads at most
// MaxSuiteBytes, in lines of at most workload.MaxLineBytes.
//
// Every regular expression and JSON Schema is compiled here, and an item's
// ideal response is checked against its scorer, so that a suite that loads
// scores without surprises.
func Parse(r io.Reader, path string) (*Suite, error) {
	name := path
	if name == "" {
		name = "suite"
	}
	p := &parser{Problems: workload.Problems{File: name}, dir: filepath.Dir(path), ids: map[string]int{}, schemas: map[string]*compiledSchema{}}
	if err := workload.ReadLines(safeio.LimitReader(r, MaxSuiteBytes, name), name, p.parseLine); err != nil {
		if le, ok := err.(*workload.LineError); ok {
			p.Add(le) // with the problems of the lines before it
			return nil, p.Err()
		}
		return nil, err
	}
	if p.Count() == 0 && len(p.items) == 0 {
		p.errorf(0, "", "no items")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	base := filepath.Base(name)
	return &Suite{
		Name:  strings.TrimSuffix(base, filepath.Ext(base)),
		Path:  path,
		Hash:  suiteHash(p.canon),
		Items: p.items,
	}, nil
}

type parser struct {
	workload.Problems
	dir     string // the suite's directory, which schema_file is relative to
	items   []Item
	canon   [][]byte       // each item's canonical content, for the suite hash
	ids     map[string]int // id → line of first use
	schemas map[string]*compiledSchema
	// schemaNodes is how many subschemas the suite's schemas have expanded
	// to so far (MaxSuiteSchemaNodes bounds it).
	schemaNodes int
}

func (p *parser) errorf(line int, field, format string, args ...any) {
	p.Errorf(line, field, format, args...)
}

// line is what one item line holds, before its scorer is built.
type line struct {
	id       string
	scorer   string
	expected json.RawMessage // nil when absent
	ideal    *string
	options  []workload.Member
	opts     options
}

// parseLine validates one line and, when it is valid, appends its item.
func (p *parser) parseLine(n int, text []byte) {
	text = bytes.TrimRight(text, "\r\n")
	if len(bytes.TrimSpace(text)) == 0 {
		return
	}
	before := p.Count()
	bad := func() bool { return p.Count() > before }

	members, msg, col := workload.ObjectMembers(text)
	if msg != "" {
		p.Add(&workload.LineError{File: p.File, Line: n, Column: col, Msg: msg})
		return
	}
	var (
		l                    line
		seen                 = map[string]bool{}
		reqMembers           []workload.Member
		hasID, hasScorer     bool
		scorerOK, optionsSet bool
	)
	for _, m := range members {
		if seen[m.Key] {
			p.errorf(n, m.Key, "key appears more than once")
			continue
		}
		seen[m.Key] = true
		if !slices.Contains(keys, m.Key) {
			p.errorf(n, m.Key, "unknown key%s; want one of %s", workload.DidYouMean(m.Key, keys), strings.Join(keys, ", "))
			continue
		}
		if string(m.Raw) == "null" {
			continue // null is the same as absent
		}
		switch m.Key {
		case "id":
			hasID = true
			if p.Decode(n, m, &l.id, "string") && l.id == "" {
				p.errorf(n, "id", "must not be empty")
			}
		case "scorer":
			hasScorer = true
			if p.Decode(n, m, &l.scorer, "string") {
				if slices.Contains(scorerNames, l.scorer) {
					scorerOK = true
				} else {
					p.errorf(n, "scorer", "unknown scorer %q%s; want one of %s", l.scorer, workload.DidYouMean(l.scorer, scorerNames), strings.Join(scorerNames, ", "))
				}
			}
		case "expected":
			l.expected = m.Raw
		case "ideal":
			var s string
			if p.Decode(n, m, &s, "string") {
				if s == "" {
					p.errorf(n, "ideal", "must not be empty")
				}
				l.ideal = &s
			}
		case "options":
			optionsSet = true
			if m.Raw[0] != '{' {
				p.errorf(n, "options", "want an object, got %s", workload.Describe(m.Raw))
				continue
			}
			l.options, _, _ = workload.ObjectMembers(m.Raw) // cannot fail: m.Raw is a valid object
		default:
			reqMembers = append(reqMembers, m)
		}
	}
	if !hasID {
		p.errorf(n, "id", "required: a non-empty string, unique in the suite")
	}
	req, reqOK := p.request(n, reqMembers)
	if !hasScorer {
		p.errorf(n, "scorer", "required; want one of %s", strings.Join(scorerNames, ", "))
	}
	if scorerOK {
		l.opts = p.options(n, l.scorer, l.options, optionsSet)
		p.checkExpected(n, l.scorer, l.expected)
	}
	if l.id != "" {
		if prev, dup := p.ids[l.id]; dup {
			p.errorf(n, "id", "%q already used on line %d", l.id, prev)
		} else {
			p.ids[l.id] = n
		}
	}
	if bad() || !reqOK {
		return
	}

	// The line is well-formed: build its scorer (which compiles patterns and
	// schemas, and may still find problems).
	req.ID = l.id
	req.Line = n
	it := Item{ID: l.id, Request: req, Scorer: l.scorer, Expected: expectedStrings(l.scorer, l.expected), Line: n}
	if l.ideal != nil {
		it.Ideal = *l.ideal
	}
	b := &builder{p: p, n: n, opts: l.opts, expected: it.Expected, array: l.expected != nil && l.expected[0] == '[', tools: req.Tools}
	it.scorer = b.build(l.scorer)
	if bad() {
		return
	}
	if it.Ideal != "" {
		if sc := it.Score(it.Ideal); !sc.Pass {
			p.errorf(n, "ideal", "does not pass its scorer (%s)", sc.Detail)
			return
		}
	}
	var canon []byte
	it.Hash, canon = itemHash(&it, l.opts, b.schemaContent)
	p.items = append(p.items, it)
	p.canon = append(p.canon, canon)
}

// request checks the request keys of a line with the workload format's rules,
// applies the eval defaults (max_tokens DefaultMaxTokens, temperature 0, seed
// DefaultSeed), and reports whether the request is valid.
func (p *parser) request(n int, members []workload.Member) (workload.Request, bool) {
	var b bytes.Buffer
	b.WriteString(`{`)
	hasMax := false
	for i, m := range members {
		if i > 0 {
			b.WriteString(`,`)
		}
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteString(`:`)
		b.Write(m.Raw)
		hasMax = hasMax || m.Key == "max_tokens"
	}
	if !hasMax {
		if len(members) > 0 {
			b.WriteString(`,`)
		}
		fmt.Fprintf(&b, `"max_tokens":%d`, DefaultMaxTokens)
	}
	b.WriteString(`}`)
	w, err := workload.Parse(&b, p.File)
	if err != nil {
		for _, e := range unjoin(err) {
			le, ok := e.(*workload.LineError)
			if !ok {
				le = &workload.LineError{File: p.File, Msg: e.Error()}
			}
			c := *le
			c.Line = n // workload saw the line as line 1
			p.Add(&c)
		}
		return workload.Request{}, false
	}
	req := w.Requests[0]
	if req.Temperature == nil {
		zero := 0.0
		req.Temperature = &zero
	}
	if req.Seed == nil {
		seed := int64(DefaultSeed)
		req.Seed = &seed
	}
	return req, true
}

// unjoin returns the errors joined in err, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// checkExpected checks the kind of the expected value for the scorer: what
// every scorer needs; the scorer's builder checks the values themselves.
func (p *parser) checkExpected(n int, scorer string, raw json.RawMessage) {
	switch scorer {
	case "json_valid":
		if raw != nil {
			p.errorf(n, "expected", "not used by scorer json_valid, which passes any JSON; use json_schema to check the value")
		}
		return
	case "json_schema":
		return // any JSON value, or none
	case "tool_call":
		p.checkCalls(n, raw)
		return
	}
	if raw == nil {
		p.errorf(n, "expected", "required for scorer %s", scorer)
		return
	}
	check := func(field string, raw json.RawMessage) {
		switch {
		case raw[0] == '"':
			var s string
			_ = json.Unmarshal(raw, &s) // cannot fail: raw is a JSON string
			if strings.TrimSpace(s) == "" {
				p.errorf(n, field, "must not be empty")
			}
		case raw[0] == '-' || ('0' <= raw[0] && raw[0] <= '9'):
		default:
			p.errorf(n, field, "want a string or a number, got %s", workload.Describe(raw))
		}
	}
	if raw[0] != '[' {
		check("expected", raw)
		return
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems) // cannot fail: raw is a valid array
	if len(elems) == 0 {
		p.errorf(n, "expected", "must not be an empty array")
	}
	for i, e := range elems {
		check(fmt.Sprintf("expected[%d]", i), e)
	}
}

// expectedStrings turns a checked expected value into Item.Expected: strings
// as they are, numbers in their written form, arrays element by element; for
// json_schema the whole value, compact-encoded.
func expectedStrings(scorer string, raw json.RawMessage) []string {
	if raw == nil {
		return nil
	}
	if scorer == "tool_call" {
		return expectedCalls(raw)
	}
	if scorer == "json_schema" {
		var b bytes.Buffer
		_ = json.Compact(&b, raw) // cannot fail: raw is valid JSON
		return []string{b.String()}
	}
	one := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(bytes.TrimSpace(raw))
	}
	if raw[0] != '[' {
		return []string{one(raw)}
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems)
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = one(e)
	}
	return out
}

func fmtFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Sprint(f)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// checkCalls checks the kind of a tool_call item's expected value: a call
// object, or a non-empty array of them; the builder checks each call.
func (p *parser) checkCalls(n int, raw json.RawMessage) {
	const want = `{"name": "<function>", "arguments": {...}}`
	switch {
	case raw == nil:
		p.errorf(n, "expected", "required for scorer tool_call: the call, %s, or an array of the calls in order", want)
	case raw[0] == '[':
		var elems []json.RawMessage
		_ = json.Unmarshal(raw, &elems) // cannot fail: raw is a valid array
		if len(elems) == 0 {
			p.errorf(n, "expected", "must not be an empty array")
		}
		for i, e := range elems {
			if e[0] != '{' {
				p.errorf(n, fmt.Sprintf("expected[%d]", i), "want a call, %s, got %s", want, workload.Describe(e))
			}
		}
	case raw[0] != '{':
		p.errorf(n, "expected", "want a call, %s, or an array of them, got %s", want, workload.Describe(raw))
	}
}
