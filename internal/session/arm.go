package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
)

// Arm is a stack held open across many short measurements: one side of an
// A/B (perfgate ab), which measures one repetition of each scenario per
// round on each of two stacks. Where Run measures a scenario's repetitions
// in one go, an Arm is told what to measure next:
//
//	a, err := session.Open(ctx, cfg, session.Options{Name: "base"})
//	defer a.Stop()
//	err = a.Round(ctx, sc, 1) // warm sc up to steady state, then measure repetition 1
//	err = a.Round(ctx, sc, 2) // the stack stayed up: a short re-warm (Options.Rewarm), then repetition 2
//	err = a.Restart(ctx)      // swap mode: a new cold start; the next round warms up fully
//	err = a.Finish(ctx)       // answer the eval items the rounds did not carry
//	res := a.Result()
//
// Its stack is watched from the moment it is ready: a crash, even between
// rounds, cancels whatever runs under Guard, and the next call returns it.
// An Arm is used from one goroutine at a time.
type Arm struct {
	s          *session
	configHash string
	started    time.Time

	order      []string // scenario names, in the order first measured
	scenarios  map[string]*result.ScenarioResult
	evals      map[string]*evalRun
	prepared   map[string]run.Scenario
	coldStarts []float64 // every start's, in milliseconds

	rewarm   string         // Options.Rewarm
	starts   int            // how many times the stack was started
	warmedOn map[string]int // per scenario, the start its last warm-up was on

	watch     context.Context
	stopWatch func()
}

// Open starts cfg's stack as Run does (checking perfgate's limit on open
// files first), waits until it is ready and identifies it. The Arm holds the
// stack until Stop; on an error nothing is left running. Errors carry their
// exit codes as Run's do.
func Open(ctx context.Context, cfg *config.Config, o Options) (*Arm, error) {
	configHash := cfg.Hash()
	headers, err := expandHeaders(cfg, o)
	if err != nil {
		return nil, err
	}
	if err := o.FileLimit.Ensure(cfg); err != nil {
		return nil, exit.RunError(err)
	}
	s := newSession(cfg, o, headers)
	a := &Arm{s: s, configHash: configHash, started: s.clock.Now(), rewarm: o.Rewarm, warmedOn: map[string]int{},
		scenarios: map[string]*result.ScenarioResult{}, evals: map[string]*evalRun{}, prepared: map[string]run.Scenario{}}
	if err := a.start(ctx); err != nil {
		a.Stop()
		return nil, err
	}
	return a, nil
}

// start starts the stack and watches it.
func (a *Arm) start(ctx context.Context) error {
	s := a.s
	if err := s.startStack(ctx); err != nil {
		return interrupted(ctx, err)
	}
	a.starts++
	if s.cfg.Stack.Kind != config.StackExternal {
		a.coldStarts = append(a.coldStarts, ms(s.coldStart))
	}
	a.watch, a.stopWatch = stack.Watch(context.Background(), s.inst, s.health(s.cfg.Stack.HealthInterval), s.cfg.Stack.HealthFailures)
	return nil
}

// endWatch stops watching the stack, and returns its crash if it had
// crashed (exited on its own, or failed its health checks), else nil.
func (a *Arm) endWatch() error {
	if a.stopWatch == nil {
		return nil
	}
	a.stopWatch()
	a.stopWatch = nil
	return a.crash()
}

// crash is the watch's *stack.CrashError, named for the arm, or nil.
func (a *Arm) crash() error { return a.crashOf(a.watch) }

// crashOf is watch's *stack.CrashError, named for the arm, or nil.
func (a *Arm) crashOf(watch context.Context) error {
	if watch == nil {
		return nil
	}
	var crash *stack.CrashError
	if errors.As(context.Cause(watch), &crash) {
		return a.named(crash)
	}
	return nil
}

// named prefixes err with the arm's name, when it has one.
func (a *Arm) named(err error) error {
	if a.s.name == "" {
		return err
	}
	return fmt.Errorf("the %s stack: %w", a.s.name, err)
}

// Guard returns a context derived from ctx that is cancelled, with the
// stack's *stack.CrashError as its cause, as soon as this arm's stack
// crashes. perfgate ab measures each arm under both arms' guards in
// co-resident mode, so that a crash of the idle stack stops the run too.
// Call cancel when done.
func (a *Arm) Guard(ctx context.Context) (guarded context.Context, cancel context.CancelFunc) {
	gctx, cancelCause := context.WithCancelCause(ctx)
	watch := a.watch
	if watch == nil {
		return gctx, func() { cancelCause(context.Canceled) }
	}
	stopAfter := context.AfterFunc(watch, func() {
		if err := a.crashOf(watch); err != nil {
			cancelCause(err)
		}
	})
	return gctx, func() {
		stopAfter()
		cancelCause(context.Canceled)
	}
}

