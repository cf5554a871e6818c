package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/exit"
	gating "github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/github"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
)

// gateOptions are perfgate gate's flags, and the system it runs in
// (runOptions.sys).
type gateOptions struct {
	runOptions
	publishOptions
	baselineDir   string
	format        string
	allowMismatch bool
	reportPath    string
	title         string
	workdir       string
}

// gateOutcome is what a gate produced, for the action's outputs: set as far
// as the gate got.
type gateOutcome struct {
	verdict    string // pass, regression or inconclusive; "" when none was reached
	result     string // the result file written
	report     string // the report file written
	commentURL string
}

// newGateCmd is the gate command with the process's environment.
func newGateCmd(stdout, stderr io.Writer) *cobra.Command {
	return newGateCmdWith(&system{stdout: stdout, stderr: stderr, getenv: os.Getenv}, &gateOutcome{})
}

// newGateCmdWith is the gate command in sys, recording what it produced in
// out.
func newGateCmdWith(sys *system, out *gateOutcome) *cobra.Command {
	o := gateOptions{runOptions: runOptions{sys: sys, gating: true}}
	cmd := &cobra.Command{
		Use:   "gate",
		Short: "Run the scenarios, compare them with their baselines, and exit with the verdict",
		Long: `gate is the whole pipeline: it runs the scenarios as perfgate run does
(starting the stack, warming up, measuring), compares each with its promoted
baseline (compare.baselines/<scenario>.json) as perfgate compare does, prints
the verdict, and exits 0 (pass), 1 (regression, or inconclusive with
compare.on_inconclusive: fail), 2 (bad input, a missing or corrupt baseline, a
refused comparison) or 3 (the run failed, or the server could not keep up
with a scenario's open-loop rate that does not declare load.overload:
measure; the verdict and report are still written, labelled "overloaded").

With repetitions: {min: 5, max: 15} the repetitions are sequential: gate
measures min, compares, and measures one more at a time while any gate of the
scenario is inconclusive, stopping when every gate is decided or at max. The
false-regression rate stays within compare.alpha despite the repeated looks:
alpha is split evenly across the scenarios that have a baseline, and each
look tests at the alpha it spends under a Pocock-type spending function
(alpha·ln(1+(e−1)·n/max)), with Holm's correction across the scenario's gates.
The verdict says how many repetitions each side had.

A scenario with no baseline is measured (repetitions.min) and reported as not
compared; with no baseline at all, gate refuses to run.

Besides the verdict on stdout, gate can write the report file (--report: the
verdict with the charts' data, which perfgate report renders again, merges
and comments from), a self-contained HTML report (--html), and the pull
request's sticky comment (--comment). On GitHub Actions it also writes the
step summary. --fail-on says which verdicts exit 1. Relative paths, the
config's among them, are taken from --workdir.`,
		Example: `  perfgate gate -c perfgate.yaml
  perfgate gate -c perfgate.yaml --format markdown > comment.md
  perfgate gate -c perfgate.yaml --report perfgate-report.json --html report.html --comment`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.configSet = cmd.Flags().Changed("config")
			return gateRun(cmd.Context(), &o, out)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.configPath, "config", "c", "perfgate.yaml", "config file")
	f.StringVarP(&o.output, "output", "o", "result.json", "result file to write")
	f.StringVar(&o.records, "records", "", "also write one JSON line per request to this file")
	f.StringSliceVarP(&o.scenarios, "scenario", "s", nil, "gate only these scenarios (repeatable, or comma-separated)")
	f.StringVarP(&o.baselineDir, "baselines", "b", "", "baselines directory (default: compare.baselines of the config)")
	f.StringVarP(&o.format, "format", "f", "text", "verdict format on stdout: "+strings.Join(verdictFormats, ", "))
	f.BoolVar(&o.allowMismatch, "allow-mismatch", false, "compare even when hardware, workload or load shape differ")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress; only the verdict and errors")
	f.StringVar(&o.reportPath, "report", "", "also write the report file (JSON: the verdict and the charts' data) for perfgate report")
	f.StringVar(&o.title, "title", "", "this job's title in a merged report (the model or GPU, say)")
	f.StringVarP(&o.workdir, "workdir", "C", "", "directory that relative paths are taken from (default: the current one)")
	addPublishFlags(f, &o.publishOptions)
	addQuickFlags(f, &o.quick, quickTarget|quickLoad)
	addNoConfigFlag(f, &o.runOptions)
	addPercentilesFlag(f, &o.percentiles)
	return cmd
}

