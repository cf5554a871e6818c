package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/hostile"
	"github.com/perfgate/perfgate/internal/result"
)

// hostileConfig is a small run against an external server at url: two
// users, requests a repetition, two repetitions, no warm-up, a short request
// timeout so that the modes that never answer end quickly.
func hostileConfig(t *testing.T, url string, requests int) string {
	return hostileConfigC(t, url, requests, 2)
}

// hostileConfigC is hostileConfig with concurrency users.
func hostileConfigC(t *testing.T, url string, requests, concurrency int) string {
	t.Helper()
	return writeConfig(t, fmt.Sprintf(`
target: {base_url: %q, timeout: 2s, headers: {Authorization: "Bearer sk-secret"}}
stack: {external_ready_timeout: 3s}
warmup: {method: none}
repetitions: 2
telemetry: {interval: 100ms}
scenarios:
  - name: c2
    synth:
      requests: 8
      input: {type: fixed, value: 32}
      output: {type: fixed, value: 8}
    load: {type: closed, concurrency: %d}
    requests: %d
`, url, concurrency, requests))
}

// hostileRun runs `perfgate run` against srv and returns its exit code,
// stderr, and the result when one was written.
func hostileRun(t *testing.T, srv *hostile.Server, requests int) (code int, stderr string, res *result.Result) {
	t.Helper()
	conf := hostileConfig(t, srv.URL, requests)
	out := filepath.Join(filepath.Dir(conf), "result.json")
	var so, se bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := Main(ctx, []string{"run", "-c", conf, "-o", out, "--records", filepath.Join(filepath.Dir(conf), "records.jsonl")}, &so, &se)
	if err != nil {
		se.WriteString("perfgate: " + err.Error() + "\n")
	}
	if ctx.Err() != nil {
		t.Fatalf("perfgate run did not end within 2 minutes against mode %s", srv.Mode())
	}
	if data, rerr := os.ReadFile(out); rerr == nil {
		res = &result.Result{}
		if jerr := json.Unmarshal(data, res); jerr != nil {
			t.Fatalf("result.json: %v", jerr)
		}
	}
	return exit.Code(err), se.String(), res
}