// Restart stops the stack and starts it again: a new cold start, which is
// recorded (ColdStartsMS). A stack that crashed before it was stopped is
// that crash, not a restart. Telemetry goes on from one start to the next.
func (a *Arm) Restart(ctx context.Context) error { return a.restart(ctx, true) }

// Resume starts the stack again after Pause for work that is not a round
// (eval items left after the last one): its cold start is not a sample.
func (a *Arm) Resume(ctx context.Context) error { return a.restart(ctx, false) }

// restart stops the stack if it runs, and starts it again; sample says
// whether the cold start is recorded.
func (a *Arm) restart(ctx context.Context, sample bool) error {
	if err := a.Pause(); err != nil {
		return err
	}
	starts := len(a.coldStarts)
	if err := a.start(ctx); err != nil {
		return a.named(err)
	}
	if !sample {
		a.coldStarts = a.coldStarts[:starts]
	}
	return nil
}

// Pause stops the stack on purpose (perfgate ab's swap mode, at a change of
// arm), keeping everything else, telemetry included, for the next start. A
// crash the watch saw, or an exit it had not yet seen, is returned as
// exit.RunError.
func (a *Arm) Pause() error {
	err := a.endWatch()
	a.s.stopStack()
	if err != nil {
		return exit.RunError(err)
	}
	return nil
}

// Close stops the stack after the last round, as Pause does (reporting a
// crash the watch had not yet seen), and closes telemetry.
func (a *Arm) Close() error {
	err := a.Pause()
	a.Stop()
	return err
}

// Stop stops the stack and closes telemetry, whatever state they are in;
// safe to call more than once. Use it on the way out of a failure.
func (a *Arm) Stop() {
	_ = a.endWatch()
	a.s.stopStack()
	a.s.closeRouter()
	if a.s.telemetry != nil {
		if err := a.s.telemetry.Close(); err != nil && a.s.out != nil {
			fmt.Fprintf(a.s.out, "warning: GPU telemetry: %v\n", err)
		}
		a.s.telemetry = nil
	}
}

// Round warms sc up, then, after the cool-down, measures repetition rep of
// it (the same seeded arrivals and salted text as repetition rep of any
// other run of sc, the other arm's among them). Eval items, when sc
// carries them in interleaved mode, are mixed into the load round after
// round until each has been sent once.
//
// The warm-up is full, to steady state as Run's before a scenario's
// repetitions, on a stack started (or restarted) since the scenario's last
// warm-up; on one that stayed up it is a short re-warm when
// Options.Rewarm says short (run.Warmup.Short). Either way its passes are
// salted for this arm and round (run.Warmup.SaltTag), so that no warm-up
// sends text an earlier warm-up or repetition of the arm sent, and its
// request ids name the round. The scenario's result keeps every round's
// warm-up (Warmups), and the first full one, or the first full one that
// was not steady, as Warmup.
//
// A broken repetition (no request completed, or too many failed), a
// warm-up that fails, or a crash of the stack fails it: exit.RunError.
func (a *Arm) Round(ctx context.Context, sc run.Scenario, rep int) error {
	s := a.s
	c := sc.Config
	if err := a.crash(); err != nil {
		return exit.RunError(err)
	}
	outer := ctx
	ctx, cancel := a.Guard(ctx)
	defer cancel()
	refused := &refusals{Sender: s.client}
	fail := func(err error) error {
		if cause := CauseOr(ctx, err); cause != err {
			// A crash or a signal: say which scenario it stopped (the
			// run's own errors name it already).
			err = fmt.Errorf("scenario %s: %w", c.Name, cause)
		} else if outer.Err() == nil {
			// Requests that failed as the stack went down: the crash,
			// not the server's answer to the load.
			if crash := s.crashBehind(outer, err); crash != nil {
				err = fmt.Errorf("scenario %s: %w", c.Name, a.named(crash))
			}
		}
		return interrupted(outer, s.explain(refused, err))
	}

	res := a.scenarios[c.Name]
	if res == nil {
		r := s.scenarioResult(sc)
		res = &r
		a.scenarios[c.Name], a.prepared[c.Name] = res, sc
		a.order = append(a.order, c.Name)
		a.evals[c.Name] = s.evals(sc)
	}
	dispatcher := &run.Dispatcher{Sender: refused, Clock: s.clock}
	kind := a.warmupKind(c.Name)
	how := warming{title: fmt.Sprintf("%s round %d", c.Name, rep), saltTag: fmt.Sprintf("round-%d", rep),
		runID: fmt.Sprintf("%s-round%d", s.runID, rep), short: kind == result.WarmupShort}
	if s.name != "" {
		how.saltTag = s.name + "/" + how.saltTag
	}
	wres, err := s.warmUpAs(ctx, sc, dispatcher, how)
	if wres != nil {
		// Every round's, even one that failed: an incomplete result
		// shows why it stopped.
		res.Warmups = append(res.Warmups, result.RoundWarmup{Round: rep, Kind: kind, Warmup: wres})
		// The first full warm-up, or the first that never got steady,
		// so that the comparison warns of it.
		if kind == result.WarmupFull && (res.Warmup == nil || (res.Warmup.Steady && !wres.Steady)) {
			res.Warmup = wres
		}
	}
	if err != nil {
		return fail(err)
	}
	a.warmedOn[c.Name] = a.starts

	s.begin(fmt.Sprintf("%s: measuring round %d", c.Name, rep))
	m := s.measurement(dispatcher)
	if e := a.evals[c.Name]; e != nil && e.interleaved {
		m.Evals, m.OnEval = &run.EvalMix{Queue: e.queue, Share: s.cfg.Quality.Share}, e.add
	}
	label := fmt.Sprintf("%s round %d", c.Name, rep)
	if s.name != "" {
		label = s.name + " " + label
	}
	// The cool-down after the warm-up's drain, as before every repetition
	// of a run.
	if err := m.Cool(ctx, c.Name, rep); err != nil {
		return fail(err)
	}
	sum, err := m.Repetition(ctx, sc, rep, label)
	if err != nil {
		return fail(err)
	}
	res.Repetitions = append(res.Repetitions, sum)
	return nil
}

