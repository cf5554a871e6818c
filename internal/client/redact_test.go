package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server that echoes the key into its error messages, or into the text
// it streams, has it redacted before the Response or the error carries it;
// the header itself goes out as given.
func TestRedactEchoedSecret(t *testing.T) {
	const secret = "sk-redact-me-0123456789"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		mu.Lock()
		got = append(got, auth)
		mu.Unlock()
		switch {
		case r.URL.Path == "/v1/models":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"no access with ` + auth + `"}}`))
		case r.Header.Get("X-Request-Id") == "plain":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte("forbidden: " + auth))
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(chatChunk("you sent "+auth) + doneChunk))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, API: APIChat, Headers: map[string]string{"Authorization": "Bearer " + secret}, Redact: redact})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)

	resp := c.Do(context.Background(), chatReq(), "plain")
	require.NotNil(t, resp.Err)
	assert.Equal(t, http.StatusForbidden, resp.Err.Status)
	assert.Equal(t, "http 403: forbidden: Bearer [redacted]", resp.Err.Error())

	resp = c.Do(context.Background(), chatReq(), "stream")
	require.Nil(t, resp.Err)
	assert.Equal(t, "you sent Bearer [redacted]", resp.Text)

	_, err = c.ListModels(context.Background())
	require.Error(t, err)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusUnauthorized, e.Status)
	assert.Equal(t, "list models: http 401: no access with Bearer [redacted]", err.Error())

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"Bearer " + secret, "Bearer " + secret, "Bearer " + secret}, got)
}

// A connection error never carries the request's headers: Go's transport
// errors name the method and URL only.
func TestConnectErrorHoldsNoHeader(t *testing.T) {
	const secret = "sk-redact-me-0123456789"
	c, err := New(Options{BaseURL: "http://127.0.0.1:1", API: APIChat, Headers: map[string]string{"Authorization": "Bearer " + secret}})
	require.NoError(t, err)
	resp := c.Do(context.Background(), chatReq(), "x")
	require.NotNil(t, resp.Err)
	assert.Equal(t, ErrConnect, resp.Err.Kind)
	assert.NotContains(t, resp.Err.Error(), secret)
	_, err = c.ListModels(context.Background())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)
}
