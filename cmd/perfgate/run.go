package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/session"
)

// runOptions are perfgate run's flags, and the system it runs in.
type runOptions struct {
	sys        *system
	configPath string
	output     string
	records    string
	scenarios  []string
	quiet      bool
	format     string
	// quick are the quick run's flags (quickflags.go); configSet says -c
	// was given, noConfig --no-config, gating that the command is gate.
	quick     config.Quick
	configSet bool
	noConfig  bool
	gating    bool
	// ab is set for perfgate ab's arms, whose rounds ab.Check judges.
	ab          bool
	percentiles percentilesFlag
}

func newRunCmd(sys *system) *cobra.Command {
	o := runOptions{sys: sys}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Replay the configured scenarios against the target and write result.json",
		Long: `run loads perfgate.yaml, replays each scenario's workload against the target
server at the scenario's load shape for the configured number of repetitions,
and writes the result file (schema perfgate/result/v2) with every
repetition's summary. It prints progress on stderr and a summary table on
stdout when done.

With a stack section it first starts the serving stack (a process or a
container) and waits until it is ready, recording the cold start; the stack is
stopped at the end, on failure and on Ctrl-C too. Scenarios run in order: each
is warmed up with its own load until the server is steady (warmup section, never
measured), then measured repetitions times with an optional cool-down between
repetitions. A crash, a failing health check, a warm-up that never gets steady
or an error rate over max_error_rate fails the run with exit code 3 and no
result file.

An open-loop scenario (poisson, gamma, trace) the server cannot keep up with
(it served under 90% of the offered rate while TTFT rose through the
repetition, in at least half the repetitions) is named ("offered 12.0 req/s,
served 8.6 req/s; the queue grew through every repetition") and fails the run
with exit code 3 after its result is written, unless the scenario declares
load.overload: measure: then it is measured and labelled "overloaded
(declared)".`,
		Example: `  perfgate sim &                        # a simulated engine on 127.0.0.1:8000
  perfgate run -c examples/perfgate.yaml -o result.json --records records.jsonl
  perfgate run --target http://127.0.0.1:8000 --concurrency 8 --requests 100   # no config: docs/quickrun.md`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.configSet = cmd.Flags().Changed("config")
			return runRun(cmd.Context(), &o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.configPath, "config", "c", "perfgate.yaml", "config file")
	f.StringVarP(&o.output, "output", "o", "result.json", "result file to write")
	f.StringVar(&o.records, "records", "", "also write one JSON line per request to this file")
	f.StringSliceVarP(&o.scenarios, "scenario", "s", nil, "run only these scenarios (repeatable, or comma-separated)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress and no summary; only errors")
	f.StringVarP(&o.format, "format", "f", "text", "on stdout: text (the summary table) or json (the result)")
	addAliases(cmd, alias{Old: "json", To: "format", Value: "json"})
	addQuickFlags(f, &o.quick, quickTarget|quickLoad)
	addNoConfigFlag(f, &o)
	addPercentilesFlag(f, &o.percentiles)
	return cmd
}

// runFormats are perfgate run's formats on stdout.
var runFormats = []string{"text", "json"}

// runRun is perfgate run: measure, write the result file, and print the
// summary (or the result as JSON) on stdout.
func runRun(ctx context.Context, o *runOptions) error {
	stdout, stderr := o.sys.stdout, o.sys.stderr
	if !slices.Contains(runFormats, o.format) {
		return exit.UsageError(fmt.Errorf("--format: want text or json, got %q", o.format))
	}
	cfg, scenarios, err := loadRun(o)
	if err != nil {
		return err
	}
	res, err := execute(ctx, o, cfg, scenarios, nil)
	if err != nil {
		return err
	}
	switch {
	case o.format == "json":
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	case !o.quiet:
		if err := report.Summary(stdout, res); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", o.output)
	}
	return overloadExit(res)
}

// overloadExit is the failed run (exit 3) of a result with a scenario the
// server could not keep up with, undeclared (result.Result.CheckOverload);
// nil otherwise. The result is written first, so the user can look.
func overloadExit(res *result.Result) error {
	if err := res.CheckOverload(); err != nil {
		return exit.RunError(err)
	}
	return nil
}

// loadRun loads the config with the flags' overrides (or builds it from
// the flags alone: loadConfig) and prepares the
// scenarios' workloads; warnings go to stderr.
func loadRun(o *runOptions) (*config.Config, []run.Scenario, error) {
	stderr := o.sys.stderr
	cfg, built, err := loadConfig(o) // the file with the quick flags over it, or the flags alone
	if err != nil {
		return nil, nil, err
	}
	if err := o.percentiles.apply(cfg); err != nil {
		return nil, nil, err
	}
	scenarios, err := run.Prepare(cfg, o.scenarios)
	if err != nil {
		return nil, nil, exit.UsageError(err)
	}
	if err := cfg.Validate(); err != nil { // the flag overrides
		return nil, nil, exit.UsageError(err)
	}
	for _, w := range quickWarnings(o, cfg, built) {
		if !o.quiet {
			fmt.Fprintln(stderr, "warning: "+w.Error())
		}
	}
	if cfg.Quality.Enabled() && !slices.ContainsFunc(scenarios, func(s run.Scenario) bool { return len(s.Suites) > 0 }) && !o.quiet {
		fmt.Fprintf(stderr, "warning: quality.scenario %s is not among the scenarios run: no eval suite runs\n", cfg.QualityScenario())
	}
	return cfg, scenarios, nil
}

// execute measures the scenarios (session.Run starts and stops the stack)
// and writes the result file, which it returns. more, if set, makes
// repetitions sequential (see session.Options.More). A failed run leaves no
// result file. The records file (--records) is written to a temporary file
// and put in place at the end, when all its lines are written, whether the
// run passed or failed (they say why it failed); a failed write of the
// records leaves none.
func execute(ctx context.Context, o *runOptions, cfg *config.Config, scenarios []run.Scenario,
	more func(*result.ScenarioResult) bool) (*result.Result, error) {
	// A failed run must not leave an older result behind that a later step
	// could mistake for this run's.
	if err := safeio.RemoveOld(o.output); err != nil {
		return nil, exit.UsageError(fmt.Errorf("--output: %w", err))
	}
	opts := session.Options{More: more}
	var rw *result.RecordWriter
	var records *safeio.AtomicFile
	if o.records != "" {
		// Nor older records: these are put in place only when whole.
		if err := safeio.RemoveOld(o.records); err != nil {
			return nil, exit.UsageError(fmt.Errorf("--records: %w", err))
		}
		f, err := safeio.Create(o.records, 0o644)
		if err != nil {
			return nil, exit.UsageError(fmt.Errorf("--records: %w", err))
		}
		defer f.Abort() // unless committed below
		records = f
		rw = result.NewRecordWriter(f)
		opts.OnRecord = func(r *result.Record) { _ = rw.Write(r) }
	}
	if stderr := o.sys.stderr; !o.quiet {
		opts.Log = stderr
		opts.Phases = run.NewPhases(stderr, o.sys.getenv("GITHUB_ACTIONS") == "true")
		opts.Progress = run.NewProgress(stderr, isTerminal(stderr))
	}
	res, err := session.Run(ctx, cfg, scenarios, opts)
	if rw != nil {
		ferr := rw.Flush()
		if ferr == nil {
			ferr = records.Commit()
		}
		if ferr != nil && err == nil {
			err = exit.RunError(fmt.Errorf("--records: %w", ferr))
		}
	}
	if err != nil {
		return nil, err
	}
	if err := result.Write(o.output, res); err != nil {
		return nil, exit.RunError(err)
	}
	return res, nil
}
