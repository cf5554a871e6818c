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
)

// exportFixture is internal/export's real result: scenarios chat-c4 and
// chat-poisson, three repetitions each.
var exportFixture = filepath.Join("..", "..", "internal", "export", "testdata", "result.json")

func TestExportFormats(t *testing.T) {
	for _, c := range []struct {
		format, want string
		golden       string // internal/export's golden output, if any
	}{
		{"bmf", `"ttft-p99-ms": {`, "result.bmf.json"},
		{"gab", `"name": "chat-c4/ttft.p99"`, "result.gab.json"},
		{"gab-bigger", `"name": "chat-c4/output_throughput"`, "result.gab-bigger.json"},
		{"csv", "scenario,metric,title,unit,better,n,median,mean,min,max,stddev\n", "result.csv"},
		{"vllm", `"backend":"openai-chat"`, "result.vllm.jsonl"},
		{"benchfmt", "BenchmarkScenario/name=chat-c4-1 1 ", ""},
	} {
		t.Run(c.format, func(t *testing.T) {
			out, _, err := perfgate("export", "--format", c.format, exportFixture)
			require.NoError(t, err)
			assert.Contains(t, out, c.want)
			if c.golden != "" {
				want, err := os.ReadFile(filepath.Join(filepath.Dir(exportFixture), c.golden))
				require.NoError(t, err)
				assert.Equal(t, string(want), out, "the command writes the package's golden output")
			}
		})
	}
}

func TestExportFlags(t *testing.T) {
	dir := t.TempDir()

	out, _, err := perfgate("export", "-f", "vllm", "--scenario", "chat-poisson", exportFixture)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Len(t, lines, 3, "one line per repetition of the one scenario")
	for _, l := range lines {
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &obj))
		assert.Equal(t, "chat-poisson", obj["perfgate_scenario"])
	}

	path := filepath.Join(dir, "reps.csv")
	_, _, err = perfgate("export", "-f", "csv", "--per", "repetition", "-o", path, exportFixture)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "scenario,repetition,metric,"), "%s", data)

	_, _, err = perfgate("export", "-f", "bmf", "--per", "repetition", exportFixture)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.ErrorContains(t, err, "--per applies to --format csv only")

	_, _, err = perfgate("export", "-f", "csv", "--per", "request", exportFixture)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.ErrorContains(t, err, `--per: unknown value "request"`)

	_, _, err = perfgate("export", "-f", "bmf", "-s", "chat-c8", exportFixture)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.ErrorContains(t, err, `no scenario "chat-c8" (it has: chat-c4, chat-poisson)`)

	_, _, err = perfgate("export", "-f", "xml", exportFixture)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.ErrorContains(t, err, "allowed: benchfmt, bmf, gab, gab-bigger, csv, vllm")

	out, _, err = perfgate("export", "--help")
	require.NoError(t, err)
	for _, f := range []string{"benchfmt", "bmf", "gab", "gab-bigger", "csv", "vllm", "customSmallerIsBetter", "customBiggerIsBetter"} {
		assert.Contains(t, out, f)
	}
}
