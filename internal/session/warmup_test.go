package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/workload"
)

// failingWarmup fails every every-th warm-up request with an HTTP 500 and
// sends the rest, and every measured one, to the simulator.
type failingWarmup struct {
	*client.Client
	every int64
	n     atomic.Int64
}

func (f *failingWarmup) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	if strings.Contains(id, "-r0-") && f.n.Add(1)%f.every == 0 {
		resp := f.Client.Do(ctx, req, id)
		resp.Err = &client.Error{Kind: client.ErrHTTP, Status: 500, Message: "warming"}
		return resp
	}
	return f.Client.Do(ctx, req, id)
}

// warmupRun runs one scenario warmed up by windows, its warm-up requests
// failing one in every, with max_error_rate maxErrorRate.
func warmupRun(t *testing.T, every int64, maxErrorRate float64) (string, error) {
	t.Helper()
	url := startSim(t)
	dir := t.TempDir()
	yaml := fmt.Sprintf(`
target: {base_url: %q}
stack:
  kind: process
  process: {command: [fake-engine]}
  log: %s
warmup: {window: 200ms, windows: 2, tolerance: 0.5, max: 20s}
telemetry: {metrics: off, gpu: off}
repetitions: 1
scenarios:
%s`, url, filepath.Join(dir, "stack.log"), scenario("chat", 8, fmt.Sprintf("    max_error_rate: %g\n", maxErrorRate)))
	path := filepath.Join(dir, "perfgate.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(yaml), path)
	if err != nil {
		t.Fatalf("config.Parse: %v", err)
	}
	scenarios, err := run.Prepare(cfg, nil)
	if err != nil {
		t.Fatalf("run.Prepare: %v", err)
	}
	var log bytes.Buffer
	_, err = Run(context.Background(), cfg, scenarios, Options{
		StartStack: (&starter{}).start,
		Phases:     run.NewPhases(&log, false),
		Log:        &log,
		Connect: func(ctx context.Context, cfg *config.Config) (Sender, error) {
			c, err := Connect(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return &failingWarmup{Client: c, every: every}, nil
		},
	})
	return log.String(), err
}

// Warm-up failures are told on the warm-up line; past max_error_rate in the
// windows judged steady they stop the run before anything is measured
// (exit 3), with the errors named.
func TestRunTellsWarmupFailures(t *testing.T) {
	t.Run("within max_error_rate", func(t *testing.T) {
		log, err := warmupRun(t, 10, 0.5)
		if err != nil {
			t.Fatalf("Run = %v; log:\n%s", err, log)
		}
		for _, want := range []string{"steady after ", " warm-up requests, ", " failed: http ×", "; drained in "} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %q:\n%s", want, log)
			}
		}
	})
	t.Run("over max_error_rate", func(t *testing.T) {
		log, err := warmupRun(t, 2, 0.05)
		if got := exit.Code(err); got != exit.RunFailed {
			t.Fatalf("exit.Code(%v) = %d, want %d; log:\n%s", err, got, exit.RunFailed, log)
		}
		for _, want := range []string{"scenario chat warm-up: ", "failed in the windows judged steady", "http ×", "the first: "} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		if strings.Contains(log, "measuring 1 repetitions") {
			t.Errorf("the run measured after a failing warm-up:\n%s", log)
		}
	})
}

// A warm-up window's progress line says steady, or why not yet; a window in
// which no request had its first token shows no TTFT rather than 0 ms.
func TestWindowLine(t *testing.T) {
	why := "median TTFT rose in each of the last 5 windows, from 1033.0 ms in 270–275s to 1422.0 ms in 290–295s"
	tests := []struct {
		name   string
		win    result.WarmupWindow
		steady bool
		why    string
		want   string
	}{
		{"steady", result.WarmupWindow{End: 16, Requests: 11, OutputThroughput: 1180, TTFT: 33},
			true, "", "  16.0s    11 requests    1180.0 output tok/s  TTFT p50    33.0 ms  steady"},
		{"not steady, and why", result.WarmupWindow{End: 295, Requests: 8, OutputThroughput: 70.4, TTFT: 1033},
			false, why, " 295.0s     8 requests      70.4 output tok/s  TTFT p50  1033.0 ms  not steady: " + why},
		{"no first token", result.WarmupWindow{End: 5, OutputThroughput: 12.8},
			false, "3 windows to judge, 1 so far", "   5.0s     0 requests      12.8 output tok/s  TTFT p50       — (no first token)  not steady: 3 windows to judge, 1 so far"},
		{"steady on merged windows", result.WarmupWindow{End: 30, OutputThroughput: 23.2},
			true, "judged 2 windows merged at a time", "  30.0s     0 requests      23.2 output tok/s  TTFT p50       — (no first token)  steady (judged 2 windows merged at a time)"},
		{"nothing to say", result.WarmupWindow{End: 5, Requests: 3, OutputThroughput: 12.8, TTFT: 40},
			false, "", "   5.0s     3 requests      12.8 output tok/s  TTFT p50    40.0 ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := windowLine(tc.win, tc.steady, tc.why); got != tc.want {
				t.Errorf("windowLine =\n%q, want\n%q", got, tc.want)
			}
		})
	}
}
