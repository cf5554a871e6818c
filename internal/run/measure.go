package run

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"cmp"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/quality"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/structured"
	"github.com/perfgate/perfgate/internal/workload"
)

// Scenario is a configured scenario with its workload loaded.
type Scenario struct {
	Config   config.Scenario
	Requests []workload.Request
	// Source names the workload: the file path as configured, or "synth".
	Source       string
	WorkloadHash string
	// Suites are the eval suites this scenario's run answers (the
	// quality.scenario only), in quality.suites order, and SuitePaths their
	// paths as configured.
	Suites     []*quality.Suite
	SuitePaths []string
	// Salt says whether each pass over Requests is salted (see Plan.Salt).
	Salt bool
	// SaltTag, when not empty, is mixed into every salt of the scenario's
	// passes (saltName), while its arrivals stay those of its name: a
	// capacity search measures repetition r again at every probe with the
	// same arrivals, and each probe must still send text no prompt cache
	// has seen (an earlier probe's would otherwise serve it, and the
	// server would look faster the more it had been probed).
	SaltTag string
}

// saltName is the name a scenario's salts derive from: its name, with its
// SaltTag when it has one.
func (s *Scenario) saltName() string {
	if s.SaltTag == "" {
		return s.Config.Name
	}
	return s.Config.Name + "/" + s.SaltTag
}

// SaltMode is the result's account of Salt: result.SaltPerPass or
// result.SaltOff.
func (s *Scenario) SaltMode() string {
	if s.Salt {
		return result.SaltPerPass
	}
	return result.SaltOff
}

// Header is what a result of s says it measured, before anything is
// measured: its name, workload and its hash, load shape, SLOs, sampling
// and salt. A session's scenario result starts from it, and the gate and
// perfgate ab compare it with a baseline's before they start a stack: one
// place says what a scenario is, so a check and a result cannot disagree.
func (s *Scenario) Header() result.ScenarioResult {
	c := s.Config
	return result.ScenarioResult{Name: c.Name, Workload: s.Source, WorkloadHash: s.WorkloadHash, Load: c.Load.Result(),
		SLO: c.SLO.Result(), Sampling: workload.Sampling(s.Requests), Salt: s.SaltMode()}
}

