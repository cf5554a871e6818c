package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/github/githubtest"
)

const testToken = "ghs_s3cr3tT0kenV4lue"

// testNow is the commenter's clock in tests.
var testNow = time.Unix(1_700_000_000, 0)

// newTestCommenter returns a commenter against f that records its waits in
// the returned slice instead of sleeping.
func newTestCommenter(t *testing.T, f *githubtest.Server, opts ...CommenterOption) (*Commenter, *[]time.Duration) {
	t.Helper()
	var sleeps []time.Duration
	base := []CommenterOption{
		WithHTTPClient(f.Client()),
		WithClock(func() time.Time { return testNow }),
		WithSleep(func(ctx context.Context, d time.Duration) error {
			sleeps = append(sleeps, d)
			return ctx.Err()
		}),
	}
	c, err := NewCommenter(testToken, f.URL, append(base, opts...)...)
	require.NoError(t, err)
	return c, &sleeps
}

// upsert is c.Upsert with the URL and Created of what it posted.
func upsert(ctx context.Context, c *Commenter, owner, repo string, number int, key, body string) (url string, created bool, err error) {
	p, err := c.Upsert(ctx, owner, repo, number, key, body)
	return p.URL, p.Created, err
}

func TestMarker(t *testing.T) {
	tests := []struct {
		key, want string
	}{
		{"", "<!-- perfgate:default -->"},
		{"default", "<!-- perfgate:default -->"},
		{"llama-3.1-8b/H100:fp8@v2_x", "<!-- perfgate:llama-3.1-8b/H100:fp8@v2_x -->"},
		{"a b", "<!-- perfgate:a_b -->"},
		{"x --> <script>", "<!-- perfgate:x_--___script_ -->"},
		{"gpu=ä", "<!-- perfgate:gpu__ -->"},
		{strings.Repeat("k", 150), "<!-- perfgate:" + strings.Repeat("k", 100) + " -->"},
		{strings.Repeat("é", 150), "<!-- perfgate:" + strings.Repeat("_", 100) + " -->"},
	}
	for _, tt := range tests {
		got := Marker(tt.key)
		assert.Equal(t, tt.want, got, "Marker(%q)", tt.key)
		inner := strings.TrimSuffix(strings.TrimPrefix(got, "<!-- "), " -->")
		assert.NotContains(t, inner, ">", "Marker(%q) = %q ends the comment early", tt.key, got)
	}
}

func TestNewCommenter(t *testing.T) {
	tests := []struct {
		name, token, apiURL string
		wantErr             error
		wantErrText         string
		wantBase            string
	}{
		{name: "github.com", token: "t", apiURL: "https://api.github.com", wantBase: "https://api.github.com/"},
		{name: "default", token: "t", apiURL: "", wantBase: "https://api.github.com/"},
		{name: "enterprise", token: "t", apiURL: "https://ghe.example.com/api/v3", wantBase: "https://ghe.example.com/api/v3/"},
		{name: "no token", token: "", apiURL: "", wantErr: ErrNoToken},
		{name: "blank token", token: "  ", apiURL: "", wantErr: ErrNoToken},
		{name: "not a URL", token: "t", apiURL: "api.github.com", wantErrText: "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCommenter(tt.token, tt.apiURL)
			switch {
			case tt.wantErr != nil:
				require.ErrorIs(t, err, tt.wantErr)
			case tt.wantErrText != "":
				require.ErrorContains(t, err, tt.wantErrText)
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.wantBase, c.client.BaseURL.String())
			}
		})
	}
}

func TestUpsertCreatesThenEdits(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	c, sleeps := newTestCommenter(t, f)
	ctx := t.Context()

	url1, created, err := upsert(ctx, c, "o", "r", 7, "", "first run")
	require.NoError(t, err)
	assert.True(t, created, "first Upsert created = false, want true")

	url2, created, err := upsert(ctx, c, "o", "r", 7, "", "second run")
	require.NoError(t, err)
	assert.False(t, created, "second Upsert created = true, want false")
	assert.Equal(t, url1, url2, "the edited comment's URL")

	got := f.Comments("o", "r", 7)
	require.Len(t, got, 1)
	assert.Equal(t, Marker("")+"\nsecond run", got[0].Body)
	assert.Equal(t, got[0].URL, url2)
	assert.Empty(t, *sleeps)
	assert.Len(t, f.Requests(http.MethodPost), 1)
	assert.Len(t, f.Requests(http.MethodPatch), 1)
	for _, r := range f.Requests("") {
		assert.Equal(t, "Bearer "+testToken, r.Auth, "%s %s Authorization", r.Method, r.Path)
	}
}

