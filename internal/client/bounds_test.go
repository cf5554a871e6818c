package client

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/httpguard"
	"github.com/perfgate/perfgate/internal/safeio"
)

// rawServer answers every request by handing its hijacked connection, with
// the request already read, to answer; the connection is closed afterwards.
func rawServer(t *testing.T, answer func(conn net.Conn, rw *bufio.ReadWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		answer(conn, rw, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// paced writes s forever, one piece every interval, until the write fails
// or done is closed.
func paced(w io.Writer, flush func() error, pieces func(i int) string, interval time.Duration, done <-chan struct{}) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; ; i++ {
		if _, err := io.WriteString(w, pieces(i)); err != nil {
			return
		}
		if flush != nil && flush() != nil {
			return
		}
		select {
		case <-tick.C:
		case <-done:
			return
		}
	}
}

// TestDoEndsByTimeout: whatever the server does, a request ends by its
// timeout. These pass on the unfixed client too (the request's context bounds
// every read): they guard that the new bounds and the retry keep it so.
func TestDoEndsByTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	sse := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request, end <-chan struct{})
		kind    ErrorKind
	}{
		{"headers never sent", func(w http.ResponseWriter, r *http.Request, end <-chan struct{}) {
			select {
			case <-r.Context().Done():
			case <-end:
			}
		}, ErrTimeout},
		{"headers trickled a byte at a time", func(w http.ResponseWriter, r *http.Request, end <-chan struct{}) {
			conn, rw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nX-Slow: ")
			paced(rw, rw.Flush, func(int) string { return "a" }, 10*time.Millisecond, end)
		}, ErrTimeout},
		{"body trickled a byte at a time", func(w http.ResponseWriter, r *http.Request, end <-chan struct{}) {
			sse(w)
			paced(w, flusher(w), func(i int) string { return string(`data: {"choices":[{"delta":{"content":"`[i%40]) }, 10*time.Millisecond, end)
		}, ErrTimeout},
		{"endless slow comments", func(w http.ResponseWriter, r *http.Request, end <-chan struct{}) {
			sse(w)
			paced(w, flusher(w), func(int) string { return ": ping\n" }, 5*time.Millisecond, end)
		}, ErrTimeout},
		{"endless tokens, slowly", func(w http.ResponseWriter, r *http.Request, end <-chan struct{}) {
			sse(w)
			paced(w, flusher(w), func(int) string { return chatChunk("") }, 5*time.Millisecond, end)
		}, ErrTimeout},
		{"error body trickled", func(w http.ResponseWriter, r *http.Request, end <-chan struct{}) {
			w.WriteHeader(http.StatusInternalServerError)
			paced(w, flusher(w), func(int) string { return "x" }, 10*time.Millisecond, end)
		}, ErrHTTP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			end := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body) // so that r.Context ends with the connection
				tt.handler(w, r, end)
			}))
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(end) }) // runs first
			c, err := New(Options{BaseURL: srv.URL, API: APIChat, Timeout: timeout})
			require.NoError(t, err)
			t.Cleanup(c.CloseIdleConnections)
			start := time.Now()
			resp := c.Do(context.Background(), chatReq(), "")
			took := time.Since(start)
			require.NotNil(t, resp.Err)
			assert.Equal(t, tt.kind, resp.Err.Kind, "error %v", resp.Err)
			assert.GreaterOrEqual(t, took, timeout, "Do returned before the timeout")
			assert.Less(t, took, timeout+3*time.Second, "Do outlived its timeout")
			assert.Zero(t, resp.Retries)
		})
	}

	t.Run("list models trickled", func(t *testing.T) {
		end := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			paced(w, flusher(w), func(int) string { return " " }, 10*time.Millisecond, end)
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(end) })
		c, err := New(Options{BaseURL: srv.URL, Timeout: timeout})
		require.NoError(t, err)
		start := time.Now()
		_, err = c.ListModels(context.Background())
		var e *Error
		require.True(t, errors.As(err, &e), "ListModels error %v is an *Error", err)
		assert.Equal(t, ErrTimeout, e.Kind)
		assert.Less(t, time.Since(start), timeout+3*time.Second)
	})
}

func flusher(w http.ResponseWriter) func() error {
	return func() error { w.(http.Flusher).Flush(); return nil }
}