// Prepare loads (or synthesises) the workload of each scenario of cfg as
// measured (config.Config.Measured: a sweep is one scenario per point) whose
// name is in only (all of them when only is empty). A name in only selects
// one scenario or point ("chat.rate-25"), or every point of the sweep of that
// name ("chat"). An unknown name in only is an error. The points of one sweep
// share one workload: it is read or synthesised once.
func Prepare(cfg *config.Config, only []string) ([]Scenario, error) {
	want, missing := map[string]bool{}, map[string]bool{}
	for _, n := range only {
		want[n], missing[n] = true, true
	}
	var out []Scenario
	for _, sc := range cfg.Measured() {
		of := ""
		if sc.Point != nil {
			of = sc.Point.Of
		}
		if len(want) > 0 && !want[sc.Name] && (of == "" || !want[of]) {
			continue
		}
		delete(missing, sc.Name)
		delete(missing, of)
		s := Scenario{Config: sc, Salt: cfg.SaltOf(sc)}
		switch {
		case of != "" && len(out) > 0 && out[len(out)-1].Config.Point != nil && out[len(out)-1].Config.Point.Of == of:
			// The previous point of this sweep: the same workload.
			prev := out[len(out)-1]
			s.Requests, s.Source, s.WorkloadHash = prev.Requests, prev.Source, prev.WorkloadHash
		case sc.Headroom != nil:
			// The search sizes each probe's requests; what the scenario
			// sends is defined by its output and API, which this one
			// request of one word stands for in the workload's hash.
			reqs, err := HeadroomRequests(cfg.Target.API, 1, sc.Headroom.OutputTokens, 1, cfg.Seed)
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
			}
			s.Requests, s.Source = reqs, "headroom"
			s.WorkloadHash = workload.Hash(s.Requests)
		case sc.Synth != nil:
			reqs, err := workload.Synthesize(*sc.Synth, cfg.Dir, cfg.Seed)
			if err != nil {
				return nil, fmt.Errorf("scenario %s: synthesise workload: %w", sc.Name, err)
			}
			s.Requests, s.Source = reqs, "synth"
			s.WorkloadHash = workload.Hash(s.Requests)
		default:
			w, err := workload.Load(resolve(cfg.Dir, sc.Workload))
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
			}
			s.Requests, s.Source = w.Requests, sc.Workload
			s.WorkloadHash = workload.Hash(s.Requests)
		}
		if err := structured.Validate(s.Requests); err != nil {
			return nil, fmt.Errorf("scenario %s: workload %s: %w", sc.Name, s.Source, err)
		}
		if sc.ColdAdapters {
			if err := checkColdAdapters(s.Requests, cfg.Target); err != nil {
				return nil, fmt.Errorf("scenario %s: cold_adapters: workload %s %w", sc.Name, s.Source, err)
			}
		}
		if sc.Load.ThinkTime != "" && !hasSessions(s.Requests) {
			return nil, fmt.Errorf("scenario %s: load.think_time is set, but workload %s has no sessions (no line has a session_id), so no turn would ever wait it: remove it, or import the workload with sessions",
				sc.Name, s.Source)
		}
		if cfg.Quality.Enabled() && sc.Name == cfg.QualityScenario() {
			for _, path := range cfg.Quality.Suites {
				suite, err := quality.Load(resolve(cfg.Dir, path))
				if err != nil {
					return nil, fmt.Errorf("quality: %w", err)
				}
				if err := fitsAPI(suite, cfg.Target.API); err != nil {
					return nil, fmt.Errorf("quality: %w", err)
				}
				s.Suites, s.SuitePaths = append(s.Suites, suite), append(s.SuitePaths, path)
			}
		}
		out = append(out, s)
	}
	for n := range missing {
		return nil, fmt.Errorf("no scenario named %q in %s", n, cfg.Path)
	}
	return out, nil
}

// fitsAPI checks that every item of suite can be sent to the target's
// endpoint: the completions API takes a prompt, not messages (the chat API
// takes either: a prompt is sent as one user message).
func fitsAPI(suite *quality.Suite, api string) error {
	if api != "completions" {
		return nil
	}
	for _, it := range suite.Items {
		if len(it.Request.Messages) > 0 {
			return fmt.Errorf("%s:%d: item %s has messages, but target.api is completions: give it a prompt", suite.Path, it.Line, it.ID)
		}
	}
	return nil
}

func resolve(dir, path string) string {
	if filepath.IsAbs(path) || dir == "" {
		return path
	}
	return filepath.Join(dir, path)
}

// Measurement measures the repetitions of one scenario at a time.
type Measurement struct {
	Dispatcher *Dispatcher
	// Repetitions is how many repetitions to measure: Min, then more while
	// More says so, up to Max. Without More, Max.
	Repetitions config.Repetitions
	// More, if set, is asked after each repetition from the Min-th on,
	// with every repetition so far, whether to measure another (a sequential
	// gate asks while a gate is inconclusive).
	More func(reps []result.Repetition) bool
	// Cooldown is an idle pause before every repetition, the first too
	// (after the warm-up and its drain).
	Cooldown time.Duration
	// Clock times the cool-down; nil means RealClock.
	Clock Clock
	Seed  int64
	RunID string
	// OnRecord, if set, sees every record (e.g. to write --records).
	OnRecord func(*result.Record)
	// Progress, if set, reports each repetition as it runs.
	Progress *Progress
	// Evals, if set, mixes eval items into the repetitions' load until its
	// queue is empty; OnEval then sees their records, which the latency
	// metrics leave out.
	Evals  *EvalMix
	OnEval func(*result.Record)
	// Observe, if set, is called as each repetition starts; the function
	// it returns is called once as the repetition ends, with its summary
	// to add what was observed meanwhile (engine and GPU telemetry), or
	// with nil when the repetition failed and is discarded.
	Observe func(ctx context.Context) (end func(rep *result.Repetition))
	// Percentiles are the latency percentiles measured beside the default
	// five (config.Config.MeasuredPercentiles; result.Aggregator.WithPercentiles).
	Percentiles []string
	// Model is the target's model, sent for requests whose line names
	// none: it names their subset when a repetition sends to several
	// models (result.Repetition.Subsets).
	Model string
	// ReloadAdapters, for a scenario with cold_adapters, unloads and loads
	// again the adapters the scenario's workload names that target.adapters
	// lists, before each repetition, and returns their names; an error
	// fails the repetition.
	ReloadAdapters func(ctx context.Context, s Scenario) ([]string, error)
	// Injector makes a scenario's fault (config.Scenario.Fault) in each
	// repetition, on a stack of Replicas replicas; required for a
	// scenario with one.
	Injector Injector
	Replicas int
}

