package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/perfgate/perfgate/internal/textsafe"
)

// SummaryLimit is GitHub's cap on a step summary: 1 MiB. A step whose summary
// file grows past it gets no summary at all, so [Action.WriteSummary] refuses
// to go over it and the caller sizes the markdown.
const SummaryLimit = 1 << 20

// ErrNoSummary is returned by [Action.WriteSummary] when GITHUB_STEP_SUMMARY is
// not set: the process is not running as an Actions step. Callers print the
// markdown instead.
var ErrNoSummary = errors.New("no step summary: GITHUB_STEP_SUMMARY is not set")

// ErrNoOutputFile is returned by [Action.SetOutput] when GITHUB_OUTPUT is not
// set: the process is not running as an Actions step, and there is nowhere to
// put an output.
var ErrNoOutputFile = errors.New("no step outputs: GITHUB_OUTPUT is not set")

// fileCommandDelimiter is the heredoc delimiter go-githubactions writes around
// a value in GITHUB_OUTPUT. A value with a line equal to it would end the
// heredoc early and could set other outputs, so SetOutput refuses it.
const fileCommandDelimiter = "_GitHubActionsFileCommandDelimeter_"

// Action is perfgate's view of the GitHub Actions runner: inputs, outputs, the
// step summary, log groups, annotations and the event that triggered the run.
// getenv and the writer are injected so tests run without a runner.
type Action struct {
	gha    *githubactions.Action
	getenv func(string) string
}

// NewAction returns an Action reading the environment through getenv and
// writing workflow commands (groups, annotations) to w. A nil getenv is
// os.Getenv and a nil w is os.Stdout, which is what a real step wants. When
// w is a textsafe.Writer the commands go through textsafe.Commands: they
// stay commands, while go-githubactions' escaping of newlines and the
// writer's cleaning keep their messages from starting others.
func NewAction(getenv func(string) string, w io.Writer) *Action {
	if getenv == nil {
		getenv = os.Getenv
	}
	if w == nil {
		w = os.Stdout
	}
	return &Action{
		gha:    githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(textsafe.Commands(w))),
		getenv: getenv,
	}
}

// InActions reports whether the process runs as a GitHub Actions step
// (GITHUB_ACTIONS is "true"), so callers know whether outputs, the summary and
// annotations mean anything.
func (a *Action) InActions() bool {
	return a.getenv("GITHUB_ACTIONS") == "true"
}

// Mode is the perfgate command the action runs: the mode input, gate
// (the default) or ab; anything else is an error naming it.
func (a *Action) Mode() (string, error) {
	switch v := strings.ToLower(a.gha.GetInput("mode")); v {
	case "", ModeGate:
		return ModeGate, nil
	case ModeAB:
		return ModeAB, nil
	default:
		return "", fmt.Errorf("input mode: %q is not gate or ab", v)
	}
}

// Args turns the action's inputs (INPUT_<NAME> variables, trimmed) into
// arguments of the command of mode (Mode): one "--flag=value" per input
// whose value is non-empty, in the order of [Inputs]. An input left empty
// passes no flag, so the command's own default applies. A Bool input must
// be true or false (any case); anything else is an error naming the input
// and the value, because a typo such as "flase" must not silently mean
// true. An input of the other mode (baselines in mode ab, base-config in
// mode gate) set to anything but its default is an error too: it would
// otherwise be ignored.
func (a *Action) Args(mode string) ([]string, error) {
	var args []string
	for _, in := range Inputs {
		if in.Flag == "" {
			continue // mode: the command itself
		}
		v := a.gha.GetInput(in.Name)
		if v == "" {
			continue
		}
		if in.Only != "" && in.Only != mode {
			if v == in.Default {
				continue
			}
			return nil, fmt.Errorf("input %s is for mode %s, and this step's mode is %s", in.Name, in.Only, mode)
		}
		if in.Bool {
			switch strings.ToLower(v) {
			case "true", "false":
				v = strings.ToLower(v)
			default:
				return nil, fmt.Errorf("input %s: %q is not true or false", in.Name, v)
			}
		}
		args = append(args, "--"+in.Flag+"="+v)
	}
	if mode == ModeAB && a.gha.GetInput("base-config") == "" {
		return nil, fmt.Errorf("input base-config: mode ab needs the base arm's config (the base branch's perfgate.yaml)")
	}
	return args, nil
}

