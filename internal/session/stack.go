package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/httpguard"
	"github.com/perfgate/perfgate/internal/quality"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
	"github.com/perfgate/perfgate/internal/telemetry"
	"github.com/perfgate/perfgate/internal/utilization"
	"github.com/perfgate/perfgate/internal/workload"
)

// readyPoll is how often readiness is polled while a stack starts: the
// resolution of the cold-start metric.
const readyPoll = 200 * time.Millisecond

// answerIsFinal says whether an external server's failed readiness check
// will fail the same however long perfgate waits: a redirect, or a client
// error (400 bad request, 401 and 403 credentials, 404 a wrong path or
// model...), but not 408 (timeout), 425 (too early) or 429 (rate limit),
// which say to come back later.
func answerIsFinal(err error) bool {
	status := 0
	var he *stack.HealthStatusError
	var ce *client.Error
	var re *httpguard.RedirectError
	switch {
	case errors.As(err, &re):
		return true
	case errors.As(err, &he):
		status = he.Status
	case errors.As(err, &ce) && ce.Kind == client.ErrHTTP:
		status = ce.Status
	}
	switch status {
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return status >= 300 && status < 500
}

// externalBackoff and externalMaxBackoff space the readiness checks of an
// external server: 0.5 s after the first failure, doubling to 5 s, so that
// the default stack.external_ready_timeout of 30 s makes nine checks.
const (
	externalBackoff    = 500 * time.Millisecond
	externalMaxBackoff = 5 * time.Second
)

// session owns the life of one run: it starts the stack (again, for a
// scenario that asks for a fresh one), waits until it is ready, identifies it,
// warms each scenario up to steady state under a crash watch, measures the
// repetitions, and stops the stack on every path out.
type session struct {
	cfg      *config.Config
	headers  config.ExpandedHeaders // target.headers as sent: keep out of anything written
	runID    string
	name     string // prefixes the phases' titles (Options.Name)
	stackLog string // overrides stack.log (Options.StackLog)
	phases   *run.Phases
	progress *run.Progress
	onRecord func(*result.Record)
	out      io.Writer // phase detail (stderr), nil when quiet
	// more, if set, makes repetitions sequential (see Options.More).
	more func(partial *result.ScenarioResult) bool

	// The world outside, from Options.
	startFunc         func(ctx context.Context, cfg config.Stack, o stack.Options) (stack.Instance, error)
	connectFunc       func(ctx context.Context, cfg *config.Config) (Sender, error)
	openTelemetryFunc func(ctx context.Context, o telemetry.Options) (*telemetry.Collector, result.TelemetryInfo, []result.GPU)
	clock             run.Clock

	inst      stack.Instance
	starts    int
	coldStart time.Duration
	shared    bool // the running stack may serve the next scenario
	client    Sender

	// Identity, from the first start.
	server  result.Server
	stackID result.Stack
	gpus    []result.GPU

	// telemetry samples the engine and the GPUs during each repetition;
	// opened at the first start.
	telemetry     *telemetry.Collector
	telemetryInfo result.TelemetryInfo
	// basis is what MBU and MFU are computed from; nil when they cannot
	// be (utilizationBasis says why).
	basis *result.UtilizationBasis
}

// health is the stack's health check, at interval, with the target's
// headers.
func (s *session) health(interval time.Duration) stack.Health {
	return stack.Health{BaseURL: s.cfg.Target.BaseURL, Path: s.cfg.Stack.HealthPath, Interval: interval,
		Headers: s.headers.Values, Redact: s.headers.Redactor()}
}

// measure runs every scenario and returns their results. The stack is stopped
// before it returns, whatever happened.
func (s *session) measure(ctx context.Context, scenarios []run.Scenario) ([]result.ScenarioResult, error) {
	defer func() {
		s.stopStack()
		s.closeRouter()
		if err := s.telemetry.Close(); err != nil && s.out != nil {
			fmt.Fprintf(s.out, "warning: GPU telemetry: %v\n", err)
		}
	}()
	out := make([]result.ScenarioResult, 0, len(scenarios))
	for i, sc := range scenarios {
		if s.inst == nil || sc.Config.FreshStack || !s.shared {
			s.stopStack()
			if err := s.startStack(ctx); err != nil {
				return nil, interrupted(ctx, err)
			}
		}
		s.shared = !sc.Config.FreshStack
		s.progress.Scenario(sc.Config.Name, i+1, len(scenarios)) // timed from its warm-up on
		res, err := s.scenario(ctx, sc)
		if err != nil {
			return nil, interrupted(ctx, err)
		}
		s.progress.ScenarioDone(&res)
		out = append(out, res)
	}
	s.phases.End()
	return out, nil
}

// interrupted says so when err is perfgate being stopped by a signal.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return exit.RunError(fmt.Errorf("interrupted: %w", err))
	}
	return exit.RunError(err)
}

