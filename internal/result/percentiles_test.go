package result

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An aggregator told to measure p75 and p99.99 carries them in each latency
// distribution's Percentiles, beside the five fields it always fills; the
// result writes and reads them back, and Values gives them.
func TestAggregatorPercentiles(t *testing.T) {
	a := NewAggregator(SLO{}, false, 0).WithPercentiles([]string{"p75", "p99", "p99.99", "p200"})
	// 20000 requests: TTFT 1..20000 µs (0.001..20 ms), 3 tokens 1 ms apart.
	for i := int64(1); i <= 20000; i++ {
		r := &Record{SentNS: 0, FirstTokenNS: i * 1000, OutputTokens: 3, PromptTokens: 1, TokensFrom: "usage"}
		r.EndNS = r.FirstTokenNS + 2*ms
		r.ITLUS = []int64{1000, 1000}
		a.Add(r)
	}
	s := a.Summary(1)
	require.Equal(t, []string{"p75", "p99.99"}, sortedKeys(s.TTFT.Percentiles), "p99 has a field; p200 is no percentile")
	// HDR at 3 significant digits: within 0.1% of the exact rank.
	assert.InEpsilon(t, 15.0, s.TTFT.Percentiles["p75"], 0.002)
	assert.InEpsilon(t, 19.998, s.TTFT.Percentiles["p99.99"], 0.002)
	assert.InEpsilon(t, 19.8, s.TTFT.P99, 0.002)
	assert.Less(t, s.TTFT.Percentiles["p99.99"], s.TTFT.Max, "of 20000 requests p99.99 is not the slowest")
	assert.Equal(t, []string{"p75", "p99.99"}, sortedKeys(s.E2E.Percentiles))
	assert.Equal(t, []string{"p75", "p99.99"}, sortedKeys(s.ITL.Percentiles))

	res := &Result{Schema: Schema, Percentiles: []string{"p75", "p99", "p99.99"}, Scenarios: []ScenarioResult{{Name: "s", Repetitions: []Repetition{s}}}}
	p := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, Write(p, res))
	back, err := Read(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"p75", "p99", "p99.99"}, back.PercentileNames())
	got, err := back.Scenarios[0].Values("ttft.p99.99")
	require.NoError(t, err)
	assert.Equal(t, []float64{s.TTFT.Percentiles["p99.99"]}, got)
	got, err = back.Scenarios[0].Values("itl.p75")
	require.NoError(t, err)
	assert.InDelta(t, 1.0, got[0], 0.002)

	// Without WithPercentiles the result is as before: no map at all.
	b := NewAggregator(SLO{}, false, 0)
	b.Add(rec(0, 5, 1, 3))
	data, err := json.Marshal(b.Summary(1).TTFT)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "percentiles")
}

