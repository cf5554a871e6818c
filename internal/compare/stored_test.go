package compare

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// A baseline committed long ago may record a gate on a metric this perfgate
// no longer knows (renamed or retired). It still reads and compares: that
// gate is left out with a warning, every other gate is tested. (Before the
// result kept gates as text, reading such a file failed on the unknown
// metric, and no comparison with it was possible.)
func TestCompareUnknownStoredMetric(t *testing.T) {
	data, err := os.ReadFile("../result/testdata/v1/chat-c8.json")
	require.NoError(t, err)
	old := []byte(`"metric": "tpot.p99"`)
	require.Equal(t, 1, bytes.Count(data, old), "the v1 baseline gates tpot.p99 once")
	data = bytes.Replace(data, old, []byte(`"metric": "tpot.p999"`), 1)

	base, err := result.Decode(data, "baselines/chat-c8.json")
	require.NoError(t, err, "a stored gate on an unknown metric leaves the file readable")

	// Compared with itself (A/A), its recorded gates are the ones applied.
	v, err := Compare([]*result.Result{base}, base, Options{})
	require.NoError(t, err)
	sc := v.Scenarios[0]
	assert.Contains(t, sc.Warnings, "not gated: unknown metric tpot.p999 (a gate the result recorded; this perfgate has no such metric)")
	var gated []string
	for _, g := range sc.Gates {
		gated = append(gated, g.Metric)
	}
	slices.Sort(gated)
	assert.Equal(t, []string{"e2e.p99", "error_rate", "goodput", "output_throughput", "ttft.p99"}, gated)
	assert.Equal(t, stat.Pass, v.Outcome)
}

// What a result records of a gate cannot always become a gate again; each
// case is a warning naming the gate, never an error.
func TestStoredGates(t *testing.T) {
	tests := []struct {
		name    string
		stored  result.Gate
		quality bool
		warning string
	}{
		{"unknown metric", result.Gate{Metric: "ttft.p42", Tolerance: "+10%"}, false,
			"not gated: unknown metric ttft.p42 (a gate the result recorded; this perfgate has no such metric)"},
		{"long unknown name", result.Gate{Metric: strings.Repeat("x", 100), Tolerance: "+10%"}, false,
			"not gated: unknown metric " + strings.Repeat("x", 64) + "... (a gate the result recorded; this perfgate has no such metric)"},
		{"unreadable tolerance", result.Gate{Metric: "ttft.p99", Tolerance: "+5 bananas"}, false,
			`not gated: ttft.p99: the result's recorded tolerance cannot be read: tolerance "+5 bananas": want a percentage or a duration, e.g. +10% or +20ms`},
		{"quality metric among a scenario's gates", result.Gate{Metric: "accuracy", Tolerance: "-2 points"}, false,
			"not gated: accuracy is a quality metric, gated per eval suite, but the result recorded it among the other kind's gates"},
		{"scenario metric among a suite's gates", result.Gate{Metric: "ttft.p99", Tolerance: "+10%"}, true,
			"not gated: ttft.p99 is a latency, throughput or telemetry metric, gated per scenario, but the result recorded it among the other kind's gates"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gates, warnings := storedGates([]result.Gate{tt.stored}, tt.quality)
			assert.Empty(t, gates)
			assert.Equal(t, []string{tt.warning}, warnings)
		})
	}
	_, warnings := storedGates([]result.Gate{{Metric: "ttft.p99", Tolerance: "+" + strings.Repeat("9", 1<<20) + " bananas"}}, false)
	require.Len(t, warnings, 1)
	assert.LessOrEqual(t, len(warnings[0]), 400, "a huge tolerance is cut in the warning")
}

// Gates survive a trip through a result file: recorded as text, read back
// as the same gates.
func TestStoredGatesRoundTrip(t *testing.T) {
	cfg := &config.Config{Gates: map[string]string{"itl.p50": "+2ms", "error_rate": "+1 points", "output_throughput": "-100 tok/s", "gpu_memory_peak": "+2 GiB"}}
	want := cfg.GatesOf(config.Scenario{})
	data, err := json.Marshal(config.ResultGates(want))
	require.NoError(t, err)
	var stored []result.Gate
	require.NoError(t, json.Unmarshal(data, &stored))
	got, warnings := storedGates(stored, false)
	assert.Empty(t, warnings)
	assert.Equal(t, want, got)

	got, warnings = storedGates([]result.Gate{}, false)
	assert.Equal(t, []config.Gate{}, got, "every gate off stays every gate off")
	assert.Empty(t, warnings)
}

// An eval suite's recorded gate on an unknown metric is left out with a
// warning on the suite; its other gates are tested.
func TestCompareUnknownStoredQualityMetric(t *testing.T) {
	cand := suiteAt(200, 0.9, config.QualityInterleaved)
	cand.Gates = []result.Gate{{Metric: "accuracy", Tolerance: "-5 points"}, {Metric: "exactness", Tolerance: "-5 points"}}
	v, err := Compare([]*result.Result{withSuite(suiteAt(200, 0.9, config.QualityInterleaved))}, withSuite(cand), Options{})
	require.NoError(t, err)
	q := v.Scenarios[0].Quality[0]
	require.Len(t, q.Gates, 1)
	assert.Equal(t, "accuracy", q.Gates[0].Metric)
	assert.Contains(t, q.Warnings, "not gated: unknown metric exactness (a gate the result recorded; this perfgate has no such metric)")
}
