package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/httpguard"
)

// TestRedirectsNotFollowed: a 3xx is a failed request naming where it
// pointed, and the other server is never reached, so the API key never goes
// there. The unfixed client followed the 307 (and the 302 of the models
// list) and measured the other server.
func TestRedirectsNotFollowed(t *testing.T) {
	var mu sync.Mutex
	var reached []string // Authorization headers the other server saw
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(chatChunk("elsewhere") + doneChunk))
	}))
	t.Cleanup(other.Close)
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, status)
		}))
		t.Cleanup(target.Close)
		c, err := New(Options{BaseURL: target.URL, API: APIChat, Headers: map[string]string{"Authorization": "Bearer secret"}})
		require.NoError(t, err)
		t.Cleanup(c.CloseIdleConnections)

		resp := c.Do(context.Background(), chatReq(), "")
		require.NotNil(t, resp.Err, "Do with a %d answer succeeded", status)
		assert.Equal(t, ErrHTTP, resp.Err.Kind)
		assert.Equal(t, status, resp.Err.Status)
		var re *httpguard.RedirectError
		require.True(t, errors.As(resp.Err, &re), "error %v wraps a *httpguard.RedirectError", resp.Err)
		assert.Equal(t, other.URL+"/v1/chat/completions", re.Location)
		assert.Contains(t, resp.Err.Error(), "a redirect to "+other.URL+"/v1/chat/completions: perfgate never follows redirects")
		assert.Empty(t, resp.Text)

		_, err = c.ListModels(context.Background())
		require.True(t, errors.As(err, &re), "ListModels error %v wraps a *httpguard.RedirectError", err)
		assert.Equal(t, other.URL+"/v1/models", re.Location)
		var e *Error
		require.True(t, errors.As(err, &e))
		assert.Equal(t, ErrHTTP, e.Kind)
		assert.Equal(t, status, e.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, reached, "the other server was reached, with these Authorization headers")
}
