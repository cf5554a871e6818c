package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Validation counts a suite's score gate only when its scorer is
// continuous, as perfgate compare does: at 5 repetitions (the U test's
// smallest p is 1/252), the 7 default latency gates and two pass/fail
// suites (accuracy and error rate each: 11 gates, Holm's first step at
// 0.05/11 = 0.0045) decide; two reference suites (three gates each: 13, at
// 0.0038) cannot, and validate refuses them.
func TestValidateCountsScoreOnlyForContinuousSuites(t *testing.T) {
	dir := t.TempDir()
	wl := writeWorkload(t)
	write := func(name, line string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("\ufeff"+line+"\n"), 0o644))
	}
	write("a.jsonl", `{"id":"a","prompt":"1+1=","scorer":"numeric","expected":2}`)
	write("b.jsonl", `{"id":"b","prompt":"2+2=","scorer":"exact","expected":"4"}`)
	write("c.jsonl", `{"id":"c","prompt":"Say hi","scorer" : "reference","expected":"hi"}`)
	write("d.jsonl", `{"id":"c","prompt":"Say hi","scorer":"exact","expected":"hi"}`+"\n"+`{"id":"d","prompt":"Say yo","scorer":"reference","expected":"yo"}`)
	assert.False(t, SuiteContinuous(filepath.Join(dir, "a.jsonl")))
	assert.True(t, SuiteContinuous(filepath.Join(dir, "c.jsonl")))
	assert.True(t, SuiteContinuous(filepath.Join(dir, "d.jsonl")), "any continuous item makes the suite continuous")
	assert.False(t, SuiteContinuous(filepath.Join(dir, "missing.jsonl")))

	parse := func(suites string) *Config {
		t.Helper()
		data := "repetitions: 5\nquality:\n  suites: [" + suites + "]\nscenarios:\n  - {name: s, workload: " + wl + ", load: {concurrency: 1}}\n"
		c, err := Parse([]byte(data), filepath.Join(dir, "p.yaml"))
		require.NoError(t, err)
		return c
	}
	c := parse("a.jsonl, b.jsonl")
	assert.Empty(t, c.Undecidable, "two pass/fail suites have no score gate: 11 gates decide")
	assert.Equal(t, 2, c.SuiteGates(false))
	assert.Equal(t, 3, c.SuiteGates(true))

	c = parse("c.jsonl, d.jsonl")
	require.Len(t, c.Undecidable, 1, "two continuous suites: 13 gates cannot decide at 5 repetitions")
	assert.Contains(t, c.Undecidable[0].Error(), "13 gates")
}
