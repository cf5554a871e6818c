package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/workload"
)

// TestDoNoOutput: a stream that ends properly but carried no output text is
// a failed request of its own kind, never a success with no first token. On
// the unfixed client each of these was a success (Err nil) with a zero
// FirstToken, which the run measured as a TTFT of 0.
func TestDoNoOutput(t *testing.T) {
	emptyText := `data: {"choices":[{"text":"","finish_reason":null}]}` + "\n\n"
	tests := []struct {
		name   string
		api    API
		body   string
		want   string // the whole Error()
		finish string
		tokens int // OutputTokens: usage is kept
		from   TokenSource
	}{
		{name: "finish and usage only", api: APIChat, body: finishChunk + usageChunk + doneChunk,
			want:   `no_output: the stream ended with [DONE] but carried no output text: 2 events, finish_reason "stop", usage completion_tokens 3`,
			finish: "stop", tokens: 3, from: TokensFromUsage},
		{name: "role chunk and empty content deltas", api: APIChat, body: roleChunk + chatChunk("") + chatChunk("") + finishChunk + doneChunk,
			want:   `no_output: the stream ended with [DONE] but carried no output text: 4 events, finish_reason "stop", no usage`,
			finish: "stop", from: TokensFromChunks},
		{name: "empty completions text", api: APICompletions, body: emptyText + `data: {"choices":[{"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":0}}` + "\n\n",
			want:   `no_output: the stream ended after a finish_reason but carried no output text: 2 events, finish_reason "length", usage completion_tokens 0`,
			finish: "length", tokens: 0, from: TokensFromUsage},
		{name: "only done", api: APIChat, body: doneChunk,
			want: `no_output: the stream ended with [DONE] but carried no output text: 0 events, no finish_reason, no usage`, from: TokensFromChunks},
		{name: "unreadable usage", api: APIChat, body: finishChunk + `data: {"choices":[],"usage":{"completion_tokens":"7"}}` + "\n\n" + doneChunk,
			want:   `no_output: the stream ended with [DONE] but carried no output text: 2 events, finish_reason "stop", an unreadable usage (completion_tokens is "7", a string, not a number)`,
			finish: "stop", from: TokensFromChunks},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := chatReq()
			if tt.api == APICompletions {
				req = completionReq()
			}
			resp := newClient(t, serveSSE(t, []byte(tt.body)).URL, tt.api).Do(context.Background(), req, "")
			require.NotNil(t, resp.Err, "Do succeeded with no output")
			assert.Equal(t, ErrNoOutput, resp.Err.Kind)
			assert.Equal(t, tt.want, resp.Err.Error())
			assert.True(t, resp.FirstToken.IsZero(), "FirstToken = %v, want zero", resp.FirstToken)
			assert.Empty(t, resp.ChunkTimes)
			assert.Equal(t, tt.finish, resp.FinishReason, "the finish reason is kept")
			assert.Equal(t, tt.tokens, resp.OutputTokens, "OutputTokens")
			assert.Equal(t, tt.from, resp.TokensFrom)
			assert.False(t, resp.End.Before(resp.Sent))
		})
	}

	// Reasoning alone is output.
	body := roleChunk + `data: {"choices":[{"delta":{"reasoning_content":"hm"}}]}` + "\n\n" + finishChunk + doneChunk
	resp := newClient(t, serveSSE(t, []byte(body)).URL, APIChat).Do(context.Background(), chatReq(), "")
	require.Nil(t, resp.Err, "a reasoning-only stream")
	assert.False(t, resp.FirstToken.IsZero())
}

// TestFixturesRoleChunkIsNotOutput: llama.cpp's first chunk has a role and a
// null content; cut after it, a real capture carries no output.
func TestFixturesRoleChunkIsNotOutput(t *testing.T) {
	body := fixture(t, "chat-stream-usage.sse")
	first, _, ok := strings.Cut(string(body), "\n\n")
	require.True(t, ok)
	require.Contains(t, first, `"content":null`)
	resp := newClient(t, serveSSE(t, []byte(first+"\n\n"+doneChunk)).URL, APIChat).Do(context.Background(), chatReq(), "")
	require.NotNil(t, resp.Err)
	assert.Equal(t, ErrNoOutput, resp.Err.Kind, "error %v", resp.Err)
}

