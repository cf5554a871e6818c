package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/github/githubtest"
	"github.com/perfgate/perfgate/internal/reportfile"
)

// reportFiles writes a pass and a regression report file, compared from
// results by perfgate report itself, and returns their paths.
func reportFiles(t *testing.T) (pass, regression string) {
	t.Helper()
	dir := t.TempDir()
	base, same, slow := filepath.Join(dir, "base.json"), filepath.Join(dir, "same.json"), filepath.Join(dir, "slow.json")
	writeResult(t, base, nil, 20, 21, 20.5, 19.8, 20.2, 20.1, 20.4, 19.9)
	writeResult(t, same, nil, 20.3, 20.6, 19.9, 20.1, 20.2, 20, 20.7, 20.2)
	writeResult(t, slow, nil, 30, 31, 30.5, 29.8, 30.2, 30.1, 30.4, 29.9)
	for _, c := range []struct{ result, title, out string }{
		{same, "h100", filepath.Join(dir, "pass.json")},
		{slow, "a100", filepath.Join(dir, "regression.json")},
	} {
		out, stderr, err := perfgate("report", "--baselines", base, "--title", c.title, "--format", "json", c.result)
		require.NoError(t, err, "a report exits 0 whatever the verdict: %s", stderr)
		require.NoError(t, os.WriteFile(c.out, []byte(out), 0o644))
		d, err := reportfile.Read(c.out)
		require.NoError(t, err, "report --format json of one report is a report file")
		assert.Equal(t, c.title, d.Title)
	}
	return filepath.Join(dir, "pass.json"), filepath.Join(dir, "regression.json")
}

func TestReportCommand(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITHUB_TOKEN", "")
	pass, regression := reportFiles(t)

	out, _, err := perfgate("report", pass)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "### ✅ perfgate · h100: pass"), out)

	out, _, err = perfgate("report", "--format", "text", regression)
	require.NoError(t, err)
	assert.Contains(t, out, "verdict: REGRESSION")

	// Merged: one overall verdict and a section a job; the exit code only
	// with --exit-code.
	out, _, err = perfgate("report", "--merge", pass, regression)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "### ❌ perfgate: regression in 1 of 2 jobs (exit 1)"), out)
	assert.Contains(t, out, "| ✅ h100 | pass")
	assert.Contains(t, out, "| ❌ a100 | regression")
	_, _, err = perfgate("report", "--merge", "--exit-code", pass, regression)
	assert.Equal(t, exit.Regression, exit.Code(err))
	_, _, err = perfgate("report", "--merge", "--exit-code", "--fail-on", "never", pass, regression)
	assert.NoError(t, err)
	out, _, err = perfgate("report", "--merge", "--format", "json", pass, regression)
	require.NoError(t, err)
	var docs []reportfile.Document
	require.NoError(t, json.Unmarshal([]byte(out), &docs))
	assert.Len(t, docs, 2)

	// The HTML report.
	html := filepath.Join(t.TempDir(), "report.html")
	_, _, err = perfgate("report", "--html", html, "--merge", pass, regression)
	require.NoError(t, err)
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Contains(t, string(page), "<html")
	assert.Contains(t, string(page), "a100")

	// --comment with no token says why nothing was posted and exits 0.
	_, stderr, err := perfgate("report", "--comment", pass)
	require.NoError(t, err)
	assert.Contains(t, stderr, "no pull request comment posted: no GitHub token")
}

func TestReportCommandBadInput(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	pass, regression := reportFiles(t)
	dir := t.TempDir()
	res := filepath.Join(dir, "result.json")
	writeResult(t, res, nil, 20, 21)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{pass, regression}, "2 report files: pass --merge"},
		{[]string{res}, "this is a result file"},
		{[]string{filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"--fail-on", "sometimes", pass}, `--fail-on: want one of config, regression, inconclusive, never, got "sometimes"`},
		{[]string{"--format", "pdf", pass}, "--format: want one of"},
		{[]string{"--repo", "nobody", pass}, `--repo: want owner/name, got "nobody"`},
		{[]string{}, "requires at least 1 arg"},
	} {
		_, _, err := perfgate(append([]string{"report"}, c.args...)...)
		assert.Equal(t, exit.Usage, exit.Code(err), "%v: %v", c.args, err)
		assert.ErrorContains(t, err, c.want, "%v", c.args)
	}
}