// TestHostileServers runs perfgate against every failure the hostile double
// models. None may pass as a healthy, fast server; none may crash perfgate
// (a panic exits 2, which would read as bad input) or hang it; the ones a
// real engine does every day (closing connections, absurd usage) are
// measured correctly.
func TestHostileServers(t *testing.T) {
	tests := []struct {
		mode     hostile.Mode
		opts     hostile.Options
		requests int
		wantCode int
		// want are texts stderr must hold.
		want []string
		// check, if set, looks at the server and the result.
		check func(t *testing.T, srv *hostile.Server, res *result.Result)
	}{
		// No prompt is sent twice: each repetition is its own salted pass
		// (16 requests over an 8-request workload: two passes each).
		{mode: hostile.Healthy, requests: 16, wantCode: exit.OK, check: func(t *testing.T, srv *hostile.Server, res *result.Result) {
			noErrors(t, srv, res)
			if rep := srv.RepeatedPrompts(); len(rep) > 0 {
				t.Errorf("%d prompts were sent more than once, e.g. %q", len(rep), rep[0])
			}
			if got := res.Scenarios[0].Salt; got != result.SaltPerPass {
				t.Errorf("result salt = %q, want %q", got, result.SaltPerPass)
			}
		}},
		// A server that streams no text is not a fast server: the readiness
		// probe needs a token of text...
		{mode: hostile.NoOutput, requests: 8, wantCode: exit.RunFailed, want: []string{"no_output"}},
		// ... and so does every measured request.
		{mode: hostile.NoOutput, opts: hostile.Options{HealthyFirst: 1}, requests: 8, wantCode: exit.RunFailed,
			want: []string{"all 8 requests failed", "no_output"}},
		{mode: hostile.EmptyContent, opts: hostile.Options{HealthyFirst: 1}, requests: 8, wantCode: exit.RunFailed,
			want: []string{"all 8 requests failed", "no_output"}},
		{mode: hostile.EndlessEvent, opts: hostile.Options{HealthyFirst: 1}, requests: 2, wantCode: exit.RunFailed,
			want: []string{"all 2 requests failed", "stream"}},
		{mode: hostile.EndlessLine, opts: hostile.Options{HealthyFirst: 1}, requests: 2, wantCode: exit.RunFailed,
			want: []string{"all 2 requests failed", "stream"}},
		{mode: hostile.EndlessComments, opts: hostile.Options{HealthyFirst: 1}, requests: 2, wantCode: exit.RunFailed,
			want: []string{"all 2 requests failed", "timeout"}},
		{mode: hostile.HugeHeaders, opts: hostile.Options{HealthyFirst: 1}, requests: 2, wantCode: exit.RunFailed,
			want: []string{"all 2 requests failed"}},
		{mode: hostile.HugeErrorBody, opts: hostile.Options{HealthyFirst: 1}, requests: 2, wantCode: exit.RunFailed,
			want: []string{"all 2 requests failed", "http 500"}},
		{mode: hostile.NoHeaders, opts: hostile.Options{HealthyFirst: 1}, requests: 2, wantCode: exit.RunFailed,
			want: []string{"all 2 requests failed", "timeout"}},
		{mode: hostile.TrickleBody, opts: hostile.Options{HealthyFirst: 1}, requests: 2, wantCode: exit.RunFailed,
			want: []string{"all 2 requests failed", "timeout"}},
		{mode: hostile.Truncated, opts: hostile.Options{HealthyFirst: 1}, requests: 4, wantCode: exit.RunFailed,
			want: []string{"all 4 requests failed", "stream"}},
		{mode: hostile.MalformedChunk, opts: hostile.Options{HealthyFirst: 1}, requests: 4, wantCode: exit.RunFailed,
			want: []string{"all 4 requests failed", "malformed chunk"}},
		{mode: hostile.ErrorEvent, opts: hostile.Options{HealthyFirst: 1}, requests: 4, wantCode: exit.RunFailed,
			want: []string{"all 4 requests failed", "stream"}},
		{mode: hostile.Status, opts: hostile.Options{HealthyFirst: 1}, requests: 6, wantCode: exit.RunFailed,
			want: []string{"all 6 requests failed", "http 400", "the request exceeds the available context size"}},
		// The target is the target: a redirect is an error naming where it
		// pointed, and nothing (no API key) reaches the other server.
		{mode: hostile.Redirect, requests: 2, wantCode: exit.RunFailed, want: []string{"307", "redirect"},
			check: func(t *testing.T, srv *hostile.Server, _ *result.Result) {
				if n := len(srv.Elsewhere.Log()); n != 0 {
					t.Errorf("the server redirected to got %d requests (authorizations %q)", n, srv.Elsewhere.Authorizations())
				}
			}},
		// Usage that cannot be true is refused, the tokens counted from the
		// stream, and no absurd throughput is written.
		{mode: hostile.HugeUsage, requests: 8, wantCode: exit.OK, check: usageRefused},
		{mode: hostile.NegativeUsage, requests: 8, wantCode: exit.OK, check: usageRefused},
		{mode: hostile.InflatedUsage, requests: 8, wantCode: exit.OK, check: usageRefused},
		// llama.cpp closes every connection after a stream: no errors.
		{mode: hostile.CloseAfterStream, requests: 16, wantCode: exit.OK, check: noErrors},
		{mode: hostile.CloseAfterStream, opts: hostile.Options{CloseDelay: 20 * time.Millisecond}, requests: 16, wantCode: exit.OK, check: noErrors},
		{mode: hostile.CloseOnReuse, requests: 16, wantCode: exit.OK, check: func(t *testing.T, srv *hostile.Server, res *result.Result) {
			noErrors(t, srv, res)
			retries := 0
			for _, r := range res.Scenarios[0].Repetitions {
				retries += r.Retries
			}
			if retries == 0 {
				t.Errorf("no retries counted, but the server closed %d reused connections", srv.Reused())
			}
		}},
		// Telemetry and identity that cannot be read leave the run alone.
		{mode: hostile.MetricsNotProm, requests: 8, wantCode: exit.OK, want: []string{"engine telemetry: unavailable"}},
		{mode: hostile.MetricsEndless, requests: 8, wantCode: exit.OK, want: []string{"engine telemetry: unavailable"}},
		{mode: hostile.VersionDeep, requests: 8, wantCode: exit.OK},
	}
	for _, tt := range tests {
		name := string(tt.mode)
		if tt.opts.HealthyFirst > 0 {
			name += "/after-probe"
		}
		if tt.opts.CloseDelay > 0 {
			name += "/delayed"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			opts.Mode = tt.mode
			srv := hostile.Start(t, opts)
			code, stderr, res := hostileRun(t, srv, tt.requests)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if code != exit.OK && res != nil {
				t.Errorf("a failed run left a result file")
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stderr shows a panic:\n%s", stderr)
			}
			if tt.check != nil {
				tt.check(t, srv, res)
			}
		})
	}
}

