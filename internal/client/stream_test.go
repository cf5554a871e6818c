package client

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// streamSeeds are whole streamed bodies: real captures and hostile ones.
func streamSeeds(t testing.TB) []string {
	t.Helper()
	seeds := []string{
		roleChunk + chatChunk("a") + finishChunk + usageChunk + doneChunk,
		finishChunk + usageChunk + doneChunk,
		roleChunk + chatChunk("") + finishChunk + doneChunk,
		`data: {"choices":[{"text":"x"}],"usage":{"prompt_tokens":-1000,"completion_tokens":9e18}}` + "\n\n" + doneChunk,
		`data: {"choices":[{"delta":{"reasoning":"r"}}],"usage":{"completion_tokens":"12"}}` + "\n\n" + finishChunk,
		`data: {"choices":[],"usage":5}` + "\n\n" + doneChunk,
		chatChunk("a") + "event: error\ndata: {\"message\":\"x\"}\n\n",
		chatChunk("a") + "data: {\"choices\":[\n\n",
		chatChunk("a") + chatChunk("b"),
		toolChunk(`{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":"}}`) +
			toolChunk(`{"index":0,"function":{"arguments":"1}"}}`, `{"index":1,"id":"d","function":{"name":"g","arguments":"{}"}}`) + toolFinishChunk + doneChunk,
		toolChunk(`{"id":"c","function":{"name":"f"}}`, `{"function":{"arguments":"[]"}}`) + toolFinishChunk,
		toolChunk(`{"index":3,"id":"c","type":"function"}`) + toolFinishChunk + doneChunk,
		"",
	}
	for _, name := range []string{"chat-stream-usage.sse", "completions-stream.sse", "completions-stream-midstream-error.sse"} {
		seeds = append(seeds, string(fixtureBytes(t, name)))
	}
	return seeds
}

// fixtureBytes reads a capture, or gives nothing if it is missing (the
// fixture tests report that).
func fixtureBytes(t testing.TB, name string) []byte {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(fixtureDir, name))
	return b
}

// FuzzStream reads an arbitrary body through the event reader and the
// stream accumulator, as Do does, and checks the judgement: no panic; token
// counts never negative, nor past MaxUsageTokens; FirstToken set if and only
// if output arrived, and equal to the first chunk time; no_output if and only
// if a stream that ended properly carried no output; a believed usage obeys
// the rules of UsageRefused, a refused one is replaced by the chunk count;
// output stays within outputLimits. go test -run '^$' -fuzz '^FuzzStream$'
// ./internal/client
func FuzzStream(f *testing.F) {
	for _, s := range streamSeeds(f) {
		f.Add([]byte(s), int16(12))
		f.Add([]byte(s), int16(0))
	}
	f.Fuzz(func(t *testing.T, body []byte, maxTokens int16) {
		resp := &Response{}
		er := NewEventReader(bytes.NewReader(body))
		er.maxEvent = 1 << 12
		s := newStream(resp, int(maxTokens))
		e, readErr := s.read(er, nil)
		s.close()

		if readErr != nil && !errors.Is(readErr, ErrEventTooLarge) {
			t.Fatalf("read error %v from a bytes.Reader", readErr)
		}
		if readErr != nil && e != nil {
			t.Fatalf("both a read error %v and a judgement %v", readErr, e)
		}
		if resp.OutputTokens < 0 || resp.PromptTokens < 0 || resp.OutputTokens > MaxUsageTokens || resp.PromptTokens > MaxUsageTokens {
			t.Fatalf("tokens prompt %d, output %d", resp.PromptTokens, resp.OutputTokens)
		}
		output := len(resp.ChunkTimes) > 0
		if output != (s.chunks > 0) || output == resp.FirstToken.IsZero() {
			t.Fatalf("%d chunk times, %d chunks, FirstToken %v", len(resp.ChunkTimes), s.chunks, resp.FirstToken)
		}
		if output && !resp.FirstToken.Equal(resp.ChunkTimes[0]) {
			t.Fatalf("FirstToken %v, first chunk %v", resp.FirstToken, resp.ChunkTimes[0])
		}
		properEnd := readErr == nil && (e == nil || e.Kind == ErrNoOutput) // ended with [DONE] or after a finish
		if properEnd && (e != nil) == output {
			t.Fatalf("output %v, judgement %v", output, e)
		}
		if e != nil && e.Kind == ErrNoOutput && !er.Done() && !s.finish {
			t.Fatalf("no_output for a stream that did not end properly")
		}
		if e == nil && readErr == nil && !er.Done() && !s.finish {
			t.Fatalf("success for a stream without [DONE] or finish_reason")
		}
		if e != nil {
			// "%!" is a formatting bug of perfgate's, unless the server sent
			// it (a malformed chunk is quoted).
			if msg := e.Error(); strings.Contains(msg, "%!") && !bytes.Contains(body, []byte("%!")) || !strings.HasPrefix(msg, string(e.Kind)) {
				t.Fatalf("Error() = %q", msg)
			}
		}
		switch resp.TokensFrom {
		case TokensFromUsage:
			if !s.hasUsage || resp.UsageRefused != "" {
				t.Fatalf("tokens from usage: has usage %v, refused %q", s.hasUsage, resp.UsageRefused)
			}
			if maxTokens > 0 && resp.OutputTokens > int(maxTokens) || 2*resp.OutputTokens < s.chunks || s.chunks > 0 && resp.OutputTokens == 0 {
				t.Fatalf("believed usage of %d output tokens for %d chunks, max_tokens %d", resp.OutputTokens, s.chunks, maxTokens)
			}
		case TokensFromChunks:
			if resp.OutputTokens != s.chunks || resp.PromptTokens != 0 {
				t.Fatalf("chunk count: output %d for %d chunks, prompt %d", resp.OutputTokens, s.chunks, resp.PromptTokens)
			}
			if s.hasUsage == (resp.UsageRefused == "") {
				t.Fatalf("has usage %v, refused %q", s.hasUsage, resp.UsageRefused)
			}
		default:
			t.Fatalf("TokensFrom %q", resp.TokensFrom)
		}
		chunks, text := outputLimits(int(maxTokens))
		calls := 0
		for _, tc := range resp.ToolCalls {
			calls += len(tc.Name) + len(tc.Arguments)
			if len(tc.ID) > MaxToolCallField || len(tc.Type) > MaxToolCallField || len(tc.Name) > MaxToolCallField || tc.Index < 0 || tc.Index >= MaxToolCalls {
				t.Fatalf("tool call %+v past the bounds", tc)
			}
		}
		if s.chunks > chunks || len(resp.Text)+calls > text || len(resp.FinishReason) > maxFinishReason || len(resp.ToolCalls) > MaxToolCalls {
			t.Fatalf("%d chunks, %d bytes of text and %d of tool calls, finish reason of %d bytes, %d tool calls: past the bounds",
				s.chunks, len(resp.Text), calls, len(resp.FinishReason), len(resp.ToolCalls))
		}
	})
}
