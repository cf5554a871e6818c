package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/stack"
	"github.com/perfgate/perfgate/internal/telemetry"
	"github.com/perfgate/perfgate/internal/workload"
)

// startSim starts the in-process simulator on loopback with short steps, and
// stops it when the test ends.
func startSim(t *testing.T) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.StepBase = time.Millisecond
	cfg.Jitter = 0
	srv, err := sim.Start(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatalf("start sim: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv.URL()
}

// prepare parses a config whose target is url and whose stack is a process
// (started by a fake, never run), and prepares its scenarios. scenarios is
// the YAML of the scenarios list; repetitions that of repetitions.
func prepare(t *testing.T, url, repetitions, scenarios string) (*config.Config, []run.Scenario) {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`
target: {base_url: %q}
stack:
  kind: process
  process: {command: [fake-engine, --revision, r1]}
  log: %s
warmup: {method: none}
telemetry: {metrics: off, gpu: off}
repetitions: %s
scenarios:
%s`, url, filepath.Join(dir, "stack.log"), repetitions, scenarios)
	path := filepath.Join(dir, "perfgate.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(yaml), path)
	if err != nil {
		t.Fatalf("config.Parse: %v", err)
	}
	sc, err := run.Prepare(cfg, nil)
	if err != nil {
		t.Fatalf("run.Prepare: %v", err)
	}
	return cfg, sc
}

// scenario is the YAML of one small closed-loop scenario: requests of 8
// prompt and 4 output tokens, two at a time.
func scenario(name string, requests int, extra string) string {
	return fmt.Sprintf(`  - name: %s
    synth: {requests: %d, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: closed, concurrency: 2}
%s`, name, requests, extra)
}

// fakeStack is a stack that runs nothing: the simulator answers for it. It
// exits when told to (a crash) or when stopped.
type fakeStack struct {
	done  chan struct{}
	once  sync.Once
	err   error // set before done is closed
	stops atomic.Int32
}

func newFakeStack() *fakeStack { return &fakeStack{done: make(chan struct{})} }

func (f *fakeStack) Done() <-chan struct{} { return f.done }
func (f *fakeStack) Err() error            { return f.err }
func (f *fakeStack) Tail(int) []string     { return []string{"fake: the last line"} }
func (f *fakeStack) Identity() result.Stack {
	return result.Stack{Kind: config.StackProcess, Command: []string{"fake-engine", "--revision", "r1"}}
}

func (f *fakeStack) Stop(context.Context) error {
	f.stops.Add(1)
	f.exit(nil)
	return nil
}

// exit ends the stack with err, once.
func (f *fakeStack) exit(err error) {
	f.once.Do(func() {
		f.err = err
		close(f.done)
	})
}

var _ stack.Instance = (*fakeStack)(nil)

// starter starts fake stacks and remembers each start.
type starter struct {
	mu     sync.Mutex
	stacks []*fakeStack
	opts   []stack.Options
	// exitAtOnce makes every stack exit as soon as it starts.
	exitAtOnce bool
}

func (s *starter) start(_ context.Context, cfg config.Stack, o stack.Options) (stack.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cfg.Kind != config.StackProcess {
		return nil, fmt.Errorf("stack kind %q, want process", cfg.Kind)
	}
	f := newFakeStack()
	if s.exitAtOnce {
		f.exit(&stack.ExitError{What: "process fake-engine", Code: 1, Tail: f.Tail(1)})
	}
	s.stacks = append(s.stacks, f)
	s.opts = append(s.opts, o)
	return f, nil
}

// stopped is how many times each stack started was stopped.
func (s *starter) stopped() []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int32
	for _, f := range s.stacks {
		out = append(out, f.stops.Load())
	}
	return out
}

// countingSender wraps the real client, counts what it sends and calls
// onSend (if set) after each request but the readiness probe.
type countingSender struct {
	*client.Client
	sent   atomic.Int32
	onSend func(n int32)
}

func (c *countingSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	resp := c.Client.Do(ctx, req, id)
	if !strings.HasSuffix(id, "-ready") {
		n := c.sent.Add(1)
		if c.onSend != nil {
			c.onSend(n)
		}
	}
	return resp
}

// shiftedClock is the real clock, shifted by a fixed offset: a run that
// takes its timestamps from Options.Clock shows the shift.
type shiftedClock struct{ offset time.Duration }

