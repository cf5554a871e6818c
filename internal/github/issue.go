package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	gogithub "github.com/google/go-github/v62/github"
)

// A scheduled run keeps one issue of the repository for its alerts (a
// regression of the default branch that the nightly found): opened the
// first night, its body replaced on the nights after while the regression
// holds, and closed, with a note, the night it ends. One issue, found by
// its marker as the sticky comment is: never an issue a night.

// IssueLimit is the most characters GitHub takes in an issue's body.
const IssueLimit = 65536

// maxIssuePages bounds the listing of open issues an alert issue is looked
// for in: 10 pages of 100, the newest first.
const maxIssuePages = 10

// Kept is what KeepIssue did.
type Kept struct {
	// Action is "opened", "updated", "closed" or "" (nothing to do: no
	// regression, and no issue open).
	Action string
	// URL is the issue's, where there is one.
	URL string
}

// KeepIssue keeps the one open issue of owner/repo for key (its body
// starts with Marker(key), and the token opened it). With open true it
// makes body the issue's body (title its title), opening the issue when
// there is none; with open false it comments body on the issue and closes
// it, and does nothing when none is open. A body over IssueLimit
// characters is an error, as is a token that may not list or write issues
// (ErrForbidden).
func (c *Commenter) KeepIssue(ctx context.Context, owner, repo, key, title, body string, open bool) (kept Kept, err error) {
	defer func() { err = c.redact(err) }()
	where := owner + "/" + repo
	if owner == "" || repo == "" {
		return Kept{}, errors.New("keeping an issue: no repository")
	}
	marker := Marker(key)
	if !strings.HasPrefix(body, marker) {
		body = marker + "\n" + body
	}
	if n := utf8.RuneCountInString(body); n > IssueLimit {
		return Kept{}, fmt.Errorf("keeping an issue of %s: the body is %d characters, over GitHub's limit of %d", where, n, IssueLimit)
	}
	found, err := c.findIssue(ctx, owner, repo, marker)
	if err != nil {
		return Kept{}, fmt.Errorf("listing the open issues of %s: %w", where, err)
	}
	switch {
	case open && found == nil:
		is, _, err := c.client.Issues.Create(ctx, owner, repo, &gogithub.IssueRequest{Title: gogithub.String(title), Body: gogithub.String(body)})
		if err != nil {
			return Kept{}, fmt.Errorf("opening an issue in %s: %w", where, classify(err))
		}
		return Kept{Action: "opened", URL: is.GetHTMLURL()}, nil
	case open:
		is, _, err := c.client.Issues.Edit(ctx, owner, repo, found.GetNumber(), &gogithub.IssueRequest{Title: gogithub.String(title), Body: gogithub.String(body)})
		if err != nil {
			return Kept{}, fmt.Errorf("updating issue %s#%d: %w", where, found.GetNumber(), classify(err))
		}
		return Kept{Action: "updated", URL: is.GetHTMLURL()}, nil
	case found == nil:
		return Kept{}, nil
	}
	if _, _, err := c.client.Issues.CreateComment(ctx, owner, repo, found.GetNumber(), &gogithub.IssueComment{Body: gogithub.String(body)}); err != nil {
		return Kept{}, fmt.Errorf("commenting on issue %s#%d: %w", where, found.GetNumber(), classify(err))
	}
	is, _, err := c.client.Issues.Edit(ctx, owner, repo, found.GetNumber(), &gogithub.IssueRequest{State: gogithub.String("closed")})
	if err != nil {
		return Kept{}, fmt.Errorf("closing issue %s#%d: %w", where, found.GetNumber(), classify(err))
	}
	return Kept{Action: "closed", URL: is.GetHTMLURL()}, nil
}

// findIssue returns the newest open issue (not pull request) of owner/repo
// whose body starts with marker and which the token's identity opened, or
// nil.
func (c *Commenter) findIssue(ctx context.Context, owner, repo, marker string) (*gogithub.Issue, error) {
	opts := &gogithub.IssueListByRepoOptions{State: "open", ListOptions: gogithub.ListOptions{PerPage: 100}}
	for range maxIssuePages {
		issues, resp, err := c.client.Issues.ListByRepo(ctx, owner, repo, opts)
		if err != nil {
			return nil, classify(err)
		}
		for _, is := range issues {
			if is.IsPullRequest() || !strings.HasPrefix(strings.TrimLeft(is.GetBody(), " \t\r\n"), marker) {
				continue
			}
			self, err := c.self(ctx)
			if err != nil {
				return nil, err
			}
			if strings.EqualFold(is.GetUser().GetLogin(), self) {
				return is, nil // listed newest first
			}
		}
		if resp.NextPage == 0 || resp.NextPage <= opts.Page {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, nil
}
