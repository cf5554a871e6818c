package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/perfgate/perfgate/internal/version"
)

// CommentLimit is GitHub's cap on a comment body, in characters. Upsert
// refuses a longer body rather than have GitHub reject it; the caller sizes
// the markdown.
const CommentLimit = 65536

// markerKeyLimit is the most bytes of a key that Marker keeps.
const markerKeyLimit = 100

// ErrNoToken is returned by NewCommenter for an empty token: without one
// nothing can be posted, and the caller says so instead of failing later.
var ErrNoToken = errors.New("no GitHub token")

// ErrForbidden means the token may not comment: GitHub answered 403 for a
// reason other than a rate limit, or 404 (a token that may not see the pull
// request). A pull request from a fork gets such a read-only token. Callers
// check with errors.Is and fall back to the step summary.
var ErrForbidden = errors.New("the token may not comment on the pull request (a fork's token is read-only)")

// Marker is the hidden line that identifies perfgate's comment for key on a
// pull request: "<!-- perfgate:KEY -->". KEY is key with anything outside
// [A-Za-z0-9._/:@-] replaced by "_", so no "-->" can end the HTML comment
// early, and cut to 100 bytes; an empty key is "default". Different keys (one
// per job of a matrix that does not merge its reports) give comments that do
// not find each other.
func Marker(key string) string {
	if key == "" {
		key = "default"
	}
	var b strings.Builder
	for _, r := range key {
		if b.Len() == markerKeyLimit {
			break
		}
		if markerRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return "<!-- perfgate:" + b.String() + " -->"
}

// markerRune reports whether r may stand in a marker's key as it is.
func markerRune(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return true
	}
	return strings.ContainsRune("._/:@-", r)
}

// Commenter posts and edits perfgate's one comment on a pull request, through
// go-github, retrying server errors and short rate limits. Every error it
// returns has the token masked as "***".
type Commenter struct {
	client *gogithub.Client
	token  string

	// Set by options before the client is built.
	httpClient  *http.Client
	sleep       func(ctx context.Context, d time.Duration) error
	now         func() time.Time
	maxAttempts int
}

// CommenterOption configures a Commenter.
type CommenterOption func(*Commenter)

// WithHTTPClient makes c's Transport the base under the commenter's retries
// (nil: http.DefaultTransport) and keeps c's Timeout, which then bounds a whole
// call, waits included. Tests pass a test server's client.
func WithHTTPClient(c *http.Client) CommenterOption {
	return func(cm *Commenter) { cm.httpClient = c }
}

// WithSleep replaces the wait between attempts, so tests record the backoff
// instead of sleeping. sleep must return ctx's error when ctx is done first.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) CommenterOption {
	return func(cm *Commenter) { cm.sleep = sleep }
}

// WithClock replaces time.Now where the commenter turns X-RateLimit-Reset (an
// absolute time) into a wait, so tests can put the reset a known distance away.
func WithClock(now func() time.Time) CommenterOption {
	return func(cm *Commenter) { cm.now = now }
}

// WithMaxAttempts sets how many times a request is sent in all before the
// commenter gives up on server errors and rate limits (default 4; less than 1
// is 1).
func WithMaxAttempts(n int) CommenterOption {
	return func(cm *Commenter) { cm.maxAttempts = n }
}

// NewCommenter returns a commenter authenticating with token against apiURL:
// GITHUB_API_URL, that is "https://api.github.com" (or "") for github.com,
// "https://HOST/api/v3" for GitHub Enterprise Server, or a test server. An
// empty token is ErrNoToken.
func NewCommenter(token, apiURL string, opts ...CommenterOption) (*Commenter, error) {
	if strings.TrimSpace(token) == "" {
		return nil, ErrNoToken
	}
	c := &Commenter{
		token:       token,
		sleep:       sleepContext,
		now:         time.Now,
		maxAttempts: 4,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(c)
		}
	}

	hc := &http.Client{}
	var base http.RoundTripper
	if c.httpClient != nil {
		base = c.httpClient.Transport
		hc.Timeout = c.httpClient.Timeout
		hc.CheckRedirect = c.httpClient.CheckRedirect
		hc.Jar = c.httpClient.Jar
	}
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = 30 * time.Second // a hung API call must not hold a GPU runner
		base = t
	}
	hc.Transport = &retryTransport{
		base:        base,
		maxAttempts: max(c.maxAttempts, 1),
		sleep:       c.sleep,
		now:         c.now,
	}

	client := gogithub.NewClient(hc).WithAuthToken(token)
	client.UserAgent = "perfgate/" + version.String()
	if apiURL != "" {
		u, err := url.Parse(apiURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("GitHub API URL %q: not an http(s) URL", apiURL)
		}
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		client.BaseURL = u
	}
	c.client = client
	return c, nil
}