func TestUpsert(t *testing.T) {
	others := func(f *githubtest.Server, n int) {
		for i := range n {
			f.AddComment("o", "r", 1, "someone", fmt.Sprintf("comment %d", i+1))
		}
	}
	tests := []struct {
		name        string
		seed        func(f *githubtest.Server)
		key, body   string
		wantCreated bool
		wantEdited  int // 1-based index of the comment that must now hold the body; 0: a new one
		wantCount   int
		wantGets    int
	}{
		{
			name:        "no comments",
			seed:        func(*githubtest.Server) {},
			key:         "default",
			body:        "hello",
			wantCreated: true,
			wantCount:   1,
			wantGets:    1,
		},
		{
			name: "marker on page two of 150",
			seed: func(f *githubtest.Server) {
				others(f, 129)
				f.AddComment("o", "r", 1, "github-actions[bot]", Marker("default")+"\nold verdict")
				others(f, 20)
			},
			key:        "default",
			body:       "new verdict",
			wantEdited: 130,
			wantCount:  150,
			wantGets:   2,
		},
		{
			name: "another key's marker is not ours",
			seed: func(f *githubtest.Server) {
				f.AddComment("o", "r", 1, "github-actions[bot]", Marker("llama-8b")+"\nllama verdict")
				f.AddComment("o", "r", 1, "github-actions[bot]", Marker("default-gpu")+"\nother verdict")
			},
			key:         "default",
			body:        "ours",
			wantCreated: true,
			wantCount:   3,
			wantGets:    1,
		},
		{
			// The newest: see TestUpsertRefusedEditPostsOnce.
			name: "the newest of two markers",
			seed: func(f *githubtest.Server) {
				f.AddComment("o", "r", 1, "github-actions[bot]", Marker("k")+"\nfirst")
				f.AddComment("o", "r", 1, "github-actions[bot]", Marker("k")+"\nsecond")
			},
			key:        "k",
			body:       "updated",
			wantEdited: 2,
			wantCount:  2,
			wantGets:   1,
		},
		{
			name: "body already starts with the marker",
			seed: func(f *githubtest.Server) {
				f.AddComment("o", "r", 1, "github-actions[bot]", Marker("k")+"\nold")
			},
			key:        "k",
			body:       Marker("k") + "\nupdated",
			wantEdited: 1,
			wantCount:  1,
			wantGets:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := githubtest.NewServer(t, testToken)
			tt.seed(f)
			c, _ := newTestCommenter(t, f)

			url, created, err := upsert(t.Context(), c, "o", "r", 1, tt.key, tt.body)
			require.NoError(t, err)
			assert.Equal(t, tt.wantCreated, created, "created")

			got := f.Comments("o", "r", 1)
			require.Len(t, got, tt.wantCount)
			want := tt.body
			if !strings.HasPrefix(want, Marker(tt.key)) {
				want = Marker(tt.key) + "\n" + want
			}
			target := got[len(got)-1]
			if tt.wantEdited > 0 {
				target = got[tt.wantEdited-1]
				assert.Empty(t, f.Requests(http.MethodPost), "Upsert created a comment, want it to edit one")
			}
			assert.Equal(t, want, target.Body)
			assert.Equal(t, target.URL, url)
			assert.Len(t, f.Requests(http.MethodGet), tt.wantGets, "list requests")
		})
	}
}

func TestUpsertKeysStayApart(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	c, _ := newTestCommenter(t, f)
	ctx := t.Context()
	for _, step := range []struct{ key, body string }{
		{"a", "a1"}, {"b", "b1"}, {"a", "a2"}, {"b", "b2"},
	} {
		_, _, err := upsert(ctx, c, "o", "r", 3, step.key, step.body)
		require.NoError(t, err, "Upsert(%s, %s)", step.key, step.body)
	}
	got := f.Comments("o", "r", 3)
	require.Len(t, got, 2)
	assert.Equal(t, Marker("a")+"\na2", got[0].Body)
	assert.Equal(t, Marker("b")+"\nb2", got[1].Body)
}

func TestUpsertRejects(t *testing.T) {
	tests := []struct {
		name        string
		owner, repo string
		number      int
		body        string
		wantErr     string
	}{
		{name: "too long", owner: "o", repo: "r", number: 1, body: strings.Repeat("é", CommentLimit), wantErr: "over GitHub's limit"},
		{name: "no PR", owner: "o", repo: "r", number: 0, body: "x", wantErr: "not a pull request number"},
		{name: "no repo", owner: "o", repo: "", number: 1, body: "x", wantErr: "no repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := githubtest.NewServer(t, testToken)
			c, _ := newTestCommenter(t, f)
			_, _, err := upsert(t.Context(), c, tt.owner, tt.repo, tt.number, "", tt.body)
			require.ErrorContains(t, err, tt.wantErr)
			assert.Empty(t, f.Requests(""), "requests sent for a rejected comment")
		})
	}
}

