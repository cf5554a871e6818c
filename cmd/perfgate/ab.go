package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/ab"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	gating "github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/github"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/session"
)

// abOptions are perfgate ab's flags, and the system it runs in.
type abOptions struct {
	publishOptions
	sys           *system
	basePath      string
	candPath      string
	mode          string
	rewarm        string
	output        string
	baseOutput    string
	scenarios     []string
	format        string
	allowMismatch bool
	quiet         bool
	reportPath    string
	title         string
	workdir       string
	// quick are the quick run's load flags, over both arms' configs.
	quick       config.Quick
	percentiles percentilesFlag
}

// newABCmd is the ab command in sys, recording what it produced in out.
func newABCmd(sys *system, out *gateOutcome) *cobra.Command {
	o := abOptions{sys: sys}
	cmd := &cobra.Command{
		Use:   "ab",
		Short: "Measure a base and a candidate stack interleaved on one runner and compare them pair by pair",
		Long: `ab measures two stacks in one job, in rounds, and compares them pair by
pair: no stored baseline, so no drift of the runner between the day the
baseline was measured and today.

The two configs (--base, from the base branch's checkout in a workflow, and
--config, the candidate's) must measure the same thing: the same scenarios, workloads, load
shapes, SLOs, eval suites and seed (checked, every difference named). What
may differ is the stack (its command, image, flags, model or engine), the
target's address and model, and the warm-up.

Round r measures one repetition of each scenario on each arm: base then
candidate in odd rounds, candidate then base in even ones (ABBA), each arm
warmed up before its repetition: to steady state after every start of its
stack, and with a short re-warm (one warmup.window of the load, not judged)
where its stack stayed up since its last warm-up (--rewarm short, the
default, or ab.rewarm; --rewarm full warms up to steady state every round).
Every warm-up is salted apart, so no prompt cache answers it from an earlier
one; round r sends the same text on both arms. Repetition r of the two arms
is a pair, and each gate tests the paired differences: the one-sided Wilcoxon
signed-rank test, the Hodges-Lehmann estimate of the paired change with its
interval, Holm across the gates, the same three outcomes as perfgate gate.
Rounds are the candidate config's ab.rounds (default {min: 8, max: 16}: ab
measures 8 rounds, looks, and measures more while a gate is undecided, with
alpha spent over the looks). Rounds too few for the paired test to decide
are refused before any stack starts (exit 2), with the rounds that would.

--mode co-resident (the default, or ab.mode in the candidate config) starts
both stacks at once, on different ports, and switches the load between them.
--mode swap runs one at a time, stopping one and starting the other at every
change of arm; every start is then a cold-start sample, and cold_start is
gated once there are enough starts for the paired test.

It writes both arms' results (-o for the candidate, --base-output for the
base, which can be promoted as a baseline) and the same outputs as gate: the
verdict, --report, --html, --comment, the step summary. A crash of either
stack fails the run (exit 3) with both stopped. Exit codes as gate's.

A run that fails or is interrupted (Ctrl-C, a cancelled job) after a round
began writes no -o or --base-output, and no verdict, but keeps what it
measured beside them, as result.partial.json and base-result.partial.json
(".partial" before the extension of each), marked incomplete: compare, gate,
baseline promote and record, and export refuse them. Exit 3.`,
		Example: `  perfgate ab --base base/perfgate.yaml --config perfgate.yaml
  perfgate ab --base base.yaml --config perfgate.yaml --mode swap --html ab.html --comment`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return abRun(cmd.Context(), &o, out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.basePath, "base", "", "the base arm's config (the base branch's perfgate.yaml)")
	f.StringVarP(&o.candPath, "config", "c", "perfgate.yaml", "the candidate arm's config")
	f.StringVar(&o.mode, "mode", "", "how the two stacks are held: co-resident or swap (default: ab.mode of the candidate config)")
	f.StringVar(&o.rewarm, "rewarm", "", "how a round warms up an arm whose stack stayed up since its last warm-up: short or full (default: ab.rewarm of the candidate config, short)")
	f.StringVarP(&o.output, "output", "o", "result.json", "the candidate arm's result file")
	f.StringVar(&o.baseOutput, "base-output", "base-result.json", "the base arm's result file")
	f.StringSliceVarP(&o.scenarios, "scenario", "s", nil, "measure only these scenarios (repeatable, or comma-separated)")
	f.StringVarP(&o.format, "format", "f", "text", "verdict format on stdout: "+strings.Join(verdictFormats, ", "))
	f.BoolVar(&o.allowMismatch, "allow-mismatch", false, "compare even when the arms ran on different hardware")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress; only the verdict and errors")
	f.StringVar(&o.reportPath, "report", "", "also write the report file (JSON) for perfgate report")
	f.StringVar(&o.title, "title", "", "this job's title in a merged report")
	f.StringVarP(&o.workdir, "workdir", "C", "", "directory that relative paths are taken from (default: the current one)")
	addAliases(cmd, alias{Old: "candidate", To: "config"})
	addPublishFlags(f, &o.publishOptions)
	addQuickFlags(f, &o.quick, quickLoad)
	addPercentilesFlag(f, &o.percentiles)
	return cmd
}

// inWorkdir makes the relative paths of o relative to --workdir.
func (o *abOptions) inWorkdir() error {
	return inWorkdir(o.workdir, &o.basePath, &o.candPath, &o.output, &o.baseOutput, &o.reportPath, &o.html, &o.quick.Workload)
}

// check validates the flags, as usage errors.
func (o *abOptions) check() error {
	switch {
	case o.basePath == "":
		return exit.UsageError(fmt.Errorf("--base: the base arm's config is required (in a workflow, the base branch's perfgate.yaml)"))
	case !slices.Contains(verdictFormats, o.format):
		return exit.UsageError(fmt.Errorf("--format: want one of %s, got %q", strings.Join(verdictFormats, ", "), o.format))
	case o.mode != "" && o.mode != config.ABCoResident && o.mode != config.ABSwap:
		return exit.UsageError(fmt.Errorf("--mode: want %s or %s, got %q", config.ABCoResident, config.ABSwap, o.mode))
	case o.rewarm != "" && o.rewarm != config.RewarmShort && o.rewarm != config.RewarmFull:
		return exit.UsageError(fmt.Errorf("--rewarm: want %s or %s, got %q", config.RewarmShort, config.RewarmFull, o.rewarm))
	case o.output == o.baseOutput:
		return exit.UsageError(fmt.Errorf("--output and --base-output are both %s: give each arm its own result file", o.output))
	case o.output == ab.PartialPath(o.baseOutput) || o.baseOutput == ab.PartialPath(o.output):
		return exit.UsageError(fmt.Errorf("--output %s and --base-output %s: one is the other's partial result file (an interrupted run writes NAME.partial.json); give each arm a name of its own", o.output, o.baseOutput))
	}
	return nil
}

// abRun is perfgate ab: both configs loaded and checked, the rounds
// measured (internal/ab), both results written, the verdict printed, the
// report written and published, and the verdict's exit code.
func abRun(ctx context.Context, o *abOptions, out *gateOutcome) error {
	stdout, stderr := o.sys.stdout, o.sys.stderr
	if err := o.check(); err != nil {
		return err
	}
	if err := o.publishOptions.check(o.sys.getenv); err != nil {
		return err
	}
	// The comment's key: the config as the user named it, apart from a
	// perfgate gate job's comment on the same config.
	key := "ab:" + o.candPath
	names := [2]string{o.basePath, o.candPath}
	if err := o.inWorkdir(); err != nil {
		return err
	}
	// A failed A/B must not leave older files behind that a later step
	// could mistake for this run's.
	if err := removeOld(o.output, o.baseOutput, ab.PartialPath(o.output), ab.PartialPath(o.baseOutput), o.reportPath, o.html); err != nil {
		return err
	}
	load := func(path string) (*config.Config, []run.Scenario, error) {
		return loadRun(&runOptions{sys: o.sys, configPath: path, scenarios: o.scenarios, quiet: o.quiet, quick: o.quick, configSet: true, percentiles: o.percentiles, ab: true})
	}
	baseCfg, baseScenarios, err := load(o.basePath)
	if err != nil {
		return err
	}
	candCfg, candScenarios, err := load(o.candPath)
	if err != nil {
		return err
	}
	if err := ab.Check(baseCfg, candCfg, baseScenarios, candScenarios); err != nil {
		return err
	}

	opts := ab.Options{Mode: o.mode, Rewarm: o.rewarm, BaseName: names[0], CandidateName: names[1], AllowMismatch: o.allowMismatch}
	if !o.quiet {
		opts.Session = session.Options{Log: stderr,
			Phases:   run.NewPhases(stderr, o.sys.getenv("GITHUB_ACTIONS") == "true"),
			Progress: run.NewProgress(stderr, isTerminal(stderr))}
		opts.Looks = stderr
	}
	res, err := ab.Run(ctx, baseCfg, candCfg, baseScenarios, candScenarios, opts)
	if err != nil {
		if res != nil {
			if werr := writePartial(stderr, o, res); werr != nil {
				return errors.Join(err, werr)
			}
		}
		return err
	}
	for _, w := range []struct {
		path string
		res  *result.Result
	}{{o.baseOutput, res.Base}, {o.output, res.Candidate}} {
		if err := result.Write(w.path, w.res); err != nil {
			return exit.RunError(err)
		}
	}
	out.result = o.output
	if !o.quiet {
		if err := report.Summary(stderr, res.Candidate); err != nil {
			return err
		}
		report.Notes(stderr, res.Base) // the base arm's summary is not shown; its warnings are
		fmt.Fprintf(stderr, "wrote %s (candidate) and %s (base)\n\n", o.output, o.baseOutput)
	}
	v := res.Verdict
	out.verdict = string(v.Outcome)
	if err := writeVerdict(stdout, v, o.format); err != nil {
		return err
	}
	doc, err := reportfile.New(v, []*result.Result{res.Base}, res.Candidate, nil)
	if err != nil {
		return err
	}
	doc.Key, doc.Title, doc.Source = key, o.title, gating.Source(o.output, github.NewAction(o.sys.getenv, stderr))
	err = deliver(ctx, o.sys, doc, o.reportPath, &o.publishOptions, out)
	// As gate: a scenario either arm's server could not keep up with
	// fails the run (exit 3) over any verdict, the verdict and report
	// still delivered, labelled.
	if oerr := res.CheckOverload(); oerr != nil && exit.Code(err) <= exit.Regression {
		return oerr
	}
	return err
}
