package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
)

// exportFormats are the formats `perfgate export --format` writes.
var exportFormats = []string{"benchfmt"}

func newExportCmd(stdout, stderr io.Writer) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export [flags] RESULT.json",
		Short: "Write a result file in another format (the Go benchmark format, for benchstat)",
		Long: `export writes the result file a run wrote in another format, to standard
output or to --output.

--format benchfmt (the default, and for now the only format) writes the Go
benchmark format that golang.org/x/perf reads, so benchstat compares two
perfgate results: one benchmark line per repetition of each scenario, named
Scenario/name=<scenario>-1, with every per-repetition metric as its own unit
(latencies in seconds as ttft-p99-sec, throughputs as output-throughput-tok/s
and request-throughput-req/s, goodput-req/s, the error rate in percent as
error-rate-%) and each unit's direction (better=lower or better=higher).
Cold start, measured once per stack start rather than per repetition, is left
out.

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

  perfgate export --format benchfmt result.json -o result.txt`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return exit.UsageError(fmt.Errorf("export takes exactly one result file, got %d arguments", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(format, args[0], output, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&format, "format", "f", "benchfmt", "output format: "+strings.Join(exportFormats, ", "))
	f.StringVarP(&output, "output", "o", "-", "file to write (- for standard output)")
	return cmd
}

func runExport(format, path, output string, stdout io.Writer) error {
	if !slices.Contains(exportFormats, format) {
		return exit.UsageError(fmt.Errorf("--format: unknown format %q (allowed: %s)", format, strings.Join(exportFormats, ", ")))
	}
	r, err := result.Read(path)
	if err != nil {
		return exit.UsageError(err)
	}
	// Render in full first, so that an error leaves no partial output.
	var buf bytes.Buffer
	if err := report.WriteBenchfmt(&buf, r); err != nil {
		return exit.UsageError(fmt.Errorf("export %s: %w", path, err))
	}
	if output == "-" || output == "" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return exit.RunError(fmt.Errorf("write export: %w", err))
		}
		return nil
	}
	if err := safeio.WriteFile(output, buf.Bytes(), 0o644); err != nil {
		return exit.UsageError(fmt.Errorf("--output: %w", err))
	}
	return nil
}
