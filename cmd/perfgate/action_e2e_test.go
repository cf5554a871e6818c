package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/github"
	"github.com/perfgate/perfgate/internal/github/githubtest"
	"github.com/perfgate/perfgate/internal/reportfile"
)

const actionToken = "ghs_perfgateTestT0ken"

// actionEnv is a GitHub Actions step: the runner's variables pointing at
// temporary files and the fake API, and the action's inputs.
func actionEnv(t *testing.T, apiURL, workdir string, inputs map[string]string) (outputs, summary string) {
	t.Helper()
	dir := t.TempDir()
	outputs, summary = filepath.Join(dir, "output"), filepath.Join(dir, "summary.md")
	event := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(event, []byte(`{"number": 7, "pull_request": {"number": 7,
		"head": {"sha": "1111111111111111111111111111111111111111", "repo": {"full_name": "acme/serving"}}}}`), 0o644))
	for k, v := range map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": outputs, "GITHUB_STEP_SUMMARY": summary,
		"GITHUB_EVENT_PATH": event, "GITHUB_EVENT_NAME": "pull_request", "GITHUB_REPOSITORY": "acme/serving",
		"GITHUB_SHA": "2222222222222222222222222222222222222222", "GITHUB_API_URL": apiURL,
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "99", "GITHUB_TOKEN": "",
	} {
		t.Setenv(k, v)
	}
	for _, in := range github.Inputs {
		t.Setenv("INPUT_"+strings.ToUpper(in.Name), "") // unset: no runner default leaks in
	}
	inputs["working-directory"] = workdir
	for k, v := range inputs {
		t.Setenv("INPUT_"+strings.ToUpper(k), v)
	}
	return outputs, summary
}

// readOutputs parses a GITHUB_OUTPUT file (name<<DELIMITER, value, DELIMITER).
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var value []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			value = append(value, lines[i])
		}
		out[name] = strings.Join(value, "\n")
	}
	return out
}

// runAction runs perfgate action and returns its output and error; the
// token must appear in neither stream.
func runAction(t *testing.T) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	err = Main(context.Background(), []string{"action"}, &o, &e)
	assert.NotContains(t, o.String(), actionToken, "the token leaked to stdout")
	assert.NotContains(t, e.String(), actionToken, "the token leaked to stderr")
	if err != nil {
		assert.NotContains(t, err.Error(), actionToken)
	}
	return o.String(), e.String(), err
}

// The full gate run with GITHUB_* pointed at temporary files and a
// fake GitHub API. Two repetitions make every gate inconclusive whatever
// the machine's timing, so the exit codes are exact.
func TestActionAgainstFakeGitHub(t *testing.T) {
	sim := gateSim(t, 1)
	conf := writeConfig(t, fmt.Sprintf(gateConfig, sim, "2", "{cold_start: off}"))
	promoteBaseline(t, conf)
	workdir := filepath.Dir(conf)
	gh := githubtest.NewServer(t, actionToken)
	inputs := map[string]string{
		"config": "perfgate.yaml", "github-token": actionToken, "comment": "true", "fail-on": "config",
		"result": "result.json", "report": "perfgate-report.json", "html": "report.html", "title": "sim",
	}

	t.Run("first run posts the comment", func(t *testing.T) {
		outputs, summary := actionEnv(t, gh.URL, workdir, inputs)
		stdout, stderr, err := runAction(t)
		assert.Equal(t, exit.Regression, exit.Code(err), "inconclusive fails under on_inconclusive: fail\n%s", stderr)
		assert.Contains(t, stdout, "verdict: inconclusive")
		assert.Contains(t, stdout, "::warning::perfgate: inconclusive")

		comments := gh.Comments("acme", "serving", 7)
		require.Len(t, comments, 1)
		body := comments[0].Body
		assert.True(t, strings.HasPrefix(body, github.Marker("perfgate.yaml")+"\n### ⚠️ perfgate · sim: inconclusive"), body)
		assert.Contains(t, body, "```mermaid")
		assert.Contains(t, stderr, "posted the pull request comment: "+comments[0].URL)

		out := readOutputs(t, outputs)
		assert.Equal(t, map[string]string{
			"verdict": "inconclusive", "result": filepath.Join(workdir, "result.json"),
			"report": filepath.Join(workdir, "perfgate-report.json"), "comment-url": comments[0].URL,
		}, out)
		sum, err := os.ReadFile(summary)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(sum), "### ⚠️ perfgate · sim: inconclusive"), "the summary has the verdict first")
		doc, err := reportfile.Read(out["report"])
		require.NoError(t, err)
		assert.Equal(t, reportfile.Source{Result: out["result"], Repository: "acme/serving", Commit: "1111111111111111111111111111111111111111",
			PullRequest: 7, RunURL: "https://github.com/acme/serving/actions/runs/99"}, doc.Source)
		assert.FileExists(t, filepath.Join(workdir, "report.html"))
	})

	t.Run("second run edits the same comment", func(t *testing.T) {
		inputs["fail-on"] = "regression"
		defer func() { inputs["fail-on"] = "config" }()
		outputs, _ := actionEnv(t, gh.URL, workdir, inputs)
		_, stderr, err := runAction(t)
		require.NoError(t, err, "an inconclusive verdict passes under fail-on: regression\n%s", stderr)
		comments := gh.Comments("acme", "serving", 7)
		require.Len(t, comments, 1, "edited in place, not posted again")
		assert.Len(t, gh.Requests("PATCH"), 1)
		assert.Len(t, gh.Requests("POST"), 1)
		assert.Contains(t, stderr, "updated the pull request comment")
		assert.Equal(t, comments[0].URL, readOutputs(t, outputs)["comment-url"])
	})

	t.Run("a read-only token falls back to the summary", func(t *testing.T) {
		gh.Fail(githubtest.Failure{Path: "/comments", Times: -1, Status: 403,
			Body: `{"message": "Resource not accessible by integration"}`})
		outputs, summary := actionEnv(t, gh.URL, workdir, inputs)
		_, stderr, err := runAction(t)
		assert.Equal(t, exit.Regression, exit.Code(err), "the verdict's exit code is kept")
		assert.Contains(t, stderr, "no pull request comment posted: the token may not comment on pull request #7")
		out := readOutputs(t, outputs)
		assert.Equal(t, "", out["comment-url"])
		assert.Equal(t, "inconclusive", out["verdict"])
		sum, err := os.ReadFile(summary)
		require.NoError(t, err)
		assert.Contains(t, string(sum), "perfgate · sim: inconclusive")
	})

	t.Run("a broken run sets verdict error", func(t *testing.T) {
		in := map[string]string{}
		for k, v := range inputs {
			in[k] = v
		}
		in["config"] = "missing.yaml"
		outputs, _ := actionEnv(t, gh.URL, workdir, in)
		_, _, err := runAction(t)
		assert.Equal(t, exit.Usage, exit.Code(err))
		assert.Equal(t, "error", readOutputs(t, outputs)["verdict"])
	})

	t.Run("a bad boolean input is a usage error", func(t *testing.T) {
		in := map[string]string{"comment": "maybe"}
		actionEnv(t, gh.URL, workdir, in)
		_, _, err := runAction(t)
		assert.Equal(t, exit.Usage, exit.Code(err))
		assert.ErrorContains(t, err, "comment")
	})
}

