package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for the server's truth writer and the
// test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testConfig is a fast, noiseless configuration for tests.
func testConfig() Config {
	c := DefaultConfig()
	c.StepBase = 2 * time.Millisecond
	c.PerSeq = 0
	c.PerPrefillToken = 0
	c.Jitter = 0
	return c
}

type simUnderTest struct {
	*Server
	truth *syncBuffer
}

func startSim(t *testing.T, cfg Config) *simUnderTest {
	t.Helper()
	buf := &syncBuffer{}
	cfg.Truth = buf
	s, err := Start(context.Background(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return &simUnderTest{Server: s, truth: buf}
}

// records closes the server and returns its truth records by request id.
func (s *simUnderTest) records(t *testing.T) map[string]TruthRecord {
	t.Helper()
	require.NoError(t, s.Close())
	out := map[string]TruthRecord{}
	sc := bufio.NewScanner(strings.NewReader(s.truth.String()))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r TruthRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "truth line %q", sc.Text())
		out[r.RequestID] = r
	}
	require.NoError(t, sc.Err())
	return out
}

var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func post(t testing.TB, ctx context.Context, url, id string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	resp, err := httpClient.Do(req)
	require.NoError(t, err)
	return resp
}

func get(t testing.TB, url string) (int, []byte) {
	t.Helper()
	resp, err := httpClient.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// sseEvent is one "data:" payload and when the test read it.
type sseEvent struct {
	data string
	at   time.Time
}

// readSSE reads every event of a stream until EOF.
func readSSE(t testing.TB, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
			out = append(out, sseEvent{data: data, at: time.Now()})
		} else {
			require.Contains(t, []string{"", "\n"}, line, "unexpected SSE line")
		}
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
	}
}

// chunk is the union of the chat and completions chunk shapes.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

func parseChunk(t testing.TB, data string) chunk {
	t.Helper()
	var c chunk
	require.NoError(t, json.Unmarshal([]byte(data), &c), "chunk %q", data)
	return c
}

// contentText is a chunk's output text (chat delta.content or completions
// text), "" if none.
func (c chunk) contentText() string {
	if len(c.Choices) == 0 {
		return ""
	}
	if d := c.Choices[0].Delta; d != nil && d.Content != nil {
		return *d.Content
	}
	if tx := c.Choices[0].Text; tx != nil {
		return *tx
	}
	return ""
}

func chatBody(words, maxTokens int, stream bool) map[string]any {
	b := map[string]any{
		"model":      "perfgate-sim-8b",
		"messages":   []map[string]string{{"role": "user", "content": nWords(words)}},
		"max_tokens": maxTokens,
		"stream":     stream,
	}
	if stream {
		b["stream_options"] = map[string]bool{"include_usage": true}
	}
	return b
}

// nWords is a prompt of n words unique to this call (so that the prefix
// cache only hits when a test means it to).
var promptSalt atomic.Int64

func nWords(n int) string {
	salt := strconv.FormatInt(promptSalt.Add(1), 10)
	w := make([]string, n)
	for i := range w {
		w[i] = "w" + salt + "_" + strconv.Itoa(i)
	}
	return strings.Join(w, " ")
}

// streamChat sends a streaming chat request and reads it to the end.
func streamChat(t *testing.T, s *Server, id string, words, maxTokens int) []sseEvent {
	t.Helper()
	resp := post(t, context.Background(), s.URL()+"/v1/chat/completions", id, chatBody(words, maxTokens, true))
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return readSSE(t, resp.Body)
}

// gaps returns the differences between consecutive values.
func gaps(ns []int64) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ns); i++ {
		out = append(out, time.Duration(ns[i]-ns[i-1]))
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// within asserts got is in [want-below, want+above].
func within(t *testing.T, what string, got, want, below, above time.Duration) {
	t.Helper()
	if got < want-below || got > want+above {
		t.Errorf("%s = %v, want %v (-%v/+%v)", what, got, want, below, above)
	}
}