func TestBaselineRecordCommand(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "result.json")
	writeResult(t, res, nil, 20, 21, 22)
	store := filepath.Join(dir, "baselines")
	out, _, err := perfgate("baseline", "record", res, "--baselines", store, "--commit", "nightly1")
	require.NoError(t, err)
	assert.Contains(t, out, "appended 1 line(s) to "+filepath.Join(store, "history.jsonl"))
	history, err := os.ReadFile(filepath.Join(store, "history.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(history), `"commit":"nightly1"`)
	assert.NoFileExists(t, filepath.Join(store, "chat.json"), "record promotes nothing")

	_, _, err = perfgate("baseline", "record", filepath.Join(dir, "missing.json"), "--baselines", store)
	assert.Equal(t, exit.Usage, exit.Code(err))
}

// A nightly that records with --alert: quiet while the level holds, exit 1
// and the issue's body on the night a worse level is told from noise (its
// third), quiet again (the regression still open) after.
func TestBaselineRecordAlert(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "baselines")
	body := filepath.Join(dir, "alert.md")
	_, _, err := perfgate("baseline", "record", filepath.Join(dir, "x.json"), "--baselines", store, "--alert-body", body)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.ErrorContains(t, err, "--alert-body and --alert-issue need --alert")
	var raised []int
	for night := range 20 {
		level := 20.0
		if night >= 12 {
			level = 30 // 50% slower: beyond ttft.p99's default +20%
		}
		jitter := float64(night%3) / 10
		res := filepath.Join(dir, fmt.Sprintf("night%d.json", night))
		writeResult(t, res, nil, level+jitter, level+jitter+0.2, level+jitter-0.1)
		out, _, err := perfgate("baseline", "record", res, "--baselines", store, "--commit", fmt.Sprintf("n%02d", night),
			"--config", filepath.Join(dir, "none.yaml"), "--alert", "--alert-body", body)
		switch exit.Code(err) {
		case exit.Regression:
			raised = append(raised, night)
			assert.Contains(t, out, "NEW REGRESSION: chat ttft.p99: ")
			assert.Contains(t, out, "beyond +20%) from n12 ")
			b, rerr := os.ReadFile(body)
			require.NoError(t, rerr)
			assert.True(t, strings.HasPrefix(string(b), baseline.AlertMarker+"\n"))
		case exit.OK:
			if night > 14 {
				assert.Contains(t, out, "regression, open: chat ttft.p99", "night %d", night)
			} else {
				assert.Contains(t, out, "alerts: none", "night %d", night)
				assert.NoFileExists(t, body, "nothing to say, nothing written")
			}
		default:
			t.Fatalf("night %d: %v", night, err)
		}
	}
	assert.Equal(t, []int{14}, raised, "raised once, on the third slow night")
}