// Upsert makes body, prefixed with Marker(key) on its own first line (unless
// body already starts with it), the one perfgate comment for key on pull
// request number of owner/repo: it lists the issue comments (100 per page,
// following every page) and edits the first whose body contains the marker,
// else creates one. It returns the comment's HTML URL and whether it was
// created. A body over CommentLimit characters is an error; a token that may
// not comment is ErrForbidden.
func (c *Commenter) Upsert(ctx context.Context, owner, repo string, number int, key, body string) (url string, created bool, err error) {
	defer func() { err = c.redact(err) }()
	where := fmt.Sprintf("%s/%s#%d", owner, repo, number)
	if err := checkPR(owner, repo, number); err != nil {
		return "", false, fmt.Errorf("commenting on %s: %w", where, err)
	}
	marker := Marker(key)
	if !strings.HasPrefix(body, marker) {
		body = marker + "\n" + body
	}
	if n := utf8.RuneCountInString(body); n > CommentLimit {
		return "", false, fmt.Errorf("commenting on %s: the comment is %d characters, over GitHub's limit of %d", where, n, CommentLimit)
	}

	existing, err := c.find(ctx, owner, repo, number, marker)
	if err != nil {
		return "", false, fmt.Errorf("listing comments on %s: %w", where, err)
	}
	comment := &gogithub.IssueComment{Body: gogithub.String(body)}
	if existing != nil {
		edited, _, err := c.client.Issues.EditComment(ctx, owner, repo, existing.GetID(), comment)
		if err != nil {
			return "", false, fmt.Errorf("editing comment %d on %s: %w", existing.GetID(), where, classify(err))
		}
		return edited.GetHTMLURL(), false, nil
	}
	posted, _, err := c.client.Issues.CreateComment(ctx, owner, repo, number, comment)
	if err != nil {
		return "", false, fmt.Errorf("creating a comment on %s: %w", where, classify(err))
	}
	return posted.GetHTMLURL(), true, nil
}

// find returns the first comment on the pull request whose body contains
// marker, or nil.
func (c *Commenter) find(ctx context.Context, owner, repo string, number int, marker string) (*gogithub.IssueComment, error) {
	opts := &gogithub.IssueListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := c.client.Issues.ListComments(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, classify(err)
		}
		for _, cm := range comments {
			if strings.Contains(cm.GetBody(), marker) {
				return cm, nil
			}
		}
		if resp.NextPage == 0 || resp.NextPage <= opts.Page {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
}

// VerifyHead checks that pull request number's head commit is sha: how a
// workflow_run job makes sure the number it read from an artifact is the pull
// request that was measured, and that the pull request has not moved on since.
// A mismatch is an error saying both commits.
func (c *Commenter) VerifyHead(ctx context.Context, owner, repo string, number int, sha string) (err error) {
	defer func() { err = c.redact(err) }()
	where := fmt.Sprintf("%s/%s#%d", owner, repo, number)
	if err := checkPR(owner, repo, number); err != nil {
		return fmt.Errorf("checking the head of %s: %w", where, err)
	}
	if sha == "" {
		return fmt.Errorf("checking the head of %s: no commit to check against", where)
	}
	pr, _, err := c.client.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return fmt.Errorf("checking the head of %s: %w", where, classify(err))
	}
	if head := pr.GetHead().GetSHA(); !strings.EqualFold(head, sha) {
		return fmt.Errorf("pull request %s is at %s, not at the measured commit %s", where, head, sha)
	}
	return nil
}

// checkPR rejects arguments that name no pull request.
func checkPR(owner, repo string, number int) error {
	if owner == "" || repo == "" {
		return errors.New("no repository")
	}
	if number <= 0 {
		return fmt.Errorf("%d is not a pull request number", number)
	}
	return nil
}

// classify marks a 403 or 404 from GitHub as ErrForbidden. Rate limits never
// get here as a 403: the retrying transport turns them into its own errors.
func classify(err error) error {
	var er *gogithub.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusForbidden, http.StatusNotFound:
			return fmt.Errorf("%w: %w", ErrForbidden, err)
		}
	}
	return err
}

// redactedError is an error with the token masked out of its message. It
// unwraps only to the sentinels callers branch on, never to the original error,
// whose message (an API error echoing a request, say) may hold the token.
type redactedError struct {
	msg       string
	sentinels []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.sentinels }

// redact returns err with every occurrence of the token, plain or URL-escaped,
// replaced by "***"; nil stays nil.
func (c *Commenter) redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, secret := range []string{c.token, url.QueryEscape(c.token), url.PathEscape(c.token)} {
		msg = strings.ReplaceAll(msg, secret, "***")
	}
	var sentinels []error
	for _, s := range []error{ErrForbidden, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, s) {
			sentinels = append(sentinels, s)
		}
	}
	return &redactedError{msg: msg, sentinels: sentinels}
}
