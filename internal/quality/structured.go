package quality

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled JSON Schema for checking answers outside an eval
// suite: the structured output (response_format, tool arguments) of the
// load's requests. It is the suites' JSON Schema code, with their limits.
type Schema struct {
	s *jsonschema.Schema
}

// CompileSchema compiles an inline JSON Schema (draft 2020-12 unless its
// $schema says otherwise) within the limits an eval suite's schemas have
// (MaxSchemaDepth, MaxSchemaNodes). It never loads anything: a $ref to
// another file or a URL is an error.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	if err := checkSchemaText(raw); err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := checkSchemaSize(doc); err != nil {
		return nil, err
	}
	c := newCompiler()
	c.UseLoader(noLoader{})                        // a suite's schema may load a local file; a workload's may not
	const url = "file:///perfgate/structured.json" // a base for relative $refs, which noLoader refuses
	if err := c.AddResource(url, doc); err != nil {
		return nil, errors.New(schemaMessage(err))
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, errors.New(schemaMessage(err))
	}
	return &Schema{s: sch}, nil
}

// noLoader refuses every reference outside the schema itself.
type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("%s: a schema in a workload may not refer outside itself", u)
}

// ParseJSON reads text as exactly one JSON value (surrounding whitespace
// allowed, nothing else: structured output is checked strictly, unlike an
// eval answer, whose JSON may sit in prose or a fenced block). Numbers
// decode as json.Number. It returns what is wrong, or "" and the value.
func ParseJSON(text string) (any, string) {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(strings.TrimSpace(text)))
	if err != nil {
		return nil, "not JSON: " + clip(strings.TrimPrefix(err.Error(), "json: "), 120)
	}
	if d := valueDepth(v); d > MaxAnswerDepth {
		return nil, fmt.Sprintf("JSON nested %d levels deep, more than the %d perfgate checks", d, MaxAnswerDepth)
	}
	if n := hugeNumber(v); n != "" {
		return nil, "a number perfgate does not check: " + clip(n, 40)
	}
	return v, ""
}

// maxNumberText bounds a number's text in a checked answer: a schema's
// integer and minimum checks make exact fractions of numbers, and one like
// 1e999999 takes tens of milliseconds each, on the request's own slot.
// No number a float64 or an int64 holds needs more.
const maxNumberText = 32

// hugeNumber is the text of the first number of v past maxNumberText, or
// of an exponent past ±400, or "".
func hugeNumber(v any) string { // v is at most MaxAnswerDepth deep: ParseJSON checked
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if len(s) > maxNumberText {
			return s
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			if e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+")); err != nil || e > 400 || e < -400 {
				return s
			}
		}
	case map[string]any:
		for _, e := range x {
			if n := hugeNumber(e); n != "" {
				return n
			}
		}
	case []any:
		for _, e := range x {
			if n := hugeNumber(e); n != "" {
				return n
			}
		}
	}
	return ""
}

// Check says what is wrong with the value v (from ParseJSON) under the
// schema, in one line ("at /age: got string, want integer"), or "".
func (s *Schema) Check(v any) string {
	if err := s.s.Validate(v); err != nil {
		return "schema: " + schemaMessage(err)
	}
	return ""
}
