package github

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/github/githubtest"
	"github.com/perfgate/perfgate/internal/safeio"
)

// A personal access token's value (not an installation token's "ghs_").
const patToken = "ghp_p3rs0nalT0kenV4lue"

// The comment Upsert edits is perfgate's own: it starts with the marker and
// its author is the token's identity. A marker planted in someone else's
// comment, or quoted in the middle of one, is passed over and a new comment
// posted, so that nobody can have perfgate write its verdict into a comment
// they can edit afterwards.
func TestUpsertEditsOnlyItsOwnComment(t *testing.T) {
	marker := Marker("default")
	tests := []struct {
		name        string
		token       string
		user        string // the fake's SetUser: the token's login; "" for the Actions token
		opts        []CommenterOption
		seed        []githubtest.Comment // User and Body
		wantEdited  int                  // 1-based index of the comment edited; 0: a new one posted
		wantIgnored int
		wantUserGet int    // GET /user requests
		wantAuthor  string // the author of a new comment
	}{
		{
			name:        "another user's comment holding the marker",
			token:       testToken,
			seed:        []githubtest.Comment{{User: "mallory", Body: marker + "\n✅ pass, trust me"}},
			wantIgnored: 1,
			wantAuthor:  ActionsBot,
		},
		{
			name:  "the bot's comment after someone else's",
			token: testToken,
			seed: []githubtest.Comment{
				{User: "mallory", Body: marker + "\nplanted"},
				{User: ActionsBot, Body: marker + "\nold verdict"},
			},
			wantEdited:  2,
			wantIgnored: 1,
		},
		{
			name:        "the marker quoted inside the bot's own comment",
			token:       testToken,
			seed:        []githubtest.Comment{{User: ActionsBot, Body: "someone said:\n> " + marker}},
			wantIgnored: 1,
			wantAuthor:  ActionsBot,
		},
		{
			name:  "a user's token edits that user's comment, not the bot's",
			token: patToken,
			user:  "Perfgate-Bot",
			seed: []githubtest.Comment{
				{User: ActionsBot, Body: marker + "\nthe bot's"},
				{User: "perfgate-bot", Body: marker + "\nours (logins ignore case)"},
			},
			wantEdited:  2,
			wantIgnored: 1,
			wantUserGet: 1,
		},
		{
			name:        "a user's token posts anew beside the bot's comment",
			token:       patToken,
			user:        "perfgate-bot",
			seed:        []githubtest.Comment{{User: ActionsBot, Body: marker + "\nthe bot's"}},
			wantIgnored: 1,
			wantUserGet: 1,
			wantAuthor:  "perfgate-bot",
		},
		{
			name:        "an installation token of another format: GET /user answers 403",
			token:       "v1.0123456789abcdef",
			seed:        []githubtest.Comment{{User: ActionsBot, Body: marker + "\nold verdict"}},
			wantEdited:  1,
			wantUserGet: 1,
		},
		{
			name:        "WithAuthor names the identity",
			token:       testToken,
			opts:        []CommenterOption{WithAuthor("perfgate-app[bot]")},
			seed:        []githubtest.Comment{{User: ActionsBot, Body: marker + "\nx"}, {User: "perfgate-app[bot]", Body: marker + "\ny"}},
			wantEdited:  2,
			wantIgnored: 1,
		},
		{
			name:       "no comment holds the marker: nobody is looked up",
			token:      patToken,
			user:       "perfgate-bot",
			seed:       []githubtest.Comment{{User: "alice", Body: "LGTM"}},
			wantAuthor: "perfgate-bot",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := githubtest.NewServer(t, tt.token)
			f.SetUser(tt.user)
			for _, c := range tt.seed {
				f.AddComment("o", "r", 1, c.User, c.Body)
			}
			c, err := NewCommenter(tt.token, f.URL, append([]CommenterOption{WithHTTPClient(f.Client())}, tt.opts...)...)
			require.NoError(t, err)

			posted, err := c.Upsert(t.Context(), "o", "r", 1, "default", "new verdict")
			require.NoError(t, err)
			assert.NoError(t, posted.EditRefused)
			assert.Equal(t, tt.wantIgnored, posted.Ignored, "Upsert(...).Ignored")
			assert.Equal(t, tt.wantEdited == 0, posted.Created, "Upsert(...).Created")

			got := f.Comments("o", "r", 1)
			want := marker + "\nnew verdict"
			if tt.wantEdited > 0 {
				require.Len(t, got, len(tt.seed))
				assert.Equal(t, want, got[tt.wantEdited-1].Body, "the edited comment")
				assert.Empty(t, f.Requests(http.MethodPost), "Upsert posted a comment, want it to edit one")
			} else {
				require.Len(t, got, len(tt.seed)+1)
				last := got[len(got)-1]
				assert.Equal(t, want, last.Body, "the new comment")
				assert.Equal(t, tt.wantAuthor, last.User, "the new comment's author")
				assert.Empty(t, f.Requests(http.MethodPatch), "Upsert edited a comment, want it to post one")
			}
			for i, c := range tt.seed {
				if i != tt.wantEdited-1 {
					assert.Equal(t, c.Body, got[i].Body, "comment %d by %s was changed", i+1, c.User)
				}
			}
			userGets := 0
			for _, r := range f.Requests(http.MethodGet) {
				if r.Path == "/user" {
					userGets++
				}
			}
			assert.Equal(t, tt.wantUserGet, userGets, "GET /user requests")
		})
	}
}

