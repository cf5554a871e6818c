package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"

	"github.com/perfgate/perfgate/internal/frontier"
	"github.com/perfgate/perfgate/internal/reportfile"
)

// frontierFixtures are the report package's frontier fixtures: six result
// files, one per configuration.
func frontierFixtures(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "internal", "report", "testdata", "frontier", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 6, "the fixtures (go test ./internal/report -run TestFrontierFixtures -update)")
	return files
}

func TestReportFrontierCommand(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	files := frontierFixtures(t)
	page := filepath.Join(t.TempDir(), "frontier.html")

	out, _, err := perfgate(append([]string{"report", "--frontier", "--html", page}, files...)...)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "### perfgate: the quality-cost frontier"), "markdown by default: %s", out)
	assert.Contains(t, out, "**llama-8b awq · vllm 0.6.3 (b.json)**: dominated by llama-8b fp8 · vllm 0.6.3 (a.json): accuracy 0.71 vs 0.74")
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(html), `"kind":"frontier"`, "the page has the frontier's charts")

	out, _, err = perfgate(append([]string{"report", "--frontier", "-f", "text"}, files...)...)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "perfgate frontier: 6 configurations"), out)

	out, _, err = perfgate(append([]string{"report", "--frontier", "--format", "json"}, files...)...)
	require.NoError(t, err)
	var f frontier.Frontier
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	assert.Equal(t, frontier.Schema, f.Schema)
	assert.Len(t, f.Configs, 6)
}

func TestReportFrontierUsageErrors(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	files := frontierFixtures(t)
	dir := t.TempDir()
	reportFile := filepath.Join(dir, "report.json")
	require.NoError(t, os.WriteFile(reportFile, []byte(`{"schema": "`+reportfile.Schema+`"}`), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--frontier", "--merge"}, "--frontier and --merge"},
		{[]string{"--frontier", "--baselines", dir}, "--frontier and --baselines"},
		{[]string{"--frontier", "--comment"}, "--frontier and --comment"},
		{[]string{"--frontier", "--exit-code"}, "--frontier and --exit-code"},
		{[]string{"--frontier", "--format", "csv"}, "--format: want one of"},
		{[]string{"--scenario", "chat"}, "--scenario: only with --frontier"},
	} {
		_, _, err := perfgate(append(append([]string{"report"}, c.args...), files...)...)
		require.Error(t, err, "%v", c.args)
		assert.Equal(t, exit.Usage, exit.Code(err), "%v: %v", c.args, err)
		assert.Contains(t, err.Error(), c.want, "%v", c.args)
	}
	_, _, err := perfgate("report", "--frontier", files[0], reportFile)
	require.Error(t, err)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.Contains(t, err.Error(), reportFile+": a report file, not a result: --frontier reads results")
}