// TestDoUsageProvenance: the server's usage is believed only when it agrees
// with what the stream showed; otherwise perfgate counts chunks and says why.
// The request itself still succeeds. On the unfixed client every refused
// case here was believed (negative or huge counts reached the result), and
// the unreadable ones failed the whole request as a malformed chunk.
func TestDoUsageProvenance(t *testing.T) {
	const chunks = 5 // chatReq asks for max_tokens 12
	stream := func(usage string) string {
		var b strings.Builder
		b.WriteString(roleChunk)
		for k := range chunks {
			b.WriteString(chatChunk(fmt.Sprintf("t%d", k)))
		}
		b.WriteString(finishChunk)
		if usage != "" {
			b.WriteString(`data: {"choices":[],"usage":` + usage + "}\n\n")
		}
		b.WriteString(doneChunk)
		return b.String()
	}
	tests := []struct {
		usage   string
		refused string // UsageRefused contains; "" means believed
		prompt  int    // when believed
		output  int
	}{
		{usage: `{"prompt_tokens":5,"completion_tokens":5}`, prompt: 5, output: 5},
		{usage: `{"prompt_tokens":5,"completion_tokens":3}`, prompt: 5, output: 3}, // 3 >= 5/2: several tokens a chunk... the other way round is slack
		{usage: `{"prompt_tokens":5,"completion_tokens":12}`, prompt: 5, output: 12},
		{usage: `{"prompt_tokens":2147483647,"completion_tokens":12}`, refused: "prompt_tokens is 2147483647, more than the request's"},
		{usage: `{"completion_tokens":5}`, prompt: 0, output: 5},
		{usage: `{"prompt_tokens":null,"completion_tokens":5}`, prompt: 0, output: 5},
		{usage: `null`},
		{usage: ``},
		{usage: `{"prompt_tokens":-1000,"completion_tokens":5}`, refused: "prompt_tokens is -1000, and a count cannot be negative"},
		{usage: `{"prompt_tokens":5,"completion_tokens":-1}`, refused: "completion_tokens is -1, and a count cannot be negative"},
		{usage: `{"prompt_tokens":9000000000000000000,"completion_tokens":5}`, refused: "prompt_tokens is 9000000000000000000, more than 2147483647"},
		{usage: `{"prompt_tokens":2147483648,"completion_tokens":5}`, refused: "prompt_tokens is 2147483648, more than 2147483647"},
		{usage: `{"prompt_tokens":5,"completion_tokens":9e18}`, refused: "completion_tokens is 9e18, not a whole number"},
		{usage: `{"prompt_tokens":1e300,"completion_tokens":5}`, refused: "prompt_tokens is 1e300, not a whole number"},
		{usage: `{"prompt_tokens":5,"completion_tokens":1.5}`, refused: "completion_tokens is 1.5, not a whole number"},
		{usage: `{"prompt_tokens":5,"completion_tokens":"12"}`, refused: `completion_tokens is "12", a string, not a number`},
		{usage: `{"prompt_tokens":99999999999999999999,"completion_tokens":5}`, refused: "prompt_tokens is 99999999999999999999, past the range of a count"},
		{usage: `{"prompt_tokens":-99999999999999999999,"completion_tokens":5}`, refused: "past the range of a count"},
		{usage: `{"prompt_tokens":true,"completion_tokens":5}`, refused: "prompt_tokens is true, not a number"},
		{usage: `{"prompt_tokens":[1],"completion_tokens":{"n":5}}`, refused: "prompt_tokens is [1], not a number"},
		{usage: `5`, refused: "usage is 5, not an object"},
		{usage: `"lots"`, refused: `usage is "lots", not an object`},
		{usage: `{"prompt_tokens":5,"completion_tokens":13}`, refused: "completion_tokens is 13, more than the request's max_tokens 12"},
		{usage: `{"prompt_tokens":5,"completion_tokens":0}`, refused: "completion_tokens is 0, yet 5 chunks of output arrived"},
		{usage: `{"prompt_tokens":5,"completion_tokens":2}`, refused: "completion_tokens is 2, less than half of the 5 chunks of output that arrived"},
	}
	for _, tt := range tests {
		t.Run(tt.usage, func(t *testing.T) {
			resp := newClient(t, serveSSE(t, []byte(stream(tt.usage))).URL, APIChat).Do(context.Background(), chatReq(), "")
			require.Nil(t, resp.Err, "a usage never fails the request")
			assert.Len(t, resp.ChunkTimes, chunks)
			assert.GreaterOrEqual(t, resp.OutputTokens, 0)
			assert.GreaterOrEqual(t, resp.PromptTokens, 0)
			switch {
			case tt.refused != "":
				assert.Contains(t, resp.UsageRefused, tt.refused)
				assert.True(t, strings.HasPrefix(resp.UsageRefused, "the server's usage was refused: "), "UsageRefused = %q", resp.UsageRefused)
				assert.Equal(t, TokensFromChunks, resp.TokensFrom)
				assert.Equal(t, chunks, resp.OutputTokens, "perfgate's own count")
				assert.Equal(t, 0, resp.PromptTokens, "prompt tokens unknown")
			case tt.usage == "" || tt.usage == "null":
				assert.Empty(t, resp.UsageRefused)
				assert.Equal(t, TokensFromChunks, resp.TokensFrom)
				assert.Equal(t, chunks, resp.OutputTokens)
			default:
				assert.Empty(t, resp.UsageRefused)
				assert.Equal(t, TokensFromUsage, resp.TokensFrom)
				assert.Equal(t, tt.prompt, resp.PromptTokens)
				assert.Equal(t, tt.output, resp.OutputTokens)
			}
		})
	}
}