// BrokenError says a repetition failed too many of its requests to count:
// its latencies would describe only the survivors. The run fails (exit 3).
type BrokenError struct {
	Scenario   string
	Repetition int
	Rep        result.Repetition
	// MaxErrorRate is the scenario's limit.
	MaxErrorRate float64
}

func (e *BrokenError) Error() string {
	r := e.Rep
	var b strings.Builder
	switch {
	case r.Completed == 0:
		fmt.Fprintf(&b, "scenario %s repetition %d: all %d requests failed", e.Scenario, e.Repetition, r.Sent)
	case r.StructuredErrors == r.Completed:
		// Every answer was wrong: counted, not timed, so nothing is left
		// to measure latency on.
		fmt.Fprintf(&b, "scenario %s repetition %d: all %d answers were wrong (not the JSON or the tool call their requests asked for), so no latency could be measured; the first: %s",
			e.Scenario, e.Repetition, r.Completed, r.FirstStructuredError)
		return b.String()
	default:
		fmt.Fprintf(&b, "scenario %s repetition %d: %d of %d requests failed (%.1f%%, over max_error_rate %.1f%%)",
			e.Scenario, e.Repetition, r.Failed, r.Sent, 100*r.ErrorRate, 100*e.MaxErrorRate)
	}
	if len(r.Errors) > 0 {
		kinds := make([]string, 0, len(r.Errors))
		for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
			kinds = append(kinds, fmt.Sprintf("%s ×%d", k, r.Errors[k]))
		}
		fmt.Fprintf(&b, ": %s", strings.Join(kinds, ", "))
	}
	if r.FirstError != "" {
		fmt.Fprintf(&b, "; the first: %s", r.FirstError)
	}
	return b.String()
}

// Measure runs the repetitions of s in order (see Repetitions and More), each with the same seeded
// schedule construction (repetition r of a baseline and of a candidate draw
// the same arrivals), with the cool-down before each one. A
// repetition that completes no request, or whose error rate is over the
// scenario's max_error_rate, stops it with a *BrokenError.
func (m *Measurement) Measure(ctx context.Context, s Scenario) ([]result.Repetition, error) {
	c := s.Config
	var reps []result.Repetition
	last := m.Repetitions.Max // the most this scenario may measure
	if m.More == nil {
		last = max(m.Repetitions.Min, m.Repetitions.Max)
	}
	// The repetitions planned, for the progress line: a sequential gate's
	// minimum, until it measures more.
	planned, of := last, fmt.Sprint(last)
	if m.More != nil && m.Repetitions.Min < last {
		planned, of = m.Repetitions.Min, m.Repetitions.String()
	}
	for rep := 1; rep <= last; rep++ {
		if m.More != nil && rep > m.Repetitions.Min && !m.More(reps) {
			break
		}
		if err := m.Cool(ctx, c.Name, rep); err != nil {
			return reps, err
		}
		if m.Progress != nil {
			m.Progress.repetition(rep, planned, m.Cooldown)
		}
		sum, err := m.Repetition(ctx, s, rep, fmt.Sprintf("%s repetition %d of %s", c.Name, rep, of))
		if err != nil {
			var broken *BrokenError
			if errors.As(err, &broken) {
				reps = append(reps, sum)
			}
			return reps, err
		}
		reps = append(reps, sum)
	}
	return reps, nil
}