// logPath is where the n-th start's output goes: stack.log as configured for
// the first, with .2, .3 ... before the extension for later ones.
func (s *session) logPath(n int) string {
	p := s.cfg.Stack.Log
	if s.stackLog != "" {
		p = s.stackLog
	}
	if n <= 1 {
		return p
	}
	ext := filepath.Ext(p)
	return fmt.Sprintf("%s.%d%s", strings.TrimSuffix(p, ext), n, ext)
}

// startStack starts the stack, waits until it is ready and records its cold
// start and, the first time, its identity.
func (s *session) startStack(ctx context.Context) error {
	st := s.cfg.Stack
	s.starts++
	managed := st.Kind != config.StackExternal
	switch {
	case !managed:
		s.begin(fmt.Sprintf("checking the server at %s", s.cfg.Target.BaseURL))
	case st.Kind == config.StackProcess:
		s.begin(fmt.Sprintf("starting stack: %s", strings.Join(st.Process.Command, " ")))
	case st.Kind == config.StackKubernetes:
		s.begin(fmt.Sprintf("starting stack: %s on Kubernetes, in a namespace of the run's own", strings.Join(st.Kubernetes.Manifests, ", ")))
	default:
		s.begin(fmt.Sprintf("starting stack: container %s", st.Docker.Image))
	}
	inst, err := s.startFunc(ctx, st, stack.Options{
		RunID: fmt.Sprintf("%s-%d", s.runID, s.starts), LogPath: s.logPath(s.starts),
		Dir: s.cfg.StackDir(), Grace: st.StopGrace, Target: s.cfg.Target.BaseURL, Replicas: s.cfg.Target.BaseURLs,
		Notice: func(msg string) { s.detail("%s", msg) },
	})
	if err != nil {
		return fmt.Errorf("start stack: %w", err)
	}
	if a, ok := inst.(stack.Addressed); ok {
		// Known only now: a port-forward's local end for each ready
		// pod, or the Service's name in the run's namespace.
		if roots := a.BaseURLs(); len(roots) > 0 {
			s.cfg.Target.BaseURL, s.cfg.Target.BaseURLs = roots[0], nil
			if len(roots) > 1 {
				s.cfg.Target.BaseURLs = roots
			}
			// A fresh stack is other pods at other addresses: connect anew.
			s.closeRouter()
			s.client = nil
			s.detail("serving objects ready; the server is at %s", strings.Join(roots, ", "))
		}
	}
	// The cold start counts from the moment the process or container runs:
	// an image pull before it depends on the runner's cache, not on the
	// stack, and would make the metric useless for gating.
	t0 := s.clock.Now()
	s.inst = inst
	// Credentials the server refuses stay refused: the wait ends at once.
	wait := stack.Wait{Timeout: st.ReadyTimeout, Clock: s.clock, Progress: func(msg string) { s.detail("%s", msg) },
		Final: func(err error) bool { return refusedStatus(err) != 0 }}
	if managed {
		logs := s.logPath(s.starts)
		if st.Kind == config.StackKubernetes {
			logs = "the pods' logs (a failed pod's last lines are quoted)"
		}
		if n := len(s.cfg.Target.BaseURLs); n > 1 && st.Kind == config.StackProcess {
			logs = fmt.Sprintf("%s ... %s (a log a replica)", stack.ReplicaLog(logs, 0, n), stack.ReplicaLog(logs, n-1, n))
		}
		s.detail("output goes to %s; waiting up to %s for %s to answer 200 and a one-token completion",
			logs, st.ReadyTimeout, healthDesc(st.HealthPath))
	} else {
		// perfgate does not start an external server: it should be up
		// now, and is given a short while with backoff to ride out a
		// check that happens to fail.
		wait.Timeout, wait.Key = st.ExternalReadyTimeout, "stack.external_ready_timeout"
		wait.Subject = "target " + s.cfg.Target.BaseURL
		wait.Backoff, wait.MaxBackoff = externalBackoff, externalMaxBackoff
		wait.Final = answerIsFinal
	}
	ready, err := s.waitReady(ctx, inst, wait)
	if err != nil {
		var nre *stack.NotReadyError
		switch {
		case errors.As(err, &nre) && nre.Exit == nil && refusedStatus(nre.Last) != 0:
			err = s.credentials(refusedStatus(nre.Last), err)
		case !managed && errors.As(err, &nre):
			err = fmt.Errorf("%w (is the server up? `perfgate sim` starts a simulated one)", err)
		}
		return err
	}
	if !managed && ready.Failed != nil {
		s.detail("ready at attempt %d, after %s; the one before failed: %v",
			ready.Attempts, ready.After.Round(time.Millisecond), ready.Failed)
	}
	if managed {
		s.coldStart = s.clock.Now().Sub(t0)
		s.detail("ready after %s (cold start)", s.coldStart.Round(time.Millisecond))
	}
	if s.starts == 1 {
		var problems []error
		s.server, problems = stack.Identify(ctx, stack.HeaderClient(s.headers.Values), s.cfg.Target.BaseURL, st.Engine)
		for _, p := range problems {
			// A redirect's error quotes the server's Location: redacted
			// whole, before its message cuts it short.
			var re *httpguard.RedirectError
			if errors.As(p, &re) {
				re.Redact = s.headers.Redactor()
			}
			s.detail("warning: identity: %s", s.headers.Redact(p.Error()))
		}
		models, err := s.client.ListModels(ctx)
		if err != nil {
			return s.credentials(refusedStatus(err), fmt.Errorf("target %s: list models: %w", s.cfg.Target.BaseURL, err))
		}
		models, dropped := withoutSecrets(models, s.headers)
		if dropped > 0 {
			s.detail("warning: the server lists %d model id(s) holding a value of target.headers' environment variables; left out of the result", dropped)
		}
		s.server.Models = models
		s.redactServer()
		s.stackID = inst.Identity()
		who := s.server.Engine
		if who == "" {
			who = "an engine that did not say what it is"
		} else if s.server.Version != "" {
			who += " " + s.server.Version
		}
		s.detail("serving %s with %s", s.cfg.Target.Model, who)
		s.openTelemetry(ctx)
		s.utilizationBasis(ctx)
	}
	return nil
}

