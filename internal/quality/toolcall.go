package quality

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/perfgate/perfgate/internal/result"
)

// The tool_call scorer checks a function-calling answer: the calls the
// model made, not its text. Its expected value is one call,
// {"name": "get_weather", "arguments": {"city": "Paris"}}, or an array of
// them, the calls in order (parallel calls). An answer passes when it made
// exactly those calls: the same function names, and arguments equal to the
// expected ones once both are decoded (key order, white space and a
// number's spelling, 1 or 1.0, do not matter). The item must declare the
// functions it expects in its tools.

// Call is one tool call as the tool_call scorer reads it: a function's
// name and its arguments.
type Call struct {
	Name string `json:"name"`
	// Arguments is the arguments' JSON, or, when the model streamed
	// arguments that are not JSON, a JSON string of what it streamed.
	Arguments json.RawMessage `json:"arguments"`
}

// CallsText is the text a tool_call item's scorer reads for an answer's
// calls: a JSON array of Calls, in the order of their index. Arguments that
// are not JSON are kept as a JSON string, which no expected object equals.
// An answer without calls has none: its text is scored instead.
func CallsText(calls []result.ToolCall) string {
	out := make([]Call, 0, len(calls))
	for _, c := range calls {
		args := json.RawMessage(strings.TrimSpace(c.Arguments))
		if !json.Valid(args) {
			args, _ = json.Marshal(c.Arguments) // cannot fail: a string
		}
		out = append(out, Call{Name: c.Name, Arguments: args})
	}
	b, _ := json.Marshal(out) // cannot fail: valid raw messages
	return string(b)
}

// toolCallScorer is tool_call.
type toolCallScorer struct {
	want []wantCall
}

// wantCall is one expected call: the name, and the arguments decoded with
// json.Number.
type wantCall struct {
	name string
	args any
}

func (s *toolCallScorer) continuous() bool { return false }

func (s *toolCallScorer) score(output string) Score {
	text := strings.TrimSpace(output)
	if !strings.HasPrefix(text, "[") {
		return fail("no tool call: the answer was text")
	}
	var calls []Call
	if err := json.Unmarshal([]byte(text), &calls); err != nil {
		return fail("no tool call: the answer was text")
	}
	if len(calls) != len(s.want) {
		return fail(fmt.Sprintf("%d tool calls, want %d", len(calls), len(s.want)))
	}
	for i, c := range calls {
		w := s.want[i]
		at := ""
		if len(s.want) > 1 {
			at = fmt.Sprintf("call %d: ", i+1)
		}
		if c.Name != w.name {
			return fail(fmt.Sprintf("%scalled %s, want %s", at, quoteName(c.Name), quoteName(w.name)))
		}
		raw := bytes.TrimSpace(c.Arguments)
		if len(raw) > 0 && raw[0] == '"' {
			return fail(at + "arguments are not JSON")
		}
		got, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return fail(at + "arguments are not JSON")
		}
		if d := valueDepth(got); d > MaxAnswerDepth {
			return fail(fmt.Sprintf("%sarguments nested %d levels deep, more than the %d perfgate checks", at, d, MaxAnswerDepth))
		}
		if where, ok := jsonDiff(got, w.args, ""); !ok {
			return fail(fmt.Sprintf("%s%s: arguments differ from expected at %s", at, quoteName(c.Name), where))
		}
	}
	if len(calls) == 1 {
		return pass("called " + quoteName(calls[0].Name) + " as expected")
	}
	return pass(fmt.Sprintf("made the %d calls expected", len(calls)))
}

// quoteName quotes a function's name for a detail, cut to 60 bytes.
func quoteName(name string) string { return fmt.Sprintf("%q", clip(name, 60)) }

// toolCall builds a tool_call scorer from the item's expected calls and
// checks each names a function the item's tools declare.
func (b *builder) toolCall(tools json.RawMessage) scorer {
	var declared []string
	var ts []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if len(tools) == 0 || json.Unmarshal(tools, &ts) != nil || len(ts) == 0 {
		b.errorf("tools", "required for scorer tool_call: the functions the model may call, as the request sends them")
		return nil
	}
	for _, t := range ts {
		declared = append(declared, t.Function.Name)
	}
	s := &toolCallScorer{}
	for i, e := range b.expected {
		field := b.field(i)
		var c struct {
			Name      *string          `json:"name"`
			Arguments *json.RawMessage `json:"arguments"`
		}
		dec := json.NewDecoder(strings.NewReader(e))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil || c.Name == nil || c.Arguments == nil {
			b.errorf(field, `want a call, {"name": "<function>", "arguments": {...}}, got %s`, clip(e, 80))
			return nil
		}
		if !slices.Contains(declared, *c.Name) {
			b.errorf(field+".name", "%q is not a function of the item's tools (%s)", *c.Name, strings.Join(declared, ", "))
			return nil
		}
		args, err := jsonschema.UnmarshalJSON(bytes.NewReader(*c.Arguments))
		if _, isObject := args.(map[string]any); err != nil || !isObject {
			b.errorf(field+".arguments", "want an object, the function's arguments")
			return nil
		}
		s.want = append(s.want, wantCall{name: *c.Name, args: args})
	}
	return s
}

// expectedCalls splits a tool_call item's expected value into its calls,
// each compact-encoded: an object is one call, an array the calls in order.
func expectedCalls(raw json.RawMessage) []string {
	var one = func(r json.RawMessage) string {
		var b bytes.Buffer
		_ = json.Compact(&b, r) // cannot fail: r is valid JSON
		return b.String()
	}
	if raw[0] != '[' {
		return []string{one(raw)}
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems) // cannot fail: raw is a valid array
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = one(e)
	}
	return out
}

// callsAnswer is the calls text of a tool_call item's expected calls: the
// right answer perfgate sim serves for it.
func callsAnswer(expected []string) string {
	calls := make([]Call, 0, len(expected))
	for _, e := range expected {
		var c Call
		_ = json.Unmarshal([]byte(e), &c) // checked when the item was built
		calls = append(calls, c)
	}
	b, _ := json.Marshal(calls)
	return string(b)
}
