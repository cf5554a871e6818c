package gate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/github"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
)

// Gate is a gate in progress: the baselines it compares with, read before
// the run, and the sequential test its looks and its verdict share.
type Gate struct {
	// Store is the baselines directory the baselines were read from.
	Store baseline.Store
	// Baselines are the promoted results, by scenario name.
	Baselines map[string]*result.Result
	// Missing are the scenarios with no baseline, in the order they run:
	// measured (repetitions.min) but not compared.
	Missing []string
	// Sequential is the sequential test of the scenarios that have a
	// baseline; More looks with it and Verdict ends it.
	Sequential *compare.Sequential
	// Policy is the rule Sequential applies: the families, their shares of
	// alpha and their looks.
	Policy Policy
	// AllowMismatch compares even when hardware, workload or load shape
	// differ (--allow-mismatch).
	AllowMismatch bool
	// Looks, if set, receives one line per look More takes: the repetitions,
	// the look's level and the gates still undecided.
	Looks io.Writer
}

// Prepare reads the baseline of every scenario from store and checks it
// against the config before anything runs. A scenario with no baseline is
// listed in Missing; with no baseline at all, or a baseline that is
// unreadable, measured something else (unless allowMismatch) or cannot
// answer one of the scenario's telemetry gates, it fails with
// exit.UsageError.
func Prepare(cfg *config.Config, scenarios []run.Scenario, store baseline.Store, allowMismatch bool) (*Gate, error) {
	// Every baseline is read before anything runs: a corrupt one, or one
	// that measured something else, should cost no GPU time.
	bases := map[string]*result.Result{}
	var missing []string
	for _, sc := range scenarios {
		b, err := store.Load(sc.Config.Name)
		if errors.Is(err, os.ErrNotExist) {
			missing = append(missing, sc.Config.Name)
			continue
		}
		if err != nil {
			return nil, exit.UsageError(err)
		}
		bs := b.Scenarios[0]
		if !allowMismatch {
			probe := sc.Header()
			if c := sc.Config.Capacity; c != nil {
				// What the search will look for: a baseline that searched
				// otherwise (or not at all) measured something else.
				probe.Capacity = &result.Capacity{Search: c.Result()}
			}
			if h := sc.Config.Headroom; h != nil {
				probe.Capacity = &result.Capacity{Search: h.Result()}
			}
			if d := compare.ScenarioMismatches(&bs, &probe); len(d) > 0 {
				return nil, exit.UsageError(&compare.MismatchError{Differences: d})
			}
		}
		// A telemetry gate the baseline cannot answer would fail only
		// after the whole run.
		for _, g := range cfg.GatesOf(sc.Config) {
			if m, err := metric.Lookup(g.Metric); err == nil && m.Telemetry() {
				if _, err := bs.Values(g.Metric); err != nil {
					return nil, exit.UsageError(fmt.Errorf("baseline of scenario %s: %w: promote a baseline measured with it, or turn the gate off (%s: off)", sc.Config.Name, err, g.Metric))
				}
			}
		}
		bases[sc.Config.Name] = b
	}
	if len(bases) == 0 {
		return nil, exit.UsageError(fmt.Errorf("no baseline in %s for %s: run `perfgate run` on the base branch and `perfgate baseline promote result.json` first",
			store.Dir, strings.Join(missing, ", ")))
	}

	// Sequential looks at the policy's levels: the scenarios compared (those
	// with a baseline) that have gates share alpha, each over its looks.
	policy := ConfigPolicy(cfg, TwoSamples, func(name string) bool { return bases[name] != nil })
	seq := policy.Sequential(compare.Options{OnInconclusive: cfg.Compare.OnInconclusive, Gates: GatesFrom(cfg),
		QualityGates: cfg.QualityGates(), Tail: cfg.Compare.Tail, Estimator: cfg.Compare.Estimator})
	return &Gate{Store: store, Baselines: bases, Missing: missing, Sequential: seq, Policy: policy, AllowMismatch: allowMismatch}, nil
}

