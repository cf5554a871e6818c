package github

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env is a fake environment for NewAction.
type env map[string]string

func (e env) getenv(k string) string { return e[k] }

// runnerInputs is the environment a runner gives the step when the workflow
// sets no inputs: every input at its action.yml default.
func runnerInputs() env {
	e := env{}
	for _, in := range Inputs {
		e["INPUT_"+strings.ToUpper(in.Name)] = in.Default
	}
	e["INPUT_GITHUB-TOKEN"] = "ghs_x"
	return e
}

func TestInActions(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{{"true", true}, {"", false}, {"false", false}, {"1", false}}
	for _, tt := range tests {
		a := NewAction(env{"GITHUB_ACTIONS": tt.v}.getenv, &bytes.Buffer{})
		assert.Equal(t, tt.want, a.InActions(), "InActions() with GITHUB_ACTIONS=%q", tt.v)
	}
}

func TestArgs(t *testing.T) {
	tests := []struct {
		name    string
		env     env
		want    []string
		wantErr string
	}{
		{
			name: "defaults",
			env:  runnerInputs(),
			want: []string{
				"--config=perfgate.yaml", "--github-token=ghs_x", "--comment=true", "--fail-on=config",
				"--workdir=.", "--output=result.json", "--report=perfgate-report.json", "--html=perfgate-report.html",
			},
		},
		{
			name: "every input, trimmed",
			env: env{
				"INPUT_CONFIG":            " perf/perfgate.yaml ",
				"INPUT_SCENARIOS":         "chat,rag",
				"INPUT_BASELINES":         "perf/baselines",
				"INPUT_GITHUB-TOKEN":      "ghs_y\n",
				"INPUT_COMMENT":           "FALSE",
				"INPUT_FAIL-ON":           "regression",
				"INPUT_WORKING-DIRECTORY": "serving",
				"INPUT_RESULT":            "out/result.json",
				"INPUT_REPORT":            "out/report.json",
				"INPUT_HTML":              "out/report.html",
				"INPUT_TITLE":             "Llama 3.1 8B on H100 = fp8",
			},
			want: []string{
				"--config=perf/perfgate.yaml", "--scenario=chat,rag", "--baselines=perf/baselines",
				"--github-token=ghs_y", "--comment=false", "--fail-on=regression", "--workdir=serving",
				"--output=out/result.json", "--report=out/report.json", "--html=out/report.html",
				"--title=Llama 3.1 8B on H100 = fp8",
			},
		},
		{
			name: "empty inputs pass no flag",
			env:  env{"INPUT_HTML": "", "INPUT_TITLE": "   ", "INPUT_COMMENT": "true"},
			want: []string{"--comment=true"},
		},
		{
			name: "no inputs",
			env:  env{},
			want: nil,
		},
		{
			name:    "bool that is not true or false",
			env:     env{"INPUT_COMMENT": "yes"},
			wantErr: `input comment: "yes" is not true or false`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewAction(tt.env.getenv, &bytes.Buffer{}).Args(ModeGate)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// readOutputs parses a GITHUB_OUTPUT file written in the heredoc format,
// failing on anything else.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		require.True(t, ok, "line %d %q is not name<<delimiter", i+1, lines[i])
		var value []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			value = append(value, lines[i])
		}
		require.Less(t, i, len(lines), "output %s: no closing %s", name, delim)
		out[name] = strings.Join(value, "\n")
	}
	return out
}

func TestSetOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "output")
	a := NewAction(env{"GITHUB_OUTPUT": path}.getenv, &bytes.Buffer{})

	require.NoError(t, a.SetOutput(OutputVerdict, "regression"))
	require.NoError(t, a.SetOutput(OutputResult, "out/result.json"))
	require.NoError(t, a.SetOutput(OutputCommentURL, ""))
	require.NoError(t, a.SetOutput(OutputReport, "two\nlines"))

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(raw),
		"verdict<<"+fileCommandDelimiter+"\nregression\n"+fileCommandDelimiter+"\n"),
		"GITHUB_OUTPUT starts %q, want go-githubactions' heredoc format", raw)
	assert.Equal(t, map[string]string{
		OutputVerdict:    "regression",
		OutputResult:     "out/result.json",
		OutputCommentURL: "",
		OutputReport:     "two\nlines",
	}, readOutputs(t, path))
}

func TestSetOutputErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, env, output, value string
		wantErr                  string
	}{
		{name: "not an output", env: filepath.Join(dir, "out"), output: "verdicts", value: "pass", wantErr: `"verdicts": not an output`},
		{name: "no GITHUB_OUTPUT", env: "", output: OutputVerdict, value: "pass", wantErr: ErrNoOutputFile.Error()},
		{name: "unwritable", env: dir, output: OutputVerdict, value: "pass", wantErr: "setting output verdict"},
		{name: "delimiter in the value", env: filepath.Join(dir, "out"), output: OutputReport,
			value: "x\n" + fileCommandDelimiter + "\nverdict<<EOF", wantErr: "would end it early"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAction(env{"GITHUB_OUTPUT": tt.env}.getenv, &bytes.Buffer{})
			require.ErrorContains(t, a.SetOutput(tt.output, tt.value), tt.wantErr)
		})
	}
}

func TestWriteSummary(t *testing.T) {
	t.Run("appends", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "summary.md")
		a := NewAction(env{"GITHUB_STEP_SUMMARY": path}.getenv, &bytes.Buffer{})
		require.NoError(t, a.WriteSummary("## perfgate"))
		require.NoError(t, a.WriteSummary("| p95 | +4% |\n"))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "## perfgate\n| p95 | +4% |\n", string(got))
	})
	t.Run("unset", func(t *testing.T) {
		a := NewAction(env{}.getenv, &bytes.Buffer{})
		require.ErrorIs(t, a.WriteSummary("x"), ErrNoSummary)
	})

	tests := []struct {
		name     string
		existing int // bytes already in the file
		markdown int // bytes to write, ending in a newline
		wantErr  bool
	}{
		{name: "exactly the limit", existing: 0, markdown: SummaryLimit},
		{name: "over the limit", existing: 0, markdown: SummaryLimit + 1, wantErr: true},
		{name: "over with what is there", existing: 10, markdown: SummaryLimit - 9, wantErr: true},
		{name: "fits with what is there", existing: 10, markdown: SummaryLimit - 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "summary.md")
			before := strings.Repeat("a", tt.existing)
			require.NoError(t, os.WriteFile(path, []byte(before), 0o644))
			a := NewAction(env{"GITHUB_STEP_SUMMARY": path}.getenv, &bytes.Buffer{})

			err := a.WriteSummary(strings.Repeat("b", tt.markdown-1) + "\n")
			got, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			if tt.wantErr {
				require.ErrorContains(t, err, "exceed GitHub's limit")
				assert.Equal(t, before, string(got), "the summary after a refused write")
				return
			}
			require.NoError(t, err)
			assert.Len(t, got, tt.existing+tt.markdown)
		})
	}
}

func TestLogCommands(t *testing.T) {
	var out bytes.Buffer
	a := NewAction(env{}.getenv, &out)
	a.Group("warm-up")
	a.Noticef("steady after %d windows", 3)
	a.EndGroup()
	a.Warningf("no comment: %s", "read-only token")
	a.Errorf("p99 regressed\nby %d%%", 12)
	assert.Equal(t, strings.Join([]string{
		"::group::warm-up",
		"::notice::steady after 3 windows",
		"::endgroup::",
		"::warning::no comment: read-only token",
		"::error::p99 regressed%0Aby 12%25",
	}, "\n")+"\n", out.String())
}

// eventEnv is a runner environment for an event whose payload is
// testdata/file.
func eventEnv(name, file string) env {
	return env{
		"GITHUB_EVENT_NAME":  name,
		"GITHUB_EVENT_PATH":  filepath.Join("testdata", file),
		"GITHUB_REPOSITORY":  "acme/perfgate-demo",
		"GITHUB_SHA":         "dddddddddddddddddddddddddddddddddddddddd",
		"GITHUB_SERVER_URL":  "https://github.com",
		"GITHUB_RUN_ID":      "1234567",
		"GITHUB_API_URL":     "https://api.github.com",
		"GITHUB_ACTIONS":     "true",
		"GITHUB_RUN_ATTEMPT": "1",
	}
}

