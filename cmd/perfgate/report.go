package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/result"
)

type reportOptions struct {
	publishOptions
	format    string
	merge     bool
	baselines []string
	title     string
	exitCode  bool
}

func newReportCmd(sys *system) *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report [flags] REPORT.json...",
		Short: "Render report files as markdown, text, JSON or HTML, merge them, and post the PR comment",
		Long: `report renders report files (written by perfgate gate --report) again: as
markdown (the PR comment and step summary), terminal text or JSON on stdout,
as a self-contained HTML report with charts (--html), and as the pull
request's sticky comment (--comment). On GitHub Actions it also writes the
step summary.

With --merge, several report files (one per job of a matrix: one per model
or GPU) become one report: one overall verdict (the worst), a table of the
jobs, and a section each, titled by each job's --title.

A result file (from perfgate run) is compared first, with the gates it
recorded, against --baseline (a baselines directory or a result file).

Where a measuring job cannot comment (a fork's pull request gets a read-only
token), a later workflow_run job can: it downloads the report file and runs
perfgate report --comment, which takes the pull request's number from the
report and checks it against the commit that workflow_run measured.

report exits 0 whatever the verdict, unless --exit-code.`,
		Example: `  perfgate report perfgate-report.json
  perfgate report --html report.html perfgate-report.json
  perfgate report --merge --comment reports/*.json
  perfgate report --baseline baselines/ result.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(verdictFormats, o.format) {
				return exit.UsageError(fmt.Errorf("--format: want one of %s, got %q", strings.Join(verdictFormats, ", "), o.format))
			}
			if err := o.publishOptions.check(sys.getenv); err != nil {
				return err
			}
			if len(args) > 1 && !o.merge {
				return exit.UsageError(fmt.Errorf("%d report files: pass --merge to render them as one report", len(args)))
			}
			docs, err := readReports(args, o)
			if err != nil {
				return err
			}
			if err := writeDocuments(sys.stdout, docs, o.format); err != nil {
				return err
			}
			if _, err := publish(cmd.Context(), sys, docs, &o.publishOptions); err != nil {
				return err
			}
			if o.exitCode {
				return o.verdictExit(docs)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.format, "format", "f", "markdown", "format on stdout: "+strings.Join(verdictFormats, ", "))
	f.BoolVar(&o.merge, "merge", false, "merge several report files into one report, a section per job")
	f.StringSliceVarP(&o.baselines, "baseline", "b", nil, "compare result files given as arguments with this baseline (file or directory)")
	f.StringVar(&o.title, "title", "", "title of a report compared here from a result file")
	f.StringVar(&o.key, "key", "", "the sticky comment's key (default: the report's config path; \"merged\" for --merge)")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit with the verdict's code (1 for a regression, see --fail-on) instead of 0")
	addPublishFlags(f, &o.publishOptions)
	return cmd
}

// readReports reads the report files, comparing any result file with
// --baseline first.
func readReports(paths []string, o reportOptions) ([]*report.Document, error) {
	var docs []*report.Document
	for _, p := range paths {
		d, err := report.ReadDocument(p)
		if errors.Is(err, report.ErrResultFile) && len(o.baselines) > 0 {
			d, err = compareResult(p, o)
		}
		if err != nil {
			return nil, exit.UsageError(err)
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// compareResult is the report of result file path against --baseline, with
// the gates the result recorded.
func compareResult(path string, o reportOptions) (*report.Document, error) {
	cand, err := result.Read(path)
	if err != nil {
		return nil, err
	}
	bases, err := loadBaselines(o.baselines, cand)
	if err != nil {
		return nil, err
	}
	v, err := compare.Compare(bases, cand, compare.Options{})
	if err != nil {
		return nil, err
	}
	var history []baseline.Entry
	for _, b := range o.baselines {
		if st, err := os.Stat(b); err == nil && st.IsDir() {
			h, err := baseline.Store{Dir: b}.History()
			if err != nil {
				return nil, err
			}
			history = append(history, h...)
		}
	}
	d, err := report.NewDocument(v, bases, cand, history)
	if err != nil {
		return nil, err
	}
	d.Title, d.Source = o.title, report.Source{Result: path}
	return d, nil
}

// writeDocuments renders docs on w in format.
func writeDocuments(w io.Writer, docs []*report.Document, format string) error {
	switch format {
	case "markdown":
		return report.WriteMarkdown(w, docs, report.MarkdownOptions{})
	case "json":
		return report.WriteDocumentsJSON(w, docs)
	default:
		return report.WriteText(w, docs)
	}
}