func TestUpsertForbidden(t *testing.T) {
	leak := fmt.Sprintf(`{"message":"Resource not accessible by integration (token %s)"}`, testToken)
	tests := []struct {
		name    string
		failure githubtest.Failure
	}{
		{
			name:    "403 on create",
			failure: githubtest.Failure{Method: http.MethodPost, Times: -1, Status: http.StatusForbidden, Body: leak},
		},
		{
			name:    "403 on list",
			failure: githubtest.Failure{Method: http.MethodGet, Times: -1, Status: http.StatusForbidden, Body: leak},
		},
		{
			name:    "404 on the pull request",
			failure: githubtest.Failure{Times: -1, Status: http.StatusNotFound, Body: leak},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := githubtest.NewServer(t, testToken)
			f.Fail(tt.failure)
			c, sleeps := newTestCommenter(t, f)

			_, _, err := upsert(t.Context(), c, "o", "r", 1, "", "body")
			require.ErrorIs(t, err, ErrForbidden)
			assert.NotContains(t, err.Error(), testToken)
			assert.Contains(t, err.Error(), "***", "the masked token")
			assert.Empty(t, *sleeps, "a plain 403 or 404 was retried")
			failed := 0
			for _, r := range f.Requests("") {
				if r.Status >= 400 {
					failed++
				}
			}
			assert.Equal(t, 1, failed, "requests answered with an error")
		})
	}
}

func TestUpsertBadCredentials(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	c, err := NewCommenter("ghs_wrong", f.URL, WithHTTPClient(f.Client()))
	require.NoError(t, err)
	_, _, err = upsert(t.Context(), c, "o", "r", 1, "", "body")
	require.ErrorContains(t, err, "401")
	assert.NotErrorIs(t, err, ErrForbidden, "bad credentials are not a read-only token")
	assert.NotContains(t, err.Error(), "ghs_wrong")
}

