package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/github"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/safeio"
	"io"
)

// commentBudget is the most time the pull request comment may take in all
// (finding the identity, listing, editing or posting, retries and their
// waits): a slow or broken GitHub API costs the job at most this, and the
// verdict stands.
const commentBudget = 3 * time.Minute

// publishOptions are the ways a report leaves perfgate besides stdout: the
// HTML file, the step summary and the pull request comment.
type publishOptions struct {
	html    string
	comment bool
	token   string
	key     string
	pr      int
	repo    string
	failOn  string
}

// addPublishFlags declares the flags of publishOptions on f.
func addPublishFlags(f *pflag.FlagSet, o *publishOptions) {
	f.StringVar(&o.html, "html", "", "also write a self-contained HTML report with charts to this file")
	f.BoolVar(&o.comment, "comment", false, "post the report as the pull request's sticky comment (edited in place on each run)")
	f.StringVar(&o.token, "github-token", "", "token for the comment (default: $GITHUB_TOKEN); needs pull-requests: write")
	f.IntVar(&o.pr, "pr", 0, "pull request to comment on (default: from the event payload, or the report's own)")
	f.StringVar(&o.repo, "repo", "", "repository owner/name to comment in (default: $GITHUB_REPOSITORY, or the report's own)")
	f.StringVar(&o.failOn, "fail-on", exit.FailOnConfig, "what exits 1: regression, inconclusive (regression or inconclusive), never, or config (compare.on_inconclusive decides)")
}

// check validates the options, as usage errors; the token defaults to
// GITHUB_TOKEN from getenv.
func (o *publishOptions) check(getenv func(string) string) error {
	if !slices.Contains(exit.FailOnValues, o.failOn) {
		return exit.UsageError(fmt.Errorf("--fail-on: want one of %s, got %q", strings.Join(exit.FailOnValues, ", "), o.failOn))
	}
	if o.pr < 0 {
		return exit.UsageError(fmt.Errorf("--pr: must be a pull request number, got %d", o.pr))
	}
	if o.repo != "" {
		if owner, name, ok := strings.Cut(o.repo, "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			return exit.UsageError(fmt.Errorf("--repo: want owner/name, got %q", o.repo))
		}
	}
	if o.token == "" {
		o.token = getenv("GITHUB_TOKEN")
	}
	return nil
}

// verdictExit is the error carrying the exit code of docs under --fail-on
// (reportfile.ExitError, which exit.ForOutcome decides), or nil.
func (o *publishOptions) verdictExit(docs []*reportfile.Document) error {
	return reportfile.ExitError(docs, o.failOn)
}

// publish writes docs where o says: the HTML report, the step summary when
// running on GitHub Actions, and the pull request comment. It returns the
// comment's URL ("" when none was posted). Failing to comment never fails
// the run: the reason is printed on sys's stderr (and as a notice on the
// run) and the verdict's exit code stands. The comment has commentBudget in
// all (sys.commentBudget in tests), each request to GitHub a deadline of its
// own, body included (github.DefaultRequestTimeout).
func publish(ctx context.Context, sys *system, docs []*reportfile.Document, o *publishOptions) (string, error) {
	stderr := sys.stderr
	if o.html != "" {
		var page bytes.Buffer
		if err := render(&page, docs, report.FormatHTML, report.MarkdownOptions{}); err != nil {
			return "", fmt.Errorf("--html: %w", err)
		}
		if err := safeio.WriteFile(o.html, page.Bytes(), 0o644); err != nil {
			return "", fmt.Errorf("--html: %w", err)
		}
	}
	gh := github.NewAction(sys.getenv, stderr)
	if gh.InActions() {
		var md bytes.Buffer
		if err := render(&md, docs, report.FormatMarkdown, report.MarkdownOptions{Limit: github.SummaryLimit}); err != nil {
			return "", err
		}
		if err := gh.WriteSummary(md.String()); err != nil && !errors.Is(err, github.ErrNoSummary) {
			gh.Warningf("perfgate: could not write the step summary: %v", err)
		}
	}
	if !o.comment {
		return "", nil
	}
	budget := commentBudget
	if sys.commentBudget > 0 {
		budget = sys.commentBudget
	}
	cctx, cancel := context.WithTimeout(ctx, budget)
	url, why := postComment(cctx, sys, docs, o, gh)
	if why != "" && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		why = fmt.Sprintf("GitHub's API did not answer within the comment step's budget of %s (%s)", budget, why)
	}
	cancel()
	if why != "" {
		fmt.Fprintf(stderr, "no pull request comment posted: %s\n", why)
		if gh.InActions() {
			gh.Noticef("perfgate: no pull request comment posted: %s", why)
		}
	}
	return url, nil
}