// More says whether the scenario measured so far (partial) needs another
// repetition: between looks it does; at a look it does while a gate is
// undecided. A scenario with no baseline needs none past the minimum.
// It is session.Options.More for a gate.
func (g *Gate) More(partial *result.ScenarioResult) bool {
	b := g.Baselines[partial.Name]
	if b == nil {
		return false // nothing to compare with: the minimum will do
	}
	n := len(partial.Repetitions)
	if !g.Sequential.IsLook(n) {
		return true // between looks
	}
	undecided, level, err := g.Sequential.Look(b, partial)
	if err != nil {
		return false // the final comparison reports it
	}
	if g.Looks != nil {
		if len(undecided) == 0 {
			fmt.Fprintf(g.Looks, "  look at %d repetitions (level %.3g): every gate decided\n", n, level)
		} else {
			fmt.Fprintf(g.Looks, "  look at %d repetitions (level %.3g): undecided %s; measuring more\n", n, level, strings.Join(undecided, ", "))
		}
	}
	return len(undecided) > 0
}

// BaselinesOf are the baselines of res's scenarios that have one, in res's
// order.
func (g *Gate) BaselinesOf(res *result.Result) []*result.Result {
	var out []*result.Result
	for _, s := range res.Scenarios {
		if b := g.Baselines[s.Name]; b != nil {
			out = append(out, b)
		}
	}
	return out
}

// Verdict compares the finished run res with the baselines: each scenario at
// its last look, gates decided at earlier looks keeping their decisions. A
// comparison refused (results that measured different things) is
// exit.UsageError.
func (g *Gate) Verdict(res *result.Result) (*compare.Verdict, error) {
	v, err := g.Sequential.Final(g.BaselinesOf(res), res, g.AllowMismatch)
	if err != nil {
		return nil, exit.UsageUnlessCoded(err)
	}
	return v, nil
}

// Document builds the report document of verdict v on res: the verdict, the
// charts' data and the baselines' history. A history that cannot be read
// leaves the document without one and is returned among the warnings. The
// caller names the document (Key, Title) and says where it was made (Source).
func (g *Gate) Document(v *compare.Verdict, res *result.Result) (doc *reportfile.Document, warnings []error, err error) {
	history, err := g.Store.History()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		warnings = append(warnings, fmt.Errorf("the report has no history: %w", err))
	}
	doc, err = reportfile.New(v, g.BaselinesOf(res), res, history)
	if err != nil {
		return nil, warnings, err
	}
	return doc, warnings, nil
}

// GatesFrom gives each scenario as measured (a sweep's point by its own name,
// "chat.rate-25") the gates cfg configures for it; a scenario cfg does not
// have gets the defaults with cfg's top-level changes.
func GatesFrom(cfg *config.Config) func(string) []config.Gate {
	return func(name string) []config.Gate {
		if s, ok := cfg.ScenarioNamed(name); ok {
			return cfg.GatesOf(s)
		}
		return cfg.GatesOf(config.Scenario{})
	}
}

// Source is what the runner says about the run, for a report's Source: the
// result file, and on GitHub Actions the repository, the commit measured
// (a pull request's head, not the merge commit GITHUB_SHA names), the pull
// request and the run's URL. Outside GitHub Actions, or when its event
// cannot be read, only the result file.
func Source(resultPath string, gh *github.Action) reportfile.Source {
	src := reportfile.Source{Result: resultPath}
	if !gh.InActions() {
		return src
	}
	ev, err := gh.Event()
	if err != nil {
		return src
	}
	src.Repository = ev.Owner + "/" + ev.Repo
	src.Commit, src.PullRequest, src.RunURL = ev.Commit, ev.PullRequest, ev.RunURL
	if ev.HeadSHA != "" {
		src.Commit = ev.HeadSHA // a pull request's GITHUB_SHA is a merge commit
	}
	return src
}

// Detect is what each gate of the run can confirm, from its baseline's
// noise and the history of identical runs (Policy.Detect). A history that
// cannot be read leaves the run-to-run noise unknown (taken as none).
func (g *Gate) Detect(cfg *config.Config) []Detectability {
	history, _ := g.Store.History()
	return g.Policy.Detect(cfg, g.Baselines, history)
}