func TestEvent(t *testing.T) {
	const runURL = "https://github.com/acme/perfgate-demo/actions/runs/1234567"
	const commit = "dddddddddddddddddddddddddddddddddddddddd"
	base := Event{Owner: "acme", Repo: "perfgate-demo", Commit: commit, RunURL: runURL, APIURL: "https://api.github.com"}
	with := func(f func(*Event)) Event {
		e := base
		f(&e)
		return e
	}
	tests := []struct {
		name     string
		env      env
		want     Event
		wantFork bool
	}{
		{
			name: "pull_request from a fork",
			env:  eventEnv("pull_request", "pull_request.json"),
			want: with(func(e *Event) {
				e.Name, e.PullRequest = "pull_request", 42
				e.HeadSHA, e.HeadRepo = "6dcb09b5b57875f334f61aebed695e2e4193db5e", "contributor/perfgate-demo"
			}),
			wantFork: true,
		},
		{
			name: "pull_request_target",
			env:  eventEnv("pull_request_target", "pull_request.json"),
			want: with(func(e *Event) {
				e.Name, e.PullRequest = "pull_request_target", 42
				e.HeadSHA, e.HeadRepo = "6dcb09b5b57875f334f61aebed695e2e4193db5e", "contributor/perfgate-demo"
			}),
			wantFork: true,
		},
		{
			name: "pull_request from a branch",
			env:  eventEnv("pull_request", "pull_request_same_repo.json"),
			want: with(func(e *Event) {
				e.Name, e.PullRequest = "pull_request", 7
				e.HeadSHA, e.HeadRepo = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "acme/perfgate-demo"
			}),
		},
		{
			name: "workflow_run with its pull request",
			env:  eventEnv("workflow_run", "workflow_run.json"),
			want: with(func(e *Event) {
				e.Name, e.PullRequest = "workflow_run", 7
				e.HeadSHA, e.HeadRepo = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "acme/perfgate-demo"
			}),
		},
		{
			name: "workflow_run from a fork, without pull_requests",
			env:  eventEnv("workflow_run", "workflow_run_fork.json"),
			want: with(func(e *Event) {
				e.Name = "workflow_run"
				e.HeadSHA, e.HeadRepo = "6dcb09b5b57875f334f61aebed695e2e4193db5e", "contributor/perfgate-demo"
			}),
			wantFork: true,
		},
		{
			name: "push",
			env:  eventEnv("push", "push.json"),
			want: with(func(e *Event) { e.Name = "push" }),
		},
		{
			name: "issue_comment on a pull request",
			env:  eventEnv("issue_comment", "issue_comment_pr.json"),
			want: with(func(e *Event) { e.Name, e.PullRequest = "issue_comment", 42 }),
		},
		{
			name: "issue_comment on an issue",
			env:  eventEnv("issue_comment", "issue_comment_issue.json"),
			want: with(func(e *Event) { e.Name = "issue_comment" }),
		},
		{
			name: "a payload with a pull_request, from another event",
			env:  eventEnv("pull_request_review", "pull_request.json"),
			want: with(func(e *Event) { e.Name = "pull_request_review" }),
		},
		{
			name: "defaults: no run id, no API URL",
			env: func() env {
				e := eventEnv("push", "push.json")
				delete(e, "GITHUB_RUN_ID")
				delete(e, "GITHUB_API_URL")
				return e
			}(),
			want: with(func(e *Event) { e.Name, e.RunURL = "push", "" }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewAction(tt.env.getenv, &bytes.Buffer{}).Event()
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantFork, got.Fork(), "Fork()")
		})
	}
}

func TestEventErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{not json"), 0o644))
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		name    string
		change  func(env)
		wantErr string
	}{
		{name: "missing payload", change: func(e env) { e["GITHUB_EVENT_PATH"] = missing }, wantErr: missing},
		{name: "unreadable payload", change: func(e env) { e["GITHUB_EVENT_PATH"] = t.TempDir() }, wantErr: "reading the event payload"},
		{name: "invalid payload", change: func(e env) { e["GITHUB_EVENT_PATH"] = bad }, wantErr: bad},
		{name: "no payload", change: func(e env) { delete(e, "GITHUB_EVENT_PATH") }, wantErr: "GITHUB_EVENT_PATH is not set"},
		{name: "repository without owner", change: func(e env) { e["GITHUB_REPOSITORY"] = "perfgate-demo" }, wantErr: `GITHUB_REPOSITORY "perfgate-demo" is not owner/repo`},
		{name: "repository too deep", change: func(e env) { e["GITHUB_REPOSITORY"] = "a/b/c" }, wantErr: "is not owner/repo"},
		{name: "no repository", change: func(e env) { delete(e, "GITHUB_REPOSITORY") }, wantErr: "is not owner/repo"},
		{name: "pull_request without one", change: func(e env) { e["GITHUB_EVENT_PATH"] = filepath.Join("testdata", "push.json") }, wantErr: "no pull_request"},
		{name: "malformed run id", change: func(e env) { e["GITHUB_RUN_ID"] = "abc" }, wantErr: "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := eventEnv("pull_request", "pull_request.json")
			tt.change(e)
			_, err := NewAction(e.getenv, &bytes.Buffer{}).Event()
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestFork(t *testing.T) {
	tests := []struct {
		headRepo string
		want     bool
	}{
		{"", false},
		{"acme/perfgate-demo", false},
		{"ACME/perfgate-demo", false},
		{"contributor/perfgate-demo", true},
	}
	for _, tt := range tests {
		e := Event{Owner: "acme", Repo: "perfgate-demo", HeadRepo: tt.headRepo}
		assert.Equal(t, tt.want, e.Fork(), "Event{HeadRepo: %q}.Fork()", tt.headRepo)
	}
}

// mode picks the command; the inputs of the other mode are refused unless
// left at their defaults, and mode ab needs its base config.
func TestModeAndItsInputs(t *testing.T) {
	tests := []struct {
		name     string
		env      env
		wantMode string
		want     []string
		wantErr  string
	}{
		{name: "gate by default", env: env{"INPUT_CONFIG": "perfgate.yaml"}, wantMode: ModeGate, want: []string{"--config=perfgate.yaml"}},
		{
			name:     "ab",
			env:      env{"INPUT_MODE": "AB", "INPUT_BASE-CONFIG": "base/perfgate.yaml", "INPUT_CONFIG": "pr/perfgate.yaml", "INPUT_AB-MODE": "swap"},
			wantMode: ModeAB,
			want:     []string{"--config=pr/perfgate.yaml", "--base=base/perfgate.yaml", "--mode=swap"},
		},
		{name: "ab without a base", env: env{"INPUT_MODE": "ab"}, wantMode: ModeAB, wantErr: "input base-config: mode ab needs the base arm's config (the base branch's perfgate.yaml)"},
		{name: "baselines in mode ab", env: env{"INPUT_MODE": "ab", "INPUT_BASE-CONFIG": "b.yaml", "INPUT_BASELINES": "perf/baselines"}, wantMode: ModeAB,
			wantErr: "input baselines is for mode gate, and this step's mode is ab"},
		{name: "base-config in mode gate", env: env{"INPUT_BASE-CONFIG": "b.yaml"}, wantMode: ModeGate,
			wantErr: "input base-config is for mode ab, and this step's mode is gate"},
		{name: "unknown mode", env: env{"INPUT_MODE": "compare"}, wantErr: `input mode: "compare" is not gate or ab`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAction(tt.env.getenv, &bytes.Buffer{})
			mode, err := a.Mode()
			if tt.wantMode == "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantMode, mode)
			got, err := a.Args(mode)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
