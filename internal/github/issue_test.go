package github

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/github/githubtest"
)

// One issue across nights: opened the first, its body replaced the next
// (not a second issue), closed with a note when it ends, and a new one
// opened by a later regression; an issue someone else opened with the
// marker, and a quoting one, are left alone.
func TestKeepIssue(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	f.AddIssue("o", "r", "mallory", "fake", Marker("nightly-alert")+"\nnot perfgate's")
	f.AddIssue("o", "r", githubtest.ActionsBot, "quote", "see "+Marker("nightly-alert"))
	c, _ := newTestCommenter(t, f)
	ctx := t.Context()

	k, err := c.KeepIssue(ctx, "o", "r", "nightly-alert", "perfgate: a regression", "night 1", false)
	require.NoError(t, err)
	assert.Equal(t, Kept{}, k, "nothing open, nothing to close")

	k, err = c.KeepIssue(ctx, "o", "r", "nightly-alert", "perfgate: a regression", "night 2: slower", true)
	require.NoError(t, err)
	assert.Equal(t, "opened", k.Action)
	k2, err := c.KeepIssue(ctx, "o", "r", "nightly-alert", "perfgate: a regression", "night 3: still slower", true)
	require.NoError(t, err)
	assert.Equal(t, Kept{Action: "updated", URL: k.URL}, k2)
	issues := f.Issues("o", "r")
	require.Len(t, issues, 3, "one issue of perfgate's")
	mine := issues[2]
	assert.Equal(t, Marker("nightly-alert")+"\nnight 3: still slower", mine.Body)
	assert.Equal(t, "open", mine.State)
	assert.Equal(t, "not perfgate's", strings.Split(issues[0].Body, "\n")[1], "another's issue untouched")

	k, err = c.KeepIssue(ctx, "o", "r", "nightly-alert", "perfgate: a regression", "back within tolerance", false)
	require.NoError(t, err)
	assert.Equal(t, Kept{Action: "closed", URL: mine.URL}, k)
	assert.Equal(t, "closed", f.Issues("o", "r")[2].State)
	comments := f.Comments("o", "r", mine.Number)
	require.Len(t, comments, 1)
	assert.Contains(t, comments[0].Body, "back within tolerance")

	k, err = c.KeepIssue(ctx, "o", "r", "nightly-alert", "perfgate: a regression", "slower again", true)
	require.NoError(t, err)
	assert.Equal(t, "opened", k.Action, "a closed issue is history: a new regression opens a new one")
	assert.Len(t, f.Issues("o", "r"), 4)
}

// A token that may not write issues is said, with the token masked.
func TestKeepIssueForbidden(t *testing.T) {
	f := githubtest.NewServer(t, testToken)
	f.Fail(githubtest.Failure{Method: http.MethodPost, Path: "/issues", Times: -1, Status: http.StatusForbidden,
		Body: `{"message": "Resource not accessible by integration ` + testToken + `"}`})
	c, _ := newTestCommenter(t, f)
	_, err := c.KeepIssue(t.Context(), "o", "r", "nightly-alert", "t", "b", true)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrForbidden)
	assert.NotContains(t, err.Error(), testToken)
	assert.Contains(t, err.Error(), "opening an issue in o/r")
}
