package stack

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/httpguard"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
)

// elsewhere is another server, which a redirect points at; it answers like a
// healthy vLLM and counts what reaches it.
func elsewhere(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"version":"0.6.3.post1"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// redirecting answers every request with a 307 to target plus the path.
func redirecting(t *testing.T, target string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A health path that redirects is a failed check naming where it pointed,
// never followed, whatever client the caller gave. (Before, the redirect was
// followed and another server's 200 made the stack ready.)
func TestHealthNeverFollowsARedirect(t *testing.T) {
	for _, hc := range []*http.Client{nil, http.DefaultClient} {
		name := "own client"
		if hc != nil {
			name = "a client that follows redirects"
		}
		t.Run(name, func(t *testing.T) {
			other, hits := elsewhere(t)
			srv := redirecting(t, other.URL)
			h := Health{BaseURL: srv.URL, Path: "/health", Interval: 10 * time.Millisecond, Client: hc}
			_, err := WaitReady(context.Background(), newFakeInstance(), h, Wait{Timeout: time.Second}, okProbe)
			var nre *NotReadyError
			require.ErrorAs(t, err, &nre, "WaitReady = %v, want not ready", err)
			var re *httpguard.RedirectError
			require.ErrorAs(t, nre.Last, &re)
			assert.Equal(t, other.URL+"/health", re.Location)
			assert.Contains(t, err.Error(), "answered 307, a redirect to "+other.URL+"/health")
			assert.Zero(t, hits.Load(), "the other server was reached")
		})
	}
}

// The run's health watch refuses a redirect the same way.
func TestWatchCountsARedirectAsAFailedCheck(t *testing.T) {
	other, hits := elsewhere(t)
	srv := redirecting(t, other.URL)
	h := Health{BaseURL: srv.URL, Path: "/health", Interval: 10 * time.Millisecond}
	watched, stop := Watch(context.Background(), newFakeInstance(), h, 2)
	defer stop()
	waitCtx(t, watched)
	var ce *CrashError
	require.ErrorAs(t, context.Cause(watched), &ce)
	var re *httpguard.RedirectError
	require.ErrorAs(t, ce.Health, &re)
	assert.Zero(t, hits.Load())
}

// An identity endpoint that redirects is not followed: no identity from it,
// and a problem that names where it pointed. (Before, Identify followed it
// and recorded the other server's identity as this one's.)
func TestIdentifyNeverFollowsARedirect(t *testing.T) {
	for _, hc := range []*http.Client{nil, http.DefaultClient} {
		other, hits := elsewhere(t)
		srv := redirecting(t, other.URL)
		got, problems := Identify(context.Background(), hc, srv.URL, config.EngineVLLM)
		assert.Equal(t, result.Server{}, got)
		require.Len(t, problems, 1)
		var re *httpguard.RedirectError
		require.ErrorAs(t, problems[0], &re)
		assert.Equal(t, other.URL+"/version", re.Location)
		assert.Zero(t, hits.Load(), "the other server was reached")
	}
}

// Whatever a server answers to the identity probes, Identify returns, soon,
// without panicking, and believes only what can be true.
func TestIdentifyHostileAnswers(t *testing.T) {
	props, err := os.ReadFile(llamaCppProps)
	require.NoError(t, err)
	deep := strings.Repeat("[", 200<<10)
	deepObject := `{"version":"1.0","x":` + strings.Repeat(`{"a":`, 100000) + `1` + strings.Repeat(`}`, 100000) + `}`
	tests := []struct {
		name        string
		engine      string
		body        string
		want        result.Server // Raw is not compared
		wantProblem string
	}{
		{name: "200 KB of open brackets", engine: config.EngineAuto, body: deep},
		{name: "an object nested 100000 deep", engine: config.EngineVLLM, body: deepObject},
		{name: "larger than 1 MiB", engine: config.EngineVLLM,
			body:        `{"version":"0.6.3","pad":"` + strings.Repeat("x", 2<<20) + `"}`,
			wantProblem: "is larger than 1 MiB, the most perfgate reads"},
		{name: "version is a number", engine: config.EngineVLLM, body: `{"version":5}`},
		{name: "model_id is a list", engine: config.EngineTGI, body: `{"model_id":["m"],"version":"2.4.0"}`},
		{name: "engine is an object", engine: config.EngineSim, body: `{"engine":{"a":1},"version":"dev"}`},
		{name: "total_slots is an object, version a list", engine: config.EngineLlamaCpp, body: `{"total_slots":{},"build_info":["b1"]}`,
			want: result.Server{Engine: "llamacpp", Endpoint: "/props"}},
		{name: "a version too long to be one", engine: config.EngineVLLM, body: `{"version":"` + strings.Repeat("9", 4096) + `"}`,
			want: result.Server{Engine: "vllm", Endpoint: "/version"}},
		{name: "a version with a terminal escape", engine: config.EngineLlamaCpp, body: `{"build_info":"b1\u001b[31m","total_slots":1}`,
			want: result.Server{Engine: "llamacpp", Endpoint: "/props"}},
		{name: "an engine name with a newline", engine: config.EngineSim, body: `{"engine":"sim\n::error::x","version":"dev"}`},
		{name: "invalid UTF-8", engine: config.EngineVLLM, body: "{\"version\":\"\xff\xfe\"}",
			want: result.Server{Engine: "vllm", Endpoint: "/version"}},
		{name: "not JSON", engine: config.EngineAuto, body: "<html>hello</html>"},
		{name: "real props, named", engine: config.EngineLlamaCpp, body: string(props),
			want: result.Server{Engine: "llamacpp", Version: "b0-unknown", Endpoint: "/props"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(tt.body))
			}))
			t.Cleanup(srv.Close)
			start := time.Now()
			got, problems := Identify(context.Background(), nil, srv.URL, tt.engine)
			assert.Less(t, time.Since(start), 5*time.Second)
			got.Raw = nil
			assert.Equal(t, tt.want, got)
			if tt.wantProblem == "" {
				assert.Empty(t, problems)
				return
			}
			require.Len(t, problems, 1)
			var tl *safeio.TooLargeError
			assert.True(t, errors.As(problems[0], &tl), "problem %v, want a *safeio.TooLargeError", problems[0])
			assert.Contains(t, problems[0].Error(), tt.wantProblem)
		})
	}
}

// A server that sends its headers and then nothing more does not hang
// Identify: the request gives up at its timeout, and says so.
func TestIdentifyHungAnswer(t *testing.T) {
	oldReq, oldAll := identifyRequestTimeout, identifyTimeout
	identifyRequestTimeout, identifyTimeout = 300*time.Millisecond, time.Second
	t.Cleanup(func() { identifyRequestTimeout, identifyTimeout = oldReq, oldAll })
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"version":`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	start := time.Now()
	got, problems := Identify(context.Background(), nil, srv.URL, config.EngineAuto)
	took := time.Since(start)
	assert.Equal(t, result.Server{}, got)
	assert.Less(t, took, 5*time.Second, "Identify waited for a server that never finishes")
	require.NotEmpty(t, problems)
	// A busy machine may not even see the headers in time: either way, it
	// says what it waited for.
	assert.Regexp(t, `^GET http://[^ ]+/info: (the answer did not end|no answer) within 300ms$`, problems[0].Error())
}