// waitReady waits until every replica of the stack is ready, in turn, all
// within wait's timeout: one server's readiness, or each of
// target.base_urls'.
func (s *session) waitReady(ctx context.Context, inst stack.Instance, wait stack.Wait) (stack.Readiness, error) {
	roots := s.cfg.Target.Replicas()
	if len(roots) < 2 {
		return stack.WaitReady(ctx, inst, s.health(readyPoll), wait, s.probe)
	}
	t0 := s.clock.Now()
	var ready stack.Readiness
	for i, root := range roots {
		w := wait
		w.Timeout = wait.Timeout - s.clock.Now().Sub(t0)
		w.Subject = fmt.Sprintf("replica %d of %d (%s)", i+1, len(roots), root)
		one := inst // a not-ready replica's error quotes its own log
		if reps, ok := inst.(stack.Replicas); ok {
			one = reps.Replica(i)
		}
		r, err := stack.WaitReady(ctx, one, s.healthAt(root, readyPoll), w, s.replicaProbe(i))
		if err != nil {
			return r, err
		}
		ready = r
	}
	return ready, nil
}

// redactServer cleans the server's account of itself, which the result
// keeps, of the headers' secrets, should it echo one.
func (s *session) redactServer() {
	if !s.headers.HasSecrets() {
		return
	}
	s.server.Engine, s.server.Version = s.headers.Redact(s.server.Engine), s.headers.Redact(s.server.Version)
	for i, m := range s.server.Models {
		s.server.Models[i] = s.headers.Redact(m)
	}
	if raw := s.headers.Redact(string(s.server.Raw)); raw != string(s.server.Raw) {
		s.server.Raw = nil // dropped when redacting left it no longer JSON
		if json.Valid([]byte(raw)) {
			s.server.Raw = []byte(raw)
		}
	}
}