// TestDoEventTooLarge: data lines that never end their event fail the
// request once the event passes 1 MiB, and endless comments fail it as soon
// as they pass 1 MiB, without waiting for the timeout. The unfixed client
// grew the event until the 10 s timeout (or memory) ran out, and read the
// comments until the timeout.
func TestDoEventTooLarge(t *testing.T) {
	for name, line := range map[string]string{
		"data lines without a blank line": "data: " + strings.Repeat("y", 1000) + "\n",
		"endless comments":                ": keep-alive\n",
	} {
		t.Run(name, func(t *testing.T) {
			var written atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, chatChunk("a"))
				for written.Load() < 64<<20 && r.Context().Err() == nil {
					n, err := io.WriteString(w, line)
					if err != nil {
						return
					}
					written.Add(int64(n))
				}
			}))
			t.Cleanup(srv.Close)
			resp := newClient(t, srv.URL, APIChat).Do(context.Background(), chatReq(), "")
			require.NotNil(t, resp.Err)
			assert.Equal(t, ErrStream, resp.Err.Kind, "error %v", resp.Err)
			assert.ErrorIs(t, resp.Err, ErrEventTooLarge)
			assert.True(t, strings.HasPrefix(resp.Err.Error(), "stream: event larger than 1 MiB"), "Error() = %q", resp.Err.Error())
			assert.Len(t, resp.ChunkTimes, 1, "the token before is kept")
		})
	}
}

// TestDoResponseHeaders: headers past httpguard.MaxResponseHeaderBytes, and
// an answer that is not HTTP, are the server's fault (ErrHTTP), in words. The
// unfixed client read up to 10 MiB of headers, and called garbage a connect
// error.
func TestDoResponseHeaders(t *testing.T) {
	huge := rawServer(t, func(_ net.Conn, rw *bufio.ReadWriter, _ *http.Request) {
		_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
		for i := 0; i < 2*httpguard.MaxResponseHeaderBytes/1000; i++ {
			_, _ = rw.WriteString("X-Pad: " + strings.Repeat("p", 990) + "\r\n")
		}
		_, _ = rw.WriteString("\r\n" + chatChunk("a") + doneChunk)
		_ = rw.Flush()
	})
	resp := newClient(t, huge.URL, APIChat).Do(context.Background(), chatReq(), "")
	require.NotNil(t, resp.Err, "Do accepted %d KiB of headers", 2*httpguard.MaxResponseHeaderBytes>>10)
	assert.Equal(t, ErrHTTP, resp.Err.Kind, "error %v", resp.Err)
	assert.Zero(t, resp.Err.Status)
	assert.True(t, strings.HasPrefix(resp.Err.Error(), "http: the server's response headers are larger than 256 KiB, the most perfgate reads"), "Error() = %q", resp.Err.Error())

	garbage := rawServer(t, func(_ net.Conn, rw *bufio.ReadWriter, _ *http.Request) {
		_, _ = rw.WriteString("SSH-2.0-OpenSSH_9.6\r\n\r\n")
		_ = rw.Flush()
	})
	resp = newClient(t, garbage.URL, APIChat).Do(context.Background(), chatReq(), "")
	require.NotNil(t, resp.Err)
	assert.Equal(t, ErrHTTP, resp.Err.Kind, "error %v", resp.Err)
	assert.Contains(t, resp.Err.Error(), "http: the server's answer is not valid HTTP")
	assert.Zero(t, resp.Retries, "an answer arrived: never sent again")
}

// TestListModelsBodyTooLarge: an answer over the cap fails clearly; the
// unfixed client cut it at 8 MiB and reported a JSON syntax error.
func TestListModelsBodyTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":[{"id":"`)
		_, _ = io.Copy(w, io.LimitReader(infinite("m"), maxModelsBody))
		_, _ = io.WriteString(w, `"}]}`)
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, srv.URL, APIChat).ListModels(context.Background())
	var tl *safeio.TooLargeError
	require.True(t, errors.As(err, &tl), "ListModels error %v is a *safeio.TooLargeError", err)
	assert.Equal(t, "list models: the answer of "+srv.URL+"/v1/models is larger than 8 MiB, the most perfgate reads", err.Error())
}
