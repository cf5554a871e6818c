package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
	"github.com/perfgate/perfgate/internal/telemetry"
	"github.com/perfgate/perfgate/internal/version"
)

// Sender sends the run's requests and asks the target what it serves.
// *client.Client is the real one.
type Sender interface {
	run.Sender
	// ListModels asks the target for the models it serves (/v1/models).
	ListModels(ctx context.Context) ([]string, error)
	// CloseIdleConnections drops kept-alive connections: those to a
	// stopped stack are dead.
	CloseIdleConnections()
}

var _ Sender = (*client.Client)(nil)

// Options are what a run needs besides the config and the scenarios. The
// zero value is a quiet run against the real world.
type Options struct {
	// RunID makes request ids unique across runs and names the stack's
	// starts (RunID-1, RunID-2 ...); empty draws a random one.
	RunID string

	// StartStack starts the stack (nil: stack.Start). It is called once,
	// and again before each scenario that asks for a fresh stack.
	StartStack func(ctx context.Context, cfg config.Stack, o stack.Options) (stack.Instance, error)
	// Connect builds the sender for cfg's target once the stack answers
	// (nil: Connect, a *client.Client). It may resolve target.model: auto
	// in cfg.
	Connect func(ctx context.Context, cfg *config.Config) (Sender, error)
	// OpenTelemetry opens the engine and GPU telemetry at the first start
	// (nil: telemetry.Open). It may return a nil collector, which samples
	// nothing.
	OpenTelemetry func(ctx context.Context, o telemetry.Options) (*telemetry.Collector, result.TelemetryInfo, []result.GPU)
	// Clock times the run: its start and end, the readiness wait and the
	// cold start, the warm-up, the load and the cool-downs (nil:
	// run.RealClock).
	Clock run.Clock
	// FileLimit checks perfgate's own limit on open files before anything
	// is sent (zero value: the process's).
	FileLimit run.FileLimit

	// Name, if set, prefixes every phase's title: perfgate ab names its
	// two arms base and candidate.
	Name string
	// StackLog, if set, is where the stack's output goes instead of
	// stack.log (perfgate ab gives two arms that name one file a file
	// each), without changing the config or its hash.
	StackLog string
	// Rewarm is how an Arm (perfgate ab) warms a scenario up in a round
	// when its stack has not been restarted since its last warm-up of the
	// scenario: config.RewarmShort, a short re-warm, or config.RewarmFull
	// (empty: full). A stack just started or restarted always gets a full
	// warm-up. Run ignores it.
	Rewarm string

	// Phases prints where the run is; Progress the progress of each
	// repetition; Log, the detail within a phase and the warnings. Each is
	// silent when nil (perfgate run -q sets none).
	Phases   *run.Phases
	Progress *run.Progress
	Log      io.Writer
	// OnRecord, if set, receives every request's record, eval items' too.
	OnRecord func(*result.Record)
	// More, if set, makes repetitions sequential: asked after each
	// repetition from repetitions.min on, with the scenario measured so far,
	// whether to measure another (perfgate gate). Unset: repetitions.max.
	More func(partial *result.ScenarioResult) bool
	// LookupEnv reads the environment variables target.headers names
	// (nil: os.LookupEnv), once, as the run starts.
	LookupEnv func(name string) (string, bool)
}

// Run measures every scenario of cfg and returns the result, identity
// included; it writes no file. scenarios are run.Prepare's. It checks the
// limit on open files before anything is sent, and stops the stack before
// it returns, whatever happened. cfg's target.model: auto is resolved in
// place to the model the target serves first.
//
// Errors carry their exit code: a run that failed (the stack did not get
// ready or crashed, a repetition broke, perfgate ran out of open files) is
// exit.RunError, "interrupted: ..." when ctx was cancelled; a target the
// config cannot build a client for, and a ${VAR} in target.headers that the
// environment lacks, are exit.UsageError. A server that refuses the
// credentials (401, 403) fails it with a *CredentialsError.
//
// target.headers' ${VAR}s are read from the environment here, once; cfg
// keeps them as written, and nothing the run returns or writes holds their
// values (a server's message that echoes one has it redacted).
func Run(ctx context.Context, cfg *config.Config, scenarios []run.Scenario, o Options) (*result.Result, error) {
	configHash := cfg.Hash() // of the config as written, before model: auto is resolved
	headers, err := expandHeaders(cfg, o)
	if err != nil {
		return nil, err
	}

	// perfgate's own limits are its own errors, found before anything is
	// sent rather than counted as the server's connect errors.
	if err := o.FileLimit.Ensure(cfg); err != nil {
		return nil, exit.RunError(err)
	}
	s := newSession(cfg, o, headers)
	started := s.clock.Now()
	scenarioResults, err := s.measure(ctx, scenarios)
	if err != nil {
		return nil, err
	}

	return s.result(configHash, started, scenarioResults), nil
}

// result is the run's result: its identity, as far as the stack told it,
// and the scenarios measured between started and now.
func (s *session) result(configHash string, started time.Time, scenarios []result.ScenarioResult) *result.Result {
	cfg := s.cfg
	res := &result.Result{
		Schema: result.Schema,
		Identity: result.Identity{
			PerfgateVersion: version.String(),
			ConfigHash:      configHash,
			Target:          s.target(),
			Server:          s.server,
			Stack:           s.stackID,
			Host:            result.LocalHost(),
			GPUs:            s.gpus,
			Simulated:       s.server.Engine == "perfgate-sim",
		},
		StartedAt:   started.UTC(),
		FinishedAt:  s.clock.Now().UTC(),
		Scenarios:   scenarios,
		Compare:     new(cfg.Compare.Result()),
		Telemetry:   &s.telemetryInfo,
		Percentiles: cfg.ResultPercentiles(),
	}
	if cfg.Cost != nil {
		res.Cost = new(cfg.Cost.Result())
	}
	res.Utilization = s.basis
	return res
}

