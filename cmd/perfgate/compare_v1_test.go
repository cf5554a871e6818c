package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
)

// A baseline of result schema v1, as committed before the result had a
// schema of its own (SLOs in nanoseconds), compares with a candidate this
// perfgate writes (v2, SLOs in milliseconds): no mismatch of SLOs or load
// shape, the same candidate passes, and a slower one regresses.
func TestCompareV1BaselineWithV2Candidate(t *testing.T) {
	const v1 = "../../internal/result/testdata/v1/chat-c8.json"
	schemaOf := func(path string) string {
		t.Helper()
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var probe struct {
			Schema string `json:"schema"`
		}
		require.NoError(t, json.Unmarshal(data, &probe))
		return probe.Schema
	}
	require.Equal(t, result.SchemaV1, schemaOf(v1))

	// The candidates: the baseline's own figures with the SLOs and load
	// shape this perfgate records for the config that measured it (ttft:
	// 250ms, tpot: 25ms; the v1 file says 250000000 and 25000000), written
	// by this perfgate; and the same with TTFT 50% slower.
	dir := t.TempDir()
	same, slow := filepath.Join(dir, "same.json"), filepath.Join(dir, "slow.json")
	r, err := result.Read(v1)
	require.NoError(t, err)
	r.Scenarios[0].SLO = config.SLO{TTFT: 250 * time.Millisecond, TPOT: 25 * time.Millisecond}.Result()
	r.Scenarios[0].Load = config.Load{Type: config.LoadClosed, Concurrency: 8}.Result()
	require.NoError(t, result.Write(same, r))
	for i := range r.Scenarios[0].Repetitions {
		rep := &r.Scenarios[0].Repetitions[i]
		rep.TTFT.P50, rep.TTFT.P99 = rep.TTFT.P50*1.5, rep.TTFT.P99*1.5
		// The gate reads a percentile from each repetition's histogram
		// (Harrell-Davis), so the histogram is made 50% slower too.
		h, err := result.DecodeHistogram(rep.Histograms[result.HistTTFT])
		require.NoError(t, err)
		slower := hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		for _, bar := range h.Distribution() {
			if bar.Count > 0 {
				require.NoError(t, slower.RecordValues(bar.To*3/2, bar.Count))
			}
		}
		rep.Histograms[result.HistTTFT], err = slower.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		require.NoError(t, err)
	}
	require.NoError(t, result.Write(slow, r))
	require.Equal(t, result.Schema, schemaOf(same))

	out, _, err := perfgate("compare", "--baselines", v1, "--result", same)
	require.NoError(t, err, out)
	assert.Contains(t, out, "verdict: pass")
	assert.NotContains(t, out, "SLO")

	out, _, err = perfgate("compare", "--baselines", v1, "--result", slow)
	assert.Equal(t, exit.Regression, exit.Code(err), out)
	assert.Contains(t, out, "REGRESSION")
	assert.Contains(t, out, "TTFT p99 (ms)")
}
