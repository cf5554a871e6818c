package report

import (
	"bytes"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

// withPercentiles gives stats the extra percentiles p75 and p99.99, between
// their neighbours.
func withPercentiles(s result.Stats) result.Stats {
	s.Percentiles = map[string]float64{"p75": (s.P50 + s.P90) / 2, "p99.99": (s.P999 + s.Max) / 2}
	return s
}

// percentilesResult is a result whose config listed p50, p75, p99 and
// p99.99.
func percentilesResult() *result.Result {
	var reps []result.Repetition
	for i, ttft := range []float64{30, 34, 31} {
		r := rep(i+1, ttft)
		r.TTFT, r.TPOT, r.ITL, r.E2E = withPercentiles(r.TTFT), withPercentiles(r.TPOT), withPercentiles(r.ITL), withPercentiles(r.E2E)
		reps = append(reps, r)
	}
	return &result.Result{
		Schema:      result.Schema,
		Percentiles: []string{"p50", "p75", "p99", "p99.99"},
		Identity: result.Identity{PerfgateVersion: "v0.1.0",
			Target: result.Target{BaseURL: "http://127.0.0.1:8000", API: "chat", Model: "m"}},
		Scenarios: []result.ScenarioResult{{Name: "chat", Workload: "synth", WorkloadHash: "sha256:abc",
			Load: result.Load{Type: "closed", Concurrency: 8}, Repetitions: reps}},
	}
}

// The summary's latency table has the result's percentiles as columns, not
// the default five.
func TestSummaryShowsConfiguredPercentiles(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Summary(&buf, percentilesResult()))
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

// A document of a candidate that measured p75 and p99.99 against a
// baseline from before the key: the baseline gives them from its
// histograms, or, without histograms, leaves them out and the table says
// the candidate's alone.
func TestDocumentPercentilesAgainstOldBaseline(t *testing.T) {
	cand := percentilesResult()
	cs := &cand.Scenarios[0]
	d, err := distribution(cs, "ttft", cand.PercentileNames())
	require.NoError(t, err)
	var names []string
	for _, p := range d.Percentiles {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"p50", "p75", "p99", "p99.99"}, names)

	// The old baseline: TTFT of 1..1000 ms in each repetition's histogram,
	// no percentiles map.
	old := result.ScenarioResult{Name: "chat"}
	for i := 1; i <= 3; i++ {
		h := hdrhistogram.New(1, 3600e6, 3)
		for v := int64(1); v <= 1000; v++ {
			require.NoError(t, h.RecordValue(v*1000))
		}
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		require.NoError(t, err)
		r := rep(i, 500)
		r.Histograms = map[string][]byte{"ttft": enc}
		old.Repetitions = append(old.Repetitions, r)
	}
	bd, err := distribution(&old, "ttft", cand.PercentileNames())
	require.NoError(t, err)
	p75, ok := bd.Percentile("p75")
	require.True(t, ok)
	assert.InEpsilon(t, 750, p75, 0.002)
	p9999, ok := bd.Percentile("p99.99")
	require.True(t, ok)
	assert.InEpsilon(t, 1000, p9999, 0.002)
	p50, _ := bd.Percentile("p50")
	assert.Equal(t, 500.0, p50, "a field is read, not recomputed")

	bare := old
	bare.Repetitions = nil
	for _, r := range old.Repetitions {
		r.Histograms = nil
		bare.Repetitions = append(bare.Repetitions, r)
	}
	bd2, err := distribution(&bare, "ttft", cand.PercentileNames())
	require.NoError(t, err)
	_, ok = bd2.Percentile("p75")
	assert.False(t, ok, "not measured, no histogram")

	tab := percentileTable(&ScenarioData{Latency: []LatencyData{{Metric: "ttft", Title: "TTFT", Baseline: bd2, Candidate: d}}})
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