// newSession is a session of cfg, sending headers, with o's defaults
// filled in.
func newSession(cfg *config.Config, o Options, headers config.ExpandedHeaders) *session {
	s := &session{cfg: cfg, headers: headers, runID: o.RunID, name: o.Name, stackLog: o.StackLog, phases: o.Phases, progress: o.Progress, out: o.Log,
		onRecord: o.OnRecord, more: o.More, startFunc: o.StartStack, connectFunc: o.Connect,
		openTelemetryFunc: o.OpenTelemetry, clock: o.Clock}
	if s.runID == "" {
		s.runID = runID()
	}
	if s.startFunc == nil {
		s.startFunc = stack.Start
	}
	if s.connectFunc == nil {
		s.connectFunc = func(ctx context.Context, cfg *config.Config) (Sender, error) {
			c, err := connect(ctx, cfg, s.headers)
			if err != nil {
				return nil, err // not a typed nil in the interface
			}
			return routed(cfg, s.headers, c)
		}
	}
	if s.openTelemetryFunc == nil {
		s.openTelemetryFunc = telemetry.Open
	}
	if s.clock == nil {
		s.clock = run.RealClock{}
	}
	return s
}

// target is target(s.cfg, s.stackID) cleaned of the headers' secrets: a
// model id is the server's word when target.model is auto.
func (s *session) target() result.Target {
	t := target(s.cfg, s.stackID)
	t.Model = s.headers.Redact(t.Model)
	return t
}

// target is the result's account of where requests went and what model
// they asked for: the model's revision and quantisation as configured, or
// else as the stack's command line gives them.
func target(cfg *config.Config, st result.Stack) result.Target {
	t := result.Target{BaseURL: cfg.Target.BaseURL, API: cfg.Target.API, Model: cfg.Target.Model,
		Revision: cfg.Target.Revision, Quantization: cfg.Target.Quantization}
	revision, quantization := stack.ModelFlags(append(slices.Clone(st.Command), st.Args...))
	if t.Revision == "" {
		t.Revision = revision
	}
	if t.Quantization == "" {
		t.Quantization = quantization
	}
	return t
}

// Connect builds the client for cfg's target, checks that the server answers
// /v1/models, and resolves model: auto to the first model it lists (in cfg).
// It is the default of Options.Connect; its connection pool is sized for the
// run (run.Connections). It reads target.headers' ${VAR}s from the process
// environment (an unset one is exit.UsageError); a server that refuses the
// credentials is a *CredentialsError.
func Connect(ctx context.Context, cfg *config.Config) (*client.Client, error) {
	headers, err := expandHeaders(cfg, Options{})
	if err != nil {
		return nil, err
	}
	return connect(ctx, cfg, headers)
}

// connect is Connect with the headers expanded.
func connect(ctx context.Context, cfg *config.Config, headers config.ExpandedHeaders) (*client.Client, error) {
	newClient := func(model string) (*client.Client, error) {
		return targetClient(cfg, headers, cfg.Target.BaseURL, model)
	}
	c, err := newClient(cfg.Target.Model)
	if err != nil {
		return nil, err
	}
	models, err := c.ListModels(ctx)
	if st := refusedStatus(err); st != 0 {
		return nil, exit.RunError(&CredentialsError{Status: st, Headers: headers.Names(),
			Err: fmt.Errorf("target %s, asked for /v1/models: %w", cfg.Target.BaseURL, err)})
	}
	if err != nil {
		return nil, exit.RunError(fmt.Errorf("target %s is not answering /v1/models: %w (is the server up? `perfgate sim` starts a simulated one)", cfg.Target.BaseURL, err))
	}
	if cfg.Target.Model != "auto" {
		return c, nil
	}
	// An id that echoes a header's secret is never taken: the model
	// goes into the result, the terminal and the comment.
	models, dropped := withoutSecrets(models, headers)
	if len(models) == 0 {
		withheld := ""
		if dropped > 0 {
			withheld = fmt.Sprintf(" but %d that hold a value of target.headers' environment variables", dropped)
		}
		return nil, exit.RunError(fmt.Errorf("target %s lists no models%s, and target.model is auto", cfg.Target.BaseURL, withheld))
	}
	cfg.Target.Model = models[0]
	c.CloseIdleConnections()
	return newClient(cfg.Target.Model)
}

// targetClient is the client of the target's server at root (one replica
// of several, or the only one), asking for model; its connection pool is
// sized for the run (run.Connections).
func targetClient(cfg *config.Config, headers config.ExpandedHeaders, root, model string) (*client.Client, error) {
	pool, _ := run.Connections(cfg)
	c, err := client.New(client.Options{
		BaseURL: root, API: client.API(cfg.Target.API), Model: model,
		Headers: headers.Values, Redact: headers.Redactor(), Timeout: cfg.Target.Timeout, MaxConns: pool,
	})
	if err != nil {
		return nil, exit.UsageError(fmt.Errorf("target: %w", err))
	}
	return c, nil
}

// runID is a short random id that makes request ids unique across runs.
func runID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
