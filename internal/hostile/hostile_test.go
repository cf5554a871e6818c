package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// testTimeout bounds every read a test makes of a server.
const testTimeout = 10 * time.Second

// chatBody is a streaming chat request for maxTokens (0: none) with the
// given user text.
func chatBody(text string, maxTokens int) string {
	b, _ := json.Marshal(map[string]any{
		"model":          "hostile-model",
		"messages":       []map[string]string{{"role": "system", "content": "be brief"}, {"role": "user", "content": text}},
		"max_tokens":     maxTokens,
		"stream":         true,
		"stream_options": map[string]bool{"include_usage": true},
	})
	return string(b)
}

func completionsBody(prompt string, maxTokens int) string {
	b, _ := json.Marshal(map[string]any{
		"model": "hostile-model", "prompt": prompt, "max_tokens": maxTokens,
		"stream": true, "stream_options": map[string]bool{"include_usage": true},
	})
	return string(b)
}

// client is a plain net/http client that never follows redirects.
func client() *http.Client {
	return &http.Client{
		Timeout:       testTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// post sends body to path and returns the response, its body unread.
func post(t *testing.T, c *http.Client, url, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func get(t *testing.T, c *http.Client, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readEvents reads a whole SSE body into the data of its events; err is
// how the body ended (nil for a clean end).
func readEvents(body io.Reader) (events []string, err error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				events = append(events, strings.Join(data, "\n"))
				data = nil
			}
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		}
	}
	return events, sc.Err()
}

// chunk is what the tests read of a streamed chunk.
type chunk struct {
	Choices []struct {
		Delta struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     json.Number `json:"prompt_tokens"`
		CompletionTokens json.Number `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// summary is what a stream said.
type summary struct {
	roles, contents  int
	text             string
	finish           string
	prompt, complete string // usage, as written
	errorMsg         string
	malformed        int
	done             bool
}

func summarise(t *testing.T, events []string) summary {
	t.Helper()
	var s summary
	for _, e := range events {
		if e == "[DONE]" {
			s.done = true
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			s.malformed++
			continue
		}
		if c.Error != nil {
			s.errorMsg = c.Error.Message
		}
		if c.Usage != nil {
			s.prompt, s.complete = c.Usage.PromptTokens.String(), c.Usage.CompletionTokens.String()
		}
		for _, ch := range c.Choices {
			if ch.Delta.Role != nil {
				s.roles++
				continue
			}
			if ch.FinishReason != nil {
				s.finish = *ch.FinishReason
				continue
			}
			switch {
			case ch.Delta.Content != nil:
				s.contents++
				s.text += *ch.Delta.Content
			case ch.Text != nil:
				s.contents++
				s.text += *ch.Text
			}
		}
	}
	return s
}

// stream posts a chat request in the server's mode and summarises the
// answer, which must be a 200 event stream.
func stream(t *testing.T, s *Server, maxTokens int) (summary, error) {
	t.Helper()
	resp := post(t, client(), s.URL+"/v1/chat/completions", chatBody("hello there", maxTokens))
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("POST /v1/chat/completions = %s %q, want 200 text/event-stream", resp.Status, resp.Header.Get("Content-Type"))
	}
	events, err := readEvents(resp.Body)
	return summarise(t, events), err
}

func TestHealthyStreams(t *testing.T) {
	s := Start(t, Options{Tokens: 5})
	tests := []struct {
		name, path, body string
		roles, tokens    int
		finish, prompt   string
	}{
		// The prompt's tokens are its words: "be brief" and the user's.
		{"chat", "/v1/chat/completions", chatBody("one two three", 0), 1, 5, "stop", "5"},
		{"chat max_tokens", "/v1/chat/completions", chatBody("one two three", 3), 1, 3, "length", "5"},
		{"completions", "/v1/completions", completionsBody("one two three", 0), 0, 5, "stop", "3"},
		{"completions max_tokens", "/v1/completions", completionsBody("one two three", 2), 0, 2, "length", "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, client(), s.URL+tt.path, tt.body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("POST %s = %s, want 200", tt.path, resp.Status)
			}
			events, err := readEvents(resp.Body)
			if err != nil {
				t.Fatalf("read the stream: %v", err)
			}
			got := summarise(t, events)
			want := summary{roles: tt.roles, contents: tt.tokens, finish: tt.finish, prompt: tt.prompt, complete: fmt.Sprint(tt.tokens), done: true}
			want.text = got.text // checked apart
			if got != want {
				t.Errorf("stream = %+v, want %+v", got, want)
			}
			if len(strings.Fields(got.text)) != tt.tokens {
				t.Errorf("text %q has %d words, want %d", got.text, len(strings.Fields(got.text)), tt.tokens)
			}
		})
	}
}

func TestHealthyEndpoints(t *testing.T) {
	s := Start(t, Options{Model: "m-1", Version: "1.2.3"})
	c := client()

	if resp := get(t, c, s.URL+"/health"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /health = %s, want 200", resp.Status)
	}

	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(get(t, c, s.URL+"/v1/models").Body).Decode(&models); err != nil || len(models.Data) != 1 || models.Data[0].ID != "m-1" {
		t.Errorf("GET /v1/models = %+v (%v), want the one model m-1", models, err)
	}

	var version map[string]string
	if err := json.NewDecoder(get(t, c, s.URL+"/version").Body).Decode(&version); err != nil ||
		version["version"] != "1.2.3" || version["engine"] != "hostile" {
		t.Errorf("GET /version = %v (%v), want version 1.2.3, engine hostile", version, err)
	}
	for _, p := range []string{"/props", "/info", "/get_server_info"} {
		if resp := get(t, c, s.URL+p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %s, want 404 (only /version says what the server is)", p, resp.Status)
		}
	}

	// A completion first, so that the page has counted something.
	if _, err := stream(t, s, 0); err != nil {
		t.Fatal(err)
	}
	resp := get(t, c, s.URL+"/metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics is not Prometheus text: %v", err)
	}
	for _, name := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
		"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:num_preemptions_total"} {
		if families[name] == nil {
			t.Errorf("GET /metrics has no %s", name)
		}
	}
	if f := families["vllm:generation_tokens_total"]; f != nil {
		if got := f.GetMetric()[0].GetCounter().GetValue(); got != 8 {
			t.Errorf("vllm:generation_tokens_total = %v after one answer of 8 tokens, want 8", got)
		}
	}

	// A request that does not stream is refused.
	resp = post(t, c, s.URL+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"stream":false}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a non-streaming request = %s, want 400", resp.Status)
	}
}

func TestCounters(t *testing.T) {
	s := Start(t, Options{})
	c := client()
	for _, text := range []string{"first prompt", "second prompt", "first prompt"} {
		resp := post(t, c, s.URL+"/v1/chat/completions", chatBody(text, 0), "Authorization", "Bearer key-1")
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get(t, c, s.URL+"/health").Body.Close()

	if got := s.Requests("/v1/chat/completions"); got != 3 {
		t.Errorf("Requests(chat) = %d, want 3", got)
	}
	if got := s.Requests(""); got != 4 {
		t.Errorf("Requests(\"\") = %d, want 4", got)
	}
	// One client, one request at a time: one kept-alive connection.
	if got := s.Connections(); got != 1 {
		t.Errorf("Connections() = %d, want 1", got)
	}
	if got := s.RequestsPerConnection(); len(got) != 1 || got[0] != 4 {
		t.Errorf("RequestsPerConnection() = %v, want [4]", got)
	}
	if got := s.Reused(); got != 3 {
		t.Errorf("Reused() = %d, want 3", got)
	}
	prompts := s.Prompts()
	if len(prompts) != 3 || prompts[0] != "be brief\nfirst prompt" {
		t.Errorf("Prompts() = %q, want 3 starting with %q", prompts, "be brief\nfirst prompt")
	}
	if got := s.RepeatedPrompts(); len(got) != 1 || got[0] != "be brief\nfirst prompt" {
		t.Errorf("RepeatedPrompts() = %q, want the first prompt", got)
	}
	if got := s.Authorizations(); len(got) != 3 || got[0] != "Bearer key-1" {
		t.Errorf("Authorizations() = %q, want 3 of Bearer key-1", got)
	}
	log := s.Log()
	if len(log) != 4 || log[3].Path != "/health" || log[3].Conn != 1 || !log[3].Reused || log[0].Reused || log[0].Mode != Healthy {
		t.Errorf("Log() = %+v, want 4 requests on connection 1, all but the first reused", log)
	}
	if got := s.Elsewhere.Requests(""); got != 0 {
		t.Errorf("Elsewhere.Requests() = %d in Healthy mode, want 0", got)
	}
}

func TestOutputModes(t *testing.T) {
	tests := []struct {
		mode Mode
		want summary
	}{
		// Only a finish chunk and a usage chunk that claims tokens.
		{NoOutput, summary{finish: "stop", prompt: "4", complete: "4", done: true}},
		// Empty deltas only: four of them, and usage that claims four tokens.
		{EmptyContent, summary{roles: 1, contents: 4, finish: "stop", prompt: "4", complete: "4", done: true}},
		{HugeUsage, summary{roles: 1, contents: 4, finish: "stop", prompt: "4", complete: "9000000000000000000", done: true}},
		{NegativeUsage, summary{roles: 1, contents: 4, finish: "stop", prompt: "4", complete: "-1000", done: true}},
		{InflatedUsage, summary{roles: 1, contents: 4, finish: "stop", prompt: "4", complete: "400", done: true}},
		// A chunk that is not JSON after the second token; the rest as usual.
		{MalformedChunk, summary{roles: 1, contents: 4, malformed: 1, finish: "stop", prompt: "4", complete: "4", done: true}},
		// Two tokens, then an error as data, and no [DONE].
		{ErrorEvent, summary{roles: 1, contents: 2, errorMsg: ErrorEventMessage}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			s := Start(t, Options{Mode: tt.mode, Tokens: 4})
			got, err := stream(t, s, 0)
			if err != nil {
				t.Fatalf("read the stream: %v", err)
			}
			tt.want.text = got.text
			if got != tt.want {
				t.Errorf("%s stream = %+v, want %+v", tt.mode, got, tt.want)
			}
			hasText := strings.TrimSpace(got.text) != ""
			if wantText := tt.mode != NoOutput && tt.mode != EmptyContent; hasText != wantText {
				t.Errorf("%s stream text = %q, want text: %v", tt.mode, got.text, wantText)
			}
		})
	}
}

// TestTruncated: a few tokens, then the connection is cut: the body ends
// in an error, never cleanly.
func TestTruncated(t *testing.T) {
	s := Start(t, Options{Mode: Truncated})
	got, err := stream(t, s, 0)
	if err == nil || got.done || got.contents != 2 {
		t.Errorf("Truncated stream = %+v, %v; want 2 tokens, no [DONE], and a read error", got, err)
	}
}

func TestStatus(t *testing.T) {
	for _, tt := range []struct {
		opts       Options
		wantStatus int
		wantMsg    string
	}{
		{Options{Mode: Status}, 400, DefaultStatusMessage},
		{Options{Mode: Status, Status: 503, StatusMessage: "overloaded"}, 503, "overloaded"},
	} {
		s := Start(t, tt.opts)
		resp := post(t, client(), s.URL+"/v1/chat/completions", chatBody("hi", 0))
		var body struct {
			Error struct{ Message string } `json:"error"`
		}
		err := json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != tt.wantStatus || err != nil || body.Error.Message != tt.wantMsg {
			t.Errorf("Status(%d) answered %s %+v (%v), want %d %q", tt.opts.Status, resp.Status, body, err, tt.wantStatus, tt.wantMsg)
		}
	}
}

// readAtLeast reads n bytes of r, failing the test if r ends first.
func readAtLeast(t *testing.T, r io.Reader, n int) []byte {
	t.Helper()
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatalf("the endless answer ended after less than %d bytes: %v", n, err)
	}
	return buf
}

// waitHandlersEnd polls until no completion is being answered: a handler
// whose client has gone away ends.
func waitHandlersEnd(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for s.inflight.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a handler still runs %s after its client went away", testTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEndlessStreams(t *testing.T) {
	const enough = 4 << 20 // well past any one event a client should hold
	tests := []struct {
		mode  Mode
		check func(t *testing.T, got []byte)
	}{
		{EndlessEvent, func(t *testing.T, got []byte) {
			if bytes.Contains(got, []byte("\n\n")) {
				t.Errorf("EndlessEvent ended an event with a blank line")
			}
			for line := range strings.Lines(string(got[:len(got)-2048])) {
				if !strings.HasPrefix(line, "data: ") {
					t.Fatalf("EndlessEvent line %.40q is not a data: line", line)
				}
			}
		}},
		{EndlessLine, func(t *testing.T, got []byte) {
			if !bytes.HasPrefix(got, []byte("data: ")) || bytes.IndexByte(got, '\n') >= 0 {
				t.Errorf("EndlessLine sent %.40q...: want one data: line with no end", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			s := Start(t, Options{Mode: tt.mode})
			resp := post(t, client(), s.URL+"/v1/chat/completions", chatBody("hi", 0))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("POST = %s, want 200", resp.Status)
			}
			tt.check(t, readAtLeast(t, resp.Body, enough))
			resp.Body.Close()
			waitHandlersEnd(t, s)
		})
	}
}

func TestEndlessComments(t *testing.T) {
	s := Start(t, Options{Mode: EndlessComments, KeepAliveEvery: time.Millisecond})
	resp := post(t, client(), s.URL+"/v1/chat/completions", chatBody("hi", 0))
	sc := bufio.NewScanner(resp.Body)
	for i := 0; i < 200; i++ {
		if !sc.Scan() {
			t.Fatalf("EndlessComments ended after %d lines: %v", i, sc.Err())
		}
		if line := sc.Text(); line != ": keep-alive" && line != "" {
			t.Fatalf("EndlessComments line %d = %q, want only comments", i, line)
		}
	}
	resp.Body.Close()
	waitHandlersEnd(t, s)
}

// TestCaps: an endless answer is cut at CapBytes and at CapTime, never
// ended cleanly, whatever the client does.
func TestCaps(t *testing.T) {
	t.Run("bytes", func(t *testing.T) {
		s := Start(t, Options{Mode: EndlessEvent, CapBytes: 1 << 20})
		resp := post(t, client(), s.URL+"/v1/chat/completions", chatBody("hi", 0))
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil || n < 1<<20 || n > 1<<20+pourPiece {
			t.Errorf("EndlessEvent with CapBytes 1 MiB sent %d bytes, ending %v; want a cut just past 1 MiB", n, err)
		}
	})
	t.Run("time", func(t *testing.T) {
		s := Start(t, Options{Mode: EndlessComments, CapTime: 100 * time.Millisecond, KeepAliveEvery: 10 * time.Millisecond})
		resp := post(t, client(), s.URL+"/v1/chat/completions", chatBody("hi", 0))
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil {
			t.Errorf("EndlessComments with CapTime 100ms ended cleanly after %d bytes, want a cut", n)
		}
	})
}

// rawConn dials s and returns the connection and a reader of it, both
// bounded by testTimeout.
func rawConn(t *testing.T, s *Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(testTimeout))
	return conn, bufio.NewReader(conn)
}

func rawRequest(method, path, body string) string {
	return fmt.Sprintf("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		method, path, len(body), body)
}

func TestHugeHeaders(t *testing.T) {
	s := Start(t, Options{Mode: HugeHeaders})
	conn, r := rawConn(t, s)
	if _, err := io.WriteString(conn, rawRequest("POST", "/v1/chat/completions", chatBody("hi", 0))); err != nil {
		t.Fatal(err)
	}
	// The header block, to its blank line.
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			n += len(line)
			continue
		}
		if err != nil {
			t.Fatalf("reading the header after %d bytes: %v", n, err)
		}
		n += len(line)
		if string(line) == "\r\n" {
			break
		}
	}
	if n <= 1<<20 {
		t.Errorf("HugeHeaders sent %d bytes of header, want more than 1 MiB", n)
	}
	// The stream after it is a healthy one.
	c := client()
	resp := post(t, c, s.URL+"/v1/chat/completions", chatBody("hi", 0))
	if got := len(resp.Header.Get("X-Hostile-Padding")); got != HugeHeaderBytes {
		t.Errorf("X-Hostile-Padding has %d bytes, want %d", got, HugeHeaderBytes)
	}
	events, err := readEvents(resp.Body)
	if got := summarise(t, events); err != nil || !got.done || got.contents != 8 {
		t.Errorf("the stream after the huge header = %+v (%v), want a healthy one", got, err)
	}
	// Other paths are left alone.
	if got := len(get(t, c, s.URL+"/health").Header.Get("X-Hostile-Padding")); got != 0 {
		t.Errorf("/health has a %d-byte padding header, want none", got)
	}
}

func TestHugeErrorBody(t *testing.T) {
	s := Start(t, Options{Mode: HugeErrorBody})
	resp := post(t, client(), s.URL+"/v1/chat/completions", chatBody("hi", 0))
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("HugeErrorBody = %s, want 500", resp.Status)
	}
	got := readAtLeast(t, resp.Body, 8<<20)
	if !bytes.HasPrefix(got, []byte(`{"error":`)) || bytes.Count(got, []byte("x")) < 8<<20-100 {
		t.Errorf("HugeErrorBody body begins %.60q, want a JSON error of endless x", got)
	}
	resp.Body.Close()
}

func TestNoHeaders(t *testing.T) {
	s := Start(t, Options{Mode: NoHeaders})
	conn, r := rawConn(t, s)
	if _, err := io.WriteString(conn, rawRequest("POST", "/v1/chat/completions", chatBody("hi", 0))); err != nil {
		t.Fatal(err)
	}
	// The server is known to have the request once it is logged; it then
	// answers nothing.
	deadline := time.Now().Add(testTimeout)
	for s.Requests("/v1/chat/completions") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the server")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if b, err := r.ReadByte(); err == nil {
		t.Fatalf("NoHeaders answered %q, want nothing", b)
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("NoHeaders: read = %v, want a timeout with nothing read", err)
	}

	// With a short cap it cuts the connection, still without an answer.
	s2 := Start(t, Options{Mode: NoHeaders, CapTime: 50 * time.Millisecond})
	conn2, r2 := rawConn(t, s2)
	if _, err := io.WriteString(conn2, rawRequest("POST", "/v1/chat/completions", chatBody("hi", 0))); err != nil {
		t.Fatal(err)
	}
	if b, err := r2.ReadByte(); err == nil {
		t.Fatalf("NoHeaders at its cap answered %q, want the connection closed", b)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("NoHeaders at its cap: read = %v, want the connection closed", err)
	}
}

func TestTrickleBody(t *testing.T) {
	const every = 10 * time.Millisecond
	s := Start(t, Options{Mode: TrickleBody, TrickleEvery: every, CapTime: time.Second})
	resp := post(t, client(), s.URL+"/v1/chat/completions", chatBody("hi", 0))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("TrickleBody = %s, want 200 at once", resp.Status)
	}
	// Bytes come no faster than one per `every`: 10 bytes take at least 9
	// waits (a busy machine only makes it slower).
	start := time.Now()
	got := readAtLeast(t, resp.Body, 10)
	if elapsed := time.Since(start); elapsed < 8*every {
		t.Errorf("TrickleBody sent 10 bytes in %s, want at least %s", elapsed, 8*every)
	}
	if !bytes.HasPrefix(got, []byte("data: {")) {
		t.Errorf("TrickleBody began %q, want an event stream", got)
	}
	// It never finishes: at the cap the connection is cut.
	rest, err := io.ReadAll(resp.Body)
	if err == nil || bytes.Contains(rest, []byte("[DONE]")) {
		t.Errorf("TrickleBody ended with %v after %d more bytes, want a cut and no [DONE]", err, len(rest))
	}
}

func TestRedirect(t *testing.T) {
	s := Start(t, Options{Mode: Redirect})
	for _, path := range []string{"/v1/chat/completions", "/v1/models", "/metrics"} {
		var resp *http.Response
		if path == "/v1/chat/completions" {
			resp = post(t, client(), s.URL+path, chatBody("hi", 0), "Authorization", "Bearer secret")
		} else {
			resp = get(t, client(), s.URL+path)
		}
		if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != s.Elsewhere.URL+path {
			t.Errorf("%s = %s to %q, want 307 to %s", path, resp.Status, resp.Header.Get("Location"), s.Elsewhere.URL+path)
		}
	}
	if got := s.Elsewhere.Log(); len(got) != 0 {
		t.Errorf("Elsewhere got %d requests from a client that follows no redirect, want 0", len(got))
	}
	if got := s.Authorizations(); len(got) != 1 {
		t.Errorf("the server saw Authorization %q, want it once", got)
	}

	// A client that follows is answered by Elsewhere, a healthy server that
	// records what reached it.
	follow := &http.Client{Timeout: testTimeout}
	resp := post(t, follow, s.URL+"/v1/chat/completions", chatBody("hi", 0), "X-Api-Key", "secret")
	events, err := readEvents(resp.Body)
	if got := summarise(t, events); err != nil || !got.done || got.contents != 8 {
		t.Errorf("the redirected stream = %+v (%v), want Elsewhere's healthy answer", got, err)
	}
	log := s.Elsewhere.Log()
	if len(log) != 1 || log[0].Path != "/v1/chat/completions" || log[0].Header.Get("X-Api-Key") != "secret" {
		t.Errorf("Elsewhere.Log() = %+v, want the followed request with its X-Api-Key", log)
	}
}

// readResponse reads one response from r, and its body whole.
func readResponse(t *testing.T, r *bufio.Reader) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("read the response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the body: %v", err)
	}
	return resp, body
}

func TestCloseAfterStream(t *testing.T) {
	s := Start(t, Options{Mode: CloseAfterStream})
	conn, r := rawConn(t, s)
	if _, err := io.WriteString(conn, rawRequest("POST", "/v1/chat/completions", chatBody("hi", 0))); err != nil {
		t.Fatal(err)
	}
	resp, body := readResponse(t, r)
	// A complete, chunked stream that does not say the connection closes.
	if resp.StatusCode != 200 || resp.Close || resp.Header.Get("Connection") != "" ||
		len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Errorf("response = %s, close %v, Connection %q, Transfer-Encoding %v; want 200 chunked, kept alive by all it says",
			resp.Status, resp.Close, resp.Header.Get("Connection"), resp.TransferEncoding)
	}
	events, _ := readEvents(bytes.NewReader(body))
	if got := summarise(t, events); !got.done || got.contents != 8 {
		t.Errorf("stream = %+v, want a healthy one", got)
	}
	// And then the server closes the connection.
	if b, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after the stream: read = %q, %v; want EOF (the server closed)", b, err)
	}

	// Other paths keep the connection.
	conn, r = rawConn(t, s)
	for i := range 2 {
		if _, err := io.WriteString(conn, rawRequest("GET", "/health", "")); err != nil {
			t.Fatal(err)
		}
		if resp, _ := readResponse(t, r); resp.StatusCode != 200 {
			t.Errorf("GET /health #%d = %s, want 200 on the same connection", i+1, resp.Status)
		}
	}
}

func TestCloseAfterStreamDelay(t *testing.T) {
	s := Start(t, Options{Mode: CloseAfterStream, CloseDelay: 300 * time.Millisecond})
	conn, r := rawConn(t, s)
	if _, err := io.WriteString(conn, rawRequest("POST", "/v1/chat/completions", chatBody("hi", 0))); err != nil {
		t.Fatal(err)
	}
	readResponse(t, r)
	// A request written at once on the connection is never answered.
	if _, err := io.WriteString(conn, rawRequest("GET", "/health", "")); err != nil {
		t.Fatal(err)
	}
	if b, err := r.ReadByte(); err == nil {
		t.Errorf("the reused connection answered %q, want it closed", b)
	}
	if got := s.Requests("/health"); got != 0 {
		t.Errorf("the server saw %d requests for /health, want 0: it never read it", got)
	}
}

func TestCloseOnReuse(t *testing.T) {
	s := Start(t, Options{Mode: CloseOnReuse})
	conn, r := rawConn(t, s)
	if _, err := io.WriteString(conn, rawRequest("POST", "/v1/chat/completions", chatBody("hi", 0))); err != nil {
		t.Fatal(err)
	}
	resp, body := readResponse(t, r)
	if resp.StatusCode != 200 || resp.Close || !bytes.Contains(body, []byte("[DONE]")) {
		t.Fatalf("first request = %s, close %v; want a healthy stream, the connection kept", resp.Status, resp.Close)
	}
	// The second request on the connection is read, and the connection
	// closed with no byte of answer.
	if _, err := io.WriteString(conn, rawRequest("GET", "/v1/models", "")); err != nil {
		t.Fatal(err)
	}
	if b, err := r.ReadByte(); err == nil {
		t.Errorf("the second request got %q, want the connection closed", b)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("the second request: read = %v, want the connection closed", err)
	}
	log := s.Log()
	if len(log) != 2 || !log[1].Reused || log[1].Path != "/v1/models" || log[1].Mode != CloseOnReuse || s.Reused() != 1 {
		t.Errorf("Log() = %+v, want the second request read, on a reused connection", log)
	}
	// A new connection's first request is answered.
	c := client()
	if resp := get(t, c, s.URL+"/health"); resp.StatusCode != 200 {
		t.Errorf("a fresh connection's request = %s, want 200", resp.Status)
	}
	if got := s.RequestsPerConnection(); len(got) != 2 || got[0] != 2 || got[1] != 1 {
		t.Errorf("RequestsPerConnection() = %v, want [2 1]", got)
	}
}

func TestProbeModes(t *testing.T) {
	t.Run("MetricsNotProm", func(t *testing.T) {
		s := Start(t, Options{Mode: MetricsNotProm})
		resp := get(t, client(), s.URL+"/metrics")
		if body, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(body) != "{}" {
			t.Errorf("GET /metrics = %s %q, want 200 {}", resp.Status, body)
		}
		if _, err := stream(t, s, 0); err != nil {
			t.Errorf("completions in MetricsNotProm: %v, want healthy", err)
		}
	})
	t.Run("MetricsEndless", func(t *testing.T) {
		s := Start(t, Options{Mode: MetricsEndless})
		resp := get(t, client(), s.URL+"/metrics")
		got := readAtLeast(t, resp.Body, 20<<20) // past perfgate's 16 MiB page cap
		lines := strings.Split(string(got), "\n")
		for _, line := range lines[2 : len(lines)-1] {
			if !strings.HasPrefix(line, "vllm:num_requests_running{replica=") {
				t.Fatalf("MetricsEndless line %q, want a sample line", line)
			}
		}
	})
	t.Run("VersionDeep", func(t *testing.T) {
		s := Start(t, Options{Mode: VersionDeep})
		for _, p := range identityPaths {
			resp := get(t, client(), s.URL+p)
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 || len(body) != DeepJSONBytes || strings.Trim(string(body), "[") != "" {
				t.Errorf("GET %s = %s, %d bytes (%v); want 200 and %d bytes of [", p, resp.Status, len(body), err, DeepJSONBytes)
			}
		}
		if resp := get(t, client(), s.URL+"/health"); resp.StatusCode != 200 {
			t.Errorf("GET /health in VersionDeep = %s, want 200", resp.Status)
		}
	})
}

// TestHealthyFirstPathsSetMode: the knobs that choose which requests meet
// the failure.
func TestHealthyFirstPathsSetMode(t *testing.T) {
	s := Start(t, Options{Mode: Status, HealthyFirst: 2})
	c := client()
	var got []int
	for range 4 {
		resp := post(t, c, s.URL+"/v1/chat/completions", chatBody("hi", 0))
		_, _ = io.Copy(io.Discard, resp.Body)
		got = append(got, resp.StatusCode)
	}
	if fmt.Sprint(got) != "[200 200 400 400]" {
		t.Errorf("HealthyFirst 2: statuses %v, want [200 200 400 400]", got)
	}
	if resp := get(t, c, s.URL+"/v1/models"); resp.StatusCode != 200 {
		t.Errorf("Status mode on /v1/models = %s, want 200: by default it applies to completions", resp.Status)
	}

	s = Start(t, Options{Mode: Status, Paths: []string{"/v1/models"}})
	if resp := get(t, c, s.URL+"/v1/models"); resp.StatusCode != 400 {
		t.Errorf("Status with Paths [/v1/models] on /v1/models = %s, want 400", resp.Status)
	}
	if _, err := stream(t, s, 0); err != nil {
		t.Errorf("completions with Paths [/v1/models]: %v, want healthy", err)
	}

	s.SetMode(NoOutput)
	s2 := Start(t, Options{Mode: NoOutput, Paths: []string{"/v1/models"}}) // a stream mode on a path it cannot apply to
	if resp := get(t, c, s2.URL+"/v1/models"); resp.StatusCode != 200 {
		t.Errorf("NoOutput on /v1/models = %s, want 200", resp.Status)
	}
	if got := s.Mode(); got != NoOutput {
		t.Errorf("Mode() after SetMode(NoOutput) = %s", got)
	}
	s.SetMode(Status)
	resp := post(t, c, s.URL+"/v1/chat/completions", chatBody("hi", 0))
	if resp.StatusCode != 200 {
		t.Errorf("after SetMode(Status) with Paths [/v1/models]: completions = %s, want 200", resp.Status)
	}
}

// TestCloseEndsEverything: Close ends a handler stuck in an endless answer
// and a hijacked stream, and the clients see their connections go.
func TestCloseEndsEverything(t *testing.T) {
	for _, mode := range []Mode{EndlessComments, NoHeaders, TrickleBody, CloseAfterStream} {
		t.Run(string(mode), func(t *testing.T) {
			s := Start(t, Options{Mode: mode, TokenDelay: time.Hour})
			conn, r := rawConn(t, s)
			if _, err := io.WriteString(conn, rawRequest("POST", "/v1/chat/completions", chatBody("hi", 0))); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(testTimeout)
			for s.Requests("") == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the request never reached the server")
				}
				time.Sleep(5 * time.Millisecond)
			}
			closed := make(chan struct{})
			go func() { s.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(testTimeout):
				t.Fatal("Close did not return")
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Errorf("the connection outlived Close: %v", err)
				}
			}
		})
	}
}

func TestModes(t *testing.T) {
	all := Modes()
	if all[0] != Healthy || len(all) != 23 {
		t.Errorf("Modes() = %v, want Healthy first and 23 modes", all)
	}
	seen := map[Mode]bool{}
	for _, m := range all {
		if !m.Valid() || seen[m] {
			t.Errorf("mode %q: valid %v, seen before %v", m, m.Valid(), seen[m])
		}
		seen[m] = true
	}
	if Mode("nonsense").Valid() {
		t.Error(`Mode("nonsense").Valid() = true`)
	}
	defer func() {
		if recover() == nil {
			t.Error("SetMode(nonsense) did not panic")
		}
	}()
	Start(t, Options{}).SetMode("nonsense")
}

// TestEveryModeIsBounded: against each mode a client that reads all it is
// sent, within a short cap, gets to the end (or a cut) and the handler ends.
func TestEveryModeIsBounded(t *testing.T) {
	for _, mode := range Modes() {
		t.Run(string(mode), func(t *testing.T) {
			s := Start(t, Options{Mode: mode, CapTime: 300 * time.Millisecond, CapBytes: 1 << 20, TrickleEvery: time.Millisecond})
			ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
			defer cancel()
			for _, p := range []string{"/v1/chat/completions", "/metrics", "/version"} {
				var req *http.Request
				if p == "/v1/chat/completions" {
					req, _ = http.NewRequestWithContext(ctx, http.MethodPost, s.URL+p, strings.NewReader(chatBody("hi", 0)))
				} else {
					req, _ = http.NewRequestWithContext(ctx, http.MethodGet, s.URL+p, nil)
				}
				tr := &http.Transport{MaxResponseHeaderBytes: 4 << 20}
				c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				resp, err := c.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				tr.CloseIdleConnections()
				if ctx.Err() != nil {
					t.Fatalf("%s %s did not end within %s", mode, p, testTimeout)
				}
			}
		})
	}
}