// SetOutput sets the action output name to value, appending it to the
// GITHUB_OUTPUT file in go-githubactions' heredoc format. name must be one of
// [Outputs]; ErrNoOutputFile when GITHUB_OUTPUT is unset.
func (a *Action) SetOutput(name, value string) error {
	if !isOutput(name) {
		return fmt.Errorf("setting output %q: not an output of the action", name)
	}
	if a.getenv("GITHUB_OUTPUT") == "" {
		return fmt.Errorf("setting output %s: %w", name, ErrNoOutputFile)
	}
	for _, line := range strings.Split(strings.ReplaceAll(value, "\r\n", "\n"), "\n") {
		if line == fileCommandDelimiter {
			return fmt.Errorf("setting output %s: the value has a line %q, which would end it early", name, fileCommandDelimiter)
		}
	}
	if err := recoverError(func() { a.gha.SetOutput(name, value) }); err != nil {
		return fmt.Errorf("setting output %s: %w", name, err)
	}
	return nil
}

// recoverError runs f and returns what it panicked with as an error:
// go-githubactions panics when it cannot write a file command, and perfgate
// reports that as an error instead.
func recoverError(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
				return
			}
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// WriteSummary appends markdown to the step summary file
// ($GITHUB_STEP_SUMMARY), followed by a newline when it does not end with one.
// ErrNoSummary when the variable is unset. GitHub drops a summary over
// [SummaryLimit] bytes, so a write that would make the file larger than that is
// an error and writes nothing: the caller sizes the markdown.
//
// The file is written directly rather than through go-githubactions'
// AddStepSummary, which panics on a failed write instead of returning an error.
func (a *Action) WriteSummary(markdown string) error {
	path := a.getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return ErrNoSummary
	}
	if !strings.HasSuffix(markdown, "\n") {
		markdown += "\n"
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("writing the step summary: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("writing the step summary: %w", err)
	}
	if total := fi.Size() + int64(len(markdown)); total > SummaryLimit {
		_ = f.Close()
		return fmt.Errorf("writing the step summary: %d bytes (%d already there) would exceed GitHub's limit of %d bytes",
			total, fi.Size(), SummaryLimit)
	}
	if _, err := io.WriteString(f, markdown); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing the step summary %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the step summary %s: %w", path, err)
	}
	return nil
}

// Group starts a collapsible group of log lines titled title (::group::); the
// next EndGroup closes it. Each stage of a run gets one, so the log reads like
// the pipeline.
func (a *Action) Group(title string) { a.gha.Group(title) }

// EndGroup closes the group Group opened (::endgroup::).
func (a *Action) EndGroup() { a.gha.EndGroup() }

// Errorf writes an error annotation (::error::), shown on the run's summary
// page and the pull request's checks, for what failed the step.
func (a *Action) Errorf(format string, args ...any) { a.gha.Errorf(format, args...) }

// Warningf writes a warning annotation (::warning::), for what the user should
// see but did not fail the step, such as a comment that could not be posted.
func (a *Action) Warningf(format string, args ...any) { a.gha.Warningf(format, args...) }

// Noticef writes a notice annotation (::notice::), for information worth
// surfacing on the run's summary page, such as the verdict.
func (a *Action) Noticef(format string, args ...any) { a.gha.Noticef(format, args...) }

// Event is what the triggering event says about the run: which repository,
// which pull request (if any) and which commit was measured. It is how perfgate
// knows where to comment and whether the token can.
type Event struct {
	Name        string // GITHUB_EVENT_NAME
	Owner, Repo string // from GITHUB_REPOSITORY
	PullRequest int    // 0 when the event is about no pull request
	HeadSHA     string // the pull request's head (or workflow_run.head_sha); "" when the payload does not say
	HeadRepo    string // full name of the head repository (a fork's differs from Owner/Repo); "" when the payload does not say
	Commit      string // GITHUB_SHA
	RunURL      string // $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID, "" when unknown
	APIURL      string // GITHUB_API_URL, default https://api.github.com
}

// Fork reports whether the event's head repository differs from the
// repository: a fork's pull request gets a read-only token, so no comment can
// be posted from its pull_request job. It is false when the head repository is
// unknown (push, issue_comment).
func (e Event) Fork() bool {
	return e.HeadRepo != "" && !strings.EqualFold(e.HeadRepo, e.Owner+"/"+e.Repo)
}