// inWorkdir makes the relative paths of o relative to --workdir.
func (o *gateOptions) inWorkdir() error {
	return inWorkdir(o.workdir, &o.configPath, &o.output, &o.records, &o.baselineDir, &o.reportPath, &o.html, &o.quick.Workload)
}

// inWorkdir joins each relative path that is set to workdir (--workdir),
// which must be a directory; nothing when workdir is empty.
func inWorkdir(workdir string, paths ...*string) error {
	if workdir == "" {
		return nil
	}
	st, err := os.Stat(workdir)
	if err != nil {
		return exit.UsageError(fmt.Errorf("--workdir: %w", err))
	}
	if !st.IsDir() {
		return exit.UsageError(fmt.Errorf("--workdir: %s is not a directory", workdir))
	}
	for _, p := range paths {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(workdir, *p)
		}
	}
	return nil
}

// gateRun is perfgate gate: the baselines checked (internal/gate), the run
// measured (execute), the verdict on stdout, the report written and
// published, and the verdict's exit code.
func gateRun(ctx context.Context, o *gateOptions, out *gateOutcome) error {
	stdout, stderr := o.sys.stdout, o.sys.stderr
	if !slices.Contains(verdictFormats, o.format) {
		return exit.UsageError(fmt.Errorf("--format: want one of %s, got %q", strings.Join(verdictFormats, ", "), o.format))
	}
	if err := o.publishOptions.check(o.sys.getenv); err != nil {
		return err
	}
	key := o.configPath // the comment's key: the config as the user named it
	if err := o.inWorkdir(); err != nil {
		return err
	}
	// A failed gate must not leave an older report behind that a later
	// step could mistake for this run's (the result file is handled alike).
	if err := removeOld(o.reportPath, o.html); err != nil {
		return err
	}
	cfg, scenarios, err := loadRun(&o.runOptions)
	if err != nil {
		return err
	}
	store := baseline.Store{Dir: cfg.BaselinesDir()}
	if o.baselineDir != "" {
		store.Dir = o.baselineDir
	}
	opts := gating.RunOptions{Store: store, AllowMismatch: o.allowMismatch}
	if !o.quiet {
		opts.Log = stderr
		opts.Measured = func(res *result.Result) error {
			if err := report.Summary(stderr, res); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote %s\n\n", o.output)
			return nil
		}
	}
	measure := func(ctx context.Context, more func(*result.ScenarioResult) bool) (*result.Result, error) {
		return execute(ctx, &o.runOptions, cfg, scenarios, more)
	}
	g, err := gating.Run(ctx, cfg, scenarios, measure, opts)
	if g != nil {
		out.result = o.output
	}
	if g != nil && g.Verdict != nil { // printed even when the document then failed
		out.verdict = string(g.Verdict.Outcome)
		if err := writeVerdict(stdout, g.Verdict, o.format); err != nil {
			return err
		}
		for _, w := range g.Warnings {
			fmt.Fprintf(stderr, "warning: %v\n", w)
		}
	}
	if err != nil {
		return err
	}
	res, doc := g.Result, g.Document
	doc.Key, doc.Title, doc.Source = key, o.title, gating.Source(o.output, github.NewAction(o.sys.getenv, stderr))
	err = deliver(ctx, o.sys, doc, o.reportPath, &o.publishOptions, out)
	// A scenario the server could not keep up with fails the run (exit
	// 3) over any verdict: its figures measure a queue filling up, not
	// the server. The verdict and the report are still delivered, labelled.
	if oerr := overloadExit(res); oerr != nil && exit.Code(err) <= exit.Regression {
		return oerr
	}
	return err
}

// deliver is the end of gate and ab: the report file written (when
// reportPath is set), the report published (HTML, comment, step summary),
// and the verdict's exit code.
func deliver(ctx context.Context, sys *system, doc *reportfile.Document, reportPath string, p *publishOptions, out *gateOutcome) error {
	if reportPath != "" {
		if err := reportfile.Write(reportPath, doc); err != nil {
			return err
		}
		out.report = reportPath
	}
	docs := []*reportfile.Document{doc}
	var err error
	if out.commentURL, err = publish(ctx, sys, docs, p); err != nil {
		return err
	}
	return p.verdictExit(docs)
}
