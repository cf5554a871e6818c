package client

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func reasoningChunk(text string) string {
	return `data: {"choices":[{"index":0,"delta":{"reasoning_content":"` + text + `"}}]}` + "\n\n"
}

// Reasoning is timed apart from the answer: FirstToken is the first thought,
// FirstAnswer the first word of the answer; the reasoning tokens come from
// the usage's completion_tokens_details where it has them, else from the
// chunks that carried reasoning.
func TestDoReasoningApart(t *testing.T) {
	tests := []struct {
		name          string
		body          string
		answer        bool // a FirstAnswer
		chunks        int
		reasoning     int
		tokens        int
		from          TokenSource
		finish        string
		firstIsAnswer bool
	}{
		{name: "thoughts then an answer, usage with details",
			body: reasoningChunk("hm") + reasoningChunk(" so") + chatChunk("Yes") + chatChunk(".") + finishChunk +
				`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":6}}}` + "\n\n" + doneChunk,
			answer: true, chunks: 2, reasoning: 6, tokens: 9, from: TokensFromUsage, finish: "stop"},
		{name: "no details: the reasoning chunks",
			body:   reasoningChunk("hm") + reasoningChunk(" so") + chatChunk("Yes") + finishChunk + usageChunk + doneChunk,
			answer: true, chunks: 2, reasoning: 2, tokens: 3, from: TokensFromUsage, finish: "stop"},
		{name: "details past completion_tokens: the chunks",
			body: reasoningChunk("hm") + chatChunk("Yes") + finishChunk +
				`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":7}}}` + "\n\n" + doneChunk,
			answer: true, chunks: 1, reasoning: 1, tokens: 2, from: TokensFromUsage, finish: "stop"},
		{name: "a reasoning-only answer cut by max_tokens",
			body:   reasoningChunk("hm") + reasoningChunk(" so") + `data: {"choices":[{"index":0,"finish_reason":"length","delta":{}}]}` + "\n\n" + doneChunk,
			answer: false, chunks: 2, reasoning: 2, tokens: 2, from: TokensFromChunks, finish: "length"},
		{name: "more reasoning chunks than the usage's tokens: capped",
			body: strings.Repeat(reasoningChunk("h"), 10) + chatChunk("Y") + finishChunk +
				`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":6}}` + "\n\n" + doneChunk,
			answer: true, chunks: 10, reasoning: 6, tokens: 6, from: TokensFromUsage, finish: "stop"},
		{name: "no reasoning: the first answer is the first token",
			body:   chatChunk("Yes") + chatChunk(".") + finishChunk + doneChunk,
			answer: true, chunks: 0, reasoning: 0, tokens: 2, from: TokensFromChunks, finish: "stop", firstIsAnswer: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := newClient(t, serveSSE(t, []byte(tt.body)).URL, APIChat).Do(context.Background(), chatReq(), "")
			require.Nil(t, resp.Err)
			assert.Equal(t, tt.chunks, resp.ReasoningChunks)
			assert.Equal(t, tt.reasoning, resp.ReasoningTokens)
			assert.Equal(t, tt.tokens, resp.OutputTokens)
			assert.Equal(t, tt.from, resp.TokensFrom)
			assert.Equal(t, tt.finish, resp.FinishReason)
			assert.Equal(t, tt.answer, !resp.FirstAnswer.IsZero())
			if tt.answer {
				// The reasoning chunks come first: the answer's is the next.
				require.Greater(t, len(resp.ChunkTimes), tt.chunks)
				assert.Equal(t, resp.ChunkTimes[tt.chunks], resp.FirstAnswer)
				if tt.firstIsAnswer {
					assert.Equal(t, resp.FirstToken, resp.FirstAnswer)
				}
			}
		})
	}
}