// The identity is looked up once per commenter, and a /user that fails for
// another reason than 403 is an error, never a guess.
func TestUpsertIdentityLookup(t *testing.T) {
	f := githubtest.NewServer(t, patToken)
	f.SetUser("perfgate-bot")
	f.AddComment("o", "r", 1, "perfgate-bot", Marker("")+"\nold")
	c, err := NewCommenter(patToken, f.URL, WithHTTPClient(f.Client()))
	require.NoError(t, err)
	for range 2 {
		_, err := c.Upsert(t.Context(), "o", "r", 1, "", "again")
		require.NoError(t, err)
	}
	n := 0
	for _, r := range f.Requests(http.MethodGet) {
		if r.Path == "/user" {
			n++
		}
	}
	assert.Equal(t, 1, n, "GET /user requests for two Upserts")

	g := githubtest.NewServer(t, patToken)
	g.AddComment("o", "r", 1, "perfgate-bot", Marker("")+"\nold")
	g.Fail(githubtest.Failure{Path: "/user", Times: -1, Status: http.StatusUnauthorized, Body: `{"message":"Bad credentials"}`})
	c, err = NewCommenter(patToken, g.URL, WithHTTPClient(g.Client()))
	require.NoError(t, err)
	_, err = c.Upsert(t.Context(), "o", "r", 1, "", "body")
	require.ErrorContains(t, err, "finding whose token it is (GET /user)")
	assert.Empty(t, g.Requests(http.MethodPatch))
	assert.Empty(t, g.Requests(http.MethodPost))
}

// A refused edit of perfgate's own comment (the comment deleted meanwhile, a
// locked conversation) is said as what it is, ErrEditRefused and not a
// read-only token; the verdict is posted as a new comment. Only when the
// post is refused too is it ErrForbidden.
func TestUpsertEditRefused(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		message    string
		postStatus int // 0: the post succeeds
	}{
		{name: "403 on the edit", status: http.StatusForbidden, message: "Resource not accessible by integration"},
		{name: "404 on the edit", status: http.StatusNotFound, message: "Not Found"},
		{name: "403 on the edit and the post", status: http.StatusForbidden, message: "Resource not accessible by integration",
			postStatus: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := githubtest.NewServer(t, testToken)
			old := f.AddComment("o", "r", 1, ActionsBot, Marker("")+"\nold verdict")
			f.RefuseEdit(old.ID, tt.status, -1, tt.message+" "+testToken)
			if tt.postStatus != 0 {
				f.Fail(githubtest.Failure{Method: http.MethodPost, Times: -1, Status: tt.postStatus, Body: `{"message":"nope"}`})
			}
			c, sleeps := newTestCommenter(t, f)

			posted, err := c.Upsert(t.Context(), "o", "r", 1, "", "new verdict")
			assert.Empty(t, *sleeps, "a refused edit was retried")
			require.Len(t, f.Requests(http.MethodPatch), 1)
			require.Len(t, f.Requests(http.MethodPost), 1, "posts after the refused edit")
			if tt.postStatus != 0 {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrForbidden)
				assert.ErrorIs(t, err, ErrEditRefused)
				assert.Contains(t, err.Error(), "creating a comment on o/r#1 instead")
				assert.NotContains(t, err.Error(), testToken)
				return
			}
			require.NoError(t, err)
			assert.True(t, posted.Created, "Upsert(...).Created")
			require.Error(t, posted.EditRefused, "Upsert(...).EditRefused")
			assert.ErrorIs(t, posted.EditRefused, ErrEditRefused)
			assert.NotErrorIs(t, posted.EditRefused, ErrForbidden, "a refused edit is not a read-only token")
			msg := posted.EditRefused.Error()
			for _, want := range []string{"refused to edit", "comment " + itoa(old.ID), "o/r#1", itoa(int64(tt.status)), tt.message, "***"} {
				assert.Contains(t, msg, want, "EditRefused = %q", msg)
			}
			assert.NotContains(t, msg, testToken)
			got := f.Comments("o", "r", 1)
			require.Len(t, got, 2)
			assert.Equal(t, Marker("")+"\nold verdict", got[0].Body)
			assert.Equal(t, Marker("")+"\nnew verdict", got[1].Body)
			assert.Equal(t, got[1].URL, posted.URL)
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// upsertWithin runs Upsert in a goroutine and fails the test if it has not
// returned within limit: a hang is a failure, not a test that never ends.
func upsertWithin(t *testing.T, ctx context.Context, c *Commenter, limit time.Duration) (Posted, time.Duration, error) {
	t.Helper()
	type answer struct {
		posted Posted
		err    error
	}
	done := make(chan answer, 1)
	start := time.Now()
	go func() {
		p, err := c.Upsert(ctx, "o", "r", 1, "", "body")
		done <- answer{p, err}
	}()
	select {
	case a := <-done:
		return a.posted, time.Since(start), a.err
	case <-time.After(limit):
		t.Fatalf("Upsert still running after %s, want it bounded by its deadline", limit)
		return Posted{}, 0, nil
	}
}

// A GitHub that sends its headers and then its body slowly, or never ends
// it, costs one request timeout, not a hung job.
func TestSlowBodyHitsTheRequestTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	page := `[` + strings.Repeat(`{"id":1,"body":"x"},`, 200) + `{"id":2}]`
	tests := []struct {
		name string
		slow githubtest.Slow
	}{
		{name: "the body never ends", slow: githubtest.Slow{Prefix: 1}},
		{name: "the body dribbles in", slow: githubtest.Slow{Every: 20 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := githubtest.NewServer(t, testToken)
			f.Fail(githubtest.Failure{Method: http.MethodGet, Path: "/comments", Times: -1, Status: http.StatusOK, Body: page, Slow: &tt.slow})
			c, sleeps := newTestCommenter(t, f, WithRequestTimeout(timeout))

			// Far more than the timeout, far less than a hang: a busy
			// machine is slow, not a minute late.
			_, took, err := upsertWithin(t, t.Context(), c, time.Minute)
			require.Error(t, err)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Contains(t, err.Error(), "GitHub's whole answer to GET /repos/o/r/issues/1/comments did not arrive within 200ms")
			assert.GreaterOrEqual(t, took, timeout, "Upsert returned before its deadline")
			assert.Empty(t, *sleeps, "a slow answer was retried")
			assert.Len(t, f.Requests(""), 1)
			assert.Empty(t, f.Comments("o", "r", 1))
		})
	}
}

