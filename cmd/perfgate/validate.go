package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/capacity"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	gating "github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/kube"
	"github.com/perfgate/perfgate/internal/quality"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

func newValidateCmd(stdout, stderr io.Writer) *cobra.Command {
	var configPath string
	var evals []string
	var ab bool
	var baselines string
	cmd := &cobra.Command{
		Use:   "validate [flags] [workload.jsonl ...]",
		Short: "Check the config, its workload and eval files and any files named, reporting every problem",
		Long: `validate checks perfgate.yaml (strictly: unknown keys, wrong types, values
no run could use), every workload file its scenarios use (and every empirical
lengths file of a synthetic one), every eval suite of its quality section (each
item's request, scorer, options, regular expressions and JSON Schemas), and any
further workload files named as arguments and eval suites named with --eval.
It prints every problem it finds, one a line, located by file and line or field
path, and exits 2 if there is any.

A config whose repetitions are too few for its gates to decide is refused:
with alpha split across the scenarios that have gates and Holm's correction
across each scenario's gates, a gate that could be neither a regression nor a
pass would only ever be inconclusive. The problem says the repetitions that
decide (docs/gating.md, "The repetitions rule"). With --ab the config is
checked as perfgate ab's candidate, whose repetitions are rounds tested pair
by pair (a paired test needs more of them), as perfgate ab checks it before
it starts anything.

With --baselines DIR it also reads the scenarios' baselines there and says,
for every gate, what an unchanged candidate needs: a gate whose tolerance
is within the noise of its baseline's repetitions (and of the history of
identical runs) is unlikely to pass an A/A, and the warning says what would
confirm it (more requests a repetition, more repetitions, a steadier
percentile, or the tolerance the noise allows).`,
		Example: `  perfgate validate -c perfgate.yaml
  perfgate validate -c perfgate.yaml workloads/extra.jsonl --eval evals/new.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(configPath, args, evals, ab, baselines, stdout, stderr)
		},
	}
	cmd.Flags().StringVarP(&configPath, "config", "c", "perfgate.yaml", "config file")
	cmd.Flags().StringSliceVar(&evals, "eval", nil, "also check this eval suite (repeatable, or comma-separated)")
	cmd.Flags().BoolVar(&ab, "ab", false, "check the config as perfgate ab's candidate: its repetitions are rounds, tested pair by pair")
	cmd.Flags().StringVarP(&baselines, "baselines", "b", "", "also say, from the baselines in this directory, which gates an unchanged candidate is unlikely to pass (their tolerance within the baseline's noise)")
	return cmd
}

func runValidate(configPath string, files, evals []string, ab bool, baselines string, stdout, stderr io.Writer) error {
	var problems []error
	checked := 0
	cfg, err := config.LoadFile(configPath)
	if err != nil {
		problems = append(problems, err)
	} else {
		checked++
		for _, w := range append(cfg.Warnings, gating.Advise(cfg)...) {
			fmt.Fprintln(stderr, "warning: "+w.Error())
		}
		// Repetitions too few for a gate to reach either verdict: every
		// gate would be inconclusive whatever is measured. As perfgate ab's
		// candidate (--ab), the repetitions are rounds tested pair by pair.
		design := gating.TwoSamples
		if ab {
			design = gating.Rounds
		}
		for _, p := range gating.Check(cfg, design) {
			problems = append(problems, p)
		}
		for _, s := range cfg.Scenarios {
			if s.Synth != nil {
				// An empirical lengths file is read here, not first at run time.
				for _, d := range []workload.Dist{s.Synth.Input, s.Synth.Output} {
					if d.Type == workload.DistEmpirical {
						if err := d.Check(cfg.Dir); err != nil {
							problems = append(problems, err)
						}
					}
				}
			}
			if s.Workload == "" {
				continue
			}
			files = append(files, cfg.WorkloadPath(s))
		}
		evals = append(cfg.SuitePaths(), evals...)
		// A kubernetes stack's manifests are read here, not first as the
		// run starts on the cluster.
		if k := cfg.Stack.Kubernetes; k != nil && cfg.Stack.Kind == config.StackKubernetes {
			paths := k.Paths(cfg.StackDir())
			if _, err := kube.Check(paths, k.Serving); err != nil {
				problems = append(problems, fmt.Errorf("%s: stack.kubernetes: %w", configPath, err))
			} else {
				checked += len(paths)
			}
		}
	}
	// check loads each file once (a file named twice is checked once).
	seen := map[string]bool{}
	check := func(paths []string, load func(string) error) {
		for _, f := range paths {
			if abs, err := filepath.Abs(f); err == nil && seen[abs] {
				continue
			} else {
				seen[abs] = true
			}
			if err := load(f); err != nil {
				problems = append(problems, err)
				continue
			}
			checked++
		}
	}
	check(files, func(f string) error { _, err := workload.Load(f); return err })
	check(evals, func(f string) error { _, err := quality.Load(f); return err })
	if cfg != nil && baselines != "" {
		p, err := detectFromBaselines(cfg, baselines, stdout, stderr)
		if err != nil {
			problems = append(problems, err)
		}
		checked += p
	}
	if len(problems) > 0 {
		err := errors.Join(problems...)
		n := countLines(err.Error())
		return exit.UsageError(fmt.Errorf("%w\n%d problem%s found", err, n, plural(n)))
	}
	if cfg != nil {
		describeMeasured(stdout, cfg)
	}
	fmt.Fprintf(stdout, "ok: %d file%s checked\n", checked, plural(checked))
	return nil
}

// describeMeasured says how the scenarios that are not measured at one load
// will be: a sweep as its points (the names its results and baselines
// take), a capacity search as its range and budget.
func describeMeasured(w io.Writer, cfg *config.Config) {
	for _, s := range cfg.Scenarios {
		switch {
		case len(s.Load.Sweep) > 0:
			var names []string
			for _, p := range cfg.Points(s.Name) {
				names = append(names, p.Name)
			}
			fmt.Fprintf(w, "%s: a sweep of %d points: %s\n", s.Name, len(names), strings.Join(names, ", "))
		case s.Capacity != nil:
			c := s.Capacity
			unit := "req/s"
			if c.Metric == config.CapacityConcurrency {
				unit = "users"
			}
			fmt.Fprintf(w, "%s: a capacity search of %s from %g to %g %s, starting at %g, at most %d probes (and up to %d closing probes) of %d repetitions\n",
				s.Name, c.Metric, c.Min, c.Max, unit, c.Start, c.Probes, capacity.MaxClosing, c.Repetitions)
		case s.Headroom != nil:
			h := s.Headroom
			what := fmt.Sprintf("the longest context %d users hold, from %g to %g tokens", h.Users, h.Min, h.Max)
			if h.Search == config.HeadroomUsers {
				what = fmt.Sprintf("the most users that hold %d tokens each, from %g to %g", h.Context, h.Min, h.Max)
			}
			fmt.Fprintf(w, "%s: a headroom search of %s (%d output tokens a request), starting at %g, at most %d probes (and up to %d closing probes) of %d repetitions\n",
				s.Name, what, h.OutputTokens, h.Start, h.Probes, capacity.MaxClosing, h.Repetitions)
		}
	}
}

func countLines(s string) int {
	n := 1
	for _, r := range s {
		if r == '\n' {
			n++
		}
	}
	return n
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// detectFromBaselines reads the baselines in dir of cfg's scenarios and says
// what each gate can confirm: a line for each on stdout, a warning for each
// an unchanged candidate is unlikely to pass. It returns how many baselines
// it read.
func detectFromBaselines(cfg *config.Config, dir string, stdout, stderr io.Writer) (int, error) {
	store := baseline.Store{Dir: dir}
	bases := map[string]*result.Result{}
	for _, s := range cfg.Measured() {
		b, err := store.Load(s.Name)
		if errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(stderr, "warning: scenario %s has no baseline in %s\n", s.Name, dir)
			continue
		}
		if err != nil {
			return len(bases), err
		}
		bases[s.Name] = b
	}
	if len(bases) == 0 {
		return 0, fmt.Errorf("--baselines %s: no baseline of any scenario of %s", dir, cfg.Path)
	}
	history, err := store.History()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "warning: %v: the run-to-run noise is not known\n", err)
	}
	// A stored baseline is what perfgate gate compares with: its two
	// samples' noise, whatever --ab says of the config's rounds (an A/B's
	// pairs cancel the drift a baseline's repetitions cannot show).
	sayDetectable(cfg, gating.TwoSamples, bases, history, stdout, stderr)
	return len(bases), nil
}

// sayDetectable says, for every gate of cfg's scenarios with a baseline in
// bases, what it can confirm under design (gate.Policy.Detect): a warning
// on stderr for each an unchanged candidate is unlikely to pass and, when
// stdout is not nil, a line for each of the others.
func sayDetectable(cfg *config.Config, design gating.Design, bases map[string]*result.Result, history []baseline.Entry, stdout, stderr io.Writer) {
	policy := gating.ConfigPolicy(cfg, design, func(name string) bool { return bases[name] != nil })
	for _, d := range policy.Detect(cfg, bases, history) {
		switch {
		case d.Warn():
			fmt.Fprintf(stderr, "warning: %s: %s\n", d.Unconfirmed(), d.Sentence())
		case stdout != nil:
			fmt.Fprintf(stdout, "%s\n", d.Sentence())
		}
	}
}
