// Package github is perfgate's side of GitHub: the action's inputs and outputs,
// the runner's files and log commands, the event that triggered the run, and the
// one sticky pull-request comment.
//
// It has three parts, each usable alone:
//
//   - [Inputs] and [Outputs] are the action's interface, one table that
//     action.yml at the repository root must match (a test checks it). Each input
//     maps one to one to a `perfgate gate` flag.
//   - [Action] wraps the runner through go-githubactions, with the environment
//     and the log writer injected: [Action.Args] turns the INPUT_* variables into
//     gate arguments, [Action.SetOutput] and [Action.WriteSummary] write the
//     GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and [Action.Event] reads what
//     the triggering event says (pull request number, head commit, fork or not).
//   - [Commenter] posts or edits perfgate's comment on a pull request through
//     go-github. The comment is found again by a hidden [Marker] line at its
//     start and by its author, the token's own identity, so each run edits
//     the same comment instead of adding one, and a comment someone else
//     wrote with the marker in it is never edited. Requests are retried on
//     server errors and rate limits with backoff, and each has a deadline,
//     body included ([DefaultRequestTimeout]); a token that may not comment
//     (a fork's read-only token) is [ErrForbidden], and the caller falls back
//     to the step summary; a refused edit is [ErrEditRefused], after which a
//     new comment is posted. The token never appears in an error.
//
// A typical run inside the action, with the whole comment step under one
// budget:
//
//	a := github.NewAction(os.Getenv, os.Stdout)
//	mode, err := a.Mode()               // gate or ab
//	args, err := a.Args(mode)           // perfgate <mode> <args>
//	ev, err := a.Event()                // which pull request, which head
//	c, err := github.NewCommenter(token, ev.APIURL)
//	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
//	posted, err := c.Upsert(ctx, ev.Owner, ev.Repo, ev.PullRequest, "default", markdown)
//	cancel()
//	if errors.Is(err, github.ErrForbidden) {
//		err = a.WriteSummary(markdown)
//	}
//	err = a.SetOutput(github.OutputCommentURL, posted.URL)
//
// The package knows nothing of results or verdicts: it moves strings that the
// report package renders.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package github
