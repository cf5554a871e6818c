package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An engine page guarded by the target's key (llama-server --api-key) is
// read with the headers given, and a refusal that echoes the key is told
// without it.
func TestEngineScraperSendsHeaderAndRedacts(t *testing.T) {
	const key = "sk-metrics-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte("bad key: " + r.Header.Get("Authorization")))
			return
		}
		_, _ = w.Write([]byte("# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n"))
	}))
	defer srv.Close()
	redact := func(s string) string { return strings.ReplaceAll(s, key, "[redacted]") }

	s := &EngineScraper{URL: srv.URL + "/metrics", Header: map[string]string{"Authorization": "Bearer " + key}, Redact: redact}
	p, err := s.Scrape(context.Background())
	require.NoError(t, err)
	_, ok := Detect(p)
	assert.True(t, ok, "the page is read as llama.cpp's")

	without := &EngineScraper{URL: srv.URL + "/metrics"}
	_, err = without.Scrape(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")

	wrong := &EngineScraper{URL: srv.URL + "/metrics", Header: map[string]string{"Authorization": "Bearer x" + key}, Redact: redact}
	_, err = wrong.Scrape(context.Background())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), key, "the echoed key is redacted")
	assert.Contains(t, err.Error(), "[redacted]")

	// A key echoed across the 200-character cut of the body shown shows
	// no part of itself.
	long := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(strings.Repeat("a", 185) + " " + r.Header.Get("Authorization")))
	}))
	defer long.Close()
	cut := &EngineScraper{URL: long.URL + "/metrics", Header: map[string]string{"Authorization": "Bearer " + key}, Redact: redact}
	_, err = cut.Scrape(context.Background())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), key[:6], "no part of the key before the cut")
}
