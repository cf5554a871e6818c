package sim

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAPIKey: with --api-key the /v1 endpoints answer 401 to a missing or
// wrong key and serve the right one; /health stays open, as vLLM's does.
func TestAPIKey(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig()
	cfg.APIKey = "sk-test-0123456789"
	s, err := Start(ctx, "127.0.0.1:0", cfg)
	require.NoError(t, err)
	defer s.Close()

	get := func(path, auth string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+path, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusUnauthorized, get("/v1/models", ""))
	assert.Equal(t, http.StatusUnauthorized, get("/v1/models", "Bearer sk-wrong"))
	assert.Equal(t, http.StatusUnauthorized, get("/v1/models", "sk-test-0123456789"))
	assert.Equal(t, http.StatusOK, get("/v1/models", "Bearer sk-test-0123456789"))
	assert.Equal(t, http.StatusOK, get("/health", ""))

	cfg.NoHealth = true
	s2, err := Start(ctx, "127.0.0.1:0", cfg)
	require.NoError(t, err)
	defer s2.Close()
	resp, err := http.Get(s2.URL() + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "--no-health")

	body := `{"model":"` + cfg.Model + `","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`
	resp, err = http.Post(s.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a completion without the key")
}
