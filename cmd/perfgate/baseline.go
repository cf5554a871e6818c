package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	gating "github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/github"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
)

// baselineDirFlags locate the baselines directory: --baselines, else the config's
// compare.baselines (resolved against the config file), else ./baselines.
type baselineDirFlags struct {
	dir        string
	configPath string
}

func (f *baselineDirFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.dir, "baselines", "b", "", "baselines directory (default: compare.baselines of the config, else baselines)")
	cmd.Flags().StringVarP(&f.configPath, "config", "c", "perfgate.yaml", "config whose compare.baselines names the directory, when it exists")
	addAliases(cmd, alias{Old: "dir", To: "baselines"})
}

func (f *baselineDirFlags) store() (baseline.Store, error) {
	if f.dir != "" {
		return baseline.Store{Dir: f.dir}, nil
	}
	if _, err := os.Stat(f.configPath); err == nil {
		cfg, err := config.LoadFile(f.configPath)
		if err != nil {
			return baseline.Store{}, exit.UsageError(err)
		}
		return baseline.Store{Dir: cfg.BaselinesDir()}, nil
	}
	return baseline.Store{Dir: config.DefaultBaselines}, nil
}

func newBaselineCmd(sys *system) *cobra.Command {
	stdout := sys.stdout
	cmd := &cobra.Command{
		Use:   "baseline",
		Short: "Promote, show and trace the baselines pull requests are compared against",
		Long: `baseline manages the baselines directory (compare.baselines, default
baselines/ beside perfgate.yaml), which is committed to the repository:

  <scenario>.json   the promoted result of each scenario: what perfgate gate
                    compares a pull request with
  history.jsonl     one compact line per promotion (commit, date, identity
                    digest, the headline metrics' medians and intervals), for
                    trends and change points`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newBaselinePromoteCmd(sys), newBaselineRecordCmd(sys), newBaselineShowCmd(stdout), newBaselineHistoryCmd(stdout))
	return cmd
}

