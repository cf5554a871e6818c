package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// structured_error_rate is gated (+1 points by default) in a scenario whose
// workload has a structured request, and in no other: not by default, and
// not from a top-level gate, so that a free-text scenario's family is what
// it was.
func TestStructuredGate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("free.jsonl", `{"id":"a","prompt":"hi","max_tokens":8}`+"\n")
	write("json.jsonl", `{"id":"a","prompt":"hi","max_tokens":8}`+"\n"+`{"id":"b","prompt":"hi","max_tokens":8,"response_format":{"type":"json_object"}}`+"\n")
	write("none.jsonl", `{"id":"a","prompt":"hi","max_tokens":8,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none"}`+"\n")
	gates := func(c *Config, s Scenario) map[string]string {
		out := map[string]string{}
		for _, g := range c.GatesOf(s) {
			out[g.Metric] = g.Tolerance.Text
		}
		return out
	}
	c := &Config{Dir: dir}
	assert.Equal(t, "+1 points", gates(c, Scenario{Workload: "json.jsonl"})[StructuredGate])
	assert.NotContains(t, gates(c, Scenario{Workload: "free.jsonl"}), StructuredGate)
	assert.NotContains(t, gates(c, Scenario{Workload: "none.jsonl"}), StructuredGate, "tool_choice none: nothing to check")
	assert.NotContains(t, gates(c, Scenario{Workload: "missing.jsonl"}), StructuredGate)

	c.Gates = map[string]string{StructuredGate: "+2 points"}
	assert.Equal(t, "+2 points", gates(c, Scenario{Workload: "json.jsonl"})[StructuredGate])
	assert.NotContains(t, gates(c, Scenario{Workload: "free.jsonl"}), StructuredGate, "a top-level gate skips a scenario with nothing to measure")
	assert.NotContains(t, gates(c, Scenario{Workload: "json.jsonl", Gates: map[string]string{StructuredGate: GateOff}}), StructuredGate)

	// The file changes: the cache sees it.
	write("free.jsonl", `{"id":"a","prompt":"hello","max_tokens":8,"tools":[{"type":"function","function":{"name":"f"}}]}`+"\n")
	assert.Contains(t, gates(c, Scenario{Workload: "free.jsonl"}), StructuredGate)
}
