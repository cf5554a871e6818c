package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	gating "github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// verdictFormats are the renderings of a verdict.
var verdictFormats = report.TextFormats

type compareOptions struct {
	baselines     []string
	result        string
	configPath    string
	format        string
	allowMismatch bool
	alpha         float64
	aa            bool
	// history compares the runs its history recorded around two refs.
	history, from, to string
	runs              int
}

func newCompareCmd(stdout, stderr io.Writer) *cobra.Command {
	var o compareOptions
	cmd := &cobra.Command{
		Use:   "compare --baselines BASELINE --result RESULT",
		Short: "Compare a result with its baseline and give each gate's verdict",
		Long: `compare tests, for every gate of every scenario, whether the candidate result
is worse than the baseline: one value per repetition on each side, a one-sided
Mann-Whitney U test in the bad direction, Holm's correction across each
scenario's gates at its share of alpha (alpha split across the scenarios with
gates, as perfgate gate tests them), and the Hodges-Lehmann shift with its interval, shown as a change relative to
the baseline median. Each gate is a regression (significant and beyond its
tolerance), a pass (the interval rules out a change beyond the tolerance) or
inconclusive (too few samples or too much noise to tell).

The gates are the ones recorded in the result (from the config that ran it),
or those of --config. The baseline is a result file, or a baselines directory
holding <scenario>.json files. Results measured on different GPUs or with a
different workload, load shape or SLO are refused (exit 2) unless
--allow-mismatch; what a pull request is expected to change (engine version,
model, flags, image) is listed under "what changed".

With --history DIR --from REF --to REF, compare compares two releases from
the history instead: on each side the last --runs runs (default 10) that
history.jsonl recorded up to the ref (a tag or branch, a commit SHA, or a
date: 2026-10-01), each run's median a sample, with the same statistics and
report as a gate, and then lists the change points between the two refs
with their commit ranges: a release note's performance section. A tag
whose commit no run measured takes the runs up to its commit's date.

With --aa, compare calibrates instead: given several results of the same
configuration (A/A), it reports each metric's noise between repetitions, the
smallest regression the configuration could detect, the repetitions a gate's
tolerance needs, and how often the gate raised a false alarm between them.

Exit codes: 0 pass, 1 regression (or inconclusive with on_inconclusive: fail),
2 bad input or a refused comparison.`,
		Example: `  perfgate compare --baselines baselines/ --result result.json
  perfgate compare --baselines old.json --result new.json --format markdown
  perfgate compare --aa run1.json run2.json run3.json
  perfgate compare --history baselines/ --from v1.3 --to v1.4 -c perfgate.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.aa {
				return runCalibrate(o, args, stdout)
			}
			if o.history != "" || o.from != "" || o.to != "" {
				if len(args) > 0 {
					return exit.UsageError(fmt.Errorf("unexpected arguments %q (--history takes --from and --to)", args))
				}
				return runCompareReleases(cmd, o, stdout)
			}
			if len(args) > 0 {
				return exit.UsageError(fmt.Errorf("unexpected arguments %q (use --baselines and --result; files as arguments are for --aa)", args))
			}
			return runCompare(o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.baselines, "baselines", "b", nil, "baseline result file, or a baselines directory (repeatable)")
	f.StringVarP(&o.result, "result", "r", "result.json", "candidate result file")
	f.StringVarP(&o.configPath, "config", "c", "", "take the gates and compare settings from this config instead of the result")
	f.StringVarP(&o.format, "format", "f", "text", "output format: "+strings.Join(verdictFormats, ", "))
	f.BoolVar(&o.allowMismatch, "allow-mismatch", false, "compare even when hardware, workload or load shape differ")
	f.Float64Var(&o.alpha, "alpha", 0, "false-regression rate over all gates, split evenly across the scenarios with gates (default: the result's compare.alpha, 0.05)")
	f.BoolVar(&o.aa, "aa", false, "calibrate from A/A results given as arguments")
	f.StringVar(&o.history, "history", "", "compare two releases from this baselines directory's history (with --from and --to)")
	f.StringVar(&o.from, "from", "", "with --history: the earlier release (a tag or branch, a commit SHA, or a date)")
	f.StringVar(&o.to, "to", "", "with --history: the later release")
	f.IntVar(&o.runs, "runs", 10, "with --history: the runs a side, the last up to its ref")
	addAliases(cmd, alias{Old: "baseline", To: "baselines"})
	return cmd
}

func runCompare(o compareOptions, stdout, stderr io.Writer) error {
	if !slices.Contains(verdictFormats, o.format) {
		return exit.UsageError(fmt.Errorf("--format: want one of %s, got %q", strings.Join(verdictFormats, ", "), o.format))
	}
	if len(o.baselines) == 0 {
		return exit.UsageError(errors.New("--baselines is required (a result file or a baselines directory)"))
	}
	cand, err := readComplete(o.result)
	if err != nil {
		return exit.UsageError(err)
	}
	bases, err := loadBaselines(o.baselines, cand)
	if err != nil {
		return err
	}
	opts := compare.Options{Alpha: o.alpha, AllowMismatch: o.allowMismatch}
	if o.alpha != 0 && !(o.alpha > 0 && o.alpha < 0.5) {
		return exit.UsageError(fmt.Errorf("--alpha: must be in (0, 0.5), got %v", o.alpha))
	}
	if o.configPath != "" {
		cfg, err := config.LoadFile(o.configPath)
		if err != nil {
			return exit.UsageError(err)
		}
		opts.Gates = gating.GatesFrom(cfg)
		opts.QualityGates = cfg.QualityGates()
		if o.alpha == 0 {
			opts.Alpha = cfg.Compare.Alpha
		}
		opts.OnInconclusive = cfg.Compare.OnInconclusive
		opts.Tail = cfg.Compare.Tail
		opts.Estimator = cfg.Compare.Estimator
	}
	// As perfgate gate tests a run (and validate and compare --aa count):
	// alpha split across the scenarios with gates, Holm within each.
	v, err := gating.Compare(bases, cand, opts)
	if err != nil {
		return exit.UsageUnlessCoded(err)
	}
	if err := writeVerdict(stdout, v, o.format); err != nil {
		return err
	}
	return verdictError(v)
}

// loadBaselines reads the baselines named by --baselines: result files, or
// directories from which each scenario of cand takes <scenario>.json. A
// scenario with no baseline file in a directory is left out (compare says
// so); a corrupt file is an error naming it.
func loadBaselines(paths []string, cand *result.Result) ([]*result.Result, error) {
	var out []*result.Result
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, exit.UsageError(fmt.Errorf("--baselines: %w", err))
		}
		if !st.IsDir() {
			r, err := readComplete(p)
			if err != nil {
				return nil, exit.UsageError(err)
			}
			out = append(out, r)
			continue
		}
		store := baseline.Store{Dir: p}
		for _, s := range cand.Scenarios {
			r, err := store.Load(s.Name)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, exit.UsageError(err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// readComplete is result.Read of path, refusing a result that a run wrote
// although it did not finish (an interrupted perfgate ab's partial files):
// nothing judges or records it. The error names path and wraps
// result.ErrInvalid.
func readComplete(path string) (*result.Result, error) {
	r, err := result.Read(path)
	if err != nil {
		return nil, err
	}
	if err := r.CheckComplete(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func writeVerdict(w io.Writer, v *compare.Verdict, format string) error {
	r, err := report.VerdictReporter(v, format)
	if err != nil {
		return exit.UsageError(fmt.Errorf("--format: %w", err))
	}
	return r.Report(w)
}

// verdictError is the error that carries the verdict's exit code under its
// own compare.on_inconclusive (exit.OutcomeError), or nil for a pass.
func verdictError(v *compare.Verdict) error {
	return exit.OutcomeError(string(v.Outcome), exit.Policy{FailOn: exit.FailOnConfig, OnInconclusive: v.OnInconclusive})
}

// runCalibrate is compare --aa: the calibration of A/A results.
func runCalibrate(o compareOptions, files []string, stdout io.Writer) error {
	if len(files) == 0 {
		return exit.UsageError(errors.New("--aa: give the A/A result files as arguments"))
	}
	var results []*result.Result
	for _, f := range files {
		r, err := readComplete(f)
		if err != nil {
			return exit.UsageError(err)
		}
		results = append(results, r)
	}
	var gates func(string) []config.Gate
	alpha := o.alpha
	if o.configPath != "" {
		cfg, err := config.LoadFile(o.configPath)
		if err != nil {
			return exit.UsageError(err)
		}
		gates = gating.GatesFrom(cfg)
		if alpha == 0 {
			alpha = cfg.Compare.Alpha
		}
	}
	cal, err := gating.Calibrate(results, alpha, gates)
	if err != nil {
		return exit.UsageError(err)
	}
	if o.format == "json" {
		return writeJSON(stdout, cal)
	}
	return report.WriteCalibration(stdout, cal)
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	// Characters the output's sanitiser would make spaces are escaped
	// instead: the JSON keeps its values, and still prints safely.
	_, err := w.Write(textsafe.JSON(buf.Bytes()))
	return err
}
