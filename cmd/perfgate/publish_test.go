package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/github"
	"github.com/perfgate/perfgate/internal/github/githubtest"
	"github.com/perfgate/perfgate/internal/reportfile"
)

// countingTransport counts the requests that go through it.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// publish takes the runner's variables and the HTTP client from the system
// it is given, never from the process: the step summary and the comment
// are written with an environment that exists only in the test.
func TestPublishUsesTheInjectedSystem(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "") // the fixture's perfgate report must not write a step summary of its own
	pass, _ := reportFiles(t)
	doc, err := reportfile.Read(pass)
	if err != nil {
		t.Fatal(err)
	}
	const token = "ghs_injectedT0ken"
	fake := githubtest.NewServer(t, token)
	dir := t.TempDir()
	event, summary := filepath.Join(dir, "event.json"), filepath.Join(dir, "summary.md")
	if err := os.WriteFile(event, []byte(`{"pull_request": {"number": 7, "head": {"sha": "1111111111111111111111111111111111111111"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": event, "GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_REPOSITORY": "acme/serving", "GITHUB_API_URL": fake.URL, "GITHUB_STEP_SUMMARY": summary,
		"GITHUB_TOKEN": token,
	}
	transport := &countingTransport{base: fake.Client().Transport}
	var stderr bytes.Buffer
	sys := &system{stdout: &bytes.Buffer{}, stderr: &stderr, getenv: func(k string) string { return env[k] },
		githubHTTP: &http.Client{Transport: transport}}

	o := &publishOptions{comment: true, failOn: "config"}
	if err := o.check(sys.getenv); err != nil {
		t.Fatalf("check = %v", err)
	}
	url, err := publish(context.Background(), sys, []*reportfile.Document{doc}, o)
	if err != nil {
		t.Fatalf("publish = %v; stderr:\n%s", err, stderr.String())
	}
	comments := fake.Comments("acme", "serving", 7)
	if len(comments) != 1 || url != comments[0].URL {
		t.Fatalf("publish posted %d comments and returned %q, want one comment at its URL; stderr:\n%s", len(comments), url, stderr.String())
	}
	if !strings.HasPrefix(comments[0].Body, github.Marker(doc.Key)) {
		t.Errorf("comment body starts %q, want the marker of key %q", comments[0].Body[:min(60, len(comments[0].Body))], doc.Key)
	}
	if transport.n.Load() == 0 {
		t.Errorf("no request went through the injected HTTP client")
	}
	if sum, err := os.ReadFile(summary); err != nil || !strings.Contains(string(sum), "perfgate") {
		t.Errorf("step summary = %q (%v), want the report", sum, err)
	}
}

// commentEnv is a GitHub Actions pull_request environment for pull request
// 7 of acme/serving, pointed at fake; head is the head repository's full
// name (a fork's differs).
func commentEnv(t *testing.T, fake *githubtest.Server, token, head string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	payload := `{"pull_request": {"number": 7, "head": {"sha": "1111111111111111111111111111111111111111", "repo": {"full_name": "` + head + `"}}}}`
	if err := os.WriteFile(event, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": event, "GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_REPOSITORY": "acme/serving", "GITHUB_API_URL": fake.URL,
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"), "GITHUB_TOKEN": token,
	}
}

// reportWithin runs `perfgate report --comment --exit-code file` with sys's
// environment and HTTP client, failing the test if it has not returned
// within limit.
func reportWithin(t *testing.T, sys *system, file string, limit time.Duration) (took time.Duration, err error) {
	t.Helper()
	root := newRootCmd(sys)
	root.SetArgs([]string{"report", "--comment", "--exit-code", file})
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- root.ExecuteContext(t.Context()) }()
	select {
	case err := <-done:
		return time.Since(start), err
	case <-time.After(limit):
		t.Fatalf("perfgate report --comment still running after %s, want it bounded by the comment's budget", limit)
		return 0, nil
	}
}

// A GitHub API that sends its headers and then its body slowly, or never
// ends it, costs the comment step its budget and no more, and the exit code
// is the verdict's: the comment is a notice, never the result.
func TestPublishSlowGitHubKeepsTheVerdict(t *testing.T) {
	pass, regression := reportFiles(t)
	const token = "ghs_slowT0ken"
	const budget = 300 * time.Millisecond
	tests := []struct {
		name     string
		file     string
		slow     githubtest.Slow
		wantCode int
	}{
		{name: "a pass, the body never ends", file: pass, slow: githubtest.Slow{Prefix: 1}, wantCode: exit.OK},
		{name: "a regression, the body never ends", file: regression, slow: githubtest.Slow{Prefix: 1}, wantCode: exit.Regression},
		{name: "a regression, the body dribbles", file: regression, slow: githubtest.Slow{Every: 20 * time.Millisecond}, wantCode: exit.Regression},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := githubtest.NewServer(t, token)
			fake.Fail(githubtest.Failure{Method: "GET", Path: "/comments", Times: -1, Status: 200,
				Body: "[" + strings.Repeat(`{"id": 1, "body": "x"},`, 100) + `{"id": 2}]`, Slow: &tt.slow})
			env := commentEnv(t, fake, token, "acme/serving")
			var stdout, stderr bytes.Buffer
			sys := &system{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] },
				githubHTTP: fake.Client(), commentBudget: budget}

			took, err := reportWithin(t, sys, tt.file, time.Minute)
			assert.Equal(t, tt.wantCode, exit.Code(err), "exit code of report --comment --exit-code (%v); stderr:\n%s", err, stderr.String())
			assert.GreaterOrEqual(t, took, budget, "returned before the budget was spent")
			assert.Contains(t, stderr.String(), "no pull request comment posted: GitHub's API did not answer within the comment step's budget of 300ms")
			assert.Contains(t, stderr.String(), "::notice::perfgate: no pull request comment posted: GitHub's API did not answer", "the runner's notice")
			assert.Empty(t, fake.Comments("acme", "serving", 7))
		})
	}
}

// The sticky comment is perfgate's own: a marker planted in someone else's
// comment is left alone and a new comment posted; a refused edit is said as
// such (not blamed on a fork's token) and the verdict posted anew.
func TestPublishStickyCommentIsPerfgates(t *testing.T) {
	pass, _ := reportFiles(t)
	doc, err := reportfile.Read(pass)
	if err != nil {
		t.Fatal(err)
	}
	marker := github.Marker(doc.Key)
	const token = "ghs_stickyT0ken"
	tests := []struct {
		name       string
		seedUser   string
		refuseEdit int // status answered to the edit; 0: none refused
		wantStderr []string
	}{
		{name: "someone else's comment holds the marker", seedUser: "mallory",
			wantStderr: []string{"left alone 1 comment(s) holding perfgate's marker that perfgate did not write", "posted the pull request comment"}},
		{name: "GitHub refuses to edit perfgate's comment", seedUser: githubtest.ActionsBot, refuseEdit: 403,
			wantStderr: []string{"warning: GitHub refused to edit perfgate's comment: comment ", "GitHub answered 403 Forbidden: Resource not accessible by integration; posted a new comment instead", "::warning::perfgate: GitHub refused to edit"}},
		{name: "perfgate's comment was deleted meanwhile", seedUser: githubtest.ActionsBot, refuseEdit: 404,
			wantStderr: []string{"warning: GitHub refused to edit perfgate's comment", "GitHub answered 404 Not Found: Not Found; posted a new comment instead"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := githubtest.NewServer(t, token)
			planted := fake.AddComment("acme", "serving", 7, tt.seedUser, marker+"\n### ✅ perfgate: pass (trust me)")
			if tt.refuseEdit != 0 {
				msg := "Resource not accessible by integration"
				if tt.refuseEdit == 404 {
					msg = "Not Found"
				}
				fake.RefuseEdit(planted.ID, tt.refuseEdit, -1, msg)
			}
			env := commentEnv(t, fake, token, "someone/fork")
			var stdout, stderr bytes.Buffer
			sys := &system{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] },
				githubHTTP: fake.Client()}
			o := &publishOptions{comment: true, failOn: "config"}
			if err := o.check(sys.getenv); err != nil {
				t.Fatalf("check = %v", err)
			}

			url, err := publish(t.Context(), sys, []*reportfile.Document{doc}, o)
			if err != nil {
				t.Fatalf("publish = %v", err)
			}
			out := stdout.String() + stderr.String()
			comments := fake.Comments("acme", "serving", 7)
			if len(comments) != 2 {
				t.Fatalf("publish left %d comments, want the planted one and a new one; output:\n%s", len(comments), out)
			}
			if comments[0].Body != planted.Body {
				t.Errorf("the planted comment by %s now reads %q, want it unchanged", tt.seedUser, comments[0].Body)
			}
			if !strings.HasPrefix(comments[1].Body, marker+"\n") || comments[1].User != githubtest.ActionsBot || url != comments[1].URL {
				t.Errorf("publish = %q, new comment by %s at %s starting %q; want perfgate's comment at its URL",
					url, comments[1].User, comments[1].URL, comments[1].Body[:min(40, len(comments[1].Body))])
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "fork") || strings.Contains(out, "no pull request comment posted") {
				t.Errorf("output blames a fork or posts nothing:\n%s", out)
			}
		})
	}
}

// A token refused on every comment says why, naming a fork only for a
// fork's pull request.
func TestPublishForbiddenNamesTheCause(t *testing.T) {
	pass, _ := reportFiles(t)
	doc, err := reportfile.Read(pass)
	if err != nil {
		t.Fatal(err)
	}
	const token = "ghs_readOnlyT0ken"
	for _, tt := range []struct {
		head, want string
	}{
		{"someone/fork", "a pull request from a fork gets a read-only token"},
		{"acme/serving", "(it needs pull-requests: write)"},
	} {
		fake := githubtest.NewServer(t, token)
		fake.Fail(githubtest.Failure{Path: "/comments", Times: -1, Status: 403, Body: `{"message": "Resource not accessible by integration"}`})
		env := commentEnv(t, fake, token, tt.head)
		var stdout, stderr bytes.Buffer
		sys := &system{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] }, githubHTTP: fake.Client()}
		o := &publishOptions{comment: true, failOn: "config"}
		if err := o.check(sys.getenv); err != nil {
			t.Fatalf("check = %v", err)
		}
		if _, err := publish(t.Context(), sys, []*reportfile.Document{doc}, o); err != nil {
			t.Fatalf("publish = %v", err)
		}
		if got := stderr.String(); !strings.Contains(got, "no pull request comment posted: the token may not comment on pull request #7") || !strings.Contains(got, tt.want) {
			t.Errorf("head %s: stderr = %q, want the refusal and %q", tt.head, got, tt.want)
		}
	}
}