// warmupKind is the warm-up that scenario name gets next: short when
// Options.Rewarm says so and the stack has not been started since the
// scenario's last warm-up, else full (and always full with warmup.method
// none, which sends nothing either way).
func (a *Arm) warmupKind(name string) string {
	if a.rewarm == config.RewarmShort && a.s.cfg.Warmup.Method != config.WarmupNone && a.warmedOn[name] == a.starts {
		return result.WarmupShort
	}
	return result.WarmupFull
}

// Unanswered is how many eval items no round has carried yet: Finish
// sends them, so the stack must be up for it.
func (a *Arm) Unanswered() int {
	n := 0
	for _, e := range a.evals {
		if e != nil {
			n += e.queue.Left()
		}
	}
	return n
}

// Finish answers the eval items that the rounds did not carry (all of them
// in separate mode) and scores every suite, as Run does after a scenario's
// repetitions. A suite with more failed items than max_error_rate fails it.
func (a *Arm) Finish(ctx context.Context) error {
	if err := a.crash(); err != nil {
		return exit.RunError(err)
	}
	outer := ctx
	ctx, cancel := a.Guard(ctx)
	defer cancel()
	for _, name := range a.order {
		e := a.evals[name]
		if e == nil {
			continue
		}
		sc := a.prepared[name]
		dispatcher := &run.Dispatcher{Sender: a.s.client, Clock: a.s.clock}
		suites, err := a.s.answerEvals(ctx, sc, dispatcher, e)
		if err != nil {
			return interrupted(outer, CauseOr(ctx, err))
		}
		a.scenarios[name].Quality = suites
	}
	return nil
}

// Result is what the arm measured, as Run's result: its identity, and each
// scenario in the order first measured with its repetitions in round order.
// With more than one start, every scenario carries every start's cold start
// (ColdStartsMS): in swap mode these are the cold_start gate's samples.
func (a *Arm) Result() *result.Result {
	scenarios := make([]result.ScenarioResult, 0, len(a.order))
	for _, name := range a.order {
		sc := *a.scenarios[name]
		if len(a.coldStarts) > 0 {
			sc.ColdStartMS = a.coldStarts[0]
		}
		if len(a.coldStarts) > 1 {
			sc.ColdStartsMS = append([]float64(nil), a.coldStarts...)
		}
		scenarios = append(scenarios, sc)
	}
	return a.s.result(a.configHash, a.started, scenarios)
}

// CauseOr is why ctx was cancelled, when that says more than err (a
// stack's crash, a signal): the cause, unless it is none or the plain
// context.Canceled of a cancel func; else err.
func CauseOr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}
