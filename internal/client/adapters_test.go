package client

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReloadAdapter unloads then loads, with the names and path as vLLM's
// endpoints take them; an unload of an adapter that is not loaded (404)
// is no error, a load the server refuses is, with its message cleaned of
// secrets.
func TestReloadAdapter(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	loadStatus := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, r.URL.Path+" "+string(b)+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		switch r.URL.Path {
		case "/v1/unload_lora_adapter":
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"message":"The lora adapter 'sql' cannot be found."}}`)
		case "/v1/load_lora_adapter":
			w.WriteHeader(loadStatus)
			_, _ = io.WriteString(w, `{"error":{"message":"runtime updating is off; key sk-secret"}}`)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, Headers: map[string]string{"Authorization": "Bearer sk-secret"},
		Redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret", "***") }})
	require.NoError(t, err)
	require.NoError(t, c.ReloadAdapter(t.Context(), "sql", "/adapters/sql"))
	assert.Equal(t, []string{
		`/v1/unload_lora_adapter {"lora_name":"sql"} Bearer sk-secret`,
		`/v1/load_lora_adapter {"lora_name":"sql","lora_path":"/adapters/sql"} Bearer sk-secret`,
	}, calls)

	loadStatus = http.StatusNotFound
	err = c.ReloadAdapter(t.Context(), "sql", "/adapters/sql")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "load adapter sql from /adapters/sql")
	assert.Contains(t, err.Error(), "runtime updating is off")
	assert.NotContains(t, err.Error(), "sk-secret")
}
