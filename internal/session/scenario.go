package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/quality"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
	"github.com/perfgate/perfgate/internal/workload"

	"slices"
)

// scenario warms sc up and measures its repetitions under a crash watch; a
// scenario with a capacity section is measured by its capacity search
// instead (searchCapacity), under the same watch.
func (s *session) scenario(ctx context.Context, sc run.Scenario) (_ result.ScenarioResult, err error) {
	c := sc.Config
	res := s.scenarioResult(sc)
	refused := &refusals{Sender: s.client}
	defer func() { err = s.explain(refused, err) }()
	if c.Headroom != nil {
		// Each probe has a crash watch of its own: a server that dies
		// under one is its answer, and is started again.
		return s.searchHeadroom(ctx, sc, refused, res)
	}
	watched, stopWatch := stack.Watch(ctx, s.inst, s.healthAt(s.watchedRoot(c), s.cfg.Stack.HealthInterval), s.cfg.Stack.HealthFailures)
	defer stopWatch()
	crashed := func(err error) error {
		var crash *stack.CrashError
		if errors.As(context.Cause(watched), &crash) {
			return fmt.Errorf("scenario %s: %w", c.Name, crash)
		}
		if err != nil && ctx.Err() == nil {
			if crash := s.crashBehind(ctx, err); crash != nil {
				return fmt.Errorf("scenario %s: %w", c.Name, crash)
			}
		}
		return err
	}
	dispatcher := &run.Dispatcher{Sender: refused, Clock: s.clock}
	if c.Capacity != nil {
		res, err := s.searchCapacity(watched, sc, dispatcher, res)
		if err != nil {
			return res, crashed(err)
		}
		stopWatch()
		if err := crashed(nil); err != nil {
			return res, err
		}
		return res, nil
	}
	wres, err := s.warmUp(watched, sc, dispatcher)
	res.Warmup = wres
	if err != nil {
		return res, crashed(err)
	}
	res.Warmup = wres

	reps := s.cfg.Repetitions
	m := s.measurement(dispatcher)
	if m.Injector, err = s.injector(watched, c); err != nil {
		return res, err
	}
	if s.more != nil && !reps.Fixed() {
		s.begin(fmt.Sprintf("%s: measuring %d repetitions, up to %d while a gate is undecided", c.Name, reps.Min, reps.Max))
		m.More = func(done []result.Repetition) bool {
			partial := res
			partial.Repetitions = done
			return s.more(&partial)
		}
	} else {
		s.begin(fmt.Sprintf("%s: measuring %d repetitions", c.Name, reps.Max))
	}
	evals := s.evals(sc)
	if evals != nil && evals.interleaved {
		m.Evals, m.OnEval = &run.EvalMix{Queue: evals.queue, Share: s.cfg.Quality.Share}, evals.add
	}
	measured, err := m.Measure(watched, sc)
	if err != nil {
		return res, crashed(err)
	}
	res.Repetitions = measured
	if evals != nil {
		if res.Quality, err = s.answerEvals(watched, sc, dispatcher, evals); err != nil {
			return res, crashed(err)
		}
	}
	// A stack that exited as the last request ended crashed too: the watch
	// may not have seen it yet, its stop does.
	stopWatch()
	if err := crashed(nil); err != nil {
		return res, err
	}
	return res, nil
}

