package sim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBadRequests(t *testing.T) {
	cfg := testConfig()
	cfg.KVCacheTokens = 100
	s := startSim(t, cfg)
	for _, tc := range []struct {
		name, path, body, msg string
	}{
		{"invalid JSON", "/v1/chat/completions", `{"messages":`, "invalid JSON"},
		{"not an object", "/v1/completions", `[1,2]`, "invalid JSON"},
		{"no messages", "/v1/chat/completions", `{"model":"m","max_tokens":3}`, "messages"},
		{"empty messages", "/v1/chat/completions", `{"messages":[]}`, "messages"},
		{"bad content", "/v1/chat/completions", `{"messages":[{"role":"user","content":42}]}`, "messages[0].content"},
		{"no prompt", "/v1/completions", `{"max_tokens":3}`, "prompt"},
		{"two prompts", "/v1/completions", `{"prompt":["a","b"]}`, "prompt"},
		{"zero max_tokens", "/v1/completions", `{"prompt":"hi","max_tokens":0}`, "max_tokens"},
		{"negative max_tokens", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":-1}`, "max_tokens"},
		{"n=2", "/v1/completions", `{"prompt":"hi","n":2}`, "n:"},
		{"longer than the context", "/v1/completions", `{"prompt":"a b c","max_tokens":98}`, "maximum context length is 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := httpClient.Post(s.URL()+tc.path, "application/json", strings.NewReader(tc.body))
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var e struct {
				Error apiError `json:"error"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			require.Equal(t, "BadRequestError", e.Error.Type)
			require.Equal(t, 400, e.Error.Code)
			require.Contains(t, e.Error.Message, tc.msg)
		})
	}
	// Unknown fields, ignore_eos and min_tokens are accepted.
	resp, err := httpClient.Post(s.URL()+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":"hi","max_tokens":2,"ignore_eos":true,"min_tokens":2,"temperature":0,"top_k":5,"whatever":{"x":1}}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	recs := s.records(t)
	require.Len(t, recs, 12, "every completion request has a truth record")
}

func TestInfoEndpoints(t *testing.T) {
	cfg := testConfig()
	cfg.Model = "my-model"
	cfg.Version = "1.2.3"
	s := startSim(t, cfg)

	code, _ := get(t, s.URL()+"/health")
	require.Equal(t, http.StatusOK, code)

	code, body := get(t, s.URL()+"/version")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"version":"1.2.3","engine":"perfgate-sim"}`, string(body))

	code, body = get(t, s.URL()+"/v1/models")
	require.Equal(t, http.StatusOK, code)
	var list struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &list))
	require.Equal(t, "list", list.Object)
	require.Len(t, list.Data, 1)
	require.Equal(t, "my-model", list.Data[0].ID)
	require.Equal(t, "model", list.Data[0].Object)

	resp, err := httpClient.Get(s.URL() + "/v1/chat/completions")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestNonStreaming(t *testing.T) {
	s := startSim(t, testConfig())
	for _, tc := range []struct {
		path string
		body map[string]any
	}{
		{"/v1/chat/completions", chatBody(5, 7, false)},
		{"/v1/completions", map[string]any{"prompt": nWords(5), "max_tokens": 7}},
		{"/v1/completions", map[string]any{"prompt": []int{1, 2, 3, 4, 5}, "max_tokens": 7}},
		{"/v1/chat/completions", map[string]any{"max_completion_tokens": 7, "messages": []map[string]any{
			{"role": "system", "content": "one two"},
			{"role": "user", "content": []map[string]string{{"type": "text", "text": "three four five"}}},
		}}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp := post(t, context.Background(), s.URL()+tc.path, "", tc.body)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var r struct {
				Object  string `json:"object"`
				Model   string `json:"model"`
				Choices []struct {
					Text    *string `json:"text"`
					Message *struct {
						Role    string `json:"role"`
						Content string `json:"content"`
					} `json:"message"`
					FinishReason string `json:"finish_reason"`
				} `json:"choices"`
				Usage usage `json:"usage"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
			require.Equal(t, "perfgate-sim-8b", r.Model)
			require.Len(t, r.Choices, 1)
			require.Equal(t, "length", r.Choices[0].FinishReason)
			var text string
			if strings.Contains(tc.path, "chat") {
				require.Equal(t, "chat.completion", r.Object)
				require.Equal(t, "assistant", r.Choices[0].Message.Role)
				text = r.Choices[0].Message.Content
			} else {
				require.Equal(t, "text_completion", r.Object)
				text = *r.Choices[0].Text
			}
			require.Len(t, strings.Fields(text), 7, "one word per token: %q", text)
			require.Equal(t, usage{PromptTokens: 5, CompletionTokens: 7, TotalTokens: 12}, r.Usage)
		})
	}
}

func TestStreamFraming(t *testing.T) {
	s := startSim(t, testConfig())
	for _, tc := range []struct {
		name  string
		chat  bool
		usage bool
	}{
		{"chat with usage", true, true},
		{"chat", true, false},
		{"completions with usage", false, true},
		{"completions", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const words, tokens = 6, 5
			path, body := "/v1/completions", map[string]any{"prompt": nWords(words), "max_tokens": tokens, "stream": true}
			if tc.chat {
				path, body = "/v1/chat/completions", chatBody(words, tokens, true)
				delete(body, "stream_options")
			}
			if tc.usage {
				body["stream_options"] = map[string]any{"include_usage": true}
			}
			resp := post(t, context.Background(), s.URL()+path, "frame-"+tc.name, body)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
			require.Equal(t, "frame-"+tc.name, resp.Header.Get("X-Request-Id"))
			events := readSSE(t, resp.Body)

			require.Equal(t, "[DONE]", events[len(events)-1].data, "last event")
			events = events[:len(events)-1]
			if tc.chat {
				c := parseChunk(t, events[0].data)
				require.Equal(t, "chat.completion.chunk", c.Object)
				require.Equal(t, "assistant", *c.Choices[0].Delta.Role, "first chunk carries the role")
				require.Equal(t, "", *c.Choices[0].Delta.Content, "first chunk carries no content")
				events = events[1:]
			}
			if tc.usage {
				c := parseChunk(t, events[len(events)-1].data)
				require.Empty(t, c.Choices)
				require.Equal(t, &usage{PromptTokens: words, CompletionTokens: tokens, TotalTokens: words + tokens}, c.Usage)
				events = events[:len(events)-1]
			}
			final := parseChunk(t, events[len(events)-1].data)
			require.Equal(t, "length", *final.Choices[0].FinishReason)
			require.Empty(t, final.contentText())
			events = events[:len(events)-1]
			require.Len(t, events, tokens, "one chunk per token")
			for i, e := range events {
				c := parseChunk(t, e.data)
				require.NotEmpty(t, c.contentText(), "token chunk %d", i)
				require.Nil(t, c.Choices[0].FinishReason, "token chunk %d", i)
				require.Nil(t, c.Usage)
				if !tc.chat {
					require.Equal(t, "text_completion", c.Object)
				}
			}
		})
	}
}

func TestErrorRateOne(t *testing.T) {
	cfg := testConfig()
	cfg.ErrorRate = 1
	s := startSim(t, cfg)
	kinds := map[string]int{}
	for range 12 {
		resp := post(t, context.Background(), s.URL()+"/v1/chat/completions", "", chatBody(3, 8, true))
		switch resp.StatusCode {
		case http.StatusInternalServerError:
			var e struct {
				Error apiError `json:"error"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			require.Equal(t, 500, e.Error.Code)
			require.NotEmpty(t, e.Error.Message)
			kinds["http"]++
		case http.StatusOK:
			events := readSSE(t, resp.Body)
			last := events[len(events)-1].data
			require.NotEqual(t, "[DONE]", last)
			c := parseChunk(t, last)
			require.NotNil(t, c.Error, "last event %q is an error", last)
			require.Equal(t, 500, c.Error.Code)
			for _, e := range events[:len(events)-1] {
				require.Nil(t, parseChunk(t, e.data).Error)
			}
			kinds["stream"]++
		default:
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		resp.Body.Close()
	}
	require.Positive(t, kinds["http"], "HTTP 500s")
	require.Positive(t, kinds["stream"], "mid-stream errors")
	for id, r := range s.records(t) {
		require.NotEmpty(t, r.Error, "truth record %s", id)
		require.Empty(t, r.FinishReason, "truth record %s", id)
	}
}
