package stack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modelsOnlyServer serves GET /v1/models and nothing else, as a hosted API
// or a gateway does; it records the paths asked and the Authorization
// header each carried. health, if set, answers /health instead of the
// mux's 404.
type modelsOnlyServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "path auth"
}

func newModelsOnlyServer(t *testing.T, health http.HandlerFunc, models http.HandlerFunc) *modelsOnlyServer {
	t.Helper()
	s := &modelsOnlyServer{}
	mux := http.NewServeMux()
	record := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.seen = append(s.seen, r.URL.Path+" "+r.Header.Get("Authorization"))
			s.mu.Unlock()
			h(w, r)
		}
	}
	if models == nil {
		models = func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m"}]}`))
		}
	}
	mux.HandleFunc("GET /v1/models", record(models))
	if health == nil {
		health = http.NotFound
	}
	mux.HandleFunc("/health", record(health))
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *modelsOnlyServer) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// A server without /health (404) is healthy when /v1/models answers 200,
// asked with the target's headers.
func TestHealthFallsBackToModels(t *testing.T) {
	s := newModelsOnlyServer(t, nil, nil)
	h := Health{BaseURL: s.URL, Path: "/health", Interval: time.Second,
		Headers: map[string]string{"Authorization": "Bearer k"}}
	require.NoError(t, h.check(context.Background(), eventTimeout))
	assert.Equal(t, []string{"/health Bearer k", "/v1/models Bearer k"}, s.paths())
}

// A health path that refuses GET (405) falls back too.
func TestHealthFallsBackOn405(t *testing.T) {
	s := newModelsOnlyServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed)
	}, nil)
	h := Health{BaseURL: s.URL, Path: "/health", Interval: time.Second}
	require.NoError(t, h.check(context.Background(), eventTimeout))
	assert.Equal(t, []string{"/health ", "/v1/models "}, s.paths())
}

// A health path that answers anything else (503 while loading) is not
// skipped: /v1/models may answer before the model is loaded.
func TestHealthNoFallbackOn503(t *testing.T) {
	s := newModelsOnlyServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}, nil)
	err := Health{BaseURL: s.URL, Path: "/health", Interval: time.Second}.check(context.Background(), eventTimeout)
	var he *HealthStatusError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.StatusServiceUnavailable, he.Status)
	assert.Equal(t, []string{"/health "}, s.paths())
}

// When /v1/models fails too, its answer is the error (a 401 here), and what
// the server echoes of a secret is redacted.
func TestHealthFallbackError(t *testing.T) {
	const secret = "sk-test-0123456789"
	s := newModelsOnlyServer(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"bad key ` + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + `"}`))
	})
	h := Health{BaseURL: s.URL, Path: "/health", Interval: time.Second,
		Headers: map[string]string{"Authorization": "Bearer " + secret},
		Redact:  func(v string) string { return strings.ReplaceAll(v, secret, "[redacted]") }}
	err := h.check(context.Background(), eventTimeout)
	var he *HealthStatusError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.StatusUnauthorized, he.Status)
	assert.Equal(t, s.URL+"/v1/models", he.URL)
	assert.Equal(t, "/health answered HTTP 404, and /v1/models, asked instead: GET "+s.URL+
		`/v1/models: HTTP 401: {"error":"bad key [redacted]"}`, err.Error())
	assert.NotContains(t, err.Error(), secret)
}

// WaitReady against a server that serves only /v1/models and completions
// is ready at the first check.
func TestWaitReadyWithoutHealth(t *testing.T) {
	s := newModelsOnlyServer(t, nil, nil)
	probed := 0
	probe := func(context.Context) error { probed++; return nil }
	r, err := WaitReady(context.Background(), external{}, Health{BaseURL: s.URL, Path: "/health", Interval: 200 * time.Millisecond},
		externalWait(newFakeClock(), nil), probe)
	require.NoError(t, err)
	assert.Equal(t, 1, r.Attempts)
	assert.Equal(t, 1, probed)
	assert.NoError(t, r.Failed)
}