// A nightly keeps one alert issue: none while the level holds, opened the
// night a regression is raised, updated while it holds, closed with a
// note the night it is back; a token GitHub refuses is said and changes
// no exit code.
func TestBaselineRecordAlertIssue(t *testing.T) {
	const token = "ghs_nightly"
	fake := githubtest.NewServer(t, token)
	env := map[string]string{"GITHUB_TOKEN": token, "GITHUB_REPOSITORY": "acme/serving", "GITHUB_API_URL": fake.URL}
	dir := t.TempDir()
	store := filepath.Join(dir, "baselines")
	record := func(night int, level float64) (string, string, error) {
		jitter := float64(night%3) / 10
		res := filepath.Join(dir, fmt.Sprintf("night%d.json", night))
		writeResult(t, res, nil, level+jitter, level+jitter+0.2, level+jitter-0.1)
		var stdout, stderr bytes.Buffer
		root := newRootCmd(&system{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] }, githubHTTP: fake.Client()})
		root.SetArgs([]string{"baseline", "record", res, "--baselines", store, "--commit", fmt.Sprintf("n%02d", night),
			"--config", filepath.Join(dir, "none.yaml"), "--alert", "--alert-issue"})
		err := root.ExecuteContext(t.Context())
		return stdout.String(), stderr.String(), err
	}
	states := func() []string {
		var out []string
		for _, is := range fake.Issues("acme", "serving") {
			out = append(out, is.State)
		}
		return out
	}
	night := 0
	for ; night < 12; night++ {
		_, _, err := record(night, 20)
		require.NoError(t, err)
	}
	assert.Empty(t, states(), "no regression, no issue")
	for ; night < 14; night++ {
		_, _, err := record(night, 30)
		require.NoError(t, err, "night %d: not a level yet", night)
	}
	out, _, err := record(night, 30)
	night++
	assert.Equal(t, exit.Regression, exit.Code(err))
	assert.Contains(t, out, "alert issue opened: ")
	require.Equal(t, []string{"open"}, states())
	is := fake.Issues("acme", "serving")[0]
	assert.Regexp(t, `^perfgate: chat ttft\.p99 \+\d\d\.\d% on the default branch$`, is.Title)
	assert.Contains(t, is.Body, "from `n12`")
	out, _, err = record(night, 30)
	night++
	require.NoError(t, err)
	assert.Contains(t, out, "alert issue updated: ")
	for back := 0; fake.Issues("acme", "serving")[0].State == "open" && back < 8; back++ {
		out, _, err = record(night, 20)
		night++
		require.NoError(t, err)
	}
	require.Equal(t, []string{"closed"}, states(), "closed once the level is back")
	assert.Contains(t, out, "alert issue closed: ")
	comments := fake.Comments("acme", "serving", is.Number)
	require.Len(t, comments, 1)
	assert.Contains(t, comments[0].Body, "back within tolerance")

	fake.Fail(githubtest.Failure{Path: "/issues", Times: -1, Status: 403, Body: `{"message": "Resource not accessible by integration"}`})
	raised := false
	for i := 0; i < 6 && !raised; i++ {
		_, stderr, err := record(night+i, 40)
		raised = exit.Code(err) == exit.Regression
		if !raised {
			require.NoError(t, err)
		}
		if strings.Contains(stderr, "no alert issue kept") || raised {
			assert.Contains(t, stderr, "no alert issue kept: listing the open issues of acme/serving")
		}
	}
	assert.True(t, raised, "the alert's exit code stands when the issue cannot be kept")
}

// perfgate report --history writes the site of a baselines directory, and
// refuses what a site is not.
func TestReportHistorySite(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "baselines")
	for night := range 8 {
		res := filepath.Join(dir, fmt.Sprintf("n%d.json", night))
		writeResult(t, res, nil, 20, 21, 22)
		_, _, err := perfgate("baseline", "record", res, "--baselines", store, "--commit", fmt.Sprintf("%040x", night+1))
		require.NoError(t, err)
	}
	site := filepath.Join(dir, "site")
	out, _, err := perfgate("report", "--history", store, "-o", site, "--repo-url", "https://github.com/acme/serving")
	require.NoError(t, err)
	assert.Contains(t, out, "wrote 2 pages")
	assert.FileExists(t, filepath.Join(site, "index.html"))
	page, err := os.ReadFile(filepath.Join(site, "s1-chat.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), `"repo":"https://github.com/acme/serving"`)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--history", store}, "--history: needs -o"},
		{[]string{"-o", site}, "-o: only with --history"},
		{[]string{"--history", store, "-o", site, "--comment"}, "--history and --comment"},
		{[]string{"--history", store, "-o", site, "x.json"}, "unknown command"},
		{[]string{"--history", filepath.Join(dir, "none"), "-o", site}, "the history is empty"},
		{[]string{"--history", store, "-o", site, "--repo-url", "javascript:x"}, "want https://HOST/OWNER/REPO"},
	} {
		_, _, err := perfgate(append([]string{"report"}, c.args...)...)
		assert.Equal(t, exit.Usage, exit.Code(err), "%v: %v", c.args, err)
		assert.ErrorContains(t, err, c.want, "%v", c.args)
	}
}

