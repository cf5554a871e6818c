package ab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/session"
	"github.com/perfgate/perfgate/internal/stat"
)

// The arms' names, in results (result.ABArm.Arm) and progress lines.
const (
	Base      = "base"
	Candidate = "candidate"
)

// Options are what an A/B needs besides the two configs.
type Options struct {
	// Mode is config.ABCoResident or config.ABSwap; empty takes the
	// candidate config's ab.mode.
	Mode string
	// Rewarm is config.RewarmShort or config.RewarmFull, how a round warms
	// up an arm whose stack stayed up since its last warm-up; empty takes
	// the candidate config's ab.rewarm.
	Rewarm string
	// BaseName and CandidateName name the configs in the verdict (the paths
	// the user gave).
	BaseName, CandidateName string
	// AllowMismatch compares even when the arms' identities differ in what
	// must match (hardware); the configs must still match (Check).
	AllowMismatch bool
	// Session is each arm's session options (stack starter, sender,
	// telemetry, clock, progress); Name is set per arm.
	Session session.Options
	// Looks, if set, receives a line per look and per round.
	Looks io.Writer
}

// Outcome is what an A/B produced: each arm's result and the verdict.
// After a failure it holds what was measured before it (see Run): Verdict
// is nil, and each result is marked Incomplete.
type Outcome struct {
	// Base and Candidate are the arms' results; after a failure, nil for
	// an arm that measured nothing.
	Base, Candidate *result.Result
	Verdict         *compare.Verdict
}

// PartialPath is where an A/B that did not finish writes what it measured
// in place of the result file at path: ".partial" before its extension
// (result.json → result.partial.json); "" for an output that is not a
// regular file (/dev/null), which has no such place.
func PartialPath(path string) string {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return ""
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".partial" + ext
}

// WritePartial writes what an A/B that failed measured: each arm's
// incomplete result at the PartialPath of its output (candidate, then
// base). written names what it wrote, "PATH (arm)"; rounds is how many
// rounds were complete.
func (o *Outcome) WritePartial(candidatePath, basePath string) (written []string, rounds int, err error) {
	var errs []error
	for _, w := range []struct {
		arm, path string
		res       *result.Result
	}{{"candidate", PartialPath(candidatePath), o.Candidate}, {"base", PartialPath(basePath), o.Base}} {
		if w.res == nil || w.path == "" {
			continue
		}
		if err := result.Write(w.path, w.res); err != nil {
			errs = append(errs, fmt.Errorf("the %s arm's partial result: %w", w.arm, err))
			continue
		}
		written = append(written, fmt.Sprintf("%s (%s)", w.path, w.arm))
	}
	if r := cmp.Or(o.Candidate, o.Base); r != nil && r.Incomplete != nil {
		rounds = r.Incomplete.Rounds
	}
	return written, rounds, errors.Join(errs...)
}