func newBaselinePromoteCmd(sys *system) *cobra.Command {
	var (
		dirs   baselineDirFlags
		origin originFlags
	)
	stdout := sys.stdout
	cmd := &cobra.Command{
		Use:   "promote RESULT",
		Short: "Make a result the baseline of its scenarios",
		Long: `promote writes each scenario of RESULT as baselines/<scenario>.json (atomically:
a reader never sees half a file) and appends one summary line per scenario to
baselines/history.jsonl. The commit is --commit, else $GITHUB_SHA, else the
current git HEAD. Commit the baselines directory afterwards.`,
		Example: `  perfgate run -c perfgate.yaml -o result.json   # on the main branch
  perfgate baseline promote result.json
  git add baselines && git commit -m "perfgate: new baseline"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, store, meta, err := historyInput(cmd.Context(), sys, args[0], dirs, origin)
			if err != nil {
				return err
			}
			paths, err := store.Promote(r, meta)
			if err != nil {
				return storeError(err)
			}
			for _, p := range paths {
				fmt.Fprintf(stdout, "wrote %s\n", p)
			}
			fmt.Fprintf(stdout, "appended %d line(s) to %s\n", len(r.Scenarios), store.HistoryPath())
			warnUnconfirmable(sys, dirs, r, store)
			return nil
		},
	}
	dirs.register(cmd)
	origin.register(cmd)
	return cmd
}

func newBaselineRecordCmd(sys *system) *cobra.Command {
	var (
		dirs      baselineDirFlags
		origin    originFlags
		alert     bool
		alertBody string
		issue     alertIssue
	)
	stdout := sys.stdout
	cmd := &cobra.Command{
		Use:   "record RESULT",
		Short: "Append a result to the history without making it the baseline",
		Long: `record appends one summary line per scenario of RESULT to
baselines/history.jsonl, as promote does, but leaves the baselines as they
are: for scheduled (nightly) runs that watch the trend of the default branch.
The commit is --commit, else $GITHUB_SHA, else the current git HEAD. Commit
history.jsonl afterwards.

With --alert it then reads the history for regressions of the default branch:
a change point (E-divisive, three runs of the new level at least) to a level
worse than the one before by more than the metric's gate tolerance (the
config's gates, else the defaults), that has not come back since. It prints
each, and ends with exit code 1 when this record raised a new one.
--alert-body FILE writes the Markdown body of the one issue a nightly keeps
for its alerts (or, the night a regression comes back, the note that closes
it); nothing is written when there is neither. --alert-issue keeps that one
issue in the repository (--repo, default $GITHUB_REPOSITORY) with the token
(--github-token, default $GITHUB_TOKEN; it needs issues: write): opened the
night a regression is raised, its body replaced on the nights it holds, and
commented on and closed the night none holds any more. Failing to write the
issue is said, and changes no exit code.`,
		Example: `  perfgate run -c perfgate.yaml -o result.json   # nightly, on the default branch
  perfgate baseline record result.json --alert --alert-body alert.md
  perfgate baseline history --metric ttft.p99`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (alertBody != "" || issue.keep) && !alert {
				return exit.UsageError(errors.New("--alert-body and --alert-issue need --alert"))
			}
			if err := issue.check(sys.getenv); err != nil {
				return err
			}
			r, store, meta, err := historyInput(cmd.Context(), sys, args[0], dirs, origin)
			if err != nil {
				return err
			}
			if err := store.Record(r, meta); err != nil {
				return storeError(err)
			}
			fmt.Fprintf(stdout, "appended %d line(s) to %s\n", len(r.Scenarios), store.HistoryPath())
			if !alert {
				return nil
			}
			var recorded []string
			for _, sc := range r.Scenarios {
				recorded = append(recorded, sc.Name)
			}
			return recordAlerts(cmd.Context(), sys, store, dirs, recorded, alertBody, issue)
		},
	}
	dirs.register(cmd)
	origin.register(cmd)
	cmd.Flags().BoolVar(&alert, "alert", false, "look for regressions of the history; exit 1 when this record raised a new one")
	cmd.Flags().StringVar(&alertBody, "alert-body", "", "write the alert issue's Markdown body to `FILE` (with --alert)")
	cmd.Flags().BoolVar(&issue.keep, "alert-issue", false, "keep one GitHub issue for the alerts: open, update, close (with --alert)")
	cmd.Flags().StringVar(&issue.repo, "repo", "", "repository owner/name of the alert issue (default: $GITHUB_REPOSITORY)")
	cmd.Flags().StringVar(&issue.token, "github-token", "", "token for the alert issue (default: $GITHUB_TOKEN); needs issues: write")
	return cmd
}

// alertIssue is where a nightly keeps its alert issue.
type alertIssue struct {
	keep        bool
	repo, token string
}

// alertIssueKey is the marker key of the alert issue.
const alertIssueKey = "nightly-alert"

// check fills the repository and token from the environment and checks
// them, as usage errors.
func (a *alertIssue) check(getenv func(string) string) error {
	if !a.keep {
		return nil
	}
	if a.repo == "" {
		a.repo = getenv("GITHUB_REPOSITORY")
	}
	if owner, name, ok := strings.Cut(a.repo, "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return exit.UsageError(fmt.Errorf("--alert-issue: want the repository as owner/name (--repo or $GITHUB_REPOSITORY), got %q", a.repo))
	}
	if a.token == "" {
		a.token = getenv("GITHUB_TOKEN")
	}
	if a.token == "" {
		return exit.UsageError(errors.New("--alert-issue: no GitHub token (--github-token or $GITHUB_TOKEN, with issues: write)"))
	}
	return nil
}

// keepAlertIssue opens, updates or closes the alert issue as alerts say;
// a failure is said on stderr (and as an Actions warning) and returned
// nowhere: the alerts' exit code stands.
func keepAlertIssue(ctx context.Context, sys *system, a alertIssue, alerts baseline.Alerts) {
	var body bytes.Buffer
	if err := baseline.WriteAlertIssue(&body, alerts); err != nil {
		fmt.Fprintf(sys.stderr, "no alert issue kept: %v\n", err)
		return
	}
	title := "perfgate: the nightly found a regression of the default branch"
	if len(alerts.Open) > 0 {
		o := alerts.Open[0]
		title = "perfgate: " + o.Title() + " on the default branch"
	}
	owner, repo, _ := strings.Cut(a.repo, "/")
	c, err := github.NewCommenter(a.token, sys.getenv("GITHUB_API_URL"), github.WithHTTPClient(sys.githubHTTP))
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, commentBudget)
		defer cancel()
		var kept github.Kept
		kept, err = c.KeepIssue(ctx, owner, repo, alertIssueKey, title, body.String(), len(alerts.Open) > 0)
		if err == nil {
			if kept.Action != "" {
				fmt.Fprintf(sys.stdout, "alert issue %s: %s\n", kept.Action, kept.URL)
			}
			return
		}
	}
	fmt.Fprintf(sys.stderr, "no alert issue kept: %v\n", err)
	if gh := github.NewAction(sys.getenv, sys.stderr); gh.InActions() {
		gh.Warningf("perfgate: no alert issue kept: %v", err)
	}
}

// recordAlerts reads the history after a record for its alerts, prints
// them, writes the issue body where asked, and returns a regression
// (exit 1) when the record raised a new one.
func recordAlerts(ctx context.Context, sys *system, store baseline.Store, dirs baselineDirFlags, recorded []string, bodyPath string, issue alertIssue) error {
	stdout := sys.stdout
	hist, err := store.History()
	if err != nil {
		return exit.UsageError(err)
	}
	gates, err := alertGates(dirs)
	if err != nil {
		return err
	}
	alerts := baseline.FindAlerts(hist, gates, recorded)
	if err := baseline.WriteAlerts(stdout, alerts); err != nil {
		return exit.RunError(err)
	}
	if bodyPath != "" && (len(alerts.Open) > 0 || len(alerts.Recovered) > 0) {
		var body bytes.Buffer
		if err := baseline.WriteAlertIssue(&body, alerts); err != nil {
			return exit.RunError(err)
		}
		if err := safeio.WriteFile(bodyPath, body.Bytes(), 0o644); err != nil {
			return exit.RunError(fmt.Errorf("--alert-body: %w", err))
		}
		fmt.Fprintf(stdout, "wrote %s\n", bodyPath)
	}
	if issue.keep {
		keepAlertIssue(ctx, sys, issue, alerts)
	}
	if alerts.AnyNew() {
		return exit.WithCode(exit.Regression, errors.New("the newest record made a new regression of the history (above)"))
	}
	return nil
}

// alertGates are the gates alerts are measured by, by scenario: the
// config's (when it is there), else the default gates.
func alertGates(dirs baselineDirFlags) (func(string) []baseline.Gate, error) {
	var cfg *config.Config
	if _, err := os.Stat(dirs.configPath); err == nil {
		if cfg, err = config.LoadFile(dirs.configPath); err != nil {
			return nil, exit.UsageError(err)
		}
	}
	defaults := (&config.Config{}).GatesOf(config.Scenario{})
	return func(scenario string) []baseline.Gate {
		gates := defaults
		if cfg != nil {
			if sc, ok := cfg.ScenarioNamed(scenario); ok {
				gates = cfg.GatesOf(sc)
			}
		}
		out := make([]baseline.Gate, 0, len(gates))
		for _, g := range gates {
			if m, err := metric.Lookup(g.Metric); err == nil {
				out = append(out, baseline.Gate{Metric: m, Tolerance: g.Tolerance})
			}
		}
		return out
	}, nil
}

// storeError maps an error of Promote or Record to its exit code: a result
// that cannot be a baseline (result.ErrInvalid) is bad input (2); failing to
// write the baselines is a failed run (3).
func storeError(err error) error {
	if errors.Is(err, result.ErrInvalid) {
		return exit.UsageError(err)
	}
	return exit.RunError(err)
}

// warnUnconfirmable says, when the config is there to say how the new
// baselines will be gated, which gates an unchanged pull request is
// unlikely to pass against them: a tolerance within the noise of the
// baseline's repetitions and of the history of identical runs.
func warnUnconfirmable(sys *system, dirs baselineDirFlags, r *result.Result, store baseline.Store) {
	if _, err := os.Stat(dirs.configPath); err != nil {
		return
	}
	cfg, err := config.LoadFile(dirs.configPath)
	if err != nil {
		return // the baselines are written; the config's own problems are validate's to say
	}
	bases := map[string]*result.Result{}
	for _, s := range r.Scenarios {
		bases[s.Name] = r
	}
	history, _ := store.History()
	sayDetectable(cfg, gating.TwoSamples, bases, history, nil, sys.stderr)
}

// historyInput is what promote and record start from: the result at path
// (read and checked by result.Read: a file that is unreadable, not a result,
// or holds numbers that cannot be true is bad input, exit 2), the baselines
// store, and the commit and date to record.
func historyInput(ctx context.Context, sys *system, path string, dirs baselineDirFlags, origin originFlags) (*result.Result, baseline.Store, baseline.Meta, error) {
	r, err := readComplete(path)
	if err != nil {
		return nil, baseline.Store{}, baseline.Meta{}, exit.UsageError(err)
	}
	store, err := dirs.store()
	if err != nil {
		return nil, baseline.Store{}, baseline.Meta{}, err
	}
	if origin.pr < 0 {
		return nil, baseline.Store{}, baseline.Meta{}, exit.UsageError(fmt.Errorf("--pr: want a pull request number, got %d", origin.pr))
	}
	commit := commitOf(ctx, sys.getenv, origin.commit)
	return r, store, baseline.Meta{Commit: commit, Date: time.Now().UTC(), Tag: tagOf(ctx, sys.getenv, origin.tag, commit),
		PR: prOf(ctx, origin.pr, commit), Run: runOf(sys.getenv)}, nil
}

// originFlags say where a promoted or recorded result came from.
type originFlags struct {
	commit, tag string
	pr          int
}

func (f *originFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.commit, "commit", "", "commit the result was measured at (default: $GITHUB_SHA, else git HEAD)")
	cmd.Flags().StringVar(&f.tag, "tag", "", "release tag of that commit, marked on the history site (default: $GITHUB_REF's tag, else git's tag of the commit)")
	cmd.Flags().IntVar(&f.pr, "pr", 0, "pull request that brought the commit (default: from its subject, \"... (#123)\" or \"Merge pull request #123\")")
}

// git runs git with args, briefly, and returns its output trimmed; "" on
// any failure (no git, no repository).
func git(ctx context.Context, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// tagOf is the release tag to record: the flag, the tag GITHUB_REF names,
// or a tag git says commit carries; "" when none.
func tagOf(ctx context.Context, getenv func(string) string, flag, commit string) string {
	if flag != "" {
		return flag
	}
	if t, ok := strings.CutPrefix(getenv("GITHUB_REF"), "refs/tags/"); ok {
		return t
	}
	if !hexRef.MatchString(commit) {
		return ""
	}
	tag, _, _ := strings.Cut(git(ctx, "tag", "--points-at", commit), "\n")
	return tag
}

// prSubject finds a pull request's number in a commit's subject: a squash
// merge's "title (#123)", a merge's "Merge pull request #123 from ...".
var prSubject = regexp.MustCompile(`\(#(\d{1,9})\)$|^Merge pull request #(\d{1,9})\b`)

// prOf is the pull request to record: the flag, or the one commit's
// subject names; 0 when unknown.
func prOf(ctx context.Context, flag int, commit string) int {
	if flag > 0 || !hexRef.MatchString(commit) {
		return flag
	}
	m := prSubject.FindStringSubmatch(git(ctx, "log", "-1", "--format=%s", commit, "--"))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1] + m[2])
	return n
}

// runOf is the URL of the workflow run measuring now, "" outside Actions.
func runOf(getenv func(string) string) string {
	server, repo, id := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID")
	if !strings.HasPrefix(server, "https://") || repo == "" || id == "" {
		return "" // the history keeps https links only
	}
	return strings.TrimRight(server, "/") + "/" + repo + "/actions/runs/" + id
}

// commitOf is the commit to record: the flag, $GITHUB_SHA, or git's HEAD;
// empty when none is known.
func commitOf(ctx context.Context, getenv func(string) string, flag string) string {
	if flag != "" {
		return flag
	}
	if sha := getenv("GITHUB_SHA"); sha != "" {
		return sha
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
