package quality

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// builder builds one item's scorer from its checked options and expected
// answers, reporting what is wrong with them against the item's line.
type builder struct {
	p        *parser // nil outside Parse: problems are returned, not reported
	n        int
	opts     options
	expected []string
	// array is whether expected was written as an array, for field names.
	array bool
	// problems collects the messages when p is nil.
	problems []string
	// schemaContent is the canonical content of options.schema_file.
	schemaContent json.RawMessage
	// tools are the item's request's tools, for tool_call.
	tools json.RawMessage
}

func (b *builder) errorf(field, format string, args ...any) {
	if b.p != nil {
		b.p.errorf(b.n, field, format, args...)
		return
	}
	b.problems = append(b.problems, field+": "+fmt.Sprintf(format, args...))
}

// field names expected answer i in messages.
func (b *builder) field(i int) string {
	if b.array {
		return fmt.Sprintf("expected[%d]", i)
	}
	return "expected"
}

// build returns the scorer called name, or nil after reporting why it
// cannot be built.
func (b *builder) build(name string) scorer {
	switch name {
	case "exact", "contains":
		want := make([]string, len(b.expected))
		for i, e := range b.expected {
			want[i] = normalize(e, b.opts.caseSensitive, b.opts.keepPunctuation)
			if want[i] == "" {
				b.errorf(b.field(i), "%q is empty once normalised (punctuation and articles removed), so it cannot be matched", e)
				return nil
			}
		}
		if name == "exact" {
			return &exactScorer{keepCase: b.opts.caseSensitive, keepPunct: b.opts.keepPunctuation, want: want}
		}
		return &containsScorer{keepCase: b.opts.caseSensitive, keepPunct: b.opts.keepPunctuation, want: want}
	case "regex":
		s := &regexScorer{}
		for i, e := range b.expected {
			pat := e
			if b.opts.caseInsensitive {
				pat = "(?i)" + pat
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				b.errorf(b.field(i), "invalid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
				return nil
			}
			if re.MatchString("") {
				b.errorf(b.field(i), "pattern %q matches the empty string, so every output would pass", e)
				return nil
			}
			s.patterns = append(s.patterns, re)
		}
		return s
	case "choice":
		s := &choiceScorer{choices: b.opts.choices}
		for i, e := range b.expected {
			c := strings.TrimSpace(e)
			if len(c) != 1 || !s.valid(c[0]) {
				b.errorf(b.field(i), "want one letter of the choices %q, got %q", b.opts.choices, e)
				return nil
			}
			s.want += string(upper(c[0]))
		}
		return s
	case "numeric":
		s := &numericScorer{absTol: b.opts.absTol, relTol: b.opts.relTol}
		for i, e := range b.expected {
			v, ok := parseExpectedNumber(e)
			if !ok {
				b.errorf(b.field(i), "want a number, got %q", e)
				return nil
			}
			s.want = append(s.want, v)
		}
		return s
	case "json_valid":
		return &jsonScorer{}
	case "json_schema":
		return b.jsonSchema()
	case "tool_call":
		return b.toolCall(b.tools)
	case "reference":
		s := &referenceScorer{metric: b.opts.metric, threshold: b.opts.threshold, refs: b.expected}
		for i, e := range b.expected {
			if similarity(s.metric, e, e) == 0 {
				b.errorf(b.field(i), "%q has nothing to compare (no words or characters)", e)
				return nil
			}
		}
		return s
	}
	b.errorf("scorer", "unknown scorer %q; want one of %s", name, strings.Join(scorerNames, ", "))
	return nil
}

// jsonSchema compiles the schema of a json_schema item and checks its
// expected value against it.
func (b *builder) jsonSchema() scorer {
	var sch *jsonschema.Schema
	switch {
	case b.opts.schema != nil:
		var (
			err   error
			nodes int
		)
		if sch, nodes, err = b.inlineSchema(b.opts.schema); err != nil {
			b.errorf("options.schema", "invalid JSON Schema: %s", schemaMessage(err))
			return nil
		}
		if !b.spend(nodes) {
			b.errorf("options.schema", "the suite's schemas expand to more than %d subschemas in all, more than perfgate checks in one suite", MaxSuiteSchemaNodes)
			return nil
		}
	case b.opts.schemaFile != "":
		if b.p == nil {
			b.errorf("options.schema_file", "only a loaded suite can name a schema file")
			return nil
		}
		cs := b.p.fileSchema(b.opts.schemaFile)
		if cs.err != "" {
			b.errorf("options.schema_file", "%s", cs.err)
			return nil
		}
		if !b.spend(cs.nodes) {
			b.errorf("options.schema_file", "the suite's schemas expand to more than %d subschemas in all, more than perfgate checks in one suite", MaxSuiteSchemaNodes)
			return nil
		}
		cs.nodes = 0 // a file's schema is compiled, and counted, once a suite
		sch, b.schemaContent = cs.schema, cs.content
	default:
		b.errorf("options.schema", "required: set options.schema (an inline JSON Schema) or options.schema_file")
		return nil
	}
	s := &jsonScorer{schema: sch}
	if len(b.expected) > 0 {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(b.expected[0]))
		if err != nil {
			b.errorf("expected", "not valid JSON: %v", err)
			return nil
		}
		if d := valueDepth(v); d > MaxAnswerDepth {
			b.errorf("expected", "nests %d levels deep, more than the %d perfgate checks", d, MaxAnswerDepth)
			return nil
		}
		if err := sch.Validate(v); err != nil {
			b.errorf("expected", "does not match its schema: %s", schemaMessage(err))
			return nil
		}
		s.expected, s.hasExpected = v, true
	}
	return s
}

// spend takes n subschemas from the suite's budget (MaxSuiteSchemaNodes),
// and reports whether they fitted. Outside Parse there is no budget.
func (b *builder) spend(n int) bool {
	if b.p == nil {
		return true
	}
	b.p.schemaNodes += n
	return b.p.schemaNodes <= MaxSuiteSchemaNodes
}

func (b *builder) inlineSchema(raw json.RawMessage) (*jsonschema.Schema, int, error) {
	file := "suite"
	if b.p != nil {
		file = b.p.File
	}
	if err := checkSchemaText(raw); err != nil {
		return nil, 0, err
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		return nil, 0, err
	}
	return compileSchema(file, doc)
}