// CheckOverload is result.CheckOverload over both arms, naming the arm
// (the candidate's first): a scenario either arm's server could not keep
// up with fails the A/B (exit 3) over any verdict.
func (o *Outcome) CheckOverload() error {
	var errs []error
	for _, arm := range []struct {
		name string
		res  *result.Result
	}{{"candidate", o.Candidate}, {"base", o.Base}} {
		if arm.res == nil {
			continue
		}
		if err := arm.res.CheckOverload(); err != nil {
			errs = append(errs, fmt.Errorf("%s arm: %w", arm.name, err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return exit.RunError(errors.Join(errs...))
}

// Check refuses two configs that do not measure the same thing: the same
// scenarios in the same order, each with the same workload, load shape,
// SLOs, sampling, salting, requests, duration, max_error_rate and eval
// suites, the same quality mode, share and scenario, one seed and one
// target API. What may differ is the stack (its command, image, flags,
// model, engine), the target's address and model, and the warm-up. Every
// difference is named, in one exit.UsageError.
//
// A capacity scenario is refused: a search probes loads it chooses from its
// own results, so the two arms would not take the same rounds. So is a
// scenario with a fault, whose kills and restarts are a gate's. A point of a
// sweep is an ordinary scenario at one load and is A/B-tested like one.
func Check(base, candidate *config.Config, baseScenarios, candScenarios []run.Scenario) error {
	for _, scs := range [][]run.Scenario{candScenarios, baseScenarios} {
		for _, sc := range scs {
			if sc.Config.Searched() {
				return exit.UsageError(fmt.Errorf("scenario %s searches its capacity or headroom, which perfgate ab does not do: gate it with perfgate gate", sc.Config.Name))
			}
			if sc.Config.Fault != nil {
				return exit.UsageError(fmt.Errorf("scenario %s kills a replica (fault), which perfgate ab does not do: gate it with perfgate gate", sc.Config.Name))
			}
		}
	}
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	names := func(scs []run.Scenario) []string {
		out := make([]string, len(scs))
		for i, s := range scs {
			out[i] = s.Config.Name
		}
		return out
	}
	if bn, cn := names(baseScenarios), names(candScenarios); !slices.Equal(bn, cn) {
		add("scenarios: base has %s, candidate has %s", strings.Join(bn, ", "), strings.Join(cn, ", "))
	} else {
		for i := range candScenarios {
			b, c := baseScenarios[i], candScenarios[i]
			for _, d := range compare.ScenarioMismatches(probe(b), probe(c)) {
				add("%s", d.String())
			}
			if b.Config.Requests != c.Config.Requests {
				add("scenario %s: requests: %d → %d", c.Config.Name, b.Config.Requests, c.Config.Requests)
			}
			if b.Config.Duration != c.Config.Duration {
				add("scenario %s: duration: %s → %s", c.Config.Name, b.Config.Duration, c.Config.Duration)
			}
			if b.Config.MaxErrorRate != c.Config.MaxErrorRate {
				add("scenario %s: max_error_rate: %g → %g", c.Config.Name, b.Config.MaxErrorRate, c.Config.MaxErrorRate)
			}
			if bs, cs := suiteNames(b), suiteNames(c); bs != cs {
				add("scenario %s: eval suites: %s → %s", c.Config.Name, orNone(bs), orNone(cs))
			}
		}
	}
	// What is mixed into the measured load must be the same on both arms.
	if bq, cq := base.Quality, candidate.Quality; len(withSuites(candScenarios)) > 0 &&
		(bq.Mode != cq.Mode || bq.Share != cq.Share || base.QualityScenario() != candidate.QualityScenario()) {
		add("quality: mode %s, share %g, scenario %s → mode %s, share %g, scenario %s",
			orNone(bq.Mode), bq.Share, orNone(base.QualityScenario()), orNone(cq.Mode), cq.Share, orNone(candidate.QualityScenario()))
	}
	if base.Seed != candidate.Seed {
		add("seed: %d → %d (the arms must draw the same arrivals round by round)", base.Seed, candidate.Seed)
	}
	if base.Target.API != candidate.Target.API {
		add("target.api: %s → %s", base.Target.API, candidate.Target.API)
	}
	if len(diffs) > 0 {
		return exit.UsageError(fmt.Errorf("the base and candidate configs do not measure the same thing; only the stack, the target's address and model, and the warm-up may differ:\n  %s",
			strings.Join(diffs, "\n  ")))
	}
	// Rounds too few for the paired test to ever decide: every gate would
	// be inconclusive after the whole A/B, so nothing is started.
	var undecided []string
	for _, u := range Policy(candidate, candScenarios).Undecidable() {
		undecided = append(undecided, u.Msg)
	}
	if len(undecided) > 0 {
		return exit.UsageError(fmt.Errorf("%s: the candidate config's rounds cannot decide (perfgate ab tests the rounds pair by pair):\n  %s",
			candidate.Path, strings.Join(undecided, "\n  ")))
	}
	return nil
}

// Policy is the A/B's rule of evidence (gate.Policy with the Rounds
// design): the candidate config's ab.rounds are the rounds, and the
// scenarios measured that have gates share alpha.
func Policy(candidate *config.Config, scenarios []run.Scenario) gate.Policy {
	measured := map[string]bool{}
	for _, sc := range scenarios {
		measured[sc.Config.Name] = true
	}
	return gate.ConfigPolicy(candidate, gate.Rounds, func(name string) bool { return measured[name] })
}

// withSuites is the scenarios that carry eval suites.
func withSuites(scs []run.Scenario) []run.Scenario {
	var out []run.Scenario
	for _, sc := range scs {
		if len(sc.Suites) > 0 {
			out = append(out, sc)
		}
	}
	return out
}

// suiteNames lists the eval suites sc carries, with their item counts.
func suiteNames(sc run.Scenario) string {
	var names []string
	for _, s := range sc.Suites {
		names = append(names, fmt.Sprintf("%s (%d items)", s.Name, len(s.Items)))
	}
	return strings.Join(names, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// probe is what a scenario result of sc would say it measured.
func probe(sc run.Scenario) *result.ScenarioResult {
	h := sc.Header()
	return &h
}

// The arms' orders in a round, as compare.AB.Order records them.
const (
	BaseFirst      = "AB"
	CandidateFirst = "BA"
)

// arm is one side of the A/B: its config and, once opened, its stack.
type arm struct {
	name      string
	cfg       *config.Config
	scenarios []run.Scenario
	stackLog  string // where its stack's output goes, when not stack.log
	open      *session.Arm
	running   bool   // its stack is up (swap mode: only one is)
	first     []bool // per round, whether it went first
}

// Run measures the A/B and returns both arms' results and the verdict. Both
// configs must have passed Check. Whatever happens, both stacks are stopped
// before it returns. A crash of either arm, a broken repetition or a stack
// that cannot start fails it with exit.RunError; in co-resident mode both
// stacks are started before the first round, and a second stack that cannot
// start beside the first (a port in use, out of memory) says to try swap.
//
// A run that fails or is interrupted (ctx cancelled: "interrupted: ...")
// once a round has begun returns its error and an Outcome too: no verdict,
// and each arm's result so far (its repetitions and warm-ups; nil for an
// arm that measured nothing), marked Incomplete with the reason and the
// rounds both arms completed.
func Run(ctx context.Context, baseCfg, candCfg *config.Config, baseScenarios, candScenarios []run.Scenario, o Options) (*Outcome, error) {
	mode := o.Mode
	if mode == "" {
		mode = candCfg.AB.Mode
	}
	if mode != config.ABCoResident && mode != config.ABSwap {
		return nil, exit.UsageError(fmt.Errorf("mode: want %s or %s, got %q", config.ABCoResident, config.ABSwap, mode))
	}
	rewarm := o.Rewarm
	if rewarm == "" {
		rewarm = candCfg.AB.Rewarm
	}
	if rewarm == "" {
		rewarm = config.DefaultABRewarm // a config built in code
	}
	if rewarm != config.RewarmShort && rewarm != config.RewarmFull {
		return nil, exit.UsageError(fmt.Errorf("rewarm: want %s or %s, got %q", config.RewarmShort, config.RewarmFull, rewarm))
	}
	if err := holdable(baseCfg, candCfg, mode); err != nil {
		return nil, err
	}
	// A variable either arm's headers lack stops it before a stack starts.
	for _, cfg := range []*config.Config{baseCfg, candCfg} {
		if err := session.CheckHeaders(cfg, o.Session); err != nil {
			return nil, err
		}
	}
	o.Session.Rewarm = rewarm
	r := &abRun{
		o: o, mode: mode,
		base: &arm{name: Base, cfg: baseCfg, scenarios: baseScenarios},
		cand: &arm{name: Candidate, cfg: candCfg, scenarios: candScenarios},
		info: &compare.AB{Mode: mode, Base: o.BaseName, Candidate: o.CandidateName},
	}
	r.base.stackLog, r.cand.stackLog = separateLogs(baseCfg, candCfg)
	if log := o.Session.Log; log != nil {
		if r.base.stackLog != "" {
			fmt.Fprintf(log, "the two stacks' output goes to %s and %s (both configs name %s)\n", r.base.stackLog, r.cand.stackLog, baseCfg.Stack.Log)
		}
		for _, w := range Warnings(candCfg, candScenarios, mode) {
			fmt.Fprintf(log, "warning: %s\n", w)
		}
	}
	r.seq = Policy(candCfg, candScenarios).Sequential(compare.Options{OnInconclusive: candCfg.Compare.OnInconclusive,
		Gates: gate.GatesFrom(candCfg), QualityGates: candCfg.QualityGates(), Estimator: candCfg.Compare.Estimator, AB: r.info})
	defer r.stopAll()
	if mode == config.ABCoResident {
		// Both up before anything is measured: a stack that cannot
		// co-reside costs no round, and every pair is measured beside the
		// other engine.
		for _, a := range []*arm{r.base, r.cand} {
			if err := r.bringUp(ctx, a); err != nil {
				return nil, err
			}
		}
	}
	if err := r.rounds(ctx); err != nil {
		return r.partial(err), err
	}
	baseRes, candRes, err := r.finish(ctx)
	if err != nil {
		return r.partial(err), err
	}
	v, err := r.seq.Final([]*result.Result{baseRes}, candRes, o.AllowMismatch)
	if err != nil {
		return nil, exit.UsageUnlessCoded(err)
	}
	return &Outcome{Base: baseRes, Candidate: candRes, Verdict: v}, nil
}

// Warnings are what the candidate config's A/B cannot do well: a first
// look that cannot decide (rounds too few to decide at all are refused by
// Check), GPU gates in co-resident mode (each arm's GPU figures include the
// other engine, resident on the same GPUs), and fresh_stack, which an A/B
// does not apply.
func Warnings(cfg *config.Config, scenarios []run.Scenario, mode string) []string {
	policy := Policy(cfg, scenarios)
	level := policy.FirstLevel()
	size := map[string]int{}
	for _, f := range policy.Families {
		size[f.Scenario] = f.Gates
	}
	var out []string
	for _, sc := range scenarios {
		var gpu []string
		for _, g := range cfg.GatesOf(sc.Config) {
			if info, err := metric.Lookup(g.Metric); err == nil && info.Group == metric.GroupGPU && mode == config.ABCoResident {
				gpu = append(gpu, g.Metric)
			}
		}
		if m := size[sc.Config.Name]; m > 0 && policy.Min < policy.Max && !policy.Reach(policy.Min, m, level).Decides() {
			need := stat.RoundsToReach(level / float64(m))
			out = append(out, fmt.Sprintf("scenario %s: the first look, at %d rounds, cannot decide its %d gates (a pair's test needs >= %d rounds at level %.3g); raise ab.rounds.min to %d to save a look",
				sc.Config.Name, policy.Min, m, need, level/float64(m), need))
		}
		if len(gpu) > 0 {
			out = append(out, fmt.Sprintf("scenario %s: in co-resident mode both engines sit on the GPUs each arm samples, so %s count both; use --mode swap to gate them",
				sc.Config.Name, strings.Join(gpu, ", ")))
		}
		if sc.Config.FreshStack {
			out = append(out, fmt.Sprintf("scenario %s: fresh_stack is not applied by perfgate ab: each arm's stack serves every scenario (swap mode restarts it at every change of arm)", sc.Config.Name))
		}
	}
	return out
}

// separateLogs gives the arms' stacks a log each when their configs name one
// file (the default perfgate-stack.log, relative to where perfgate runs):
// perfgate-stack.base.log and perfgate-stack.candidate.log. Empty when the
// configs' own logs are apart.
func separateLogs(base, cand *config.Config) (baseLog, candLog string) {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	if abs(base.Stack.Log) != abs(cand.Stack.Log) {
		return "", ""
	}
	p := base.Stack.Log
	ext := filepath.Ext(p)
	return strings.TrimSuffix(p, ext) + "." + Base + ext, strings.TrimSuffix(p, ext) + "." + Candidate + ext
}

// holdable refuses what a mode cannot do: co-resident arms that would
// serve at one address, any replica of one at any of the other's (loopback
// names and a path after the port count as the same address), and swap
// with a stack perfgate does not manage.
func holdable(base, cand *config.Config, mode string) error {
	if mode == config.ABSwap {
		for _, a := range []struct {
			name string
			cfg  *config.Config
		}{{Base, base}, {Candidate, cand}} {
			if a.cfg.Stack.Kind == config.StackExternal {
				return exit.UsageError(fmt.Errorf("the %s config's stack is external: swap mode stops and starts the stacks, which perfgate cannot do to a server it did not start; use --mode co-resident", a.name))
			}
		}
		return nil
	}
	if base.Stack.Kind == config.StackKubernetes || cand.Stack.Kind == config.StackKubernetes {
		return nil // each arm in a namespace of its own, at an address made for it
	}
	for _, b := range base.Target.Replicas() {
		for _, c := range cand.Target.Replicas() {
			if config.ServerAddress(b) == config.ServerAddress(c) {
				return exit.UsageError(fmt.Errorf("both arms serve at %s: co-resident stacks need different ports (give one stack and its target.base_url, or its target.base_urls, another port), or use --mode swap to run one at a time",
					c))
			}
		}
	}
	return nil
}

// abRun is an A/B in progress.
type abRun struct {
	o          Options
	mode       string
	base, cand *arm
	info       *compare.AB
	seq        *compare.Sequential
	done       int // rounds both arms completed
}

// rounds measures the rounds: each scenario still undecided, one
// repetition per arm per round, in ABBA order, with a look where the
// sequential test has one.
func (r *abRun) rounds(ctx context.Context) error {
	open := map[string]bool{}
	for _, sc := range r.cand.scenarios {
		open[sc.Config.Name] = true
	}
	maxRounds := max(r.seq.Min, r.seq.Max)
	for round := 1; round <= maxRounds && len(open) > 0; round++ {
		order, arms := BaseFirst, []*arm{r.base, r.cand}
		if round%2 == 0 {
			order, arms = CandidateFirst, []*arm{r.cand, r.base}
		}
		r.info.Order = append(r.info.Order, order)
		r.info.Rounds = round
		for i, a := range arms {
			a.first = append(a.first, i == 0)
			if err := r.measure(ctx, a, round, open); err != nil {
				return err
			}
		}
		r.done = round
		r.look(round, open)
	}
	return nil
}

// measure measures one round of arm a: one repetition of each open
// scenario, its stack brought up first (swap mode: the other stopped).
func (r *abRun) measure(ctx context.Context, a *arm, round int, open map[string]bool) error {
	if err := r.bringUp(ctx, a); err != nil {
		return err
	}
	mctx := ctx
	other := r.other(a)
	if r.mode == config.ABCoResident {
		// A crash of the idle stack stops the run too.
		var cancel context.CancelFunc
		mctx, cancel = other.open.Guard(ctx)
		defer cancel()
	}
	for _, sc := range a.scenarios {
		if !open[sc.Config.Name] {
			continue
		}
		if err := a.open.Round(mctx, sc, round); err != nil {
			if ctx.Err() == nil && mctx.Err() != nil {
				return exit.RunError(fmt.Errorf("round %d: %w (it crashed while the %s arm was measured)",
					round, session.CauseOr(mctx, err), a.name))
			}
			return fmt.Errorf("round %d, the %s arm: %w", round, a.name, err)
		}
	}
	return nil
}

// other is the arm that is not a.
func (r *abRun) other(a *arm) *arm {
	if a == r.base {
		return r.cand
	}
	return r.base
}

// bringUp makes a's stack the one serving: opened the first time, and in
// swap mode started again after the other is stopped.
func (r *abRun) bringUp(ctx context.Context, a *arm) error { return r.up(ctx, a, true) }

// up is bringUp; sample says whether a restart's cold start is a sample
// (not for the eval items left after the last round).
func (r *abRun) up(ctx context.Context, a *arm, sample bool) error {
	if a.running {
		return nil
	}
	other := r.other(a)
	if r.mode == config.ABSwap && other.running {
		if err := other.open.Pause(); err != nil {
			return err
		}
		other.running = false
	}
	if a.open == nil {
		so := r.o.Session
		so.Name, so.StackLog = a.name, a.stackLog
		if so.RunID != "" {
			so.RunID += "-" + a.name // request ids unique across the arms
		}
		opened, err := session.Open(ctx, a.cfg, so)
		if err != nil {
			if r.mode == config.ABCoResident && other.open != nil && ctx.Err() == nil {
				return fmt.Errorf("the %s stack did not start beside the %s one: %w (if the two cannot run at once, on one port or in the GPU's memory, use --mode swap)", a.name, other.name, err)
			}
			return fmt.Errorf("the %s stack: %w", a.name, err)
		}
		a.open, a.running = opened, true
		return nil
	}
	restart := a.open.Restart
	if !sample {
		restart = a.open.Resume
	}
	if err := restart(ctx); err != nil {
		return err
	}
	a.running = true
	return nil
}

// look takes the sequential test's look after round n where it has one,
// and closes the scenarios whose gates are all decided.
func (r *abRun) look(n int, open map[string]bool) {
	if !r.seq.IsLook(n) {
		return
	}
	baseRes, candRes := r.base.open.Result(), r.cand.open.Result()
	for _, sc := range r.cand.scenarios {
		name := sc.Config.Name
		if !open[name] {
			continue
		}
		part := scenarioOf(candRes, name)
		baseOnly := &result.Result{Schema: result.Schema, Identity: baseRes.Identity, Scenarios: []result.ScenarioResult{*scenarioOf(baseRes, name)}}
		undecided, level, err := r.seq.Look(baseOnly, part)
		if err != nil {
			continue // the final comparison reports it
		}
		if r.o.Looks != nil {
			if len(undecided) == 0 {
				fmt.Fprintf(r.o.Looks, "  %s: look at %d rounds (level %.3g): every gate decided\n", name, n, level)
			} else {
				fmt.Fprintf(r.o.Looks, "  %s: look at %d rounds (level %.3g): undecided %s; measuring more\n", name, n, level, strings.Join(undecided, ", "))
			}
		}
		if len(undecided) == 0 {
			delete(open, name)
		}
	}
}

// scenarioOf is the named scenario of res.
func scenarioOf(res *result.Result, name string) *result.ScenarioResult {
	for i := range res.Scenarios {
		if res.Scenarios[i].Name == name {
			return &res.Scenarios[i]
		}
	}
	return &result.ScenarioResult{Name: name}
}

// finish answers both arms' eval items (the running arm first), stops both
// stacks on purpose, checking that neither had crashed, and returns the
// results.
func (r *abRun) finish(ctx context.Context) (baseRes, candRes *result.Result, err error) {
	order := []*arm{r.base, r.cand}
	if r.cand.running && !r.base.running {
		order = []*arm{r.cand, r.base}
	}
	for _, a := range order {
		if a.open.Unanswered() > 0 {
			if err := r.up(ctx, a, false); err != nil {
				return nil, nil, err
			}
		}
		if err := a.open.Finish(ctx); err != nil {
			return nil, nil, fmt.Errorf("the %s arm: %w", a.name, err)
		}
	}
	for _, a := range []*arm{r.base, r.cand} {
		err := a.open.Close() // a crash it had is named for its arm
		a.running = false
		if err != nil {
			return nil, nil, err
		}
	}
	return r.result(r.base), r.result(r.cand), nil
}

// result is arm a's result, marked with its arm.
func (r *abRun) result(a *arm) *result.Result {
	res := a.open.Result()
	res.AB = &result.ABArm{Arm: a.name, Mode: r.mode, First: a.first}
	return res
}

// partial is what the A/B measured before it failed with err: each arm's
// result so far, marked Incomplete; none for an arm that measured nothing
// (not a repetition, not a warm-up), and nil when neither measured
// anything. A scenario that a round began is in its arm's result, with
// the repetitions measured and every warm-up, the one that failed
// included.
func (r *abRun) partial(err error) *Outcome {
	reason, _, _ := strings.Cut(err.Error(), "\n")
	const maxReason = 500
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "") + "…"
	}
	out := &Outcome{}
	for _, a := range []*arm{r.base, r.cand} {
		if a.open == nil {
			continue
		}
		res := r.result(a)
		if !slices.ContainsFunc(res.Scenarios, func(s result.ScenarioResult) bool { return len(s.Repetitions) > 0 || len(s.Warmups) > 0 }) {
			continue // it measured nothing, not even a warm-up
		}
		res.Incomplete = &result.Incomplete{Reason: reason, Rounds: r.done}
		if a == r.base {
			out.Base = res
		} else {
			out.Candidate = res
		}
	}
	if out.Base == nil && out.Candidate == nil {
		return nil
	}
	return out
}

// stopAll stops whatever is still running.
func (r *abRun) stopAll() {
	for _, a := range []*arm{r.base, r.cand} {
		if a.open != nil {
			a.open.Stop()
			a.running = false
		}
	}
}