func sortedKeys(m map[string]float64) []string {
	var out []string
	for _, k := range []string{"p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99", "p200"} {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// A result from before the percentiles key (the committed baselines) still
// reads, lists the default five, and gives any other percentile from its
// histograms: the figure the aggregator would have taken.
func TestOldResultPercentilesFromHistograms(t *testing.T) {
	old, err := Read("../../baselines/chat-c8.json")
	require.NoError(t, err)
	assert.Equal(t, []string{"p50", "p90", "p95", "p99", "p99.9"}, old.PercentileNames())
	s := &old.Scenarios[0]
	p99, err := s.Values("ttft.p99")
	require.NoError(t, err)
	p9999, err := s.Values("ttft.p99.99")
	require.NoError(t, err)
	p75, err := s.Values("ttft.p75")
	require.NoError(t, err)
	for i, r := range s.Repetitions {
		assert.GreaterOrEqual(t, p9999[i], p99[i], "repetition %d", r.Index)
		assert.LessOrEqual(t, p9999[i], r.TTFT.Max, "repetition %d", r.Index)
		assert.LessOrEqual(t, p75[i], r.TTFT.P90, "repetition %d", r.Index)
		assert.GreaterOrEqual(t, p75[i], r.TTFT.P50, "repetition %d", r.Index)
		h, err := DecodeHistogram(r.Histograms[HistTTFT])
		require.NoError(t, err)
		assert.Equal(t, float64(h.ValueAtQuantile(99.99))/1e3, p9999[i])
	}
	// Without histograms, a percentile not measured is said so.
	r := s.Repetitions[0]
	r.Histograms = nil
	_, err = r.Value("ttft.p75")
	var nm *NotMeasuredError
	require.True(t, errors.As(err, &nm), "Value without histogram: %v", err)
	assert.Contains(t, err.Error(), "ttft.p75 was not measured")
}

// Validate refuses percentiles that cannot be true: a name that is no
// percentile or repeats a field, a negative value, percentiles falling
// with their rank, one above the maximum, a bad list.
func TestValidatePercentiles(t *testing.T) {
	with := func(pcts map[string]any) func(m map[string]any) {
		return func(m map[string]any) { rep0(m)["ttft_ms"].(map[string]any)["percentiles"] = pcts }
	}
	cases := []struct {
		name   string
		change func(m map[string]any)
		want   string
	}{
		{"below its rank", with(map[string]any{"p99.99": 29, "p75": 22}), "scenarios[0].repetitions[0].ttft_ms.percentiles.p99.99: want at least p99.9 (30), got 29: percentiles rise with their rank"},
		{"above the next", with(map[string]any{"p75": 26}), "scenarios[0].repetitions[0].ttft_ms.p90: want at least p75 (26), got 25"},
		{"above max", with(map[string]any{"p99.99": 31}), "scenarios[0].repetitions[0].ttft_ms.percentiles.p99.99: want at most max (30), got 31"},
		{"not a percentile", with(map[string]any{"p100": 30}), "scenarios[0].repetitions[0].ttft_ms.percentiles: want percentiles p50 to p99.99 by name: \"p100\" is not a percentile perfgate measures"},
		{"hostile name", with(map[string]any{"p75\n::error::x": 1}), `scenarios[0].repetitions[0].ttft_ms.percentiles: want percentiles p50 to p99.99 by name: "p75\n::error::x" is not a percentile`},
		{"a field's", with(map[string]any{"p99.9": 30}), "scenarios[0].repetitions[0].ttft_ms.percentiles.p99.9: p99.9 has a field of its own (p99_9)"},
		{"negative", with(map[string]any{"p75": -1}), "scenarios[0].repetitions[0].ttft_ms.percentiles.p75: want a finite number >= 0, got -1"},
		{"bad list", func(m map[string]any) { m["percentiles"] = []any{"p50", "p9x"} }, `percentiles[1]: "p9x" is not a percentile: want p50 to p99.99`},
		{"list too long", func(m map[string]any) {
			m["percentiles"] = []any{"p50", "p51", "p52", "p53", "p54", "p55", "p56", "p57", "p58", "p59", "p60", "p61", "p62"}
		}, `percentiles: at most 12 percentiles, got 13`},
		{"list twice", func(m map[string]any) { m["percentiles"] = []any{"p50", "p50"} }, `percentiles[1]: p50 is listed twice`},
		{"list descending", func(m map[string]any) { m["percentiles"] = []any{"p99", "p50"} }, `percentiles[1]: want ascending percentiles, got p50 after p99`},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := minimal(t)
			tc.change(m)
			data, err := json.Marshal(m)
			require.NoError(t, err)
			path := filepath.Join(dir, "r.json")
			require.NoError(t, os.WriteFile(path, data, 0o644))
			_, err = Read(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	m := minimal(t)
	with(map[string]any{"p75": 22, "p99.99": 30})(m)
	m["percentiles"] = []any{"p50", "p75", "p99.99"}
	data, err := json.Marshal(m)
	require.NoError(t, err)
	_, err = Decode(data, "r.json")
	assert.NoError(t, err, "ascending percentiles up to the max")
}