// Cool is the cool-down before repetition rep of the scenario called
// name: an idle pause of Cooldown (none when it is zero). Measure calls it
// before each repetition; a caller of Repetition (a capacity probe, a
// round of perfgate ab) calls it itself. A cancelled ctx ends it with an
// error that wraps the cause.
func (m *Measurement) Cool(ctx context.Context, name string, rep int) error {
	if m.Cooldown <= 0 {
		return nil
	}
	clock := m.Clock
	if clock == nil {
		clock = RealClock{}
	}
	if err := clock.SleepUntil(ctx, clock.Now().Add(m.Cooldown)); err != nil {
		return fmt.Errorf("scenario %s cool-down before repetition %d: %w", name, rep, context.Cause(ctx))
	}
	return nil
}

// Repetition measures repetition rep of s alone: its seeded schedule (the
// same arrivals as repetition rep of any other run of s), no cool-down
// before it. label names it on the progress line. A repetition that
// completes no request, or whose error rate is over the scenario's
// max_error_rate, is returned with a *BrokenError; a run that failed
// (cancelled, the stack crashed) returns the context's cause, wrapped.
// perfgate ab measures its rounds with it, one repetition per arm.
func (m *Measurement) Repetition(ctx context.Context, s Scenario, rep int, label string) (result.Repetition, error) {
	c := s.Config
	plan := Plan{
		Scenario: c.Name, Repetition: rep, Requests: s.Requests,
		Count: c.Requests, Duration: c.Duration, Load: c.Load,
		Seed: planSeed(m.Seed, c.Name, arrivalsOf(c.Load, rep)), RunID: m.RunID, Evals: m.Evals,
	}
	if s.Salt {
		plan.Salt = SaltSeed(m.Seed, s.saltName(), rep, 1)
	}
	if c.ColdAdapters {
		// After the cool-down, before the first request: the reload is
		// not timed, and the first request to each adapter is the cold one.
		if m.ReloadAdapters == nil {
			return result.Repetition{}, fmt.Errorf("scenario %s: cold_adapters, but nothing reloads them", c.Name)
		}
		names, err := m.ReloadAdapters(ctx, s)
		if err != nil {
			return result.Repetition{}, fmt.Errorf("scenario %s repetition %d: cold_adapters: %w", c.Name, rep, err)
		}
		plan.ColdAdapters = names
	}
	if f := c.Fault; f != nil {
		if m.Injector == nil {
			return result.Repetition{}, fmt.Errorf("scenario %s: a fault, but nothing makes it", c.Name)
		}
		plan.Fault = &PlannedFault{At: f.At, Config: *f, Inject: m.Injector.Inject}
	}
	kinds, models := subsetsOf(s.Requests, m.Model)
	agg := result.NewAggregator(c.SLO.Result(), plan.OpenLoop(), c.Load.OfferedRate(plan.Duration)).WithPercentiles(m.Percentiles).WithDefaultModel(m.Model).
		WithSubsets(kinds, models).WithColdAdapters(plan.ColdAdapters)
	// A steady open loop is watched for overload (a closed loop follows the
	// server); a step load changes its rate on purpose, and a fault the
	// server, and their recovery says whether the server absorbed it.
	var watch *overloadWatch
	switch {
	case c.Load.Type == config.LoadStep && len(c.Load.At) > 0:
		agg.WithRecovery(c.Load.At[0], c.Load.RecoveryWindow)
	case plan.Fault != nil:
		agg.WithRecovery(plan.Fault.At, c.Load.RecoveryWindow)
	case plan.OpenLoop():
		watch = &overloadWatch{}
	}
	if m.Progress != nil {
		m.Progress.begin(label, plan.limit(), plan.Duration)
	}
	var faultSamples []result.FaultSample
	endObserve := func(*result.Repetition) {}
	if m.Observe != nil {
		endObserve = m.Observe(ctx)
	}
	err := m.Dispatcher.Run(ctx, plan, func(r *result.Record) {
		if r.Eval != "" {
			if m.OnRecord != nil {
				m.OnRecord(r)
			}
			if m.OnEval != nil {
				m.OnEval(r)
			}
			return
		}
		agg.Add(r)
		if plan.Fault != nil {
			ok := r.OK()
			good := ok && r.FirstTokenNS > 0 && (c.SLO.TTFT <= 0 || r.FirstTokenNS-r.SentNS <= c.SLO.TTFT.Nanoseconds())
			faultSamples = append(faultSamples, result.FaultSample{AtNS: r.ScheduledNS, EndNS: r.EndNS, OK: ok, Good: good})
		}
		if watch != nil {
			watch.add(r)
		}
		if m.OnRecord != nil {
			m.OnRecord(r)
		}
		if m.Progress != nil {
			m.Progress.Add(r.OK())
			if r.Turn == 1 {
				m.Progress.AddSession()
			}
		}
	})
	if m.Progress != nil {
		m.Progress.End()
	}
	if err != nil {
		endObserve(nil)
		if cause := context.Cause(ctx); cause != nil {
			err = cause // the stack crashed, or perfgate was interrupted
		}
		return result.Repetition{}, fmt.Errorf("scenario %s repetition %d: %w", c.Name, rep, err)
	}
	sum := agg.Summary(rep)
	if watch != nil {
		sum.Overload = watch.judge()
	}
	if sum.Fault, err = m.faultResult(ctx, &plan, m.Replicas, faultSamples); err != nil {
		endObserve(nil)
		return result.Repetition{}, fmt.Errorf("scenario %s repetition %d: %w", c.Name, rep, err)
	}
	endObserve(&sum)
	if sum.Completed == 0 || sum.ErrorRate > c.MaxErrorRate || sum.StructuredErrors == sum.Completed {
		return sum, &BrokenError{Scenario: c.Name, Repetition: rep, Rep: sum, MaxErrorRate: c.MaxErrorRate}
	}
	return sum, nil
}

