package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
)

// writeResult writes a result of scenario "chat" whose TTFT p99 has the
// given per-repetition values.
func writeResult(t *testing.T, path string, mutate func(*result.Result), ttftP99 ...float64) {
	t.Helper()
	s := result.ScenarioResult{Name: "chat", WorkloadHash: "sha256:w", Load: result.Load{Type: "closed", Concurrency: 4}}
	for i, v := range ttftP99 {
		s.Repetitions = append(s.Repetitions, result.Repetition{Index: i + 1, Sent: 10, Completed: 10,
			TTFT: result.Stats{P95: v, P99: v}, TPOT: result.Stats{P99: 10 + float64(i%3)/10}, E2E: result.Stats{P99: 200 + float64(i%4)},
			OutputThroughput: 1000 - float64(i%3), Goodput: 50 - float64(i%2)/10, TokensFrom: "usage"})
	}
	r := &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{s},
		Identity: result.Identity{Server: result.Server{Engine: "vllm", Version: "0.6.3"}}}
	if mutate != nil {
		mutate(r)
	}
	require.NoError(t, result.Write(path, r))
}

func perfgate(args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	err = Main(context.Background(), args, &o, &e)
	return o.String(), e.String(), err
}

func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	base, same, slow := filepath.Join(dir, "base.json"), filepath.Join(dir, "same.json"), filepath.Join(dir, "slow.json")
	writeResult(t, base, nil, 20, 21, 20.5, 19.8, 20.2, 20.1, 20.4, 19.9)
	writeResult(t, same, nil, 20.3, 20.6, 19.9, 20.1, 20.2, 20, 20.7, 20.2)
	writeResult(t, slow, nil, 30, 31, 30.5, 29.8, 30.2, 30.1, 30.4, 29.9)

	out, _, err := perfgate("compare", "--baselines", base, "--result", same)
	require.NoError(t, err)
	assert.Contains(t, out, "verdict: pass")

	out, _, err = perfgate("compare", "--baselines", base, "--result", slow)
	assert.Equal(t, exit.Regression, exit.Code(err))
	assert.Contains(t, out, "REGRESSION")
	assert.Contains(t, out, "TTFT p99 (ms)")

	out, _, err = perfgate("compare", "-b", base, "-r", slow, "--format", "markdown")
	assert.Equal(t, exit.Regression, exit.Code(err))
	assert.True(t, strings.HasPrefix(out, "### ❌"), out)

	out, _, err = perfgate("compare", "-b", base, "-r", slow, "--format", "json")
	assert.Equal(t, exit.Regression, exit.Code(err))
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, "regression", v["outcome"])
}

func TestCompareRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	base, cand := filepath.Join(dir, "base.json"), filepath.Join(dir, "cand.json")
	writeResult(t, base, nil, 20, 21, 20.5, 19.8, 20.2)
	writeResult(t, cand, func(r *result.Result) {
		r.Scenarios[0].WorkloadHash = "sha256:different"
		r.Identity.GPUs = []result.GPU{{Model: "NVIDIA A100-SXM4-80GB"}}
	}, 20, 21, 20.5, 19.8, 20.2)
	corrupt := filepath.Join(dir, "corrupt.json")
	require.NoError(t, os.WriteFile(corrupt, []byte(`{"schema": "perfgate/result/v1", "scenarios": [`), 0o644))
	wrongSchema := filepath.Join(dir, "old.json")
	require.NoError(t, os.WriteFile(wrongSchema, []byte(`{"schema": "perfgate/result/v0", "scenarios": []}`), 0o644))
	baselines := filepath.Join(dir, "baselines")
	require.NoError(t, os.MkdirAll(baselines, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(baselines, "chat.json"), []byte("not json"), 0o644))

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"identity mismatch", []string{"-b", base, "-r", cand}, []string{"not comparable", "GPU: (none) → 1× NVIDIA A100-SXM4-80GB", "workload hash", "--allow-mismatch"}},
		{"corrupt baseline file", []string{"-b", corrupt, "-r", cand}, []string{"corrupt.json"}},
		{"wrong schema", []string{"-b", wrongSchema, "-r", cand}, []string{"old.json", "perfgate/result/v0"}},
		{"corrupt baseline in a directory", []string{"-b", baselines, "-r", cand}, []string{filepath.Join(baselines, "chat.json")}},
		{"missing result", []string{"-b", base, "-r", filepath.Join(dir, "nope.json")}, []string{"nope.json"}},
		{"bad format", []string{"-b", base, "-r", base, "--format", "html"}, []string{"--format", "text, markdown, json"}},
		{"no baseline flag", []string{"-r", base}, []string{"--baselines is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := perfgate(append([]string{"compare"}, tt.args...)...)
			require.Error(t, err)
			assert.Equal(t, exit.Usage, exit.Code(err), "%v", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}

	out, _, err := perfgate("compare", "-b", base, "-r", cand, "--allow-mismatch")
	require.NoError(t, err)
	assert.Contains(t, out, "mismatches")
}

func TestBaselinePromoteShowHistory(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "baselines")
	for i, v := range []float64{20, 20.2, 19.9, 20.1, 30, 30.2, 29.8, 30.1} {
		r := filepath.Join(dir, "r.json")
		writeResult(t, r, nil, v, v*1.01, v*0.99, v*1.005)
		out, stderr, err := perfgate("baseline", "promote", r, "--baselines", store, "--commit", strings.Repeat(string(rune('a'+i)), 40))
		require.NoError(t, err, stderr)
		assert.Contains(t, out, filepath.Join(store, "chat.json"))
	}
	out, _, err := perfgate("baseline", "show", "--baselines", store)
	require.NoError(t, err)
	assert.Contains(t, out, "chat")

	out, _, err = perfgate("baseline", "history", "--baselines", store, "--metric", "ttft.p99")
	require.NoError(t, err)
	assert.Contains(t, out, "change point", "the step from 20 to 30 ms is flagged:\n%s", out)
	for i := range 8 {
		assert.Contains(t, out, strings.Repeat(string(rune('a'+i)), 12), "one row per promotion")
	}

	_, _, err = perfgate("baseline", "history", "--baselines", store, "--metric", "ttft.p98")
	assert.Equal(t, exit.Usage, exit.Code(err))

	require.NoError(t, os.WriteFile(filepath.Join(store, "chat.json"), []byte(`{"schema":"x"}`), 0o644))
	_, _, err = perfgate("baseline", "show", "--baselines", store)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.ErrorContains(t, err, filepath.Join(store, "chat.json"))
}

func TestExportBenchfmt(t *testing.T) {
	dir := t.TempDir()
	r := filepath.Join(dir, "r.json")
	writeResult(t, r, nil, 20, 21, 22)
	out, _, err := perfgate("export", r)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(out, "BenchmarkScenario/name=chat-1 1 "), out)
	assert.Contains(t, out, "Unit ttft-p99-sec better=lower")
}

// perfgate compare tests as perfgate gate does: alpha split across the
// scenarios with gates, Holm within each; not one family over the run.
func TestCompareSplitsAlphaAcrossScenarios(t *testing.T) {
	dir := t.TempDir()
	base, cand := filepath.Join(dir, "base.json"), filepath.Join(dir, "cand.json")
	second := func(r *result.Result) {
		s := r.Scenarios[0]
		s.Name = "bursty"
		r.Scenarios = append(r.Scenarios, s)
	}
	writeResult(t, base, second, 20, 21, 20.5, 19.8, 20.2, 20.1, 20.4, 19.9)
	writeResult(t, cand, second, 20.3, 20.6, 19.9, 20.1, 20.2, 20, 20.7, 20.2)
	out, _, err := perfgate("compare", "-b", base, "-r", cand, "--format", "json", "--alpha", "0.05")
	require.NoError(t, err, out)
	var v struct {
		Sequential bool
		Scenarios  []struct {
			Name  string
			Level float64
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Len(t, v.Scenarios, 2)
	for _, s := range v.Scenarios {
		assert.Equal(t, 0.025, s.Level, "scenario %s at half of alpha", s.Name)
	}
	assert.False(t, v.Sequential)
}