func noErrors(t *testing.T, srv *hostile.Server, res *result.Result) {
	t.Helper()
	if res == nil {
		t.Fatal("no result")
	}
	for _, r := range res.Scenarios[0].Repetitions {
		if r.Failed != 0 || r.Completed != r.Sent {
			t.Errorf("repetition %d: %d of %d failed (%v), against a server that only closes connections", r.Index, r.Failed, r.Sent, r.Errors)
		}
	}
}

func usageRefused(t *testing.T, srv *hostile.Server, res *result.Result) {
	t.Helper()
	if res == nil {
		t.Fatal("no result")
	}
	for _, r := range res.Scenarios[0].Repetitions {
		if r.UsageRefused != r.Completed || r.Completed == 0 {
			t.Errorf("repetition %d: usage refused for %d of %d completed requests, want all", r.Index, r.UsageRefused, r.Completed)
		}
		// 8 requests, 8 streamed tokens each, counted from the stream.
		if r.OutputTokens != 8*r.Completed || r.TokensFrom != "chunks" {
			t.Errorf("repetition %d: %d output tokens from %s, want %d from chunks", r.Index, r.OutputTokens, r.TokensFrom, 8*r.Completed)
		}
		for name, v := range map[string]float64{"output throughput": r.OutputThroughput, "input throughput": r.InputThroughput} {
			if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v > 1e7 {
				t.Errorf("repetition %d: %s %g cannot be true", r.Index, name, v)
			}
		}
	}
}

// TestHostileServersBoundedMemory runs perfgate as its own process, 64 users,
// against the modes that send without end (and a healthy server, for
// scale), and checks its peak memory stays under 256 MiB while each request
// still ends by target.timeout. It runs without the race detector (whose
// shadow memory would be measured too).
func TestHostileServersBoundedMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("memory is measured without -race (make test runs it so)")
	}
	for _, mode := range []hostile.Mode{hostile.Healthy, hostile.EndlessEvent, hostile.EndlessLine, hostile.HugeErrorBody, hostile.HugeHeaders, hostile.MetricsEndless, hostile.VersionDeep, hostile.EndlessComments} {
		t.Run(string(mode), func(t *testing.T) {
			srv := hostile.Start(t, hostile.Options{Mode: mode, HealthyFirst: 1, CapTime: 20 * time.Second})
			conf := hostileConfigC(t, srv.URL, 128, 64)
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			rssFile := filepath.Join(t.TempDir(), "rss")
			cmd := exec.Command(exe, "run", "-c", conf, "-o", filepath.Join(filepath.Dir(conf), "r.json"))
			cmd.Env = append(os.Environ(), beMain+"=1", peakRSSFile+"="+rssFile)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			_ = cmd.Run()
			took := time.Since(start)
			data, err := os.ReadFile(rssFile)
			if err != nil {
				t.Fatalf("no peak RSS from the child: %v; stderr:\n%s", err, stderr.String())
			}
			kib, err := strconv.Atoi(string(data))
			if err != nil {
				t.Fatalf("peak RSS %q: %v", data, err)
			}
			t.Logf("%s: exit %d after %s, peak RSS %d MiB", mode, cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), kib>>10)
			if kib > 256<<10 {
				t.Errorf("peak RSS %d MiB, want < 256 MiB", kib>>10)
			}
			// The run got as far as the load, and ended as it should: the
			// failing modes fail the run, the others pass it.
			want := exit.RunFailed
			if mode == hostile.Healthy || mode == hostile.MetricsEndless || mode == hostile.VersionDeep {
				want = exit.OK
			}
			if code := cmd.ProcessState.ExitCode(); code != want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, want, stderr.String())
			}
			if n := srv.Requests("/v1/chat/completions"); n < 64 {
				t.Errorf("the server got %d completion requests, want at least the 64 users' first", n)
			}
			// Two rounds of 64 users at most, each ended by target.timeout
			// (2 s), with room for a busy machine.
			if took > 30*time.Second {
				t.Errorf("the run took %s", took)
			}
			if strings.Contains(stderr.String(), "panic") {
				t.Errorf("stderr shows a panic:\n%s", stderr.String())
			}
		})
	}
}

