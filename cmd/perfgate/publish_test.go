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

	"github.com/perfgate/perfgate/internal/github"
	"github.com/perfgate/perfgate/internal/github/githubtest"
	"github.com/perfgate/perfgate/internal/report"
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
	doc, err := report.ReadDocument(pass)
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
	url, err := publish(context.Background(), sys, []*report.Document{doc}, o)
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
