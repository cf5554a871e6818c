package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// wireTool is one element of a chat request's "tools".
type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// toolCall is the call the sim answers a request with tools: the function
// and its arguments (JSON text), fixed when the request is read.
type toolCall struct {
	name string
	args string
}

// chooseTool decides whether a chat request with tools is answered with a
// call, and to which function: the one tool_choice names, else (auto,
// required, or none given) the first tool; tool_choice "none" answers
// text. The arguments are an example of the function's parameters schema.
// A tool_choice that names an undeclared function, or tools without a
// name, are the client's error.
func chooseTool(tools []wireTool, choice json.RawMessage) (*toolCall, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	for i, t := range tools {
		if t.Function.Name == "" {
			return nil, fmt.Errorf("tools[%d].function.name: required", i)
		}
	}
	pick := &tools[0]
	choice = bytes.TrimSpace(choice)
	switch {
	case len(choice) == 0, bytes.Equal(choice, []byte("null")):
	case choice[0] == '"':
		var s string
		if err := json.Unmarshal(choice, &s); err != nil {
			return nil, fmt.Errorf("tool_choice: %w", err)
		}
		switch s {
		case "none":
			return nil, nil
		case "auto", "required":
		default:
			return nil, fmt.Errorf("tool_choice: want none, auto, required or an object naming a function, got %q", s)
		}
	default:
		var named struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(choice, &named); err != nil {
			return nil, fmt.Errorf("tool_choice: %w", err)
		}
		pick = nil
		for i := range tools {
			if tools[i].Function.Name == named.Function.Name {
				pick = &tools[i]
				break
			}
		}
		if pick == nil {
			return nil, fmt.Errorf("tool_choice: function %q is not one of the request's tools", named.Function.Name)
		}
	}
	args, err := exampleArguments(pick.Function.Parameters)
	if err != nil {
		return nil, fmt.Errorf("tools: function %q: parameters: %w", pick.Function.Name, err)
	}
	return &toolCall{name: pick.Function.Name, args: args}, nil
}

// exampleArguments is a JSON text that the schema accepts for the common
// shapes of function parameters: see exampleValue. No schema gives {}.
func exampleArguments(schema json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(schema)) == 0 || bytes.Equal(bytes.TrimSpace(schema), []byte("null")) {
		return "{}", nil
	}
	var s any
	if err := json.Unmarshal(schema, &s); err != nil {
		return "", err
	}
	v, err := exampleOf(s, s, 0)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v) // maps marshal with sorted keys: the same text every time
	return string(b), err
}

// maxSchemaDepth bounds the nesting exampleValue follows.
const maxSchemaDepth = 16

// exampleOf is a value of schema s (root: the whole schema, which local
// $refs point into): its const, else its first enum value, else the first
// alternative of anyOf/oneOf, else all of allOf's first, else by its type:
// an object of its required properties (all of them when none is
// required), an array of minItems (at least one) example items, a string
// of minLength x's ("sim" when it allows three), the number nearest 1
// within minimum/maximum (a whole one for integers), true, null. A schema
// without a type is an object if it has properties, else a string. It
// does not try: pattern, format, multipleOf, not, if/then/else, and
// counts past maxSchemaCount; a schema the sim cannot satisfy is the
// request's error.
func exampleOf(root, s any, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, errors.New("nested too deeply")
	}
	m, ok := s.(map[string]any)
	if !ok {
		if b, isBool := s.(bool); isBool && b {
			return "sim", nil
		}
		return nil, fmt.Errorf("want a schema object, got %T", s)
	}
	if ref, ok := m["$ref"].(string); ok {
		target, err := localRef(root, ref)
		if err != nil {
			return nil, err
		}
		return exampleOf(root, target, depth+1)
	}
	if c, ok := m["const"]; ok {
		return c, nil
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0], nil
	}
	for _, alt := range []string{"anyOf", "oneOf", "allOf"} {
		if as, ok := m[alt].([]any); ok && len(as) > 0 {
			return exampleOf(root, as[0], depth+1)
		}
	}
	typ, _ := m["type"].(string)
	if ts, ok := m["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	if typ == "" {
		typ = "string"
		if _, ok := m["properties"]; ok {
			typ = "object"
		}
	}
	count := func(key string) (int, bool, error) {
		f, ok := m[key].(float64)
		if !ok {
			return 0, false, nil
		}
		if f < 0 || f > maxSchemaCount {
			return 0, false, fmt.Errorf("%s %g: the simulator answers at most %d", key, f, maxSchemaCount)
		}
		return int(math.Ceil(f)), true, nil
	}
	switch typ {
	case "object":
		props, _ := m["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		if req, ok := m["required"].([]any); ok && len(req) > 0 {
			for _, r := range req {
				if n, ok := r.(string); ok {
					names = append(names, n)
				}
			}
		} else {
			for n := range props {
				names = append(names, n)
			}
			sort.Strings(names)
		}
		out := make(map[string]any, len(names))
		for _, n := range names {
			ps, ok := props[n]
			if !ok {
				ps = map[string]any{"type": "string"}
			}
			v, err := exampleOf(root, ps, depth+1)
			if err != nil {
				return nil, fmt.Errorf("properties.%s: %w", n, err)
			}
			out[n] = v
		}
		return out, nil
	case "array":
		n, _, err := count("minItems")
		if err != nil {
			return nil, err
		}
		n = max(n, 1)
		if hi, ok, err := count("maxItems"); err != nil {
			return nil, err
		} else if ok {
			n = min(n, hi)
		}
		items, ok := m["items"]
		if !ok {
			items = map[string]any{"type": "string"}
		}
		out := make([]any, 0, n)
		for range n {
			v, err := exampleOf(root, items, depth+1)
			if err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
			out = append(out, v)
		}
		return out, nil
	case "string":
		lo, _, err := count("minLength")
		if err != nil {
			return nil, err
		}
		hi, hasHi, err := count("maxLength")
		if err != nil {
			return nil, err
		}
		if lo <= 3 && (!hasHi || hi >= 3) {
			return "sim", nil
		}
		if hasHi && hi < lo {
			return nil, fmt.Errorf("minLength %d over maxLength %d", lo, hi)
		}
		return strings.Repeat("x", lo), nil
	case "integer", "number":
		v := 1.0
		lo, hasLo := m["minimum"].(float64)
		hi, hasHi := m["maximum"].(float64)
		if hasLo && v < lo {
			v = lo
		}
		if hasHi && v > hi {
			v = hi
		}
		if typ == "integer" {
			v = math.Ceil(v)
			if hasHi && v > hi {
				return nil, fmt.Errorf("no integer from %g to %g", lo, hi)
			}
			if math.Abs(v) > 1<<53 {
				return nil, fmt.Errorf("minimum %g: past the integers the simulator writes", v)
			}
			return json.Number(strconv.FormatInt(int64(v), 10)), nil
		}
		return v, nil
	case "boolean":
		return true, nil
	case "null":
		return nil, nil
	}
	return nil, fmt.Errorf("type %q: want object, array, string, integer, number, boolean or null", typ)
}