// perfgate compare --history: the runs around two refs compared as a
// gate compares (a 50% slower TTFT p99 is a regression), the change point
// between them listed with its commit range; refs as SHAs, dates and a
// git tag.
func TestCompareReleases(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "baselines")
	commit := func(night int) string { return fmt.Sprintf("%08x%032x", uint32(night+1)*2654435761, night) }
	for night := range 24 {
		level := 20.0
		if night >= 12 {
			level = 30
		}
		jitter := float64(night%4) / 10
		res := filepath.Join(dir, fmt.Sprintf("n%d.json", night))
		writeResult(t, res, nil, level+jitter, level+jitter+0.3, level+jitter-0.2)
		_, _, err := perfgate("baseline", "record", res, "--baselines", store, "--commit", commit(night))
		require.NoError(t, err)
	}
	out, _, err := perfgate("compare", "--history", store, "--from", commit(11)[:10], "--to", commit(23))
	assert.Equal(t, exit.Regression, exit.Code(err), "%v\n%s", err, out)
	assert.Regexp(t, `TTFT p99.*REGRESSION`, out)
	assert.Contains(t, out, "Change points between "+commit(11)[:10])
	assert.Regexp(t, `- chat ttft\.p99: 20\.\d\d → 30\.\d\d ms \(\+\d\d\.\d%, worse\), between `+commit(11)[:12], out)

	same, _, err := perfgate("compare", "--history", store, "--from", commit(5), "--to", commit(11), "--runs", "6")
	require.NoError(t, err, same)
	assert.Contains(t, same, "  none", "no change point between two refs of one level")

	// A tag, through git, in the repository the history belongs to.
	repo := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=2000-01-01T00:00:00Z", "GIT_AUTHOR_DATE=2000-01-01T00:00:00Z")
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, string(b))
		return strings.TrimSpace(string(b))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "v1")
	git("tag", "v1.0")
	t.Chdir(repo)
	_, _, err = perfgate("compare", "--history", store, "--from", "v1.0", "--to", commit(23))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no scenario of the history has runs at both v1.0 and", "the tag resolves, to a commit no run measured, dated before every run")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--history", store, "--from", commit(1)}, "needs --from and --to"},
		{[]string{"--from", commit(1), "--to", commit(2)}, "only with --history"},
		{[]string{"--history", store, "--from", "no-such-ref", "--to", commit(2)}, `--from: "no-such-ref" is not a commit SHA or a date`},
		{[]string{"--history", store, "--from", "--x", "--to", commit(2)}, `"--x": want a tag or branch, a commit SHA, or a date`},
		{[]string{"--history", store, "--from", commit(1), "--to", commit(2), "--runs", "1"}, "--runs: want 2 to 1000"},
		{[]string{"--history", store, "--from", commit(1), "--to", commit(2), "--result", "r.json"}, "--history and --result"},
	} {
		_, _, err := perfgate(append([]string{"compare"}, c.args...)...)
		assert.Equal(t, exit.Usage, exit.Code(err), "%v: %v", c.args, err)
		assert.ErrorContains(t, err, c.want, "%v", c.args)
	}
}

// A record says where its run came from: the tag and the pull request of
// its commit (from git: a tag pointing at it, a squash merge's "(#N)"),
// and the workflow run's URL; flags override git.
func TestRecordOrigin(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, string(b))
		return strings.TrimSpace(string(b))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "serve: faster prefill (#123)")
	git("tag", "v2.0")
	sha := git("rev-parse", "HEAD")
	t.Chdir(repo)
	res := filepath.Join(repo, "r.json")
	writeResult(t, res, nil, 20, 21, 22)
	store := filepath.Join(repo, "baselines")
	env := map[string]string{"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/serving", "GITHUB_RUN_ID": "77"}
	record := func(args ...string) {
		var stdout, stderr bytes.Buffer
		root := newRootCmd(&system{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] }})
		root.SetArgs(append([]string{"baseline", "record", res, "--baselines", store, "--commit", sha}, args...))
		require.NoError(t, root.ExecuteContext(t.Context()), stderr.String())
	}
	record()
	record("--tag", "v2.0.1", "--pr", "9")
	hist, err := baseline.Store{Dir: store}.History()
	require.NoError(t, err)
	require.Len(t, hist, 2)
	assert.Equal(t, "v2.0", hist[0].Tag)
	assert.Equal(t, 123, hist[0].PR)
	assert.Equal(t, "https://github.com/acme/serving/actions/runs/77", hist[0].Run)
	assert.Equal(t, "v2.0.1", hist[1].Tag)
	assert.Equal(t, 9, hist[1].PR)
}
