package quality

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

const weatherTools = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}},{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}]`

// The tool_call scorer passes the expected calls, whatever the key order,
// white space or a number's spelling, and fails another function, other
// arguments, arguments that are not JSON, a text answer, or a different
// number of calls, saying which.
func TestToolCallScorer(t *testing.T) {
	line := `{"id":"w","messages":[{"role":"user","content":"Weather in Paris for 2 days?"}],` + weatherTools +
		`,"scorer":"tool_call","expected":{"name":"get_weather","arguments":{"city":"Paris","days":2}}}`
	call := func(name, args string) result.ToolCall { return result.ToolCall{Name: name, Arguments: args} }
	text := func(calls ...result.ToolCall) string { return CallsText(calls) }
	checkScores(t, line, []scoreCase{
		{text(call("get_weather", `{"days": 2.0, "city": "Paris"}`)), true, `called "get_weather" as expected`},
		{text(call("get_weather", ` {"city":"Paris","days":2} `)), true, ""},
		{text(call("get_time", `{}`)), false, `called "get_time", want "get_weather"`},
		{text(call("get_weather", `{"city":"Lyon","days":2}`)), false, `"get_weather": arguments differ from expected at /city`},
		{text(call("get_weather", `{"city":"Paris"}`)), false, `"get_weather": arguments differ from expected at /days`},
		{text(call("get_weather", `{"city":"Par`)), false, "arguments are not JSON"},
		{text(call("get_weather", `{"city":"Paris","days":2}`), call("get_time", `{}`)), false, "2 tool calls, want 1"},
		{"The weather in Paris is sunny.", false, "no tool call: the answer was text"},
		{"", false, "no tool call: the answer was text"},
	})

	two := `{"id":"w2","prompt":"both",` + weatherTools +
		`,"scorer":"tool_call","expected":[{"name":"get_time","arguments":{}},{"name":"get_weather","arguments":{"city":"Oslo"}}]}`
	checkScores(t, two, []scoreCase{
		{text(call("get_time", `{}`), call("get_weather", `{"city":"Oslo"}`)), true, "made the 2 calls expected"},
		{text(call("get_weather", `{"city":"Oslo"}`), call("get_time", `{}`)), false, `call 1: called "get_weather", want "get_time"`},
	})

	// The right answer perfgate sim serves passes; the wrong one fails.
	it := item(t, line)
	right, err := it.CorrectAnswer()
	require.NoError(t, err)
	assert.True(t, it.Score(right).Pass, right)
	assert.False(t, it.Score(it.WrongAnswer()).Pass)
}

// A tool_call item that cannot be scored is refused at its line and field.
func TestToolCallItemErrors(t *testing.T) {
	base := `{"id":"w","prompt":"p",` + weatherTools + `,"scorer":"tool_call",`
	for _, c := range []struct{ line, want string }{
		{`{"id":"w","prompt":"p","scorer":"tool_call","expected":{"name":"f","arguments":{}}}`, "tools: required for scorer tool_call"},
		{base + `"expected":{"name":"rm_rf","arguments":{}}}`, `expected.name: "rm_rf" is not a function of the item's tools (get_weather, get_time)`},
		{base + `"expected":{"name":"get_time"}}`, `expected: want a call, {"name": "<function>", "arguments": {...}}`},
		{base + `"expected":{"name":"get_time","arguments":[1]}}`, "expected.arguments: want an object"},
		{base + `"expected":"get_time"}`, "expected: want a call"},
		{base + `"expected":[]}`, "expected: must not be an empty array"},
		{base + `"expected":[{"name":"get_time","arguments":{}},7]}`, "expected[1]: want a call"},
		{base + `"expected":{"name":"get_time","arguments":{},"extra":1}}`, "expected: want a call"},
		{base + `"options":{"x":1},"expected":{"name":"get_time","arguments":{}}}`, "options.x: unknown option; scorer tool_call takes no options"},
		{strings.TrimSuffix(base, `"scorer":"tool_call",`) + `"scorer":"tool_call"}`, "expected: required for scorer tool_call"},
	} {
		_, err := Parse(strings.NewReader(c.line), "suite.jsonl")
		require.Error(t, err, c.line)
		assert.Contains(t, err.Error(), c.want, c.line)
		assert.Contains(t, err.Error(), "suite.jsonl:1", "the file and line")
	}
}

// CallsText keeps arguments that are not JSON as a string, so that they
// are reported, not mistaken for an object.
func TestCallsText(t *testing.T) {
	got := CallsText([]result.ToolCall{{Name: "a", Arguments: `{"x": 1}`}, {Name: "b", Arguments: `{"x":`}})
	assert.Equal(t, `[{"name":"a","arguments":{"x":1}},{"name":"b","arguments":"{\"x\":"}]`, got)
	assert.Equal(t, `[]`, CallsText(nil))
}

// A function-calling item is scored on the calls its answer made, which
// its outcome shows; a text answer to it is wrong, not failed.
func TestOutcomesToolCall(t *testing.T) {
	suite, err := Parse(strings.NewReader(
		`{"id":"right",`+weatherTools+`,"prompt":"a","scorer":"tool_call","expected":{"name":"get_time","arguments":{}}}`+"\n"+
			`{"id":"text",`+weatherTools+`,"prompt":"b","scorer":"tool_call","expected":{"name":"get_time","arguments":{}}}`+"\n"), "evals/tools.jsonl")
	require.NoError(t, err)
	answers := map[string]*result.Record{
		"right": {ID: "right", FinishReason: "tool_calls", ToolCalls: []result.ToolCall{{ID: "c1", Type: "function", Name: "get_time", Arguments: "{}"}}},
		"text":  {ID: "text", Text: `[{"name":"get_time","arguments":{}}]`, FinishReason: "stop"},
	}
	r := suite.Outcomes("evals/tools.jsonl", "separate", answers, nil)
	require.Len(t, r.Items, 2)
	assert.True(t, r.Items[0].Pass, r.Items[0].Detail)
	assert.Equal(t, `[{"name":"get_time","arguments":{}}]`, r.Items[0].Output)
	assert.False(t, r.Items[1].Pass)
	assert.False(t, r.Items[1].Failed())
	assert.Equal(t, "no tool call: the answer was text", r.Items[1].Detail)
}
