package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/httpguard"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
	"github.com/perfgate/perfgate/internal/workload"
)

// jumpClock advances only when slept on, to the time slept until: a wait of
// 30 s runs at once.
type jumpClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *jumpClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	return ctx.Err()
}

// externalConfig is a config for an external server at url.
func externalConfig(t *testing.T, url, extra string) (*config.Config, []run.Scenario) {
	t.Helper()
	dir := t.TempDir()
	yaml := `
target: {base_url: "` + url + `"}
` + extra + `
warmup: {method: none}
telemetry: {metrics: off, gpu: off}
repetitions: 1
scenarios:
` + scenario("chat", 2, "")
	cfg, err := config.Parse([]byte(yaml), filepath.Join(dir, "perfgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	scenarios, err := run.Prepare(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, scenarios
}

// flakySender fails the first fails readiness probes, as a server at 10%
// errors may fail the first one.
type flakySender struct {
	*client.Client
	fails  int32
	probes atomic.Int32
}

func (f *flakySender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	if strings.HasSuffix(id, "-ready") && f.probes.Add(1) <= f.fails {
		return &client.Response{RequestID: id, Err: &client.Error{Kind: client.ErrHTTP, Status: 500, Err: errors.New("injected failure")}}
	}
	return f.Client.Do(ctx, req, id)
}

// One failed readiness probe no longer ends a run against an external
// server: it is retried after 0.5 s, and the run goes on, saying so.
func TestRunExternalRetriesReadiness(t *testing.T) {
	url := startSim(t)
	cfg, scenarios := externalConfig(t, url, "")
	var sender *flakySender
	var log bytes.Buffer
	res, err := Run(context.Background(), cfg, scenarios, Options{
		Connect: func(ctx context.Context, cfg *config.Config) (Sender, error) {
			c, err := Connect(ctx, cfg)
			if err != nil {
				return nil, err
			}
			sender = &flakySender{Client: c, fails: 1}
			return sender, nil
		},
		Phases: run.NewPhases(&log, false),
		Log:    &log,
	})
	if err != nil {
		t.Fatalf("Run = %v, want no error: the second probe succeeds; log:\n%s", err, log.String())
	}
	if got := sender.probes.Load(); got != 2 {
		t.Errorf("readiness probes = %d, want 2", got)
	}
	if len(res.Scenarios) != 1 || res.Scenarios[0].Repetitions[0].Completed != 2 {
		t.Errorf("scenarios = %+v, want one with 2 completed", res.Scenarios)
	}
	if want := "ready at attempt 2, after 5"; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
	if want := "the one before failed: health is OK but a one-token completion failed: http 500: injected failure"; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
}

// An external server that never answers is checked for
// stack.external_ready_timeout with backoff, saying every 10 s how it goes,
// and the error names the attempts and the last check.
func TestRunExternalNeverReady(t *testing.T) {
	tests := []struct {
		name     string
		extra    string
		attempts string
		lines    int
	}{
		{"default 30s", "", "after 30s and 9 attempts (stack.external_ready_timeout)", 2},
		{"2m", "stack: {external_ready_timeout: 2m}", "after 2m0s and 27 attempts (stack.external_ready_timeout)", 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, scenarios := externalConfig(t, "http://127.0.0.1:1", tt.extra)
			var log bytes.Buffer
			_, err := Run(context.Background(), cfg, scenarios, Options{
				Clock: &jumpClock{now: time.Unix(1_000_000, 0)}, Phases: run.NewPhases(&log, false), Log: &log,
			})
			if got := exit.Code(err); got != exit.RunFailed {
				t.Fatalf("exit.Code(%v) = %d, want %d", err, got, exit.RunFailed)
			}
			var nre *stack.NotReadyError
			if !errors.As(err, &nre) {
				t.Fatalf("Run = %v, want a *stack.NotReadyError", err)
			}
			for _, want := range []string{
				"target http://127.0.0.1:1 not ready " + tt.attempts + "; last check: GET http://127.0.0.1:1/health: ",
				"connection refused",
				"`perfgate sim` starts a simulated one",
			} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if got := strings.Count(log.String(), "target http://127.0.0.1:1 not ready after "); got != tt.lines {
				t.Errorf("progress lines = %d, want %d:\n%s", got, tt.lines, log.String())
			}
		})
	}
}

func TestAnswerIsFinal(t *testing.T) {
	httpErr := func(status int) error {
		return fmt.Errorf("a one-token completion failed: %w", &client.Error{Kind: client.ErrHTTP, Status: status, Err: errors.New("x")})
	}
	health := func(status int) error { return &stack.HealthStatusError{URL: "http://x/health", Status: status} }
	tests := []struct {
		err  error
		want bool
	}{
		{httpErr(400), true},
		{httpErr(401), true},
		{httpErr(404), true},
		{httpErr(307), true},
		{health(404), true},
		{health(301), true},
		{fmt.Errorf("GET x: %w", &httpguard.RedirectError{Method: "GET", URL: "http://x", Status: 302}), true},
		{httpErr(408), false},
		{httpErr(425), false},
		{httpErr(429), false},
		{httpErr(500), false},
		{httpErr(503), false},
		{health(503), false},
		{&client.Error{Kind: client.ErrNoOutput, Err: errors.New("no text")}, false},
		{errors.New("connection refused"), false},
	}
	for _, tt := range tests {
		if got := answerIsFinal(tt.err); got != tt.want {
			t.Errorf("answerIsFinal(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