// TestOwnLimitsAreOwnErrors: perfgate's own open-file limit is its own
// error, never the server's. Before a run that needs more files than the
// limit allows, perfgate refuses (exit 3, naming `ulimit -n`); when a run
// outgrows the limit anyway (an uncapped open loop against a server that
// never answers), the first "too many open files" stops the run (exit 3),
// rather than counting ~1M server connect errors in a spinning loop.
func TestOwnLimitsAreOwnErrors(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, limit int, conf string) (int, string) {
		t.Helper()
		cmd := exec.Command("sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, limit),
			exe, "run", "-c", conf, "-o", filepath.Join(filepath.Dir(conf), "r.json"))
		cmd.Env = append(os.Environ(), beMain+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run()
		return cmd.ProcessState.ExitCode(), stderr.String()
	}
	srv := hostile.Start(t, hostile.Options{})

	t.Run("refused before the run", func(t *testing.T) {
		code, stderr := run(t, 300, hostileConfigC(t, srv.URL, 1024, 512))
		if code != exit.RunFailed {
			t.Fatalf("exit %d, want %d:\n%s", code, exit.RunFailed, stderr)
		}
		for _, want := range []string{"perfgate needs about 576 open files", "only 300", "ulimit -n"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		if n := srv.Requests(""); n != 0 {
			t.Errorf("the server got %d requests from a run that was refused", n)
		}
	})

	t.Run("stopped during the run", func(t *testing.T) {
		wedged := hostile.Start(t, hostile.Options{Mode: hostile.NoHeaders, HealthyFirst: 1})
		conf := writeConfig(t, fmt.Sprintf(`
target: {base_url: %q, timeout: 20s}
warmup: {method: none}
repetitions: 1
telemetry: {metrics: off}
scenarios:
  - name: flood
    synth:
      requests: 16
      input: {type: fixed, value: 8}
      output: {type: fixed, value: 4}
    load: {type: poisson, rate: 2000}
    requests: 2000
`, wedged.URL))
		code, stderr := run(t, 400, conf)
		if code != exit.RunFailed {
			t.Fatalf("exit %d, want %d:\n%s", code, exit.RunFailed, stderr)
		}
		for _, want := range []string{"perfgate's own machine failed a request", "open files"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		if strings.Contains(stderr, "connect") && !strings.Contains(stderr, "local") {
			t.Errorf("perfgate's limit was blamed on the server:\n%s", stderr)
		}
	})
}

// TestSaltOff: `salt: false` measures a warm cache on purpose: the same
// prompts are sent in every repetition, and the result says salting was off.
func TestSaltOff(t *testing.T) {
	srv := hostile.Start(t, hostile.Options{})
	conf := hostileConfig(t, srv.URL, 8)
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, append([]byte("salt: false\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(filepath.Dir(conf), "r.json")
	var so, se bytes.Buffer
	if err := Main(context.Background(), []string{"run", "-c", conf, "-o", out}, &so, &se); err != nil {
		t.Fatalf("run: %v\n%s", err, se.String())
	}
	res, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Scenarios[0].Salt; got != result.SaltOff {
		t.Errorf("result salt = %q, want %q", got, result.SaltOff)
	}
	// Two repetitions of the same 8 requests: each sent twice.
	if rep := srv.RepeatedPrompts(); len(rep) != 8 {
		t.Errorf("%d prompts sent more than once, want the workload's 8", len(rep))
	}
	if !strings.Contains(so.String(), "prompt salting off") {
		t.Errorf("the summary does not say salting was off:\n%s", so.String())
	}
}

// TestGateRefusesASaltMismatchBeforeRunning: a salted baseline and a config
// that turns salting off measure different things (prefills, a warm cache);
// gate says so before it sends a single request, not after the run.
func TestGateRefusesASaltMismatchBeforeRunning(t *testing.T) {
	srv := hostile.Start(t, hostile.Options{})
	conf := hostileConfig(t, srv.URL, 8)
	dir := filepath.Dir(conf)
	var so, se bytes.Buffer
	if err := Main(context.Background(), []string{"run", "-q", "-c", conf, "-o", filepath.Join(dir, "r.json")}, &so, &se); err != nil {
		t.Fatalf("run: %v\n%s", err, se.String())
	}
	bases := filepath.Join(dir, "baselines")
	if err := Main(context.Background(), []string{"baseline", "promote", filepath.Join(dir, "r.json"), "--baselines", bases}, &so, &se); err != nil {
		t.Fatalf("promote: %v\n%s", err, se.String())
	}
	data, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, append([]byte("salt: false\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	before := srv.Requests("/v1/chat/completions")
	err = Main(context.Background(), []string{"gate", "-q", "-c", conf, "--baselines", bases, "-o", filepath.Join(dir, "g.json")}, &so, &se)
	if code := exit.Code(err); code != exit.Usage {
		t.Fatalf("gate exit %d (%v), want %d", code, err, exit.Usage)
	}
	if !strings.Contains(err.Error(), "prompt salting: per-pass → off") {
		t.Errorf("error %q does not name the salting", err)
	}
	if n := srv.Requests("/v1/chat/completions") - before; n != 0 {
		t.Errorf("gate sent %d requests before refusing", n)
	}
}
