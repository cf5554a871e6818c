package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/workload"
)

// fixtureDir holds real captures from llama.cpp (see its README).
const fixtureDir = "../../testdata/captures/llamacpp"

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatalf("fixture %s: %v (the real captures live in testdata/captures/llamacpp at the repository root)", name, err)
	}
	return b
}

// serveSSE serves body as an event stream, one write and flush per event,
// as a real server does.
func serveSSE(t *testing.T, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, part := range bytes.SplitAfter(body, []byte("\n\n")) {
			_, _ = w.Write(part)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// serveCapture replays a captured status line, headers and body.
func serveCapture(t *testing.T, headers, body []byte) *httptest.Server {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(headers))
	require.True(t, sc.Scan(), "status line")
	f := strings.Fields(sc.Text())
	require.GreaterOrEqual(t, len(f), 2, "status line %q", sc.Text())
	status, err := strconv.Atoi(f[1])
	require.NoError(t, err)
	h := http.Header{}
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			h.Add(k, strings.TrimSpace(v))
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for k, v := range h {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newClient(t *testing.T, baseURL string, api API) *Client {
	t.Helper()
	c, err := New(Options{BaseURL: baseURL, API: api, Model: "m", MaxConns: 4, Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func chatReq() *workload.Request {
	return &workload.Request{ID: "q1", Messages: []workload.Message{{Role: "user", Content: "hi"}}, MaxTokens: 12}
}

func completionReq() *workload.Request {
	return &workload.Request{ID: "q1", Prompt: "hi", MaxTokens: 12}
}

// expectedText decodes a capture independently of the client: the
// concatenated content (chat) or text (completions) of its chunks, and the
// number of chunks that carried any.
func expectedText(t *testing.T, sse []byte) (string, int) {
	t.Helper()
	var text strings.Builder
	n := 0
	for _, line := range strings.Split(string(sse), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &v), "capture line %q", line)
		choices, _ := v["choices"].([]any)
		if len(choices) == 0 {
			continue
		}
		c := choices[0].(map[string]any)
		s, _ := c["text"].(string)
		if d, ok := c["delta"].(map[string]any); ok {
			s, _ = d["content"].(string)
		}
		if s != "" {
			n++
			text.WriteString(s)
		}
	}
	return text.String(), n
}

// knownFixtures are the captures tested here by name; every other .sse file
// in the directory still gets the generic checks of TestFixturesAllParse.
var knownFixtures = map[string]string{
	"chat-stream-usage.sse":                  "TestFixtureChatStreamUsage",
	"chat-stream-no-usage.sse":               "TestFixtureChatStreamNoUsage",
	"completions-stream.sse":                 "TestFixtureCompletionsStream",
	"completions-stream-midstream-error.sse": "TestFixtureMidstreamError",
	"completions-error-400.json":             "TestFixtureHTTP400",
	"chat-error-400.headers":                 "TestFixtureHTTP400 (its headers: Content-Length matches completions-error-400.json)",
	"completions-error-400.headers":          "TestFixtureHTTP400",
	"chat-nonstream.json":                    "TestFixtureNonStreamed",
	"models.json":                            "TestFixtureListModels",
	"metrics.prom":                           "not the client's: /metrics",
	"health.json":                            "not the client's: /health",
	"props.json":                             "not the client's: /props",
}

// TestFixturesAllParse reads every capture's events directly and checks what
// holds for any stream: the reader never fails, every event is a JSON object,
// and the stream ends with [DONE] unless its last event is an error.
func TestFixturesAllParse(t *testing.T) {
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatalf("fixtures: %v (the real captures live in testdata/captures/llamacpp at the repository root)", err)
	}
	nsse := 0
	for _, e := range entries {
		name := e.Name()
		if _, ok := knownFixtures[name]; !ok && name != "README.md" {
			t.Logf("capture %s is not named in knownFixtures: only generic checks apply", name)
		}
		if !strings.HasSuffix(name, ".sse") {
			continue
		}
		nsse++
		t.Run(name, func(t *testing.T) {
			evs, r, err := readAll(t, bytes.NewReader(fixture(t, name)))
			require.NoError(t, err)
			require.NotEmpty(t, evs)
			for i, e := range evs {
				assert.Empty(t, e.Name, "event %d name", i)
				assert.True(t, json.Valid(e.Data) && e.Data[0] == '{', "event %d is not a JSON object: %.80q", i, e.Data)
			}
			last := evs[len(evs)-1]
			isErr := bytes.HasPrefix(last.Data, []byte(`{"error"`))
			assert.Equal(t, !isErr, r.Done(), "ends with [DONE] unless it ends with an error event")
		})
	}
	assert.GreaterOrEqual(t, nsse, 4, "expected the four llama.cpp stream captures")
}

func TestFixtureChatStreamUsage(t *testing.T) {
	body := fixture(t, "chat-stream-usage.sse")
	wantText, wantChunks := expectedText(t, body)
	require.Equal(t, 12, wantChunks)

	c := newClient(t, serveSSE(t, body).URL, APIChat)
	var times []time.Time
	c.eventHook = func(_ Event, at time.Time) { times = append(times, at) }
	resp := c.Do(context.Background(), chatReq(), "r-1")

	require.Nil(t, resp.Err)
	// Events: role, 12 tokens, finish, usage.
	require.Len(t, times, 15)
	assert.Len(t, resp.ChunkTimes, 12)
	assert.Equal(t, times[1:13], resp.ChunkTimes, "chunk times are the read times of the 12 content events")
	assert.Equal(t, times[1], resp.FirstToken, "FirstToken is the first content event, not the role-only chunk")
	assert.True(t, resp.FirstToken.After(times[0]), "FirstToken %v after the role chunk %v", resp.FirstToken, times[0])
	assert.Equal(t, 43, resp.PromptTokens)
	assert.Equal(t, 12, resp.OutputTokens)
	assert.Equal(t, TokensFromUsage, resp.TokensFrom)
	assert.Equal(t, "length", resp.FinishReason)
	assert.Equal(t, wantText, resp.Text)
	assert.Contains(t, resp.Text, "\v", `the "\u000b" token is content`)
	assert.Equal(t, "r-1", resp.RequestID)
	assertOrdered(t, resp)
}

func TestFixtureChatStreamNoUsage(t *testing.T) {
	body := fixture(t, "chat-stream-no-usage.sse")
	wantText, wantChunks := expectedText(t, body)
	require.Equal(t, 8, wantChunks)

	resp := newClient(t, serveSSE(t, body).URL, APIChat).Do(context.Background(), chatReq(), "r-2")
	require.Nil(t, resp.Err)
	assert.Len(t, resp.ChunkTimes, 8)
	assert.Equal(t, 8, resp.OutputTokens, "counted chunks")
	assert.Equal(t, 0, resp.PromptTokens)
	assert.Equal(t, TokensFromChunks, resp.TokensFrom)
	assert.Equal(t, "length", resp.FinishReason)
	assert.Equal(t, wantText, resp.Text)
	assertOrdered(t, resp)
}

func TestFixtureCompletionsStream(t *testing.T) {
	body := fixture(t, "completions-stream.sse")
	wantText, wantChunks := expectedText(t, body)
	require.Equal(t, 8, wantChunks)

	resp := newClient(t, serveSSE(t, body).URL, APICompletions).Do(context.Background(), completionReq(), "r-3")
	require.Nil(t, resp.Err)
	assert.Len(t, resp.ChunkTimes, 8, `the finish chunk's "text":"" is not a token`)
	assert.Equal(t, 6, resp.PromptTokens, "usage on the last chunk without include_usage")
	assert.Equal(t, 8, resp.OutputTokens)
	assert.Equal(t, TokensFromUsage, resp.TokensFrom)
	assert.Equal(t, "length", resp.FinishReason)
	assert.Equal(t, wantText, resp.Text)
	assert.Equal(t, "vCollectCaroffs него intel viewed)-", resp.Text)
	assertOrdered(t, resp)
}

func TestFixtureMidstreamError(t *testing.T) {
	body := fixture(t, "completions-stream-midstream-error.sse")
	wantText, wantChunks := expectedText(t, body)
	require.Equal(t, 54, wantChunks)

	resp := newClient(t, serveSSE(t, body).URL, APICompletions).Do(context.Background(), completionReq(), "r-4")
	require.NotNil(t, resp.Err)
	assert.Equal(t, ErrStream, resp.Err.Kind)
	assert.Equal(t, "The model produced output that does not match the expected Content-only format", resp.Err.Message)
	assert.Equal(t, "stream: The model produced output that does not match the expected Content-only format", resp.Err.Error())
	// What was read before the error is kept.
	assert.Len(t, resp.ChunkTimes, 54)
	assert.Equal(t, wantText, resp.Text)
	assert.Equal(t, 54, resp.OutputTokens)
	assert.Equal(t, TokensFromChunks, resp.TokensFrom)
	assertOrdered(t, resp)
}

func TestFixtureHTTP400(t *testing.T) {
	body := fixture(t, "completions-error-400.json")
	// The README names completions-error-400.headers; the directory has
	// chat-error-400.headers, whose Content-Length is this body's length.
	var headers []byte
	for _, name := range []string{"completions-error-400.headers", "chat-error-400.headers"} {
		if b, err := os.ReadFile(filepath.Join(fixtureDir, name)); err == nil {
			headers = b
			break
		}
	}
	require.NotNil(t, headers, "no headers capture for completions-error-400.json")
	require.Contains(t, string(headers), "Content-Length: "+strconv.Itoa(len(body)))

	resp := newClient(t, serveCapture(t, headers, body).URL, APICompletions).Do(context.Background(), completionReq(), "r-5")
	require.NotNil(t, resp.Err)
	want := "request (3002 tokens) exceeds the available context size (2048 tokens), try increasing it"
	assert.Equal(t, ErrHTTP, resp.Err.Kind)
	assert.Equal(t, 400, resp.Err.Status)
	assert.Equal(t, want, resp.Err.Message)
	assert.Equal(t, "http 400: "+want, resp.Err.Error())
	assert.Empty(t, resp.ChunkTimes)
	assert.True(t, resp.FirstToken.IsZero())
	assert.False(t, resp.Sent.After(resp.End))
}

func TestFixtureNonStreamed(t *testing.T) {
	body := fixture(t, "chat-nonstream.json")
	headers := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n\r\n")
	resp := newClient(t, serveCapture(t, headers, body).URL, APIChat).Do(context.Background(), chatReq(), "r-6")
	require.NotNil(t, resp.Err)
	assert.Equal(t, ErrStream, resp.Err.Kind)
	assert.Contains(t, resp.Err.Error(), "server did not stream")
}

func TestFixtureListModels(t *testing.T) {
	body := fixture(t, "models.json")
	var gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath = r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	ids, err := newClient(t, srv.URL, APIChat).ListModels(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"tiny-llama-small"}, ids)
	assert.Equal(t, "/v1/models", gotPath)
}

// assertOrdered checks Sent <= FirstToken <= every chunk time <= End.
func assertOrdered(t *testing.T, resp *Response) {
	t.Helper()
	require.False(t, resp.Sent.IsZero(), "Sent is set")
	require.False(t, resp.End.IsZero(), "End is set")
	if !resp.FirstToken.IsZero() {
		assert.False(t, resp.FirstToken.Before(resp.Sent), "FirstToken %v before Sent %v", resp.FirstToken, resp.Sent)
		assert.False(t, resp.End.Before(resp.FirstToken), "End before FirstToken")
		assert.Equal(t, resp.FirstToken, resp.ChunkTimes[0])
	}
	for i := 1; i < len(resp.ChunkTimes); i++ {
		assert.False(t, resp.ChunkTimes[i].Before(resp.ChunkTimes[i-1]), "chunk %d before chunk %d", i, i-1)
	}
	if n := len(resp.ChunkTimes); n > 0 {
		assert.False(t, resp.End.Before(resp.ChunkTimes[n-1]), "End before the last chunk")
	}
}
