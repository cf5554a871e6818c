package baseline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test -update")
	assert.Equal(t, string(want), string(got), "output differs from %s (go test -update rewrites it)", path)
}

func commit(i int) string {
	sum := sha256.Sum256([]byte{byte(i)})
	return hex.EncodeToString(sum[:20])
}

func ptr(v float64) *float64 { return &v }

// historyEntries is a made-up history: chat-c8 slows down from its eighth
// run on, when vLLM was upgraded; batch is steady.
func historyEntries() []Entry {
	day := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	ttft := []float64{61.8, 62.3, 61.5, 62.0, 62.6, 61.9, 62.2, 80.4, 81.0, 79.8, 80.6, 80.2}
	var out []Entry
	for i, v := range ttft {
		e := Entry{Scenario: "chat-c8", Commit: commit(i), Date: day.AddDate(0, 0, i), Identity: "sha256:aaaa",
			Engine: "vllm", Version: "0.6.3", Model: "llama-3-8b", Repetitions: 3,
			Metrics: map[string]Summary{
				"ttft.p99":          {Median: v, N: 3},
				"output_throughput": {Median: 1600 - 3*(v-60), N: 3},
			}}
		if i >= 7 {
			e.Identity, e.Version = "sha256:bbbb", "0.6.4"
		}
		if i%4 == 1 { // a run of eight repetitions: the interval is bounded
			e.Repetitions = 8
			e.Metrics["ttft.p99"] = Summary{Median: v, Lo: ptr(v - 0.8), Hi: ptr(v + 1.1), N: 8}
		}
		out = append(out, e)
	}
	// batch was promoted on its own days, interleaved in the file.
	for i, v := range []float64{410, 405, 415, 408} {
		out = append(out, Entry{Scenario: "batch", Commit: commit(20 + i), Date: day.AddDate(0, 0, 2*i).Add(time.Hour),
			Identity: "sha256:cccc", Engine: "vllm", Version: "0.6.3", Model: "llama-3-8b", Repetitions: 5,
			Metrics: map[string]Summary{"ttft.p99": {Median: v, N: 5}}})
	}
	// An entry from a hand edit, out of date order: shown in date order.
	out[3], out[4] = out[4], out[3]
	return out
}

func TestWriteHistoryGolden(t *testing.T) {
	tests := []struct {
		golden string
		opts   HistoryOptions
	}{
		{"history.golden", HistoryOptions{}},
		{"history-last.golden", HistoryOptions{Scenario: "chat-c8", Last: 6}},
		{"history-before-change.golden", HistoryOptions{Scenario: "chat-c8", Last: 4}},
		{"history-throughput.golden", HistoryOptions{Metric: "output_throughput", Scenario: "chat-c8"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, WriteHistory(&buf, historyEntries(), tt.opts))
			golden(t, tt.golden, buf.Bytes())
		})
	}
}

