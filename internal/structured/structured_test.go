package structured

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

const person = `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}`

func TestCheck(t *testing.T) {
	schemaFormat := `{"type":"json_schema","json_schema":{"name":"p","schema":` + person + `}}`
	tools := `[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
		{"type":"function","function":{"name":"now"}}]`
	call := func(name, args string) []result.ToolCall { return []result.ToolCall{{Name: name, Arguments: args}} }
	tests := []struct {
		name          string
		format, tools string
		choice        string
		text          string
		calls         []result.ToolCall
		finish        string
		structured    bool
		problem       string // "" or a substring of the problem
		wantNoProblem bool
	}{
		{name: "plain text request", text: "hello", structured: false, wantNoProblem: true},
		{name: "format text", format: `{"type":"text"}`, text: "hello", structured: false, wantNoProblem: true},
		{name: "json_object, valid", format: `{"type":"json_object"}`, text: " {\"a\": 1}\n", structured: true, wantNoProblem: true},
		{name: "json_object, prose", format: `{"type":"json_object"}`, text: `Sure! {"a": 1}`, structured: true, problem: "not JSON"},
		{name: "json_object, an array", format: `{"type":"json_object"}`, text: `[1]`, structured: true, problem: "not a JSON object"},
		{name: "json_object, cut", format: `{"type":"json_object"}`, text: `{"a": `, finish: "length", structured: true, problem: "cut by max_tokens (finish_reason length): not JSON"},
		{name: "json_schema, valid", format: schemaFormat, text: `{"name":"Ada","age":36}`, structured: true, wantNoProblem: true},
		{name: "json_schema, wrong type", format: schemaFormat, text: `{"name":"Ada","age":"36"}`, structured: true, problem: "schema: at /age"},
		{name: "json_schema, missing", format: schemaFormat, text: `{"name":"Ada"}`, structured: true, problem: "schema: "},
		{name: "llama.cpp's json_object with a schema", format: `{"type":"json_object","schema":` + person + `}`, text: `{"name":1,"age":2}`, structured: true, problem: "schema: at /name"},
		{name: "tools, a valid call", tools: tools, calls: call("get_weather", `{"city":"Paris"}`), finish: "tool_calls", structured: true, wantNoProblem: true},
		{name: "tools, a call without parameters schema", tools: tools, calls: call("now", `{}`), structured: true, wantNoProblem: true},
		{name: "tools, undeclared function", tools: tools, calls: call("rm_rf", `{}`), structured: true, problem: `a call to "rm_rf", which the request does not declare`},
		{name: "tools, arguments not JSON", tools: tools, calls: call("get_weather", `{"city":`), structured: true, problem: `"get_weather"'s arguments: not JSON`},
		{name: "tools, arguments off schema", tools: tools, calls: call("get_weather", `{"town":"Paris"}`), structured: true, problem: `"get_weather"'s arguments: schema: `},
		{name: "tools, arguments not an object", tools: tools, calls: call("now", `[]`), structured: true, problem: "not a JSON object"},
		{name: "tools auto, text answer", tools: tools, text: "It is sunny.", structured: true, wantNoProblem: true},
		{name: "tools required, text answer", tools: tools, choice: `"required"`, text: "It is sunny.", structured: true, problem: "no tool call (tool_choice required)"},
		{name: "tools named, other call", tools: tools, choice: `{"type":"function","function":{"name":"now"}}`, calls: call("get_weather", `{"city":"x"}`), structured: true, problem: `where tool_choice names "now"`},
		{name: "tools none", tools: tools, choice: `"none"`, text: "text", structured: false, wantNoProblem: true},
		{name: "a number too large to check", format: `{"type":"json_schema","json_schema":{"schema":{"type":"array","items":{"type":"integer"}}}}`,
			text: "[" + strings.Repeat("1e999999,", 200) + "1]", structured: true, problem: "a number perfgate does not check: 1e999999"},
		{name: "tools none, with json_object", tools: tools, choice: `"none"`, format: `{"type":"json_object"}`, text: "x", structured: true, problem: "not JSON"},
	}
	c := NewChecker()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &workload.Request{ID: "r", Prompt: "p", MaxTokens: 10}
			if tt.format != "" {
				req.ResponseFormat = json.RawMessage(tt.format)
			}
			if tt.tools != "" {
				req.Tools = json.RawMessage(tt.tools)
			}
			if tt.choice != "" {
				req.ToolChoice = json.RawMessage(tt.choice)
			}
			require.NoError(t, Validate([]workload.Request{*req}))
			structured, problem := c.Check(req, tt.text, tt.calls, tt.finish)
			assert.Equal(t, tt.structured, structured)
			assert.Equal(t, tt.structured, req.Structured(), "workload.Request.Structured agrees")
			if tt.wantNoProblem {
				assert.Empty(t, problem)
				return
			}
			require.NotEmpty(t, problem)
			assert.Contains(t, problem, tt.problem)
			if strings.HasPrefix(tt.problem, "cut") {
				assert.True(t, strings.HasPrefix(problem, tt.problem), problem)
			}
		})
	}
}

// A workload whose structured requests perfgate cannot check is refused
// before anything is sent, naming the request and the field.
func TestValidate(t *testing.T) {
	tests := []struct{ format, tools, choice, want string }{
		{format: `{"type":"grammar"}`, want: `request q: response_format.type: want text, json_object or json_schema`},
		{format: `{"type":"json_schema","json_schema":{"schema":{"type":"object","properties":{"a":{"$ref":"other.json"}}}}}`, want: "request q: response_format schema: "},
		{format: `{"type":"json_schema","json_schema":{"schema":{"type":7}}}`, want: "request q: response_format schema: "},
		{tools: `[{"type":"function","function":{"name":""}}]`, want: "request q: tools[0].function.name: required"},
		{tools: `[{"type":"function","function":{"name":"f","parameters":{"type":"nope"}}}]`, want: "request q: tools[0].function.parameters: "},
		{tools: `[{"type":"function","function":{"name":"f"}}]`, choice: `{"type":"function","function":{"name":"g"}}`, want: `request q: tool_choice: function "g" is not one of the request's tools`},
		{tools: `[{"type":"function","function":{"name":"f"}}]`, choice: `"always"`, want: `request q: tool_choice: want none, auto, required or a named function, got "always"`},
	}
	for _, tt := range tests {
		req := workload.Request{ID: "q", Prompt: "p", MaxTokens: 1}
		if tt.format != "" {
			req.ResponseFormat = json.RawMessage(tt.format)
		}
		if tt.tools != "" {
			req.Tools = json.RawMessage(tt.tools)
		}
		if tt.choice != "" {
			req.ToolChoice = json.RawMessage(tt.choice)
		}
		err := Validate([]workload.Request{{ID: "ok", Prompt: "p", MaxTokens: 1}, req})
		require.Error(t, err, tt.want)
		assert.Contains(t, err.Error(), tt.want)
	}
}