func (c shiftedClock) Now() time.Time { return time.Now().Add(c.offset) }
func (c shiftedClock) SleepUntil(ctx context.Context, t time.Time) error {
	return run.RealClock{}.SleepUntil(ctx, t.Add(-c.offset))
}

// A run of one scenario against a fake stack and the simulator measures its
// repetitions, identifies what served them, says what it does, and stops
// the stack once.
func TestRunOneScenario(t *testing.T) {
	url := startSim(t)
	cfg, scenarios := prepare(t, url, "2", scenario("chat", 8, ""))
	wantHash := cfg.Hash()
	st := &starter{}
	var log bytes.Buffer
	var records atomic.Int32
	var ids sync.Map
	const offset = 1000 * time.Hour
	before := time.Now()
	res, err := Run(context.Background(), cfg, scenarios, Options{
		RunID:      "testrun",
		StartStack: st.start,
		Clock:      shiftedClock{offset},
		Phases:     run.NewPhases(&log, false),
		Log:        &log,
		OnRecord: func(r *result.Record) {
			records.Add(1)
			ids.Store(r.RequestID, true)
		},
	})
	if err != nil {
		t.Fatalf("Run = %v, want no error; log:\n%s", err, log.String())
	}

	if got := len(st.opts); got != 1 {
		t.Fatalf("stack starts = %d, want 1", got)
	}
	if got, want := st.opts[0].RunID, "testrun-1"; got != want {
		t.Errorf("stack.Options.RunID = %q, want %q", got, want)
	}
	if got, want := st.opts[0].LogPath, cfg.Stack.Log; got != want {
		t.Errorf("stack.Options.LogPath = %q, want %q", got, want)
	}
	if got := st.stopped(); len(got) != 1 || got[0] != 1 {
		t.Errorf("stops per stack = %v, want [1]", got)
	}

	if got := len(res.Scenarios); got != 1 {
		t.Fatalf("scenarios = %d, want 1", got)
	}
	sc := res.Scenarios[0]
	if sc.Name != "chat" || len(sc.Repetitions) != 2 {
		t.Errorf("scenario = %s with %d repetitions, want chat with 2", sc.Name, len(sc.Repetitions))
	}
	for _, rep := range sc.Repetitions {
		if rep.Sent != 8 || rep.Completed != 8 {
			t.Errorf("repetition %d: sent %d, completed %d, want 8 and 8", rep.Index, rep.Sent, rep.Completed)
		}
	}
	if sc.ColdStartMS <= 0 {
		t.Errorf("ColdStartMS = %v, want > 0 for a managed stack", sc.ColdStartMS)
	}
	if sc.WorkloadShape == nil || sc.WorkloadShape.Requests != 8 || sc.WorkloadShape.PromptWords.Max != 8 {
		t.Errorf("WorkloadShape = %+v, want the shape of the scenario's 8 synthesised requests of 8 words", sc.WorkloadShape)
	}
	if got := records.Load(); got != 16 {
		t.Errorf("records = %d, want 16", got)
	}
	n := 0
	ids.Range(func(k, _ any) bool {
		n++
		if !strings.HasPrefix(k.(string), "testrun-chat-") {
			t.Errorf("request id %q does not start with the run id", k)
		}
		return true
	})
	if n != 16 {
		t.Errorf("distinct request ids = %d, want 16", n)
	}

	id := res.Identity
	if id.Server.Engine != "perfgate-sim" || !id.Simulated {
		t.Errorf("identity: engine %q, simulated %v; want perfgate-sim, true", id.Server.Engine, id.Simulated)
	}
	if id.Stack.Kind != config.StackProcess {
		t.Errorf("identity: stack kind %q, want the fake stack's %q", id.Stack.Kind, config.StackProcess)
	}
	if id.Target.Revision != "r1" {
		t.Errorf("identity: revision %q, want r1 (from the stack's --revision)", id.Target.Revision)
	}
	if id.ConfigHash != wantHash {
		t.Errorf("identity: config hash %q, want %q", id.ConfigHash, wantHash)
	}
	if res.StartedAt.Before(before.Add(offset-time.Minute)) || res.FinishedAt.Before(res.StartedAt) {
		t.Errorf("StartedAt %v, FinishedAt %v: not from the injected clock (%v after %v)", res.StartedAt, res.FinishedAt, offset, before)
	}

	for _, want := range []string{
		"==> starting stack: fake-engine --revision r1",
		"ready after ",
		"serving perfgate-sim-8b with perfgate-sim",
		"==> chat: no warm-up (warmup.method none)",
		"==> chat: measuring 2 repetitions",
		"==> stopping stack",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// A quiet run (no Phases, Progress or Log) writes nothing anywhere and still
// measures; the sender and telemetry are the injected ones.
func TestRunInjectsSenderAndTelemetry(t *testing.T) {
	url := startSim(t)
	cfg, scenarios := prepare(t, url, "1", scenario("chat", 6, ""))
	var sender *countingSender
	var telemetryOpts []telemetry.Options
	info := result.TelemetryInfo{Engine: result.SourceInfo{Unavailable: "not in this test"}}
	res, err := Run(context.Background(), cfg, scenarios, Options{
		StartStack: (&starter{}).start,
		Connect: func(ctx context.Context, cfg *config.Config) (Sender, error) {
			c, err := Connect(ctx, cfg)
			if err != nil {
				return nil, err
			}
			sender = &countingSender{Client: c}
			return sender, nil
		},
		OpenTelemetry: func(_ context.Context, o telemetry.Options) (*telemetry.Collector, result.TelemetryInfo, []result.GPU) {
			telemetryOpts = append(telemetryOpts, o)
			return nil, info, []result.GPU{{Model: "fake GPU"}}
		},
	})
	if err != nil {
		t.Fatalf("Run = %v, want no error", err)
	}
	if sender == nil || sender.sent.Load() != 6 {
		t.Fatalf("requests through the injected sender = %v, want 6", sender)
	}
	if len(telemetryOpts) != 1 {
		t.Fatalf("OpenTelemetry called %d times, want once", len(telemetryOpts))
	}
	if got := telemetryOpts[0].GPU.Mode; got != config.TelemetryOff {
		t.Errorf("telemetry GPU mode = %q, want %q", got, config.TelemetryOff)
	}
	if res.Telemetry == nil || *res.Telemetry != info {
		t.Errorf("result telemetry = %+v, want %+v", res.Telemetry, info)
	}
	if len(res.Identity.GPUs) != 1 || res.Identity.GPUs[0].Model != "fake GPU" {
		t.Errorf("identity GPUs = %+v, want the fake GPU", res.Identity.GPUs)
	}
}

// A stack that goes down while a scenario is measured fails the run with a
// *stack.CrashError (exit 3) naming the scenario, and is still stopped.
func TestRunStackCrashes(t *testing.T) {
	url := startSim(t)
	cfg, scenarios := prepare(t, url, "2", scenario("chat", 8, ""))
	st := &starter{}
	res, err := Run(context.Background(), cfg, scenarios, Options{
		StartStack: st.start,
		Connect: func(ctx context.Context, cfg *config.Config) (Sender, error) {
			c, err := Connect(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return &countingSender{Client: c, onSend: func(n int32) {
				if n == 3 { // the third measured request: mid-repetition
					st.stacks[0].exit(&stack.ExitError{What: "process fake-engine", Code: 139})
				}
			}}, nil
		},
	})
	wantCrash(t, res, err, "scenario chat: ", "the stack went down during the run", "process fake-engine exited with status 139")
	if got := st.stopped(); len(got) != 1 || got[0] != 1 {
		t.Errorf("stops per stack = %v, want [1]", got)
	}
}

// A stack whose requests fail as it goes down, and whose process ends a
// moment later, crashed: the run says so, not that the server failed under
// the load. (The watch may see the exit first, or only the wait after the
// broken repetition; the verdict must be the same.)
func TestRunFailuresAsTheStackGoesDownAreTheCrash(t *testing.T) {
	url := startSim(t)
	cfg, scenarios := prepare(t, url, "2", scenario("chat", 8, ""))
	st := &starter{}
	res, err := Run(context.Background(), cfg, scenarios, Options{
		StartStack: st.start,
		Connect: func(ctx context.Context, cfg *config.Config) (Sender, error) {
			c, err := Connect(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return &failingSender{countingSender: countingSender{Client: c}, onFail: func(n int32) {
				if n == 8 { // the last request of the repetition has failed
					go st.stacks[0].exit(&stack.ExitError{What: "process fake-engine", Code: 137})
				}
			}}, nil
		},
	})
	wantCrash(t, res, err, "scenario chat: ", "process fake-engine exited with status 137")
}

// failingSender sends each request (so the server sees it) but reports
// every one as failed, the way a server that is shutting down answers.
type failingSender struct {
	countingSender
	onFail func(n int32)
}

func (c *failingSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	resp := c.Client.Do(ctx, req, id)
	if strings.HasSuffix(id, "-ready") {
		return resp
	}
	resp.Err = &client.Error{Kind: client.ErrStream, Err: errors.New("server shutting down")}
	if c.onFail != nil {
		c.onFail(c.sent.Add(1))
	}
	return resp
}

// A stack that exits before it is ready is never measured: *NotReadyError,
// exit 3, and it is stopped all the same.
func TestRunStackNeverReady(t *testing.T) {
	cfg, scenarios := prepare(t, "http://127.0.0.1:1", "1", scenario("chat", 4, ""))
	st := &starter{exitAtOnce: true}
	var records atomic.Int32
	_, err := Run(context.Background(), cfg, scenarios, Options{
		StartStack: st.start,
		OnRecord:   func(*result.Record) { records.Add(1) },
	})
	var notReady *stack.NotReadyError
	if !errors.As(err, &notReady) {
		t.Fatalf("Run = %v, want a *stack.NotReadyError", err)
	}
	if got := exit.Code(err); got != exit.RunFailed {
		t.Errorf("exit.Code(%v) = %d, want %d", err, got, exit.RunFailed)
	}
	if n := records.Load(); n != 0 {
		t.Errorf("records = %d from a stack that was never ready, want 0", n)
	}
	if got := st.stopped(); len(got) != 1 || got[0] != 1 {
		t.Errorf("stops per stack = %v, want [1]", got)
	}
}

// A scenario with fresh_stack gets a stack of its own, and so does the
// scenario after it; each start logs to a file of its own.
func TestRunFreshStack(t *testing.T) {
	url := startSim(t)
	cfg, scenarios := prepare(t, url, "1",
		scenario("a", 2, "")+scenario("b", 2, "    fresh_stack: true\n")+scenario("c", 2, ""))
	st := &starter{}
	res, err := Run(context.Background(), cfg, scenarios, Options{RunID: "fresh", StartStack: st.start})
	if err != nil {
		t.Fatalf("Run = %v, want no error", err)
	}
	if got := len(res.Scenarios); got != 3 {
		t.Fatalf("scenarios = %d, want 3", got)
	}
	base := strings.TrimSuffix(cfg.Stack.Log, ".log")
	want := []stack.Options{
		{RunID: "fresh-1", LogPath: base + ".log"},
		{RunID: "fresh-2", LogPath: base + ".2.log"},
		{RunID: "fresh-3", LogPath: base + ".3.log"},
	}
	if len(st.opts) != len(want) {
		t.Fatalf("stack starts = %d, want %d", len(st.opts), len(want))
	}
	for i, w := range want {
		if st.opts[i].RunID != w.RunID || st.opts[i].LogPath != w.LogPath {
			t.Errorf("start %d: run id %q, log %q; want %q, %q", i+1, st.opts[i].RunID, st.opts[i].LogPath, w.RunID, w.LogPath)
		}
	}
	if got := st.stopped(); len(got) != 3 || got[0] != 1 || got[1] != 1 || got[2] != 1 {
		t.Errorf("stops per stack = %v, want [1 1 1]", got)
	}
}

// With repetitions {min, max}, More decides after each repetition from min
// on whether to measure another; with a fixed count it is never asked.
func TestRunMoreDecidesRepetitions(t *testing.T) {
	url := startSim(t)
	tests := []struct {
		name        string
		repetitions string
		stopAt      int   // More says no once this many are measured
		wantAsked   []int // repetitions measured at each question
		wantReps    int
		wantPhase   string
	}{
		{"stops when More says so", "{min: 2, max: 5}", 3, []int{2, 3}, 3, "chat: measuring 2 repetitions, up to 5 while a gate is undecided"},
		{"stops at max, not asked there", "{min: 2, max: 4}", 99, []int{2, 3}, 4, "chat: measuring 2 repetitions, up to 4 while a gate is undecided"},
		{"min suffices", "{min: 2, max: 4}", 2, []int{2}, 2, "chat: measuring 2 repetitions, up to 4 while a gate is undecided"},
		{"fixed: never asked", "3", 1, nil, 3, "chat: measuring 3 repetitions\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, scenarios := prepare(t, url, tt.repetitions, scenario("chat", 2, ""))
			var asked []int
			var phases bytes.Buffer
			res, err := Run(context.Background(), cfg, scenarios, Options{
				StartStack: (&starter{}).start,
				Phases:     run.NewPhases(&phases, true), // GitHub's log groups: no elapsed time on the line
				More: func(p *result.ScenarioResult) bool {
					if p.Name != "chat" {
						t.Errorf("More asked about %q, want chat", p.Name)
					}
					asked = append(asked, len(p.Repetitions))
					return len(p.Repetitions) < tt.stopAt
				},
			})
			if err != nil {
				t.Fatalf("Run = %v, want no error", err)
			}
			if fmt.Sprint(asked) != fmt.Sprint(tt.wantAsked) {
				t.Errorf("More asked at %v repetitions, want %v", asked, tt.wantAsked)
			}
			if got := len(res.Scenarios[0].Repetitions); got != tt.wantReps {
				t.Errorf("repetitions = %d, want %d", got, tt.wantReps)
			}
			if !strings.Contains(phases.String(), "::group::"+tt.wantPhase) {
				t.Errorf("phases lack %q:\n%s", tt.wantPhase, phases.String())
			}
		})
	}
}

// A run interrupted (its context cancelled) says so, exits 3 and stops the
// stack.
func TestRunInterrupted(t *testing.T) {
	url := startSim(t)
	cfg, scenarios := prepare(t, url, "3", scenario("chat", 8, ""))
	st := &starter{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Run(ctx, cfg, scenarios, Options{
		StartStack: st.start,
		OnRecord:   func(*result.Record) { cancel() },
	})
	if err == nil || !strings.HasPrefix(err.Error(), "interrupted: ") {
		t.Fatalf("Run = %v, want an error starting \"interrupted: \"", err)
	}
	if got := exit.Code(err); got != exit.RunFailed {
		t.Errorf("exit.Code(%v) = %d, want %d", err, got, exit.RunFailed)
	}
	if got := st.stopped(); len(got) != 1 || got[0] != 1 {
		t.Errorf("stops per stack = %v, want [1]", got)
	}
}

// perfgate's own limit on open files refuses the run before any stack
// starts or anything is sent.
func TestRunRefusesTooFewFiles(t *testing.T) {
	cfg, scenarios := prepare(t, "http://127.0.0.1:1", "1", scenario("chat", 2, ""))
	st := &starter{}
	_, err := Run(context.Background(), cfg, scenarios, Options{
		StartStack: st.start,
		FileLimit:  run.FileLimit{Get: func() (uint64, uint64, error) { return 10, 10, nil }},
	})
	var files *run.OpenFilesError
	if !errors.As(err, &files) {
		t.Fatalf("Run = %v, want a *run.OpenFilesError", err)
	}
	if got := exit.Code(err); got != exit.RunFailed {
		t.Errorf("exit.Code(%v) = %d, want %d", err, got, exit.RunFailed)
	}
	if n := len(st.opts); n != 0 {
		t.Errorf("stack starts = %d after a refusal, want 0", n)
	}
}

// An external target that does not answer fails, once
// stack.external_ready_timeout has passed, with the hint to start one.
func TestRunExternalTargetDown(t *testing.T) {
	dir := t.TempDir()
	yaml := `
target: {base_url: "http://127.0.0.1:1"}
warmup: {method: none}
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
	// The clock jumps through the 30 s of stack.external_ready_timeout.
	_, err = Run(context.Background(), cfg, scenarios, Options{Clock: &jumpClock{now: time.Unix(1_000_000, 0)}})
	if got := exit.Code(err); got != exit.RunFailed {
		t.Fatalf("exit.Code(%v) = %d, want %d", err, got, exit.RunFailed)
	}
	if !strings.Contains(err.Error(), "`perfgate sim` starts a simulated one") {
		t.Errorf("error %q lacks the hint to start a simulator", err)
	}
}

// wantCrash checks a run that crashed: no result, a *stack.CrashError,
// exit 3, and an error that says each of wants.
func wantCrash(t *testing.T, res *result.Result, err error, wants ...string) {
	t.Helper()
	if res != nil {
		t.Errorf("Run returned a result for a crashed run")
	}
	var crash *stack.CrashError
	if !errors.As(err, &crash) {
		t.Fatalf("Run = %v, want a *stack.CrashError", err)
	}
	if got := exit.Code(err); got != exit.RunFailed {
		t.Errorf("exit.Code(%v) = %d, want %d", err, got, exit.RunFailed)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