// TestCheckUsageNoMaxTokens: without a max_tokens only the other rules apply.
func TestCheckUsageNoMaxTokens(t *testing.T) {
	assert.Empty(t, checkUsage(usage{CompletionTokens: 5000}, 100, 0), "checkUsage(5000 tokens, 100 chunks, no max_tokens)")
	assert.Contains(t, checkUsage(usage{CompletionTokens: 49}, 100, 0), "less than half", "checkUsage(49 tokens, 100 chunks)")
	assert.Empty(t, checkUsage(usage{CompletionTokens: 50}, 100, 0), "checkUsage(50 tokens, 100 chunks)")
	assert.Empty(t, checkUsage(usage{}, 0, 12), "checkUsage(0 tokens, 0 chunks)")
}

// TestDoOutputBounded: a server that streams more output than max_tokens
// allows is cut off, rather than filling memory until the timeout. On the
// unfixed client the endless stream ran until the 10 s timeout, holding
// every chunk.
func TestDoOutputBounded(t *testing.T) {
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, chatChunk("x")); err != nil {
				return
			}
		}
	}))
	t.Cleanup(endless.Close)
	resp := newClient(t, endless.URL, APIChat).Do(context.Background(), chatReq(), "")
	require.NotNil(t, resp.Err)
	assert.Equal(t, ErrStream, resp.Err.Kind, "error %v", resp.Err)
	assert.Contains(t, resp.Err.Error(), "more output than a request with max_tokens 12 can have (88 chunks")
	assert.Len(t, resp.ChunkTimes, 2*12+outputChunkSlack)

	big := strings.Repeat("é", 40<<10) // 80 KiB in one chunk, for max_tokens 1
	req := &workload.Request{Messages: []workload.Message{{Role: "user", Content: "hi"}}, MaxTokens: 1}
	resp = newClient(t, serveSSE(t, []byte(chatChunk(big)+doneChunk)).URL, APIChat).Do(context.Background(), req, "")
	require.NotNil(t, resp.Err)
	assert.Equal(t, ErrStream, resp.Err.Kind)
	assert.Contains(t, resp.Err.Error(), "max_tokens 1")

	// Within the bounds: max_tokens of text, in as many chunks.
	var b strings.Builder
	for range 12 {
		b.WriteString(chatChunk(strings.Repeat("a", 1000)))
	}
	resp = newClient(t, serveSSE(t, []byte(b.String()+doneChunk)).URL, APIChat).Do(context.Background(), chatReq(), "")
	require.Nil(t, resp.Err)
	assert.Len(t, resp.Text, 12000)
}

