package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/quality"
)

func TestExampleArguments(t *testing.T) {
	tests := []struct {
		schema, want string
	}{
		{``, `{}`},
		{`{"type":"object","properties":{}}`, `{}`},
		{`{"type":"object","properties":{"b":{"type":"boolean"},"a":{"type":"number"}}}`, `{"a":1,"b":true}`},
		{`{"type":"object","properties":{"q":{"type":"string","minLength":5},"n":{"type":"integer","minimum":7}},"required":["q"]}`, `{"q":"xxxxx"}`},
		{`{"type":"object","properties":{"tags":{"type":"array","items":{"enum":["x","y"]},"minItems":2}},"required":["tags"]}`, `{"tags":["x","x"]}`},
		{`{"properties":{"u":{"type":["string","null"]},"c":{"const":42}},"required":["u","c"]}`, `{"c":42,"u":"sim"}`},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{"z":{"type":"null"}}}},"required":["o","missing"]}`, `{"missing":"sim","o":{"z":null}}`},
	}
	for _, tt := range tests {
		got, err := exampleArguments(json.RawMessage(tt.schema))
		require.NoError(t, err, tt.schema)
		assert.Equal(t, tt.want, got, tt.schema)
	}
	more := []struct{ schema, want string }{
		// pydantic's nested models: local $refs into $defs; anyOf's first.
		{`{"$defs":{"City":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}},"type":"object","properties":{"to":{"$ref":"#/$defs/City"},"via":{"anyOf":[{"type":"integer","minimum":2,"maximum":5},{"type":"null"}]}},"required":["to","via"]}`,
			`{"to":{"name":"sim"},"via":2}`},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":0.5,"maximum":0.9}},"required":["n"]}`, ""},
		{`{"type":"object","properties":{"s":{"type":"string","maxLength":2}},"required":["s"]}`, `{"s":""}`},
		{`{"type":"object","properties":{"x":{"type":"number","maximum":-3}},"required":["x"]}`, `{"x":-3}`},
		{`{"type":"object","properties":{"l":{"type":"array","minItems":20,"items":{"type":"boolean"}}},"required":["l"]}`, `{"l":[` + strings.TrimSuffix(strings.Repeat("true,", 20), ",") + `]}`},
	}
	for _, tt := range more {
		got, err := exampleArguments(json.RawMessage(tt.schema))
		if tt.want == "" {
			assert.Error(t, err, "%s gave %s", tt.schema, got)
			continue
		}
		require.NoError(t, err, tt.schema)
		assert.Equal(t, tt.want, got, tt.schema)
		sch, err := quality.CompileSchema(json.RawMessage(tt.schema))
		require.NoError(t, err)
		v, problem := quality.ParseJSON(got)
		require.Empty(t, problem)
		assert.Empty(t, sch.Check(v), "the sim's example is valid under %s", tt.schema)
	}
	for _, bad := range []string{`{"type":"object","properties":{"a":{"type":"date"}},"required":["a"]}`, `[1]`, `{"type":"object","properties":{"a":7},"required":["a"]}`} {
		_, err := exampleArguments(json.RawMessage(bad))
		assert.Error(t, err, bad)
	}
}

func TestChooseTool(t *testing.T) {
	tools := []wireTool{{Type: "function"}, {Type: "function"}}
	tools[0].Function.Name, tools[1].Function.Name = "first", "second"
	tests := []struct {
		choice, want, err string
	}{
		{``, "first", ""},
		{`"auto"`, "first", ""},
		{`"required"`, "first", ""},
		{`"none"`, "", ""},
		{`{"type":"function","function":{"name":"second"}}`, "second", ""},
		{`{"type":"function","function":{"name":"third"}}`, "", `tool_choice: function "third" is not one of the request's tools`},
		{`"sometimes"`, "", `tool_choice: want none, auto, required`},
	}
	for _, tt := range tests {
		got, err := chooseTool(tools, json.RawMessage(tt.choice))
		if tt.err != "" {
			require.Error(t, err, tt.choice)
			assert.Contains(t, err.Error(), tt.err)
			continue
		}
		require.NoError(t, err, tt.choice)
		if tt.want == "" {
			assert.Nil(t, got, tt.choice)
			continue
		}
		require.NotNil(t, got, tt.choice)
		assert.Equal(t, tt.want, got.name)
	}
	_, err := chooseTool([]wireTool{{Type: "function"}}, nil)
	assert.ErrorContains(t, err, "tools[0].function.name: required")
}

