package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/export"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// exportFormats are the formats `perfgate export --format` writes: benchfmt
// (export.WriteBenchfmt) and those of internal/export.
func exportFormats() []string {
	out := []string{"benchfmt"}
	for _, f := range export.Formats() {
		out = append(out, string(f))
	}
	return out
}

// exportOptions are the flags of `perfgate export`.
type exportOptions struct {
	format, output string
	scenarios      []string
	per            string
	perSet         bool
}

func newExportCmd(stdout, stderr io.Writer) *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export [flags] RESULT.json",
		Short: "Write a result file in another format (benchstat, Bencher, github-action-benchmark, CSV, vLLM)",
		Long: `export writes the result file a run wrote in another format, to standard
output or to --output. docs/export.md shows each consumer's side.

  benchfmt    (the default) the Go benchmark format, for benchstat
  bmf         Bencher Metric Format JSON, for bencher run --adapter json
  gab         github-action-benchmark custom JSON, the metrics for which smaller
              is better (latencies, error rate, cost): tool customSmallerIsBetter
  gab-bigger  the same, the metrics for which bigger is better (throughputs,
              goodput, capacity): tool customBiggerIsBetter
  csv         a table for a spreadsheet: one row per scenario and metric with
              the median, mean, min, max and stddev over the repetitions, or
              one row per repetition with --per repetition
  vllm        the JSON vllm bench serve --save-result writes, one object per
              repetition, one per line (jq -s . makes an array)

bmf, gab and csv give a scenario's figure as the median over its
repetitions, with their minimum and maximum as its spread. A metric a run did
not measure (GPU telemetry without a GPU, cost without a price) is left out,
never written as zero. Latencies are in ms, shares such as the error rate in
percent.

--format benchfmt writes the Go benchmark format that golang.org/x/perf
reads, so benchstat compares two perfgate results: one benchmark line per
repetition of each scenario, named Scenario/name=<scenario>-1, with every
per-repetition metric as its own unit (latencies in seconds as ttft-p99-sec,
throughputs as output-throughput-tok/s and request-throughput-req/s,
goodput-req/s, the error rate in percent as error-rate-%) and each unit's
direction (better=lower or better=higher). Cold start, measured once per
stack start rather than per repetition, is left out.

The configuration lines (model, api, engine, simulated, gpu, goos, goarch) are
what must agree for a comparison to mean anything: benchstat puts results that
differ in them in separate tables rather than compare them (benchstat -ignore
engine compares two engines on purpose). What a change normally changes
(engine version, image, perfgate version, config hash, client CPU, GPU driver)
is written as # comment lines, which benchstat ignores, so a baseline and a
candidate are compared.

benchstat wants at least 4 repetitions a side to call a difference and 6 for a
confidence interval. "benchstat -row /name" labels rows by scenario alone.`,
		Example: `  perfgate export r1.json > old.txt
  perfgate export r2.json > new.txt
  benchstat old.txt new.txt

  # only some metrics, one row per scenario
  benchstat -row /name -filter '.unit:(ttft-p99-sec OR output-throughput-tok/s)' old.txt new.txt

  perfgate export --format bmf result.json -o bmf.json
  bencher run --adapter json --file bmf.json

  perfgate export -f gab result.json -o smaller.json
  perfgate export -f gab-bigger result.json -o bigger.json

  perfgate export -f csv --per repetition result.json -o result.csv
  perfgate export -f vllm --scenario chat result.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exit.UsageError(fmt.Errorf("export takes exactly one result file, got %d arguments", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.perSet = cmd.Flags().Changed("per")
			return runExport(o, args[0], stdout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.format, "format", "f", "benchfmt", "output format: "+strings.Join(exportFormats(), ", "))
	f.StringVarP(&o.output, "output", "o", "-", "file to write (- for standard output)")
	f.StringSliceVarP(&o.scenarios, "scenario", "s", nil, "export only these scenarios (repeatable, or comma-separated)")
	f.StringVar(&o.per, "per", string(export.PerScenario), "with --format csv, what one row is: scenario (statistics over the repetitions) or repetition (each repetition's value)")
	_ = cmd.RegisterFlagCompletionFunc("per", cobra.FixedCompletions([]string{string(export.PerScenario), string(export.PerRepetition)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runExport(o exportOptions, path string, stdout io.Writer) error {
	if !slices.Contains(exportFormats(), o.format) {
		return exit.UsageError(fmt.Errorf("--format: unknown format %q (allowed: %s)", o.format, strings.Join(exportFormats(), ", ")))
	}
	per := export.Per(o.per)
	if per != export.PerScenario && per != export.PerRepetition {
		return exit.UsageError(fmt.Errorf("--per: unknown value %q (allowed: %s, %s)", o.per, export.PerScenario, export.PerRepetition))
	}
	if o.perSet && o.format != string(export.CSV) {
		return exit.UsageError(fmt.Errorf("--per applies to --format csv only, not %s", o.format))
	}
	r, err := readComplete(path) // a dashboard records whole runs only
	if err != nil {
		return exit.UsageError(err)
	}
	if len(o.scenarios) > 0 {
		if r, err = onlyScenarios(r, o.scenarios); err != nil {
			return exit.UsageError(fmt.Errorf("--scenario: %s: %w", path, err))
		}
	}
	// Render in full first, so that an error leaves no partial output.
	var buf bytes.Buffer
	if o.format == "benchfmt" {
		err = export.WriteBenchfmt(&buf, r)
	} else {
		err = export.Write(&buf, r, export.Format(o.format), export.Options{Per: per})
	}
	if err != nil {
		return exit.UsageError(fmt.Errorf("export %s: %w", path, err))
	}
	if o.output == "-" || o.output == "" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return exit.RunError(fmt.Errorf("write export: %w", err))
		}
		return nil
	}
	if err := safeio.WriteFile(o.output, buf.Bytes(), 0o644); err != nil {
		return exit.UsageError(fmt.Errorf("--output: %w", err))
	}
	return nil
}

// onlyScenarios is r with only the scenarios named, in r's order; an error
// names a scenario r does not have, and lists those it has.
func onlyScenarios(r *result.Result, names []string) (*result.Result, error) {
	var have []string
	for _, s := range r.Scenarios {
		have = append(have, s.Name)
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			return nil, fmt.Errorf("the result has no scenario %q (it has: %s)", textsafe.Line(n), textsafe.Line(strings.Join(have, ", ")))
		}
	}
	out := *r
	out.Scenarios = nil
	for _, s := range r.Scenarios {
		if slices.Contains(names, s.Name) {
			out.Scenarios = append(out.Scenarios, s)
		}
	}
	return &out, nil
}
