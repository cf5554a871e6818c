package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/safeio"

	"github.com/perfgate/perfgate/internal/frontier"
	"github.com/perfgate/perfgate/internal/reportfile"
)

type reportOptions struct {
	publishOptions
	format    string
	merge     bool
	baselines []string
	title     string
	exitCode  bool
	// frontier renders the quality-cost frontier of result files, and
	// scenario picks each one's capacity scenario for it.
	frontier bool
	scenario string
	// history writes the history site of a baselines directory into
	// output, linking commits to repoURL.
	history, output, repoURL string
}

func newReportCmd(sys *system) *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report [flags] REPORT.json... | report --history BASELINES -o SITE",
		Short: "Render report files as markdown, text, JSON or HTML, merge them, and post the PR comment",
		Long: `report renders report files (written by perfgate gate --report) again: as
markdown (the PR comment and step summary), terminal text or JSON on stdout,
as a self-contained HTML report with charts (--html), and as the pull
request's sticky comment (--comment). On GitHub Actions it also writes the
step summary.

With --frontier, the arguments are result files (perfgate run's), one per
configuration (a model, quantisation or engine), each with a capacity search
and eval suites: the report is the quality-cost frontier, each suite's
accuracy against the cost per million output tokens and the output
throughput at capacity, with the Pareto-optimal configurations and what
dominates the others (docs/capacity.md).

With --history, the argument is a baselines directory (its history.jsonl):
the report is a static site written into -o (index.html and a page per
scenario, fetching nothing): every headline metric's history with its change
points, identity changes and commits (docs/history.md).

With --merge, several report files (one per job of a matrix: one per model
or GPU) become one report: one overall verdict (the worst), a table of the
jobs, and a section each, titled by each job's --title.

A result file (from perfgate run) is compared first, with the gates it
recorded, against --baselines (a baselines directory or a result file).

Where a measuring job cannot comment (a fork's pull request gets a read-only
token), a later workflow_run job can: it downloads the report file and runs
perfgate report --comment, which takes the pull request's number from the
report and checks it against the commit that workflow_run measured.

report exits 0 whatever the verdict, unless --exit-code.`,
		Example: `  perfgate report perfgate-report.json
  perfgate report --html report.html perfgate-report.json
  perfgate report --merge --comment reports/*.json
  perfgate report --baselines baselines/ result.json
  perfgate report --frontier --html frontier.html results/*.json
  perfgate report --history baselines/ -o site/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.history != "" || o.output != "" {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.history != "" || o.output != "" {
				return runHistorySite(sys, cmd, o)
			}
			if !slices.Contains(verdictFormats, o.format) {
				return exit.UsageError(fmt.Errorf("--format: want one of %s, got %q", strings.Join(verdictFormats, ", "), o.format))
			}
			if o.frontier {
				return runFrontier(sys, cmd, args, o)
			}
			if o.scenario != "" {
				return exit.UsageError(errors.New("--scenario: only with --frontier (it picks each result's capacity scenario)"))
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
	f.StringSliceVarP(&o.baselines, "baselines", "b", nil, "compare result files given as arguments with this baseline (file or directory)")
	f.StringVar(&o.title, "title", "", "title of a report compared here from a result file")
	f.StringVar(&o.key, "key", "", "the sticky comment's key (default: the report's config path; \"merged\" for --merge)")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit with the verdict's code (1 for a regression, see --fail-on) instead of 0")
	f.BoolVar(&o.frontier, "frontier", false, "render the quality-cost frontier of result files (one per configuration) instead of a report")
	f.StringVarP(&o.scenario, "scenario", "s", "", "with --frontier: the capacity scenario to read from results that have several")
	f.StringVar(&o.history, "history", "", "write the history site of this baselines directory (with -o)")
	f.StringVarP(&o.output, "output", "o", "", "with --history: the site's directory")
	f.StringVar(&o.repoURL, "repo-url", "", "with --history: the repository's web address, commits link to it (default: $GITHUB_SERVER_URL/$GITHUB_REPOSITORY)")
	addPublishFlags(f, &o.publishOptions)
	addAliases(cmd, alias{Old: "baseline", To: "baselines"})
	return cmd
}

// historyExclusive are the flags --history refuses: a site is no verdict.
var historyExclusive = []string{"merge", "baselines", "comment", "exit-code", "title", "key", "pr", "repo", "github-token", "fail-on", "frontier", "scenario", "html"}

// runHistorySite writes the history site of o.history into o.output.
func runHistorySite(sys *system, cmd *cobra.Command, o reportOptions) error {
	switch {
	case o.history == "":
		return exit.UsageError(errors.New("-o: only with --history (the site's directory)"))
	case o.output == "":
		return exit.UsageError(errors.New("--history: needs -o, the directory to write the site into"))
	}
	for _, name := range historyExclusive {
		if cmd.Flags().Changed(name) {
			return exit.UsageError(fmt.Errorf("--history and --%s: a history site is no verdict, so it is not merged, compared, commented or an exit code", name))
		}
	}
	repo := o.repoURL
	if repo == "" && sys.getenv("GITHUB_SERVER_URL") != "" && sys.getenv("GITHUB_REPOSITORY") != "" {
		repo = strings.TrimRight(sys.getenv("GITHUB_SERVER_URL"), "/") + "/" + sys.getenv("GITHUB_REPOSITORY")
	}
	hist, err := baseline.Store{Dir: o.history}.History()
	if err != nil {
		return exit.UsageError(err)
	}
	site, err := report.WriteSite(o.output, hist, report.SiteOptions{RepoURL: repo})
	if err != nil {
		return exit.UsageError(err)
	}
	fmt.Fprintf(sys.stdout, "wrote %d pages (%.1f MB) to %s: open %s\n", len(site.Pages), float64(site.Bytes)/(1<<20), o.output, filepath.Join(o.output, "index.html"))
	return nil
}

// readReports reads the report files, comparing any result file with
// --baselines first.
func readReports(paths []string, o reportOptions) ([]*reportfile.Document, error) {
	var docs []*reportfile.Document
	for _, p := range paths {
		d, err := reportfile.Read(p)
		if errors.Is(err, reportfile.ErrResultFile) && len(o.baselines) > 0 {
			d, err = compareResult(p, o)
		}
		if err != nil {
			return nil, exit.UsageUnlessCoded(err)
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// compareResult is the report of result file path against --baselines, with
// the gates the result recorded.
func compareResult(path string, o reportOptions) (*reportfile.Document, error) {
	cand, err := readComplete(path)
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
	d, err := reportfile.New(v, bases, cand, history)
	if err != nil {
		return nil, err
	}
	d.Title, d.Source = o.title, reportfile.Source{Result: path}
	return d, nil
}

// writeDocuments renders docs on w in format.
func writeDocuments(w io.Writer, docs []*reportfile.Document, format string) error {
	r, err := report.DocumentsReporter(docs, format, report.MarkdownOptions{})
	if err != nil {
		return exit.UsageError(fmt.Errorf("--format: %w", err))
	}
	return r.Report(w)
}

// frontierExclusive are the flags --frontier refuses: a frontier is no
// verdict, so it is neither merged, compared, posted nor an exit code.
var frontierExclusive = []string{"merge", "baselines", "comment", "exit-code", "title", "key", "pr", "repo", "github-token", "fail-on"}

// runFrontier renders the quality-cost frontier of the result files paths
// on stdout in o.format, and as HTML to --html.
func runFrontier(sys *system, cmd *cobra.Command, paths []string, o reportOptions) error {
	for _, name := range frontierExclusive {
		if cmd.Flags().Changed(name) {
			return exit.UsageError(fmt.Errorf("--frontier and --%s: a frontier is no verdict, so it is not merged, compared, commented or an exit code", name))
		}
	}
	var inputs []frontier.Input
	for _, p := range paths {
		r, err := reportfile.ReadResult(p)
		if err != nil {
			return exit.UsageError(err)
		}
		inputs = append(inputs, frontier.Input{Path: p, Result: r})
	}
	f, err := frontier.New(inputs, frontier.Options{Scenario: o.scenario})
	if err != nil {
		return exit.UsageError(err)
	}
	r, err := report.FrontierReporter(f, o.format)
	if err != nil {
		return exit.UsageError(fmt.Errorf("--format: %w", err))
	}
	if err := r.Report(sys.stdout); err != nil {
		return err
	}
	if o.html != "" {
		return writeFrontierHTML(o.html, f)
	}
	return nil
}

// writeFrontierHTML writes f's HTML page to path, replacing it whole.
func writeFrontierHTML(path string, f *frontier.Frontier) error {
	r, err := report.FrontierReporter(f, report.FormatHTML)
	if err != nil {
		return err
	}
	var page bytes.Buffer
	if err := r.Report(&page); err != nil {
		return err
	}
	if err := safeio.WriteFile(path, page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write --html: %w", err)
	}
	return nil
}