func TestOutputLimits(t *testing.T) {
	tests := []struct{ maxTokens, chunks, bytes int }{
		{0, maxOutputChunks, maxOutputBytes},
		{-5, maxOutputChunks, maxOutputBytes},
		{1, 66, 1<<10 + 64<<10},
		{1000, 2064, 1000<<10 + 64<<10},
		{1 << 30, maxOutputChunks, maxOutputBytes},
	}
	for _, tt := range tests {
		c, b := outputLimits(tt.maxTokens)
		assert.Equal(t, tt.chunks, c, "outputLimits(%d) chunks", tt.maxTokens)
		assert.Equal(t, tt.bytes, b, "outputLimits(%d) bytes", tt.maxTokens)
	}
}

// TestDoFinishReasonCut: a finish_reason is kept to 64 bytes.
func TestDoFinishReasonCut(t *testing.T) {
	long := strings.Repeat("é", 100)
	body := chatChunk("a") + `data: {"choices":[{"delta":{},"finish_reason":"` + long + `"}]}` + "\n\n" + doneChunk
	resp := newClient(t, serveSSE(t, []byte(body)).URL, APIChat).Do(context.Background(), chatReq(), "")
	require.Nil(t, resp.Err)
	assert.Equal(t, long[:64], resp.FinishReason)
}

// A usage that claims more tokens than the text could hold is refused: a
// token decodes to at least a byte (bar a few special tokens), and a prompt
// is its text and a chat template.
func TestCheckUsageSize(t *testing.T) {
	tests := []struct {
		name                           string
		u                              usage
		outBytes, chunks, prompt, msgs int
		refused                        string // "" means believed
	}{
		{"plausible", usage{PromptTokens: 40, CompletionTokens: 12}, 50, 12, 160, 2, ""},
		{"one byte a token, and the slack", usage{CompletionTokens: 12 + 12 + 16}, 12, 12, 0, 0, ""},
		{"past it", usage{CompletionTokens: 12 + 12 + 17}, 12, 12, 0, 0, "completion_tokens is 41, more than the 12 bytes of output text"},
		{"255 tokens for 'hi' in two chunks", usage{CompletionTokens: 255}, 2, 2, 0, 0, "completion_tokens is 255, more than the 2 bytes"},
		{"100 times the tokens streamed", usage{CompletionTokens: 800}, 40, 8, 0, 0, "more than the 40 bytes"},
		{"a prompt and its template", usage{PromptTokens: 160 + 2*64 + 4096}, 0, 0, 160, 2, ""},
		{"a prompt past its template", usage{PromptTokens: 160 + 2*64 + 4097}, 0, 0, 160, 2, "prompt_tokens is 4385, more than the request's 160 bytes"},
		{"prompt size unknown", usage{PromptTokens: 1 << 30}, 0, 0, 0, 0, ""},
	}
	for _, tt := range tests {
		got := checkUsageSize(tt.u, tt.outBytes, tt.chunks, tt.prompt, tt.msgs)
		if tt.refused == "" {
			assert.Empty(t, got, tt.name)
		} else {
			assert.Contains(t, got, tt.refused, tt.name)
		}
	}
}
