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
// highest among them), the default gates on whatever it lists (the
// default percentiles are always measured), and the hash does not change.
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
	assert.Equal(t, []string{"ttft.p95", "ttft.p99", "ttft.p99.99", "tpot.p99", "itl.p75", "e2e.p99", "output_throughput", "goodput", "error_rate", "cold_start"}, gates,
		"ttft.p95 is gated though p95 is not listed")
	var warns []string
	for _, w := range c.Warnings {
		warns = append(warns, w.Error())
	}
	assert.Len(t, warns, 1, "only the requests warning: %q", warns)
	// (The column depends on the workload's temporary path.)
	assert.True(t, slices.ContainsFunc(warns, func(w string) bool {
		return strings.HasPrefix(w, "p.yaml:6:") && strings.HasSuffix(w, ": scenarios[0].requests: 2000 requests a repetition are too few for p99.99: below 10000, a repetition's p99.99 of TTFT and E2E is its slowest request (ITL, with a figure per token, has more)")
	}), "warnings %q", warns)

	more, err := Parse([]byte("percentiles: [p50, p75, p90, p95, p99, p99.9]\n"+scenario), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, plain.Hash(), more.Hash(), "which percentiles are taken is not hashed")
	// Narrowing the list to p50 keeps every default gate, silently: a PR
	// cannot turn off the gates that would catch it by listing fewer
	// percentiles (which the hash does not see).
	c, err = Parse([]byte("percentiles: [p50]\n"+scenario), "p.yaml")
	require.NoError(t, err)
	assert.Empty(t, c.Warnings)
	assert.Equal(t, plain.Hash(), c.Hash())
	assert.Equal(t, gateNames(plain.GatesOf(plain.Scenarios[0])), gateNames(c.GatesOf(c.Scenarios[0])))
	assert.Equal(t, []string{"ttft.p95", "ttft.p99", "tpot.p99", "e2e.p99", "output_throughput", "goodput", "error_rate", "cold_start"}, gateNames(c.GatesOf(c.Scenarios[0])))

	// A gate on a default percentile works though the list leaves it out;
	// off still turns a default gate off.
	c, err = Parse([]byte("percentiles: [p50]\ngates: {ttft.p95: off, itl.p90: +10%}\n"+strings.Replace(scenario, "2000", "100", 1)), "p.yaml")
	require.NoError(t, err)
	assert.Empty(t, c.Warnings)
	assert.Equal(t, []string{"ttft.p99", "tpot.p99", "itl.p90", "e2e.p99", "output_throughput", "goodput", "error_rate", "cold_start"}, gateNames(c.GatesOf(c.Scenarios[0])))

	// A gate on a percentile neither listed nor a default is refused.
	_, err = Parse([]byte("percentiles: [p50]\ngates: {itl.p75: +10%}\n"+scenario), "p.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gates.itl.p75: itl.p75 is not measured: the percentiles measured are p50, p90, p95, p99, p99.9 (add p75 to percentiles, or --percentiles)")
}

// --percentiles replaces the list, refusing what the key refuses with the
// flag's name; Validate then checks the gates against the new list.
func TestSetPercentiles(t *testing.T) {
	wl := writeWorkload(t)
	c, err := Parse([]byte("gates:\n  ttft.p99.99: +20%\npercentiles: [p50, p99.99]\nscenarios:\n  - {name: s, workload: "+wl+", load: {concurrency: 1}}\n"), "p.yaml")
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
	require.NoError(t, c.SetPercentiles("--percentiles", []string{"p50", " p75"}))
	assert.Equal(t, []string{"p50", "p75"}, c.MeasuredPercentiles())
	err = c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gates.ttft.p99.99: ttft.p99.99 is not measured: the percentiles measured are p50, p75, p90, p95, p99, p99.9 (add p99.99 to percentiles, or --percentiles)")
	require.NoError(t, c.SetPercentiles("--percentiles", []string{"p50", "p99.9", "p99.99"}))
	require.NoError(t, c.Validate())
}

// compare.tail takes any percentile (internal/gate counts the tail gates
// it adds).
func TestTailOfConfiguredPercentile(t *testing.T) {
	q, err := ParseTail("p99.99")
	require.NoError(t, err)
	assert.InDelta(t, 0.9999, q, 1e-12)
}