// openTelemetry finds the engine's metrics page and a GPU source, and
// says once what will be sampled and what is unavailable.
func (s *session) openTelemetry(ctx context.Context) {
	t := s.cfg.Telemetry
	// A stack restarted for a fresh_stack scenario is another container:
	// nvidia-smi runs in whichever is running when it samples.
	inContainer := func(ctx context.Context, argv []string) ([]byte, error) {
		ex, ok := s.inst.(stack.Execer)
		if !ok {
			return nil, errors.New("the stack is not a container")
		}
		return ex.Exec(ctx, argv)
	}
	gpu := telemetry.GPUOptions{
		Mode: t.GPU, NvidiaSMI: t.NvidiaSMI, DCGMURL: t.DCGMURL,
		Simulated: s.server.Engine == "perfgate-sim",
	}
	if ex, ok := s.inst.(stack.Execer); ok {
		gpu.Container, gpu.Where = inContainer, ex.ExecWhere()
	}
	opts := telemetry.Options{
		MetricsURL: s.cfg.MetricsURL(), GPU: gpu, Devices: t.Devices, Interval: t.Interval,
	}
	if config.SameOrigin(opts.MetricsURL, s.cfg.Target.BaseURL) {
		opts.OneOf = len(s.cfg.Target.Replicas())
	}
	if config.SameOrigin(opts.MetricsURL, s.cfg.Target.BaseURL) {
		// The target's own page: llama-server's --api-key guards /metrics
		// too. A page elsewhere (a sidecar, DCGM) never gets the key.
		opts.MetricsHeader, opts.MetricsRedact = s.headers.Values, s.headers.Redactor()
	}
	c, info, gpus := s.openTelemetryFunc(ctx, opts)
	if c != nil {
		c.Warn = func(msg string) { s.detail("warning: %s", msg) }
	}
	s.telemetry, s.telemetryInfo, s.gpus = c, info, gpus
	for _, src := range []struct {
		name string
		info result.SourceInfo
	}{{"engine", info.Engine}, {"GPU", info.GPU}} {
		switch {
		case src.info.Available():
			s.detail("%s telemetry: %s, every %s", src.name, src.info.Source, t.Interval)
		case src.info.Off():
			s.detail("%s telemetry: %s", src.name, src.info.Unavailable)
		default:
			s.detail("%s telemetry: unavailable: %s", src.name, src.info.Unavailable)
		}
	}
}