// postComment posts or edits the sticky comment; it returns the comment's
// URL, or why none was posted.
func postComment(ctx context.Context, sys *system, docs []*reportfile.Document, o *publishOptions, gh *github.Action) (url, why string) {
	if o.token == "" {
		return "", "no GitHub token (give the github-token input, --github-token or GITHUB_TOKEN)"
	}
	ev, evErr := gh.Event()
	src := docs[0].Source
	owner, repo := ev.Owner, ev.Repo
	switch {
	case o.repo != "":
		owner, repo, _ = strings.Cut(o.repo, "/")
	case owner == "" && src.Repository != "":
		owner, repo, _ = strings.Cut(src.Repository, "/")
	}
	number, fromReport := o.pr, false
	if number == 0 {
		number = ev.PullRequest
	}
	if number == 0 && ev.Name == "workflow_run" && src.PullRequest > 0 {
		// A fork's pull request is not in the workflow_run payload: the
		// number comes from the report the measuring job uploaded, and is
		// checked against the commit that job measured.
		number, fromReport = src.PullRequest, true
	}
	switch {
	case owner == "" || repo == "":
		if evErr != nil {
			return "", fmt.Sprintf("no repository to comment in (%v); give --repo", evErr)
		}
		return "", "no repository to comment in; give --repo"
	case number == 0 && evErr != nil:
		return "", fmt.Sprintf("no pull request to comment on (%v); give --pr", evErr)
	case number == 0:
		return "", fmt.Sprintf("the %s event is not about a pull request; give --pr to comment anyway", ev.Name)
	}
	apiURL := ev.APIURL
	if apiURL == "" {
		apiURL = sys.getenv("GITHUB_API_URL")
	}
	c, err := github.NewCommenter(o.token, apiURL, github.WithHTTPClient(sys.githubHTTP))
	if err != nil {
		return "", err.Error()
	}
	if fromReport {
		if err := c.VerifyHead(ctx, owner, repo, number, ev.HeadSHA); err != nil {
			return "", fmt.Sprintf("pull request #%d from the report is not the one measured: %v", number, err)
		}
	}
	key := o.key
	if key == "" {
		key = docs[0].Key
		if len(docs) > 1 {
			key = "merged"
		}
	}
	var body bytes.Buffer
	if err := render(&body, docs, report.FormatMarkdown, report.MarkdownOptions{Limit: github.CommentLimit, Marker: github.Marker(key)}); err != nil {
		return "", err.Error()
	}
	posted, err := c.Upsert(ctx, owner, repo, number, key, body.String())
	switch {
	case errors.Is(err, github.ErrForbidden) && ev.Fork():
		return "", fmt.Sprintf("the token may not comment on pull request #%d: a pull request from a fork gets a read-only token; the verdict is in the step summary, and docs/action.md shows the fork-safe workflow", number)
	case errors.Is(err, github.ErrForbidden):
		return "", fmt.Sprintf("the token may not comment on pull request #%d (it needs pull-requests: write): %v", number, err)
	case err != nil:
		return "", err.Error()
	}
	if posted.Ignored > 0 {
		fmt.Fprintf(sys.stderr, "left alone %d comment(s) holding perfgate's marker that perfgate did not write\n", posted.Ignored)
	}
	if posted.EditRefused != nil {
		fmt.Fprintf(sys.stderr, "warning: %v; posted a new comment instead\n", posted.EditRefused)
		if gh.InActions() {
			gh.Warningf("perfgate: %v; posted a new comment instead", posted.EditRefused)
		}
	}
	verb := "updated"
	if posted.Created {
		verb = "posted"
	}
	fmt.Fprintf(sys.stderr, "%s the pull request comment: %s\n", verb, posted.URL)
	return posted.URL, ""
}

// render writes docs in format through its report.Reporter.
func render(w io.Writer, docs []*reportfile.Document, format string, o report.MarkdownOptions) error {
	r, err := report.DocumentsReporter(docs, format, o)
	if err != nil {
		return err
	}
	return r.Report(w)
}