func TestRetries(t *testing.T) {
	resetIn := func(d time.Duration) http.Header {
		return http.Header{
			"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset":     {strconv.FormatInt(testNow.Add(d).Unix(), 10)},
		}
	}
	serverError := fmt.Sprintf(`{"message":"upstream broke for %s"}`, testToken)
	tests := []struct {
		name         string
		failure      githubtest.Failure
		wantSleeps   []time.Duration
		wantAttempts int    // POSTs sent
		wantErr      string // "" for success
	}{
		{
			name:         "502 twice",
			failure:      githubtest.Failure{Times: 2, Status: http.StatusBadGateway, Body: serverError},
			wantSleeps:   []time.Duration{time.Second, 2 * time.Second},
			wantAttempts: 3,
		},
		{
			name:         "502 forever",
			failure:      githubtest.Failure{Times: -1, Status: http.StatusBadGateway, Body: serverError},
			wantSleeps:   []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
			wantAttempts: 4,
			wantErr:      "giving up after 4 attempts: 502 Bad Gateway: upstream broke for ***",
		},
		{
			name:         "429",
			failure:      githubtest.Failure{Times: 1, Status: http.StatusTooManyRequests},
			wantSleeps:   []time.Duration{time.Second},
			wantAttempts: 2,
		},
		{
			name:         "primary rate limit resets in 5s",
			failure:      githubtest.Failure{Times: 1, Status: http.StatusForbidden, Header: resetIn(5 * time.Second)},
			wantSleeps:   []time.Duration{5 * time.Second},
			wantAttempts: 2,
		},
		{
			name:         "secondary rate limit, Retry-After 3",
			failure:      githubtest.Failure{Times: 1, Status: http.StatusForbidden, Header: http.Header{"Retry-After": {"3"}}},
			wantSleeps:   []time.Duration{3 * time.Second},
			wantAttempts: 2,
		},
		{
			name: "secondary rate limit said in the body",
			failure: githubtest.Failure{Times: 1, Status: http.StatusForbidden,
				Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`},
			wantSleeps:   []time.Duration{time.Second},
			wantAttempts: 2,
		},
		{
			name:         "rate limit resets in two minutes",
			failure:      githubtest.Failure{Times: -1, Status: http.StatusForbidden, Header: resetIn(2 * time.Minute)},
			wantAttempts: 1,
			wantErr:      "resets at " + testNow.Add(2*time.Minute).UTC().Format(time.RFC3339) + ", in 2m0s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := githubtest.NewServer(t, testToken)
			tt.failure.Method = http.MethodPost
			f.Fail(tt.failure)
			c, sleeps := newTestCommenter(t, f)

			_, created, err := upsert(t.Context(), c, "o", "r", 1, "", "body")
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.True(t, created)
				assert.Len(t, f.Comments("o", "r", 1), 1)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotErrorIs(t, err, ErrForbidden, "a rate limit or server error is not a read-only token")
				assert.NotContains(t, err.Error(), testToken)
				assert.Empty(t, f.Comments("o", "r", 1))
			}
			assert.Equal(t, tt.wantSleeps, *sleeps, "waits between attempts")
			assert.Len(t, f.Requests(http.MethodPost), tt.wantAttempts, "POST attempts")
		})
	}
}

func TestRetryMaxAttempts(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	f.Fail(githubtest.Failure{Times: -1, Status: http.StatusServiceUnavailable})
	c, sleeps := newTestCommenter(t, f, WithMaxAttempts(2))
	_, _, err := upsert(t.Context(), c, "o", "r", 1, "", "body")
	require.ErrorContains(t, err, "giving up after 2 attempts")
	assert.Len(t, f.Requests(""), 2)
	assert.Equal(t, []time.Duration{time.Second}, *sleeps)
}

func TestRetryReplaysBody(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	f.Fail(githubtest.Failure{Method: http.MethodPost, Times: 1, Status: http.StatusInternalServerError})
	c, _ := newTestCommenter(t, f)
	body := strings.Repeat("| p95 | 123 ms | +4.2% |\n", 2000)

	_, _, err := upsert(t.Context(), c, "o", "r", 1, "", body)
	require.NoError(t, err)

	posts := f.Requests(http.MethodPost)
	require.Len(t, posts, 2)
	assert.Equal(t, posts[0].Body, posts[1].Body, "the retried POST's body")
	assert.Contains(t, posts[1].Body, `"body":`)
	got := f.Comments("o", "r", 1)
	require.Len(t, got, 1)
	assert.Equal(t, Marker("")+"\n"+body, got[0].Body)
}

func TestRetryCancelledWhileWaiting(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	f.Fail(githubtest.Failure{Times: -1, Status: http.StatusBadGateway})
	ctx, cancel := context.WithCancel(t.Context())
	c, err := NewCommenter(testToken, f.URL, WithHTTPClient(f.Client()),
		WithSleep(func(ctx context.Context, d time.Duration) error {
			cancel() // the job is cancelled while the commenter waits
			return sleepContext(ctx, time.Hour)
		}))
	require.NoError(t, err)

	_, _, err = upsert(ctx, c, "o", "r", 1, "", "body")
	require.ErrorIs(t, err, context.Canceled)
	assert.Len(t, f.Requests(""), 1)
}

func TestSleepContext(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, sleepContext(cancelled, time.Hour), context.Canceled)
	require.NoError(t, sleepContext(t.Context(), 0))
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {4, 8 * time.Second},
		{5, 16 * time.Second}, {6, 30 * time.Second}, {40, 30 * time.Second},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, backoff(tt.attempt), "backoff(%d)", tt.attempt)
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		v      string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{" 0 ", 0, true},
		{testNow.Add(7 * time.Second).UTC().Format(http.TimeFormat), 7 * time.Second, true},
		{testNow.Add(-time.Minute).UTC().Format(http.TimeFormat), 0, true},
		{"soon", 0, false},
		{"-1", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.v, testNow)
		assert.Equal(t, tt.wantOK, ok, "parseRetryAfter(%q) ok", tt.v)
		assert.Equal(t, tt.want, got, "parseRetryAfter(%q)", tt.v)
	}
}

func TestVerifyHead(t *testing.T) {
	const head = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name      string
		number    int
		sha       string
		wantErr   string
		wantForbd bool
	}{
		{name: "match", number: 5, sha: head},
		{name: "match, upper case", number: 5, sha: strings.ToUpper(head)},
		{name: "mismatch", number: 5, sha: "feedface", wantErr: "is at " + head + ", not at the measured commit feedface"},
		{name: "no such pull request", number: 6, sha: head, wantErr: "404", wantForbd: true},
		{name: "no commit", number: 5, sha: "", wantErr: "no commit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := githubtest.NewServer(t, testToken)
			f.SetHead("o", "r", 5, head)
			c, _ := newTestCommenter(t, f)
			err := c.VerifyHead(t.Context(), "o", "r", tt.number, tt.sha)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			assert.Equal(t, tt.wantForbd, errors.Is(err, ErrForbidden), "errors.Is(err, ErrForbidden)")
		})
	}
}
