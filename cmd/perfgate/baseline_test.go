package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
)

// `perfgate baseline promote` (and record) of a result that cannot be a
// baseline exits 2 with a message naming the file and the field, and writes
// nothing; before, impossible numbers were promoted, and a refusal was exit 3.
func TestBaselinePromoteBadResultIsUsageError(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("../../baselines/chat-poisson.json")
	require.NoError(t, err)
	change := func(edit func(rep map[string]any)) string {
		var m map[string]any
		require.NoError(t, json.Unmarshal(good, &m))
		edit(m["scenarios"].([]any)[0].(map[string]any)["repetitions"].([]any)[0].(map[string]any))
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return string(b)
	}
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"failed > sent", change(func(r map[string]any) { r["failed"] = 1e6 }), []string{"scenarios[0].repetitions[0].failed"}},
		{"negative throughput", change(func(r map[string]any) { r["output_throughput"] = -1.5e19 }), []string{"scenarios[0].repetitions[0].output_throughput", "-1.5e+19"}},
		{"negative latency", change(func(r map[string]any) { r["ttft_ms"].(map[string]any)["p99"] = -1 }), []string{"scenarios[0].repetitions[0].ttft_ms.p99"}},
		{"another schema", strings.Replace(string(good), "perfgate/result/v1", "perfgate/result/v9", 1), []string{"schema", "perfgate/result/v9"}},
		{"not JSON", "{oops", []string{":1:2: invalid JSON"}},
		{"a named pipe", "", []string{"not a regular file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if tc.name == "a named pipe" {
				path = fifo
			} else {
				require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			}
			store := filepath.Join(dir, "baselines-"+strings.ReplaceAll(tc.name, " ", "-"))
			for _, cmd := range []string{"promote", "record"} {
				_, _, err := perfgate("baseline", cmd, path, "--baselines", store, "--commit", "abc")
				require.Error(t, err, "perfgate baseline %s", cmd)
				assert.Equal(t, exit.Usage, exit.Code(err), "perfgate baseline %s: exit code (%v)", cmd, err)
				assert.Contains(t, err.Error(), path, "perfgate baseline %s names the file", cmd)
				for _, w := range tc.want {
					assert.Contains(t, err.Error(), w, "perfgate baseline %s", cmd)
				}
				assert.NoDirExists(t, store, "perfgate baseline %s wrote nothing", cmd)
			}
		})
	}
}