// observe is each repetition's telemetry window, and prices it.
func (s *session) observe(ctx context.Context) func(*result.Repetition) {
	end := s.telemetry.Begin(ctx)
	counter, _ := s.inst.(stack.ReplicaCounter)
	begun := time.Now() // the cluster's watch counts on the wall clock
	return func(rep *result.Repetition) {
		end(rep)
		if rep != nil && counter != nil {
			rep.Replicas = counter.ReadyReplicas(begun, time.Now())
			if len(rep.Replicas) > result.MaxReadyReplicas {
				rep.Replicas = rep.Replicas[:result.MaxReadyReplicas]
			}
		}
		if rep != nil && s.cfg.Cost != nil {
			rep.Cost = result.CostOf(rep, s.cfg.Cost.Result())
		}
		if rep != nil {
			rep.Utilization = utilization.Compute(s.basis, rep)
		}
	}
}

func healthDesc(path string) string {
	if path == "none" {
		return "the server"
	}
	if path == stack.ModelsPath {
		return path
	}
	return path + " (or " + stack.ModelsPath + " when it answers 404 or 405)"
}

// probe is the readiness completion: connect (resolving model: auto on the
// first success) and send one request for one token.
func (s *session) probe(ctx context.Context) error {
	if s.client == nil {
		c, err := s.connectFunc(ctx, s.cfg)
		if err != nil {
			var ce *CredentialsError
			if errors.As(err, &ce) {
				return ce.Err // startStack names the refusal, once
			}
			return err
		}
		s.client = c
	}
	resp := s.client.Do(ctx, readinessRequest(s.cfg.Target.API), fmt.Sprintf("perfgate-%s-ready", s.runID))
	if resp.Err != nil {
		return resp.Err
	}
	return nil
}

// readinessRequest is the one-token request that says a server is ready,
// for api (chat or completions).
func readinessRequest(api string) *workload.Request {
	req := &workload.Request{MaxTokens: 1}
	if api == "completions" {
		req.Prompt = "Say OK."
	} else {
		req.Messages = []workload.Message{{Role: "user", Content: "Say OK."}}
	}
	return req
}

// stopStack stops the running stack, if any, even when perfgate is being
// interrupted, and reports a failure to stop on the log (it cannot change
// the run's outcome, which is already decided).
func (s *session) stopStack() {
	if s.inst == nil {
		return
	}
	inst := s.inst
	s.inst = nil
	if s.cfg.Stack.Kind != config.StackExternal {
		s.begin("stopping stack")
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Stack.StopGrace+30*time.Second)
	defer cancel()
	if err := inst.Stop(ctx); err != nil && s.out != nil {
		fmt.Fprintf(s.out, "warning: %v\n", err)
	}
	if s.client != nil {
		s.client.CloseIdleConnections() // connections to a stopped server are dead
	}
	s.phases.End()
}

// begin starts a phase, its title prefixed with the run's name when it has
// one (perfgate ab's "base: ", "candidate: ").
func (s *session) begin(title string) {
	if s.name != "" {
		title = s.name + ": " + title
	}
	s.phases.Begin(title)
}

// detail prints one line within the current phase, unless quiet.
func (s *session) detail(format string, args ...any) {
	if s.out != nil {
		s.phases.Printf(format, args...)
	}
}

// crashBehind returns the *stack.CrashError of a stack perfgate started
// that exits within stack.ExitGrace of a failure, or nil. A warm-up or
// repetition that failed because the server was going down reports the
// crash, not the server's failure under load; an external stack, whose
// process perfgate cannot see, is never waited for.
func (s *session) crashBehind(ctx context.Context, err error) *stack.CrashError {
	if s.inst == nil || s.cfg.Stack.Kind == config.StackExternal || !requestsFailed(err) {
		return nil
	}
	return stack.ExitedWithin(ctx, s.inst, stack.ExitGrace)
}

// requestsFailed says err is a warm-up's or a repetition's verdict on
// failed requests, which a stack going down causes: other errors are not
// waited on.
func requestsFailed(err error) bool {
	var broken *run.BrokenError
	var failing *run.FailingError
	var unsteady *run.UnsteadyError
	var evals *quality.FailedError
	return errors.As(err, &broken) || errors.As(err, &failing) || errors.As(err, &unsteady) || errors.As(err, &evals)
}