// maxSchemaCount bounds the items and string lengths the sim writes.
const maxSchemaCount = 4096

// localRef resolves a $ref inside the schema itself ("#", "#/$defs/x",
// "#/definitions/x"); any other is the request's error.
func localRef(root any, ref string) (any, error) {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q: the simulator follows references inside the schema only", ref)
	}
	v := root
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: no such place in the schema", ref)
		}
		if v, ok = m[tok]; !ok {
			return nil, fmt.Errorf("$ref %q: no such place in the schema", ref)
		}
	}
	return v, nil
}

// toolPieceBytes is how much of a JSON answer one output token carries:
// about what a tokenizer makes of JSON.
const toolPieceBytes = 4

// jsonGen is the generation of a JSON answer (response_format) or of a
// tool call's arguments: the text a few bytes a token, cut short at
// max_tokens (finish reason "length"), else ending with done ("stop", or
// "tool_calls"). A wrong answer (--structured-error-rate) is cut before its
// end but still claims done, as a server that lost its grammar would.
type jsonGen struct {
	pieces []string
	n      int
	done   string
}

func newJSONGen(text string, maxTokens int, done string, wrong bool) jsonGen {
	var pieces []string
	for rest := text; len(rest) > 0; {
		n := min(toolPieceBytes, len(rest))
		for n < len(rest) && !utf8.RuneStart(rest[n]) {
			n++
		}
		pieces = append(pieces, rest[:n])
		rest = rest[n:]
	}
	if len(pieces) == 0 {
		pieces = []string{"{}"}
	}
	if wrong {
		// Invalid whatever the schema: an object or array without its
		// closing bracket, or a scalar with a stray brace after it (a
		// number cut short may still be a number of the schema).
		if c := pieces[0][0]; (c == '{' || c == '[') && len(pieces) > 1 {
			pieces = pieces[:len(pieces)-1]
		} else {
			pieces = append(pieces, "}")
		}
	}
	return jsonGen{pieces: pieces, n: min(len(pieces), max(maxTokens, 1)), done: done}
}

func (g jsonGen) Len() int           { return g.n }
func (g jsonGen) Token(i int) string { return g.pieces[i] }
func (g jsonGen) FinishReason() string {
	if g.n < len(g.pieces) {
		return "length"
	}
	return g.done
}

// text is the text of the first n tokens.
func (g jsonGen) text(n int) string {
	var b []byte
	for i := range min(n, len(g.pieces)) {
		b = append(b, g.pieces[i]...)
	}
	return string(b)
}

// toolGen is the generation of a tool call: its arguments as a jsonGen.
type toolGen struct {
	jsonGen
	call *toolCall
}

func newToolGen(call *toolCall, maxTokens int, wrong bool) toolGen {
	return toolGen{jsonGen: newJSONGen(call.args, maxTokens, "tool_calls", wrong), call: call}
}

// jsonFormat reads a chat or completions request's response_format: whether
// the answer must be JSON, and the text the sim answers (an example of its
// schema; {"answer": "sim"} for json_object without one).
func jsonFormat(raw json.RawMessage) (text string, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", false, nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(raw, &rf); err != nil {
		return "", false, fmt.Errorf("response_format: %w", err)
	}
	var schema json.RawMessage
	switch rf.Type {
	case "text":
		return "", false, nil
	case "json_object":
		schema = rf.Schema
	case "json_schema":
		if rf.JSONSchema == nil {
			return "", false, errors.New("response_format: json_schema: required for type json_schema")
		}
		schema = rf.JSONSchema.Schema
	default:
		return "", false, fmt.Errorf("response_format.type: want text, json_object or json_schema, got %q", rf.Type)
	}
	if len(bytes.TrimSpace(schema)) == 0 {
		return `{"answer":"sim"}`, true, nil
	}
	text, err = exampleArguments(schema)
	if err != nil {
		return "", false, fmt.Errorf("response_format schema: %w", err)
	}
	return text, true, nil
}

// structuredWrong draws once whether the sim gets a structured answer to
// prompt wrong: the same seed and prompt always draw alike.
func structuredWrong(rate float64, seed int64, prompt string) bool {
	if rate <= 0 {
		return false
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "structured/%d/", seed)
	h.Write([]byte(prompt))
	return float64(splitmix(h.Sum64())>>11)/(1<<53) < rate
}
