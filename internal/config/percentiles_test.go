package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gateNames(gs []Gate) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Metric)
	}
	return out
}

// The percentiles key: measured ascending, gates on any of them (the
// highest among them), default gates on one left out are off with a
// warning, and the hash does not change.
func TestPercentilesKey(t *testing.T) {
	wl := writeWorkload(t)
	scenario := "scenarios:\n  - {name: s, workload: " + wl + ", load: {concurrency: 1}, requests: 2000}\n"
	plain, err := Parse([]byte(scenario), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, []string{"p50", "p90", "p95", "p99", "p99.9"}, plain.MeasuredPercentiles())
	assert.Nil(t, plain.ResultPercentiles(), "the defaults are not recorded")

	c, err := Parse([]byte("percentiles: [p99.99, p50, p75, p99]\ngates:\n  ttft.p99.99: +20%\n  itl.p75: +10%\n"+scenario), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, []string{"p50", "p75", "p99", "p99.99"}, c.MeasuredPercentiles())
	assert.Equal(t, []string{"p50", "p75", "p99", "p99.99"}, c.ResultPercentiles())
	gates := gateNames(c.GatesOf(c.Scenarios[0]))
	assert.Equal(t, []string{"ttft.p99", "ttft.p99.99", "tpot.p99", "itl.p75", "e2e.p99", "output_throughput", "goodput", "error_rate", "cold_start"}, gates,
		"ttft.p95 is off: p95 is not measured")
	var warns []string
	for _, w := range c.Warnings {
		warns = append(warns, w.Error())
	}
	assert.Contains(t, warns, "p.yaml:1:1: percentiles: the list leaves out what the default gate ttft.p95 tests, so it is off (set it to off under gates to say so, or list its percentile)")
	// (The column depends on the workload's temporary path.)
	assert.True(t, slices.ContainsFunc(warns, func(w string) bool {
		return strings.HasPrefix(w, "p.yaml:6:") && strings.HasSuffix(w, ": scenarios[0].requests: 2000 requests a repetition are too few for p99.99: below 10000, a repetition's p99.99 of TTFT and E2E is its slowest request (ITL, with a figure per token, has more)")
	}), "warnings %q", warns)

	more, err := Parse([]byte("percentiles: [p50, p75, p90, p95, p99, p99.9]\n"+scenario), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, plain.Hash(), more.Hash(), "which percentiles are taken is not hashed")
	c, err = Parse([]byte("percentiles: [p50, p75]\n"+scenario), "p.yaml")
	require.NoError(t, err)
	warns = nil
	for _, w := range c.Warnings {
		warns = append(warns, w.Error())
	}
	assert.Contains(t, warns, "p.yaml:1:1: percentiles: the list leaves out what the default gates e2e.p99, tpot.p99, ttft.p95, ttft.p99 test, so they are off (set them to off under gates to say so, or list their percentiles)")

	// Saying so silences the warning.
	c, err = Parse([]byte("percentiles: [p50, p99]\ngates: {ttft.p95: off}\n"+strings.Replace(scenario, "2000", "100", 1)), "p.yaml")
	require.NoError(t, err)
	assert.Empty(t, c.Warnings)
	assert.Equal(t, []string{"ttft.p99", "tpot.p99", "e2e.p99", "output_throughput", "goodput", "error_rate", "cold_start"}, gateNames(c.GatesOf(c.Scenarios[0])))
}

// --percentiles replaces the list, refusing what the key refuses with the
// flag's name; Validate then checks the gates against the new list.
func TestSetPercentiles(t *testing.T) {
	wl := writeWorkload(t)
	c, err := Parse([]byte("gates:\n  ttft.p99.9: +20%\nscenarios:\n  - {name: s, workload: "+wl+", load: {concurrency: 1}}\n"), "p.yaml")
	require.NoError(t, err)
	for in, want := range map[string]string{
		"p50,p100":    `--percentiles: "p100" is not a percentile perfgate measures (p100 is the maximum)`,
		"p50,p9x":     `--percentiles: "p9x" is not a percentile`,
		"p99,p99":     `--percentiles: p99 is listed twice (also item 1)`,
		"p99.999":     `--percentiles: "p99.999" has more than two decimals`,
		"p49":         `--percentiles: "p49" is below p50`,
		"":            `--percentiles: list at least one percentile`,
		"p50,P99":     `--percentiles: "P99" is not a percentile: write p99`,
		"p50, p99.90": `--percentiles: "p99.90" is written p99.9`,
	} {
		list := strings.Split(in, ",")
		if in == "" {
			list = nil
		}
		err := c.SetPercentiles("--percentiles", list)
		require.Error(t, err, "SetPercentiles(%q)", in)
		assert.Contains(t, err.Error(), want, "SetPercentiles(%q)", in)
	}
	require.NoError(t, c.SetPercentiles("--percentiles", []string{"p50", " p99.99"}))
	assert.Equal(t, []string{"p50", "p99.99"}, c.MeasuredPercentiles())
	err = c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gates.ttft.p99.9: ttft.p99.9 is not measured: the percentiles measured are p50, p99.99 (add p99.9 to percentiles, or --percentiles)")
	require.NoError(t, c.SetPercentiles("--percentiles", []string{"p50", "p99.9", "p99.99"}))
	require.NoError(t, c.Validate())
}

// compare.tail takes any percentile, and counts the tail gates of the
// measured ones.
func TestTailOfConfiguredPercentile(t *testing.T) {
	q, err := ParseTail("p99.99")
	require.NoError(t, err)
	assert.InDelta(t, 0.9999, q, 1e-12)
	n := tailGates([]Gate{{Metric: "ttft.p99.99"}, {Metric: "ttft.p99"}, {Metric: "itl.p75"}, {Metric: "ttft.mean"}}, "p99.9")
	assert.Equal(t, 1, n)
}
