package sim

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