// scenarioResult is sc's result before anything is measured: what it
// measures, its gates, and the cold start of the stack it runs on.
func (s *session) scenarioResult(sc run.Scenario) result.ScenarioResult {
	c := sc.Config
	res := sc.Header()
	res.Gates, res.Seed = config.ResultGates(s.cfg.GatesOf(c)), new(s.cfg.Seed)
	shape := workload.Stats(sc.Requests)
	res.WorkloadShape = &shape
	if s.cfg.Stack.Kind != config.StackExternal {
		res.ColdStartMS = ms(s.coldStart)
	}
	res.Sweep = c.Point.Result()
	return res
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// warmUp warms sc up to steady state as the config says, with a line per
// window and one for the outcome.
func (s *session) warmUp(ctx context.Context, sc run.Scenario, d *run.Dispatcher) (*result.Warmup, error) {
	return s.warmUpAs(ctx, sc, d, warming{})
}

// warming is how one warm-up differs from a run's one warm-up of a
// scenario: a capacity probe's, or a round's of perfgate ab.
type warming struct {
	// title names the phase (a capacity probe's "chat probe 3 (bisect) at
	// 113 req/s"); empty: the scenario's name.
	title string
	// saltTag is run.Warmup.SaltTag, and runID the run id its request ids
	// take (empty: the session's).
	saltTag, runID string
	// short makes it a short re-warm (run.Warmup.Short).
	short bool
}

// warmUpAs is warmUp as how says. With an error it returns the warm-up's
// record too where Run did (a warm-up that was not steady, or failed).
func (s *session) warmUpAs(ctx context.Context, sc run.Scenario, d *run.Dispatcher, how warming) (*result.Warmup, error) {
	w := s.cfg.Warmup
	name, runID := how.title, how.runID
	if name == "" {
		name = sc.Config.Name
	}
	if runID == "" {
		runID = s.runID
	}
	switch {
	case w.Method == config.WarmupNone:
		s.begin(fmt.Sprintf("%s: no warm-up (warmup.method none)", name))
	case how.short:
		s.begin(fmt.Sprintf("%s: re-warming (one window of %s, not judged: the stack stayed up since its last warm-up)", name, w.Window))
	default:
		s.begin(fmt.Sprintf("%s: warming up (%s, windows of %s, up to %s)", name, w.Method, w.Window, w.Max))
	}
	warm := &run.Warmup{
		Dispatcher: d, Config: w, Clock: s.clock, Seed: s.cfg.Seed, RunID: runID, Drain: s.cfg.Target.Timeout,
		SaltTag: how.saltTag, Short: how.short,
		OnWindow: func(win result.WarmupWindow, steady bool, why string) {
			s.detail("%s", windowLine(win, steady, why))
		},
	}
	warm.OnDrain = func(elapsed time.Duration, inFlight int, engine *float64) {
		if engine == nil {
			s.detail("draining warm-up: %d requests still in flight after %s (up to target.timeout %s)", inFlight, elapsed.Round(time.Second), warm.Drain)
		} else {
			s.detail("draining warm-up: the engine still holds %g requests after %s", *engine, elapsed.Round(time.Second))
		}
	}
	if s.telemetry.HasQueue() {
		warm.Queue = s.telemetry.Queue
	}
	wres, err := warm.Run(ctx, sc)
	if err != nil {
		return wres, err // the record too, where there is one: a capacity probe measures on
	}
	switch {
	case w.Method == config.WarmupNone:
	case how.short:
		s.detail("re-warmed for %s (%s)%s", wres.Duration.Dur().Round(100*time.Millisecond), warmupCounts(wres), drained(wres))
	case wres.Steady:
		s.detail("steady after %s (%s)%s", wres.Duration.Dur().Round(100*time.Millisecond), warmupCounts(wres), drained(wres))
	case wres.Overload != nil && wres.Overload.Overloaded:
		s.detail("warning: not steady after %s: the server could not keep up (%s); measuring anyway, the repetitions judge the overload (%s)%s",
			w.Max, wres.Overload.Sentence(), warmupCounts(wres), drained(wres))
	default:
		s.detail("warning: not steady after %s (%s); measuring anyway (warmup.on_unsteady: warn)%s", w.Max, warmupCounts(wres), drained(wres))
	}
	return wres, nil
}

// windowLine is a warm-up window's progress line: its end, requests,
// output throughput and median TTFT, then "steady" (with how it was judged,
// when on merged windows: "steady (judged 2 windows merged at a time)") or
// why the series is not steady yet ("not steady: median TTFT rose in each of the last 5
// windows, ..."). A window in which no request had its first token has no
// median TTFT, and says so rather than show 0 ms.
func windowLine(win result.WarmupWindow, steady bool, why string) string {
	ttft := fmt.Sprintf("%7.1f ms", win.TTFT)
	if win.Requests == 0 {
		ttft = fmt.Sprintf("%7s (no first token)", "—")
	}
	line := fmt.Sprintf("%6.1fs  %4d requests  %8.1f output tok/s  TTFT p50 %s", float64(win.End), win.Requests, win.OutputThroughput, ttft)
	switch {
	case steady && why != "":
		line += "  steady (" + why + ")"
	case steady:
		line += "  steady"
	case why != "":
		line += "  not steady: " + why
	}
	return line
}

// warmupCounts is "138 warm-up requests, 104 failed: http ×60, stream ×44"
// (the failed part only when some failed).
func warmupCounts(w *result.Warmup) string {
	out := fmt.Sprintf("%d warm-up requests", w.Requests+w.Failed)
	if w.Failed > 0 {
		out += fmt.Sprintf(", %d failed", w.Failed)
		if len(w.Errors) > 0 {
			out += ": " + run.ErrorKinds(w.Errors)
		}
	}
	return out
}

// drained is "; drained in 0.4s" and what a drain cut short, or "".
func drained(w *result.Warmup) string {
	if w.Drain == nil {
		return ""
	}
	out := fmt.Sprintf("; drained in %s", w.Drain.Dur().Round(100*time.Millisecond))
	if w.DrainCut > 0 {
		when := "at target.timeout"
		if w.BacklogCut() {
			when = "at once, a backlog the server could not clear"
		}
		out += fmt.Sprintf(", cancelling %d requests still in flight %s", w.DrainCut, when)
	}
	if w.DrainQueue != nil {
		out += fmt.Sprintf(", the engine still holding %g requests", *w.DrainQueue)
	}
	return out
}

// measurement is the measurement of a scenario's repetitions through d, as
// the config says (repetitions, cool-down, seed), reporting to the
// session's progress, records and telemetry.
func (s *session) measurement(d *run.Dispatcher) *run.Measurement {
	return &run.Measurement{
		Dispatcher: d, Repetitions: s.cfg.Repetitions, Cooldown: s.cfg.Cooldown, Clock: s.clock,
		Seed: s.cfg.Seed, RunID: s.runID, OnRecord: s.onRecord, Progress: s.progress,
		Observe: s.observe, Percentiles: s.cfg.MeasuredPercentiles(), Model: s.cfg.Target.Model,
		ReloadAdapters: s.reloadAdapters, Replicas: s.replicaCount(),
	}
}

// adapterReloader is a Sender that can reload a LoRA adapter
// (*client.Client).
type adapterReloader interface {
	ReloadAdapter(ctx context.Context, name, path string) error
}

// reloadAdapters unloads and loads again every adapter sc's workload
// names that target.adapters lists (cold_adapters), in name order, and
// returns their names.
func (s *session) reloadAdapters(ctx context.Context, sc run.Scenario) ([]string, error) {
	r, ok := s.client.(adapterReloader)
	if !ok {
		return nil, errors.New("this target's client cannot reload adapters")
	}
	names := listedAdapters(sc.Requests, s.cfg.Target.Adapters)
	for _, name := range names {
		if err := r.ReloadAdapter(ctx, name, s.cfg.Target.Adapters[name]); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// listedAdapters are the models reqs name that adapters lists, each once,
// sorted.
func listedAdapters(reqs []workload.Request, adapters map[string]string) []string {
	var names []string
	for i := range reqs {
		m := reqs[i].Model
		if _, ok := adapters[m]; ok && !slices.Contains(names, m) {
			names = append(names, m)
		}
	}
	slices.Sort(names)
	return names
}

// evalRun collects the answers to a scenario's eval items.
type evalRun struct {
	interleaved bool
	queue       *run.EvalQueue
	mu          sync.Mutex
	answers     map[string]map[string]*result.Record // suite → item id → answer
}

func (e *evalRun) add(r *result.Record) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.answers[r.Eval][r.ID] = r
}

// evals queues the eval items sc carries; nil when it carries none.
func (s *session) evals(sc run.Scenario) *evalRun {
	if len(sc.Suites) == 0 {
		return nil
	}
	e := &evalRun{interleaved: s.cfg.Quality.Mode == config.QualityInterleaved, answers: map[string]map[string]*result.Record{}}
	var items []run.EvalItem
	for _, suite := range sc.Suites {
		e.answers[suite.Name] = map[string]*result.Record{}
		for i := range suite.Items {
			items = append(items, run.EvalItem{Suite: suite.Name, Request: &suite.Items[i].Request})
		}
	}
	e.queue = run.NewEvalQueue(items)
	return e
}

// answerEvals answers the items the measurement did not carry (all of them in
// separate mode), scores every item and returns the suites' results. A suite
// with more failed items than the scenario's max_error_rate fails the run.
func (s *session) answerEvals(ctx context.Context, sc run.Scenario, d *run.Dispatcher, e *evalRun) ([]result.SuiteResult, error) {
	rest := e.queue.Rest()
	if len(rest) > 0 {
		why := "quality.mode separate"
		if e.interleaved {
			why = fmt.Sprintf("the measurement had room for %d of %d at quality.share %g", e.count(), e.count()+len(rest), s.cfg.Quality.Share)
		}
		s.begin(fmt.Sprintf("%s: answering %d eval items alone, %d at a time (%s)", sc.Config.Name, len(rest), s.cfg.Quality.Concurrency, why))
		onRecord := s.onRecord
		err := d.AnswerEvals(ctx, sc.Config.Name, s.runID, rest, s.cfg.Quality.Concurrency, func(r *result.Record) {
			e.add(r)
			if onRecord != nil {
				onRecord(r)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("scenario %s: eval items: %w", sc.Config.Name, err)
		}
	}
	out := make([]result.SuiteResult, 0, len(sc.Suites))
	for i, suite := range sc.Suites {
		r := suite.Outcomes(sc.SuitePaths[i], s.cfg.Quality.Mode, e.answers[suite.Name], s.cfg.QualityGates())
		if err := quality.CheckFailures(&r, sc.Config.MaxErrorRate); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Config.Name, err)
		}
		pass, n := r.Answered()
		s.detail("eval suite %s: %d of %d answered items right (%.1f%%), %d failed to answer; %d sent amid the load", r.Name, pass, n, 100*float64(pass)/float64(max(n, 1)), r.Failed(), r.Interleaved)
		out = append(out, r)
	}
	return out, nil
}

// count is how many answers came in so far.
func (e *evalRun) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, a := range e.answers {
		n += len(a)
	}
	return n
}