// Every input of action.yml but mode maps to a flag of the command of its
// mode (gate, ab, or both), of the right kind: the action's one-to-one
// promise.
func TestActionInputsAreCommandFlags(t *testing.T) {
	commands := map[string]*cobra.Command{
		github.ModeGate: newGateCmd(&bytes.Buffer{}, &bytes.Buffer{}),
		github.ModeAB:   newABCmd(&system{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: os.Getenv}, &gateOutcome{}),
	}
	for _, in := range github.Inputs {
		if in.Flag == "" {
			assert.Equal(t, "mode", in.Name, "only mode picks the command rather than a flag")
			continue
		}
		for mode, cmd := range commands {
			if in.Only != "" && in.Only != mode {
				continue
			}
			f := cmd.Flags().Lookup(in.Flag)
			if !assert.NotNil(t, f, "input %s maps to --%s, which %s does not have", in.Name, in.Flag, mode) {
				continue
			}
			assert.Equal(t, in.Bool, f.Value.Type() == "bool", "input %s and %s --%s disagree on being a boolean", in.Name, mode, in.Flag)
			if in.Default != "" && !strings.HasPrefix(in.Default, "${{") {
				assert.NoError(t, f.Value.Set(in.Default), "input %s's default %q is not a valid %s --%s", in.Name, in.Default, mode, in.Flag)
			}
		}
	}
}

// mode: ab runs perfgate ab with the step's inputs: both arms measured,
// the outputs set, the step summary written as an A/B.
func TestActionModeAB(t *testing.T) {
	baseConf, _ := abArm(t, nil, abScenario)
	candConf, _ := abArm(t, []string{"--slowdown", "2"}, abScenario) // as TestABProcessStacks: every pair must show it
	work := t.TempDir()
	outputs, summary := actionEnv(t, "http://127.0.0.1:1", work, map[string]string{
		"mode": "ab", "base-config": baseConf, "config": candConf, "ab-mode": "co-resident", "comment": "false",
	})
	_, stderr, err := runAction(t)
	assert.Equal(t, exit.Regression, exit.Code(err), "err: %v\n%s", err, stderr)
	out := readOutputs(t, outputs)
	assert.Equal(t, "regression", out["verdict"])
	assert.Equal(t, filepath.Join(work, "result.json"), out["result"])
	assert.FileExists(t, filepath.Join(work, "base-result.json"))
	b, rerr := os.ReadFile(summary)
	require.NoError(t, rerr)
	assert.Contains(t, string(b), "A/B on one runner")
}
