package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/perfgate/perfgate/internal/httpguard"
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
// request), to listing the comments or posting one. A pull request from a
// fork gets such a read-only token; so does a workflow without
// pull-requests: write. Callers check with errors.Is and fall back to the
// step summary.
var ErrForbidden = errors.New("the token may not comment on the pull request")

// ErrEditRefused means GitHub refused to edit perfgate's comment (403 or
// 404 to the PATCH) although the token could list the comments: the comment
// was deleted meanwhile, the conversation was locked, or the token is not
// the comment's author after all. It is not ErrForbidden: the token may still
// be able to post. Upsert then posts a new comment and reports the refusal in
// [Posted.EditRefused].
var ErrEditRefused = errors.New("GitHub refused to edit perfgate's comment")

// ActionsBot is the login of the comments posted with the GITHUB_TOKEN of
// GitHub Actions: the token belongs to no user, and GET /user refuses it.
const ActionsBot = "github-actions[bot]"

// DefaultRequestTimeout bounds one request to GitHub's API, from sending it
// to the last byte of the answer: GitHub answers in well under a second, a
// page of 100 comments in a few. A server that sends its headers and then its
// body slowly, or never ends it, costs at most this per attempt.
const DefaultRequestTimeout = 30 * time.Second

// maxResponseBytes bounds the body of one answer: a page of 100 comments at
// GitHub's 65,536-character cap, with JSON's escapes, fits.
const maxResponseBytes = 64 << 20