// A request with tools, not streamed: the message has the call and no
// content, the finish reason is tool_calls.
func TestToolCallWhole(t *testing.T) {
	s := startSim(t, testConfig())
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":50,
		"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"integer"}}}}}]}`
	resp := post(t, t.Context(), s.URL()+"/v1/chat/completions", "w", json.RawMessage(body))
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	var got struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Type     string `json:"type"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Len(t, got.Choices, 1)
	m := got.Choices[0].Message
	assert.Nil(t, m.Content)
	require.Len(t, m.ToolCalls, 1)
	assert.Equal(t, "f", m.ToolCalls[0].Function.Name)
	assert.Equal(t, `{"x":1}`, m.ToolCalls[0].Function.Arguments)
	assert.Equal(t, "tool_calls", got.Choices[0].FinishReason)
	rec := s.records(t)["w"]
	require.NotNil(t, rec.ToolCall)
	assert.Equal(t, `{"x":1}`, rec.ToolCall.Arguments)
}

// --constrained-slowdown makes every step of a batch holding a constrained
// request (JSON, a tool call) slower; a free request's steps are not.
func TestConstrainedSlowdown(t *testing.T) {
	cfg := testConfig()
	cfg.ConstrainedSlowdown = 2
	cfg.recordSteps = true
	s := startSim(t, cfg)
	body := chatBody(3, 8, true)
	body["response_format"] = map[string]any{"type": "json_object"}
	resp := post(t, t.Context(), s.URL()+"/v1/chat/completions", "json", body)
	events := readSSE(t, resp.Body)
	resp.Body.Close()
	require.NotEmpty(t, events)
	streamChat(t, s.Server, "free", 3, 8)
	recs := s.records(t)
	require.NotNil(t, recs["json"].Structured)
	assert.True(t, recs["json"].Structured.Valid)
	assert.Nil(t, recs["free"].Structured)
	n := recs["json"].OutputTokens
	require.Greater(t, n, 1)
	for i, d := range s.eng.plan {
		want := cfg.StepBase
		if i < n {
			want *= 2
		}
		assert.Equal(t, want, d, "step %d", i)
	}
}

// --structured-error-rate cuts about that share of structured answers, the
// same ones for a seed and prompt; the text answer of a JSON request is an
// example of its schema.
func TestStructuredWrong(t *testing.T) {
	wrong := 0
	for i := range 2000 {
		p := fmt.Sprint("prompt ", i)
		w := structuredWrong(0.1, 7, p)
		assert.Equal(t, w, structuredWrong(0.1, 7, p))
		if w {
			wrong++
		}
	}
	assert.InDelta(t, 200, wrong, 45)
	assert.False(t, structuredWrong(0, 7, "x"))
	assert.True(t, structuredWrong(1, 7, "x"))

	text, ok, err := jsonFormat(json.RawMessage(`{"type":"json_schema","json_schema":{"schema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}}`))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, `{"n":1}`, text)
	g := newJSONGen(text, 100, "stop", true)
	assert.Equal(t, `{"n"`, g.text(g.Len()), "cut by its last piece")
	assert.Equal(t, "stop", g.FinishReason(), "and still claims to have finished")
	// A scalar cut short may still be a number of its schema: a stray
	// brace makes it invalid whatever the schema.
	g = newJSONGen("-100", 100, "stop", true)
	assert.False(t, json.Valid([]byte(g.text(g.Len()))), g.text(g.Len()))
	_, _, err = jsonFormat(json.RawMessage(`{"type":"grammar"}`))
	assert.ErrorContains(t, err, "response_format.type")
}