// The caller's context (the comment step's budget) bounds the whole call,
// a slow body included, even when one request may take longer.
func TestSlowBodyStopsAtTheCallersDeadline(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	f.Fail(githubtest.Failure{Method: http.MethodGet, Times: -1, Status: http.StatusOK, Body: "[]", Slow: &githubtest.Slow{Prefix: 1}})
	c, _ := newTestCommenter(t, f) // the default request timeout, 30s
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, _, err := upsertWithin(t, ctx, c, DefaultRequestTimeout/2)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// An answer larger than the limit is an error naming it, not memory spent.
func TestAnswerSizeIsBounded(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	f.SetUser("someone-with-a-long-login")
	rt := &retryTransport{base: f.Client().Transport, maxAttempts: 1, sleep: sleepContext, now: time.Now,
		timeout: time.Minute, bodyLimit: 16}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.URL+"/user", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := (&http.Client{Transport: rt}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	var tooLarge *safeio.TooLargeError
	require.ErrorAs(t, err, &tooLarge)
	assert.Equal(t, "GitHub's answer to GET /user is larger than 16 bytes, the most perfgate reads", err.Error())
}

// An edit refused for good (a locked comment, an identity guessed wrong)
// costs one extra comment, not one per run: the run after it edits the
// comment it posted, the newest of its own, rather than being refused on
// the old one again and posting yet another.
func TestUpsertRefusedEditPostsOnce(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	old := f.AddComment("o", "r", 1, ActionsBot, Marker("")+"\nold verdict")
	f.RefuseEdit(old.ID, http.StatusForbidden, -1, "Resource not accessible by integration")
	c, _ := newTestCommenter(t, f)

	for run := 1; run <= 3; run++ {
		posted, err := c.Upsert(t.Context(), "o", "r", 1, "", "verdict of run "+itoa(int64(run)))
		require.NoError(t, err, "run %d", run)
		assert.Equal(t, run == 1, posted.Created, "run %d: Upsert(...).Created", run)
	}
	got := f.Comments("o", "r", 1)
	require.Len(t, got, 2, "comments after three runs")
	assert.Equal(t, Marker("")+"\nold verdict", got[0].Body)
	assert.Equal(t, Marker("")+"\nverdict of run 3", got[1].Body)
	assert.Len(t, f.Requests(http.MethodPost), 1, "posts over three runs")
}