// installationTokenPrefix starts every GitHub App installation token, the
// GITHUB_TOKEN of Actions among them (GitHub's documented token formats).
const installationTokenPrefix = "ghs_"

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
// go-github, retrying server errors and short rate limits. Each request is
// bounded in time (DefaultRequestTimeout, body included) and in size. Every
// error it returns has the token masked as "***". It is safe for concurrent
// use.
type Commenter struct {
	client *gogithub.Client
	token  string

	// Set by options before the client is built.
	httpClient     *http.Client
	sleep          func(ctx context.Context, d time.Duration) error
	now            func() time.Time
	maxAttempts    int
	requestTimeout time.Duration

	mu     sync.Mutex
	author string // the token's login, once known (or given by WithAuthor)
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

// WithRequestTimeout bounds each request to the API, from sending it to the
// last byte of its answer, to d (default DefaultRequestTimeout; d <= 0 keeps
// the default). Retries get a fresh d each; the caller's context bounds them
// all.
func WithRequestTimeout(d time.Duration) CommenterOption {
	return func(cm *Commenter) {
		if d > 0 {
			cm.requestTimeout = d
		}
	}
}

// WithAuthor says whose token it is: the login whose comments perfgate may
// edit, instead of finding it out (see Upsert). A GitHub App's installation
// token other than Actions' is one use: its comments are by "<app-slug>[bot]".
func WithAuthor(login string) CommenterOption {
	return func(cm *Commenter) { cm.author = login }
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
		token:          token,
		sleep:          sleepContext,
		now:            time.Now,
		maxAttempts:    4,
		requestTimeout: DefaultRequestTimeout,
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
		// The proxy from the environment stays: a self-hosted runner may
		// reach GitHub only through one.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxResponseHeaderBytes = httpguard.MaxResponseHeaderBytes
		base = t
	}
	hc.Transport = &retryTransport{
		base:        base,
		maxAttempts: max(c.maxAttempts, 1),
		sleep:       c.sleep,
		now:         c.now,
		timeout:     c.requestTimeout,
		bodyLimit:   maxResponseBytes,
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

// Posted is what Upsert did.
type Posted struct {
	// URL is the comment's HTML URL.
	URL string
	// Created is true when Upsert posted a new comment, false when it
	// edited perfgate's comment.
	Created bool
	// EditRefused, when not nil, is why perfgate's comment could not be
	// edited (it matches ErrEditRefused); Upsert then posted a new one.
	EditRefused error
	// Ignored counts the comments holding the marker that Upsert passed
	// over before the one it edited: written by someone else, or quoting
	// the marker rather than starting with it. It never edits them.
	Ignored int
}

// Upsert makes body, prefixed with Marker(key) on its own first line (unless
// body already starts with it), the one perfgate comment for key on pull
// request number of owner/repo.
//
// It lists the issue comments (100 per page, following every page) and edits
// the first one that starts with the marker and was written by the token's
// own identity; a comment holding the marker that someone else wrote is
// ignored, whatever it says, so that nobody can plant a comment for perfgate
// to fill with a verdict (and edit again later). When none is found it posts
// a new comment. The identity is, in order: the login given by WithAuthor;
// ActionsBot for an installation token ("ghs_…", the GITHUB_TOKEN of Actions),
// which GET /user refuses; else GET /user's login, or ActionsBot when GitHub
// refuses that with 403 (an installation token of another format). It is
// looked up once, and only when a comment starts with the marker.
//
// When GitHub refuses to edit the comment found (403 or 404), Upsert posts a
// new comment rather than leave the pull request without the verdict, and
// says why in Posted.EditRefused. A body over CommentLimit characters is an
// error; a token that may not list or post comments is ErrForbidden.
func (c *Commenter) Upsert(ctx context.Context, owner, repo string, number int, key, body string) (posted Posted, err error) {
	defer func() {
		err = c.redact(err)
		posted.EditRefused = c.redact(posted.EditRefused)
	}()
	where := fmt.Sprintf("%s/%s#%d", owner, repo, number)
	if err := checkPR(owner, repo, number); err != nil {
		return Posted{}, fmt.Errorf("commenting on %s: %w", where, err)
	}
	marker := Marker(key)
	if !strings.HasPrefix(body, marker) {
		body = marker + "\n" + body
	}
	if n := utf8.RuneCountInString(body); n > CommentLimit {
		return Posted{}, fmt.Errorf("commenting on %s: the comment is %d characters, over GitHub's limit of %d", where, n, CommentLimit)
	}

	existing, ignored, err := c.find(ctx, owner, repo, number, marker)
	if err != nil {
		return Posted{}, fmt.Errorf("listing comments on %s: %w", where, err)
	}
	posted.Ignored = ignored
	comment := &gogithub.IssueComment{Body: gogithub.String(body)}
	if existing != nil {
		edited, _, err := c.client.Issues.EditComment(ctx, owner, repo, existing.GetID(), comment)
		switch {
		case err == nil:
			posted.URL = edited.GetHTMLURL()
			return posted, nil
		case refused(err):
			posted.EditRefused = fmt.Errorf("%w: comment %d on %s: %s", ErrEditRefused, existing.GetID(), where, answer(err))
		default:
			return Posted{}, fmt.Errorf("editing comment %d on %s: %w", existing.GetID(), where, err)
		}
	}
	created, _, err := c.client.Issues.CreateComment(ctx, owner, repo, number, comment)
	if err != nil {
		if posted.EditRefused != nil {
			return Posted{}, fmt.Errorf("%w; creating a comment on %s instead: %w", posted.EditRefused, where, classify(err))
		}
		return Posted{}, fmt.Errorf("creating a comment on %s: %w", where, classify(err))
	}
	posted.URL, posted.Created = created.GetHTMLURL(), true
	return posted, nil
}

// find returns the newest comment on the pull request that starts with
// marker and was written by the token's identity, or nil; and how many
// comments holding the marker, written by others, it left alone. The newest,
// not the first: when an edit of an older one was refused for good, Upsert
// posted a new comment, and the next run edits that one rather than being
// refused again and posting yet another.
func (c *Commenter) find(ctx context.Context, owner, repo string, number int, marker string) (found *gogithub.IssueComment, ignored int, err error) {
	opts := &gogithub.IssueListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := c.client.Issues.ListComments(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, ignored, classify(err)
		}
		for _, cm := range comments {
			if !strings.Contains(cm.GetBody(), marker) {
				continue
			}
			if !strings.HasPrefix(strings.TrimLeft(cm.GetBody(), " \t\r\n"), marker) {
				ignored++ // perfgate's comments start with the marker; this one quotes it
				continue
			}
			self, err := c.self(ctx)
			if err != nil {
				return nil, ignored, err
			}
			if !strings.EqualFold(cm.GetUser().GetLogin(), self) {
				ignored++
				continue
			}
			found = cm // listed oldest first: the last one seen is the newest
		}
		if resp.NextPage == 0 || resp.NextPage <= opts.Page {
			return found, ignored, nil
		}
		opts.Page = resp.NextPage
	}
}

// self returns the login of the token's comments, as Upsert's comment says,
// looking it up the first time.
func (c *Commenter) self(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.author != "":
		return c.author, nil
	case strings.HasPrefix(c.token, installationTokenPrefix):
		c.author = ActionsBot
		return c.author, nil
	}
	user, _, err := c.client.Users.Get(ctx, "")
	var er *gogithub.ErrorResponse
	switch {
	case errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusForbidden:
		c.author = ActionsBot // "Resource not accessible by integration": an installation token
	case err != nil:
		return "", fmt.Errorf("finding whose token it is (GET /user): %w", err)
	case user.GetLogin() == "":
		return "", errors.New("finding whose token it is: GET /user answered no login")
	default:
		c.author = user.GetLogin()
	}
	return c.author, nil
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

// refused reports whether err is GitHub's 403 or 404 answer.
func refused(err error) bool {
	var er *gogithub.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusForbidden, http.StatusNotFound:
			return true
		}
	}
	return false
}

// answer says what GitHub answered in an API error: "403 Resource not
// accessible by integration".
func answer(err error) string {
	var er *gogithub.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return err.Error()
	}
	msg := "GitHub answered " + er.Response.Status
	if er.Message != "" {
		msg += ": " + er.Message
	}
	return msg
}

// classify marks a 403 or 404 from GitHub as ErrForbidden. Rate limits never
// get here as a 403: the retrying transport turns them into its own errors.
func classify(err error) error {
	if refused(err) {
		return fmt.Errorf("%w: %w", ErrForbidden, err)
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
	for _, s := range []error{ErrForbidden, ErrEditRefused, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, s) {
			sentinels = append(sentinels, s)
		}
	}
	return &redactedError{msg: msg, sentinels: sentinels}
}