// arrivalsOf is the repetition whose arrivals repetition rep draws: its own
// with load.arrivals: fresh, else the first's, so that every repetition
// replays one schedule (config.ArrivalsSame).
func arrivalsOf(l config.Load, rep int) int {
	if l.FreshArrivals() {
		return rep
	}
	return 1
}

// planSeed derives the arrival seed of one repetition from the run's seed, so
// that repetition r of a baseline and of a candidate draw the same schedule
// (with config.ArrivalsSame every r draws repetition 1's: see arrivalsOf).
// Repetition 0 is the warm-up, whose schedule is none of theirs.
func planSeed(seed int64, scenario string, rep int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", seed, scenario, rep)
	return h.Sum64()
}

// checkColdAdapters checks that a cold_adapters scenario's workload names
// at least one adapter target.adapters lists: those are reloaded. Other
// models it names (the base model by its name, say) are sent as they are,
// and neither cold nor warm.
func checkColdAdapters(reqs []workload.Request, t config.Target) error {
	var named []string
	for i := range reqs {
		m := reqs[i].Model
		if m == "" || slices.Contains(named, m) {
			continue
		}
		if _, ok := t.Adapters[m]; ok {
			return nil
		}
		named = append(named, m)
	}
	if len(named) == 0 {
		return errors.New("names no model (no line has a model), so there is no adapter to reload")
	}
	slices.Sort(named)
	return fmt.Errorf("names no adapter that target.adapters lists (it names %s): give each adapter's path there", strings.Join(named, ", "))
}

// subsetsOf says which subsets a repetition of reqs can have
// (result.Aggregator.WithSubsets): kinds when a request asks for
// structured output, models when they name two or more models (a line
// that names none counts as target's).
func subsetsOf(reqs []workload.Request, target string) (kinds, models bool) {
	var first string
	for i := range reqs {
		if !kinds && reqs[i].Structured() {
			kinds = true
		}
		m := cmp.Or(reqs[i].Model, target)
		if i == 0 {
			first = m
		} else if m != first {
			models = true
		}
		if kinds && models {
			break
		}
	}
	return kinds, models
}
