package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result/resulttest"
)

// The summary's latency table has the result's percentiles as columns, not
// the default five.
func TestSummaryShowsConfiguredPercentiles(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Summary(&buf, resulttest.PercentilesResult()))
	golden(t, "summary-percentiles.golden", buf.Bytes())
	var header string
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "latency (ms)") {
			header = line
		}
	}
	assert.Equal(t, []string{"latency", "(ms),", "median", "of", "repetitions", "mean", "p50", "p75", "p99", "p99.99"}, strings.Fields(header))
	assert.Contains(t, buf.String(), " 38.75 ", "TTFT p75: the median of the repetitions' (p50+p90)/2, (31+46.5)/2")
}

// A candidate that measured p75 and p99.99 against a baseline from before
// the key that could not give them (no histograms): the table has the
// candidate's percentiles as columns, and says the candidate's alone where
// the baseline has none.
func TestPercentileTableAgainstOldBaseline(t *testing.T) {
	cand := &reportfile.Distribution{Percentiles: []reportfile.Percentile{{Name: "p50", Value: 31}, {Name: "p75", Value: 38.75}, {Name: "p99", Value: 62}, {Name: "p99.99", Value: 80}}}
	old := &reportfile.Distribution{Percentiles: []reportfile.Percentile{{Name: "p50", Value: 30}, {Name: "p99", Value: 60}}}
	tab := percentileTable(&reportfile.ScenarioData{Latency: []reportfile.LatencyData{{Metric: "ttft", Title: "TTFT", Baseline: old, Candidate: cand}}})
	require.NotNil(t, tab)
	var cols []string
	for _, c := range tab.Columns[1:] {
		cols = append(cols, c.Title)
	}
	assert.Equal(t, []string{"p50", "p75", "p99", "p99.99"}, cols)
	cells := tab.Rows[0].Cells
	require.Len(t, cells, 5)
	assert.Contains(t, cells[1].Text.raw(), "→", "p50: baseline → candidate")
	assert.NotContains(t, cells[2].Text.raw(), "→", "p75: the candidate's alone")
}
