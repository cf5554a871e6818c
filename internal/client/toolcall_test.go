package client

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolChunk is a chunk of delta.tool_calls with the given elements (JSON).
func toolChunk(elems ...string) string {
	return `data: {"choices":[{"index":0,"delta":{"tool_calls":[` + strings.Join(elems, ",") + `]}}]}` + "\n\n"
}

const toolFinishChunk = `data: {"choices":[{"index":0,"finish_reason":"tool_calls","delta":{}}]}` + "\n\n"

// TestDoToolCalls: an answer of tool calls only is output, not no_output:
// its first fragment with a name or arguments is the first token, every
// such fragment has a chunk time, and the calls are assembled from their
// fragments by index. On a client that read only content, reasoning and
// text, each of these was a no_output failure.
func TestDoToolCalls(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		chunks int
		want   []ToolCall
	}{
		{
			name: "OpenAI's shape: id, type and name first, arguments in pieces",
			body: roleChunk +
				toolChunk(`{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}`) +
				toolChunk(`{"index":0,"function":{"arguments":"{\"city\":"}}`) +
				toolChunk(`{"index":0,"function":{"arguments":"\"Paris\"}"}}`) +
				toolFinishChunk + usageChunk + doneChunk,
			chunks: 3,
			want:   []ToolCall{{Index: 0, ID: "call_1", Type: "function", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		},
		{
			name: "two calls interleaved, one chunk holding both",
			body: toolChunk(`{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{"}}`,
				`{"index":1,"id":"b","type":"function","function":{"name":"g","arguments":"["}}`) +
				toolChunk(`{"index":1,"function":{"arguments":"]"}}`) +
				toolChunk(`{"index":0,"function":{"arguments":"}"}}`) +
				toolFinishChunk + doneChunk,
			chunks: 3,
			want: []ToolCall{{Index: 0, ID: "a", Type: "function", Name: "f", Arguments: "{}"},
				{Index: 1, ID: "b", Type: "function", Name: "g", Arguments: "[]"}},
		},
		{
			name: "no index: a new id is a new call, none continues the last",
			body: toolChunk(`{"id":"a","function":{"name":"f","arguments":"{\"x\":"}}`) +
				toolChunk(`{"function":{"arguments":"1}"}}`) +
				toolChunk(`{"id":"b","function":{"name":"g","arguments":"{}"}}`) +
				toolFinishChunk + doneChunk,
			chunks: 3,
			want:   []ToolCall{{Index: 0, ID: "a", Name: "f", Arguments: `{"x":1}`}, {Index: 1, ID: "b", Name: "g", Arguments: "{}"}},
		},
		{
			name: "text, then a call",
			body: chatChunk("Let me look.") +
				toolChunk(`{"index":0,"id":"c","type":"function","function":{"name":"search","arguments":"{\"q\":\"x\"}"}}`) +
				toolFinishChunk + doneChunk,
			chunks: 2,
			want:   []ToolCall{{Index: 0, ID: "c", Type: "function", Name: "search", Arguments: `{"q":"x"}`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := newClient(t, serveSSE(t, []byte(tt.body)).URL, APIChat).Do(context.Background(), chatReq(), "")
			require.Nil(t, resp.Err, "a tool-call answer is a success")
			assert.Equal(t, tt.want, resp.ToolCalls)
			assert.Len(t, resp.ChunkTimes, tt.chunks)
			require.False(t, resp.FirstToken.IsZero())
			assert.Equal(t, resp.ChunkTimes[0], resp.FirstToken)
			assert.Equal(t, "tool_calls", resp.FinishReason)
		})
	}
}

// TestDoToolCallsBounded: a server cannot make perfgate keep more tool calls
// than MaxToolCalls, nor ids, types or names past MaxToolCallField, nor
// arguments past the response's bound on output text.
func TestDoToolCallsBounded(t *testing.T) {
	long := strings.Repeat("é", MaxToolCallField) // 2 bytes a rune
	t.Run("fields cut", func(t *testing.T) {
		body := toolChunk(fmt.Sprintf(`{"index":0,"id":%q,"type":%q,"function":{"name":%q,"arguments":"{}"}}`, long, long, long)) +
			toolChunk(fmt.Sprintf(`{"index":0,"function":{"name":%q}}`, long)) + toolFinishChunk + doneChunk
		resp := newClient(t, serveSSE(t, []byte(body)).URL, APIChat).Do(context.Background(), chatReq(), "")
		require.Nil(t, resp.Err)
		require.Len(t, resp.ToolCalls, 1)
		tc := resp.ToolCalls[0]
		assert.Equal(t, strings.Repeat("é", MaxToolCallField/2), tc.Name, "cut on a rune boundary, the second piece dropped")
		assert.Len(t, tc.ID, MaxToolCallField)
		assert.Len(t, tc.Type, MaxToolCallField)
	})
	t.Run("an index past MaxToolCalls", func(t *testing.T) {
		body := toolChunk(`{"index":0,"function":{"name":"f","arguments":"{}"}}`) +
			toolChunk(fmt.Sprintf(`{"index":%d,"function":{"name":"f","arguments":"{}"}}`, MaxToolCalls)) + toolFinishChunk + doneChunk
		resp := newClient(t, serveSSE(t, []byte(body)).URL, APIChat).Do(context.Background(), chatReq(), "")
		require.NotNil(t, resp.Err)
		assert.Equal(t, ErrStream, resp.Err.Kind)
		assert.Contains(t, resp.Err.Error(), "a tool call with index 128: an answer may make at most 128")
	})
	t.Run("a negative index", func(t *testing.T) {
		body := toolChunk(`{"index":-1,"function":{"name":"f","arguments":"{}"}}`) + toolFinishChunk + doneChunk
		resp := newClient(t, serveSSE(t, []byte(body)).URL, APIChat).Do(context.Background(), chatReq(), "")
		require.NotNil(t, resp.Err)
		assert.Contains(t, resp.Err.Error(), "a tool call with index -1")
	})
	t.Run("arguments past the output bound", func(t *testing.T) {
		req := chatReq()
		req.MaxTokens = 1
		_, maxText := outputLimits(1)
		piece := strings.Repeat("x", 4096)
		var b strings.Builder
		b.WriteString(toolChunk(`{"index":0,"function":{"name":"f","arguments":""}}`))
		for range maxText/len(piece) + 2 {
			b.WriteString(toolChunk(`{"index":0,"function":{"arguments":"` + piece + `"}}`))
		}
		b.WriteString(toolFinishChunk + doneChunk)
		resp := newClient(t, serveSSE(t, []byte(b.String())).URL, APIChat).Do(context.Background(), req, "")
		require.NotNil(t, resp.Err)
		assert.Contains(t, resp.Err.Error(), "more output than a request with max_tokens 1 can have")
		total := 0
		for _, tc := range resp.ToolCalls {
			total += len(tc.Name) + len(tc.Arguments)
		}
		assert.LessOrEqual(t, total, maxText)
	})
}

// TestDoToolCallsRedacted: a server that echoes a header's secret into a
// tool call does not get it into the Response.
func TestDoToolCallsRedacted(t *testing.T) {
	const secret = "sk-tool-0123456789"
	body := toolChunk(`{"index":0,"id":"`+secret+`","type":"function","function":{"name":"f","arguments":"{\"k\":\"`+secret+`\"}"}}`) + toolFinishChunk + doneChunk
	srv := serveSSE(t, []byte(body))
	c, err := New(Options{BaseURL: srv.URL, API: APIChat, Redact: func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }})
	require.NoError(t, err)
	resp := c.Do(context.Background(), chatReq(), "")
	require.Nil(t, resp.Err)
	require.Len(t, resp.ToolCalls, 1)
	assert.Equal(t, "[redacted]", resp.ToolCalls[0].ID)
	assert.Equal(t, `{"k":"[redacted]"}`, resp.ToolCalls[0].Arguments)
}

// A request that names its model (an adapter) is sent with it; one that
// does not, with the client's.
func TestEncodeModelPerRequest(t *testing.T) {
	c, err := New(Options{BaseURL: "http://127.0.0.1:1", API: APIChat, Model: "base"})
	require.NoError(t, err)
	req := chatReq()
	b, err := c.encode(req)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"model":"base"`)
	req.Model = "sql-lora"
	b, err = c.encode(req)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"model":"sql-lora"`)
	assert.NotContains(t, string(b), `"base"`)
}