func TestWriteHistoryErrors(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
		opts    HistoryOptions
		want    string
	}{
		{"unknown metric", historyEntries(), HistoryOptions{Metric: "tfft.p99"}, `unknown metric "tfft.p99" (did you mean "ttft.p99"?)`},
		{"metric not kept", historyEntries(), HistoryOptions{Metric: "itl.p50"}, "history keeps only ttft.p50, ttft.p99"},
		{"negative last", historyEntries(), HistoryOptions{Last: -1}, "last -1 runs"},
		{"unknown scenario", historyEntries(), HistoryOptions{Scenario: "chat-c9"}, "no history for scenario chat-c9 (did you mean chat-c8?)"},
		{"unlike scenario", historyEntries(), HistoryOptions{Scenario: "embeddings"}, "no history for scenario embeddings (history has batch, chat-c8)"},
		{"empty history and a scenario", nil, HistoryOptions{Scenario: "chat-c8"}, "the history is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := WriteHistory(&buf, tt.entries, tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestWriteHistoryEmpty(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteHistory(&buf, nil, HistoryOptions{}))
	assert.Equal(t, "no history yet (each `perfgate baseline promote` adds to it)\n", buf.String())
}

func TestWriteShowGolden(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	promoted := testResult(scenario("chat-c8", 30, 31, 29), scenario("batch", 200, 210, 205, 198))
	_, err := store.Promote(promoted, Meta{Commit: commit(1), Date: time.Date(2025, 3, 2, 9, 30, 0, 0, time.UTC)})
	require.NoError(t, err)
	// A later run of chat-c8 recorded in the history but not promoted: the
	// row still shows the commit chat-c8 was promoted from.
	later := testResult(scenario("chat-c8", 40, 41, 39))
	e, err := NewEntry(later, &later.Scenarios[0], Meta{Commit: commit(2)})
	require.NoError(t, err)
	// A baseline written by hand, with no history, from an untrusted server.
	odd := testResult(scenario("odd", 50))
	odd.Identity.Server = result.Server{Engine: "sglang", Version: "0.3\x1b[31m"}
	odd.Identity.Target.Model = ""
	require.NoError(t, result.Write(store.Path("odd"), odd))

	baselines, err := store.List()
	require.NoError(t, err)
	history, err := store.History()
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteShow(&buf, baselines, append(history, e)))
	golden(t, "show.golden", buf.Bytes())

	buf.Reset()
	require.NoError(t, WriteShow(&buf, nil, nil))
	assert.Equal(t, "no baselines (promote one with `perfgate baseline promote RESULT`)\n", buf.String())
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		values []float64
		want   string
	}{
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8}, "▁▂▃▄▅▆▇█"},
		{[]float64{10, 10, 10}, "▅▅▅"},
		{[]float64{0, 100, 50}, "▁█▅"},
		{[]float64{3}, "▅"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Sparkline(tt.values), "%v", tt.values)
	}
}

func TestFormatValue(t *testing.T) {
	for _, tt := range []struct {
		metric string
		v      float64
		want   string
	}{
		{"ttft.p99", 41.234, "41.23"},
		{"output_throughput", 1600.04, "1600.0"},
		{"goodput", 7.256, "7.26"},
		{"error_rate", 0.0123, "1.23"},
		{"kv_cache_peak", 0.825, "82.50"},
		{"preemptions", 3, "3"},
		{"waiting_peak", 2.5, "2.5"},
		{"gpu_memory_peak", 71234.4, "71234"},
		{"gpu_power", 612.34, "612.3"},
		{"energy_per_token", 0.41234, "0.412"},
		{"tokens_per_joule", 2.4567, "2.46"},
		{"cost_per_mtok", 0.03521, "0.0352"},
		{"cost_per_mtok_input", 123.456, "123"},
	} {
		m, err := metric.Lookup(tt.metric)
		require.NoError(t, err)
		assert.Equal(t, tt.want, formatValue(m, tt.v), "formatValue(%s, %v)", tt.metric, tt.v)
	}
}

// TestFormatChangeSharesInPoints: the history's change column, trend and
// change points give a share's change in percentage points (2% to 4% is
// +2.00 pts, not +100%; from 0 it is still a change), everything else in
// percent.
func TestFormatChangeSharesInPoints(t *testing.T) {
	for _, tt := range []struct {
		metric string
		a, b   float64
		want   string
	}{
		{"error_rate", 0.02, 0.04, "+2.00 pts"},
		{"error_rate", 0, 0.01, "+1.00 pts"},
		{"error_rate", 0.03, 0.03, "+0.00 pts"},
		{"ttft.p99", 100, 150, "+50.0%"},
		{"ttft.p99", 0, 5, ""},
	} {
		m, err := metric.Lookup(tt.metric)
		require.NoError(t, err)
		assert.Equal(t, tt.want, FormatChange(m, tt.a, tt.b), "%s %v → %v", tt.metric, tt.a, tt.b)
	}
}