// eventPayload is the part of an event payload that Event reads.
type eventPayload struct {
	PullRequest *struct {
		Number int `json:"number"`
		Head   struct {
			SHA  string    `json:"sha"`
			Repo *repoName `json:"repo"`
		} `json:"head"`
	} `json:"pull_request"`
	WorkflowRun *struct {
		HeadSHA        string    `json:"head_sha"`
		HeadRepository *repoName `json:"head_repository"`
		PullRequests   []struct {
			Number int `json:"number"`
		} `json:"pull_requests"`
	} `json:"workflow_run"`
	Issue *struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
}

// repoName is a repository object of a payload, of which Event needs the name.
type repoName struct {
	FullName string `json:"full_name"`
}

// fullName returns r's full name, "" for a nil r (a deleted fork has a null
// head repository).
func (r *repoName) fullName() string {
	if r == nil {
		return ""
	}
	return r.FullName
}

// Event reads the triggering event: the runner's GITHUB_* variables and the
// payload at $GITHUB_EVENT_PATH, through go-githubactions' Context.
//
//   - pull_request, pull_request_target: the payload's pull_request.number,
//     head.sha and head.repo.full_name;
//   - workflow_run: workflow_run.pull_requests[0].number if there is one (GitHub
//     leaves the list empty for a fork's pull request: the number then comes
//     from an artifact, checked with [Commenter.VerifyHead]),
//     workflow_run.head_sha and workflow_run.head_repository.full_name;
//   - issue_comment: issue.number when the issue is a pull request;
//   - any other event: PullRequest 0.
//
// An unset GITHUB_EVENT_PATH, a missing or unreadable payload file (named in
// the error), or a GITHUB_REPOSITORY that is not owner/repo is an error.
func (a *Action) Event() (Event, error) {
	path := a.getenv("GITHUB_EVENT_PATH")
	if path == "" {
		return Event{}, errors.New("reading the event: GITHUB_EVENT_PATH is not set")
	}
	// Context ignores a missing payload file; a step always has one, so a
	// missing file is a broken environment, not an event without a payload.
	if _, err := os.Stat(path); err != nil {
		return Event{}, fmt.Errorf("reading the event payload %s: %w", path, err)
	}
	ghctx, err := a.gha.Context()
	if err != nil {
		return Event{}, fmt.Errorf("reading the event payload %s: %w", path, err)
	}

	owner, repo, ok := strings.Cut(ghctx.Repository, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return Event{}, fmt.Errorf("reading the event: GITHUB_REPOSITORY %q is not owner/repo", ghctx.Repository)
	}
	ev := Event{
		Name:   ghctx.EventName,
		Owner:  owner,
		Repo:   repo,
		Commit: ghctx.SHA,
		APIURL: ghctx.APIURL,
	}
	if ghctx.ServerURL != "" && ghctx.RunID > 0 {
		ev.RunURL = fmt.Sprintf("%s/%s/actions/runs/%d", strings.TrimSuffix(ghctx.ServerURL, "/"), ghctx.Repository, ghctx.RunID)
	}

	// Context decoded the payload into a map; decode it again into the few
	// typed fields Event needs.
	raw, err := json.Marshal(ghctx.Event)
	if err != nil {
		return Event{}, fmt.Errorf("reading the event payload %s: %w", path, err)
	}
	var p eventPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return Event{}, fmt.Errorf("reading the %s event payload %s: %w", ev.Name, path, err)
	}

	switch ev.Name {
	case "pull_request", "pull_request_target":
		if p.PullRequest == nil {
			return Event{}, fmt.Errorf("reading the %s event payload %s: no pull_request", ev.Name, path)
		}
		ev.PullRequest = p.PullRequest.Number
		ev.HeadSHA = p.PullRequest.Head.SHA
		ev.HeadRepo = p.PullRequest.Head.Repo.fullName()
	case "workflow_run":
		if p.WorkflowRun == nil {
			return Event{}, fmt.Errorf("reading the %s event payload %s: no workflow_run", ev.Name, path)
		}
		if len(p.WorkflowRun.PullRequests) > 0 {
			ev.PullRequest = p.WorkflowRun.PullRequests[0].Number
		}
		ev.HeadSHA = p.WorkflowRun.HeadSHA
		ev.HeadRepo = p.WorkflowRun.HeadRepository.fullName()
	case "issue_comment":
		if p.Issue != nil && len(p.Issue.PullRequest) > 0 && string(p.Issue.PullRequest) != "null" {
			ev.PullRequest = p.Issue.Number
		}
	}
	return ev, nil
}
