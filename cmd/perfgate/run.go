package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
	"github.com/perfgate/perfgate/internal/version"
)

type runOptions struct {
	configPath  string
	output      string
	records     string
	scenarios   []string
	target      string
	repetitions int
	quiet       bool
	json        bool
}

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Replay the configured scenarios against the target and write result.json",
		Long: `run loads perfgate.yaml, replays each scenario's workload against the target
server at the scenario's load shape for the configured number of repetitions,
and writes the result file (schema perfgate/result/v1) with every
repetition's summary. It prints progress on stderr and a summary table on
stdout when done.

With a stack section it first starts the serving stack (a process or a
container) and waits until it is ready, recording the cold start; the stack is
stopped at the end, on failure and on Ctrl-C too. Scenarios run in order: each
is warmed up with its own load until the server is steady (warmup section, never
measured), then measured repetitions times with an optional cool-down between
repetitions. A crash, a failing health check, a warm-up that never gets steady
or an error rate over max_error_rate fails the run with exit code 3 and no
result file.`,
		Example: `  perfgate sim &                        # a simulated engine on 127.0.0.1:8000
  perfgate run -c examples/perfgate.yaml -o result.json --records records.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.configPath, "config", "c", "perfgate.yaml", "config file")
	f.StringVarP(&o.output, "output", "o", "result.json", "result file to write")
	f.StringVar(&o.records, "records", "", "also write one JSON line per request to this file")
	f.StringSliceVarP(&o.scenarios, "scenario", "s", nil, "run only these scenarios (repeatable, or comma-separated)")
	f.StringVar(&o.target, "target", "", "override target.base_url (e.g. http://127.0.0.1:8000)")
	f.IntVar(&o.repetitions, "repetitions", 0, "override repetitions (>= 1)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress and no summary; only errors")
	f.BoolVar(&o.json, "json", false, "print the result JSON on stdout instead of the summary table")
	return cmd
}

func runRun(ctx context.Context, o runOptions, stdout, stderr io.Writer) error {
	cfg, scenarios, err := loadRun(o, stderr)
	if err != nil {
		return err
	}
	res, err := execute(ctx, cfg, scenarios, o, stderr, nil)
	if err != nil {
		return err
	}
	switch {
	case o.json:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	case !o.quiet:
		if err := report.Summary(stdout, res); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", o.output)
	}
	return nil
}

// loadRun loads the config with the flags' overrides and prepares the
// scenarios' workloads; warnings go to stderr.
func loadRun(o runOptions, stderr io.Writer) (*config.Config, []run.Scenario, error) {
	cfg, err := config.LoadFile(o.configPath)
	if err != nil {
		return nil, nil, exit.UsageError(err)
	}
	if o.target != "" {
		cfg.Target.BaseURL = o.target
	}
	if o.repetitions < 0 {
		return nil, nil, exit.UsageError(fmt.Errorf("--repetitions: must be >= 1, got %d", o.repetitions))
	}
	if o.repetitions > 0 {
		cfg.Repetitions = config.Repetitions{Min: o.repetitions, Max: o.repetitions}
	}
	scenarios, err := run.Prepare(cfg, o.scenarios)
	if err != nil {
		return nil, nil, exit.UsageError(err)
	}
	if err := cfg.Validate(); err != nil { // the flag overrides
		return nil, nil, exit.UsageError(err)
	}
	for _, w := range cfg.Warnings {
		if !o.quiet {
			fmt.Fprintln(stderr, "warning: "+w.Error())
		}
	}
	if cfg.Quality.Enabled() && !slices.ContainsFunc(scenarios, func(s run.Scenario) bool { return len(s.Suites) > 0 }) && !o.quiet {
		fmt.Fprintf(stderr, "warning: quality.scenario %s is not among the scenarios run: no eval suite runs\n", cfg.QualityScenario())
	}
	return cfg, scenarios, nil
}

// execute measures the scenarios (starting and stopping the stack) and writes
// the result file, which it returns. more, if set, makes repetitions
// sequential (see session.more). A failed run leaves no result file.
func execute(ctx context.Context, cfg *config.Config, scenarios []run.Scenario, o runOptions, stderr io.Writer,
	more func(*result.ScenarioResult) bool) (*result.Result, error) {
	configHash := cfg.Hash() // of the config as written, before model: auto is resolved

	// A failed run must not leave an older result behind that a later step
	// could mistake for this run's.
	if err := os.Remove(o.output); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, exit.UsageError(fmt.Errorf("--output: %w", err))
	}
	// perfgate's own limits are its own errors, found before anything is
	// sent rather than counted as the server's connect errors.
	if err := (run.FileLimit{}).Ensure(cfg); err != nil {
		return nil, exit.RunError(err)
	}
	started := time.Now()
	sess := &session{cfg: cfg, runID: runID(), more: more}
	var rw *result.RecordWriter
	if o.records != "" {
		f, err := os.Create(o.records)
		if err != nil {
			return nil, exit.UsageError(fmt.Errorf("--records: %w", err))
		}
		defer f.Close()
		rw = result.NewRecordWriter(f)
		sess.onRecord = func(r *result.Record) { _ = rw.Write(r) }
	}
	if !o.quiet {
		sess.out = stderr
		sess.phases = run.NewPhases(stderr, os.Getenv("GITHUB_ACTIONS") == "true")
		sess.progress = run.NewProgress(stderr, isTerminal(stderr))
	}
	scenarioResults, err := sess.measure(ctx, scenarios)
	if rw != nil {
		if ferr := rw.Flush(); ferr != nil && err == nil {
			err = exit.RunError(ferr)
		}
	}
	if err != nil {
		return nil, err
	}

	res := &result.Result{
		Schema: result.Schema,
		Identity: result.Identity{
			PerfgateVersion: version.String(),
			ConfigHash:      configHash,
			Target:          target(cfg, sess.stackID),
			Server:          sess.server,
			Stack:           sess.stackID,
			Host:            result.LocalHost(),
			GPUs:            sess.gpus,
			Simulated:       sess.server.Engine == "perfgate-sim",
		},
		StartedAt:  started.UTC(),
		FinishedAt: time.Now().UTC(),
		Scenarios:  scenarioResults,
		Compare:    new(cfg.Compare.Result()),
		Telemetry:  &sess.telemetryInfo,
	}
	if cfg.Cost != nil {
		res.Cost = new(cfg.Cost.Result())
	}
	if err := result.Write(o.output, res); err != nil {
		return nil, exit.RunError(err)
	}
	return res, nil
}

// target is the result's account of where requests went and what model
// they asked for: the model's revision and quantisation as configured, or
// else as the stack's command line gives them.
func target(cfg *config.Config, st result.Stack) result.Target {
	t := result.Target{BaseURL: cfg.Target.BaseURL, API: cfg.Target.API, Model: cfg.Target.Model,
		Revision: cfg.Target.Revision, Quantization: cfg.Target.Quantization}
	revision, quantization := stack.ModelFlags(append(slices.Clone(st.Command), st.Args...))
	if t.Revision == "" {
		t.Revision = revision
	}
	if t.Quantization == "" {
		t.Quantization = quantization
	}
	return t
}

// connect builds the client for cfg's target, checks that the server answers
// /v1/models, and resolves model: auto to the first model it lists.
func connect(ctx context.Context, cfg *config.Config) (*client.Client, []string, error) {
	pool, _ := run.Connections(cfg)
	newClient := func(model string) (*client.Client, error) {
		c, err := client.New(client.Options{
			BaseURL: cfg.Target.BaseURL, API: client.API(cfg.Target.API), Model: model,
			Headers: cfg.Target.Headers, Timeout: cfg.Target.Timeout, MaxConns: pool,
		})
		if err != nil {
			return nil, exit.UsageError(fmt.Errorf("target: %w", err))
		}
		return c, nil
	}
	c, err := newClient(cfg.Target.Model)
	if err != nil {
		return nil, nil, err
	}
	models, err := c.ListModels(ctx)
	if err != nil {
		return nil, nil, exit.RunError(fmt.Errorf("target %s is not answering /v1/models: %w (is the server up? `perfgate sim` starts a simulated one)", cfg.Target.BaseURL, err))
	}
	if cfg.Target.Model != "auto" {
		return c, models, nil
	}
	if len(models) == 0 {
		return nil, nil, exit.RunError(fmt.Errorf("target %s lists no models, and target.model is auto", cfg.Target.BaseURL))
	}
	cfg.Target.Model = models[0]
	c.CloseIdleConnections()
	c, err = newClient(cfg.Target.Model)
	return c, models, err
}

// runID is a short random id that makes request ids unique across runs.
func runID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
