package config

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

func TestGatesMergeDefaultsTopLevelAndScenario(t *testing.T) {
	c, err := Parse([]byte(`
repetitions: {min: 5, max: 15}
gates:
  ttft.p99: +20%
  cold_start: off
  itl.p50: +2ms
scenarios:
  - name: a
    synth: {requests: 10, input: {type: fixed, value: 10}, output: {type: fixed, value: 10}}
    load: {concurrency: 2}
    gates: {goodput: off, tpot.p99: 0, output_throughput: -100 tok/s}
  - name: b
    synth: {requests: 10, input: {type: fixed, value: 10}, output: {type: fixed, value: 10}}
    load: {concurrency: 2}
`), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, Repetitions{Min: 5, Max: 15}, c.Repetitions)
	assert.Empty(t, c.Warnings)

	text := func(gs []Gate) map[string]string {
		m := map[string]string{}
		for _, g := range gs {
			m[g.Metric] = g.Tolerance.Text
		}
		return m
	}
	a := c.GatesOf(c.Scenarios[0])
	assert.Equal(t, map[string]string{
		"ttft.p95": "+10%", "ttft.p99": "+20%", "tpot.p99": "0", "e2e.p99": "+10%", "itl.p50": "+2ms",
		"output_throughput": "-100 tok/s", "error_rate": "+1 points",
	}, text(a))
	b := c.GatesOf(c.Scenarios[1])
	assert.Equal(t, "+20%", text(b)["ttft.p99"])
	assert.Equal(t, "-5%", text(b)["goodput"])
	assert.NotContains(t, text(b), "cold_start")

	// Report order: latencies family by family, then rates.
	var order []string
	for _, g := range a {
		order = append(order, g.Metric)
	}
	assert.Equal(t, []string{"ttft.p95", "ttft.p99", "tpot.p99", "itl.p50", "e2e.p99", "output_throughput", "error_rate"}, order)

	// Absolute tolerances are in the metric's unit.
	for _, g := range a {
		switch g.Metric {
		case "itl.p50":
			assert.False(t, g.Tolerance.Relative)
			assert.InDelta(t, 2.0, g.Tolerance.Value, 1e-12) // ms
		case "error_rate":
			assert.InDelta(t, 0.01, g.Tolerance.Value, 1e-12) // 1 point
		case "output_throughput":
			assert.InDelta(t, 100.0, g.Tolerance.Value, 1e-12)
		}
	}

	// A result records each gate as its metric and its tolerance as written.
	recorded := ResultGates(a)
	require.Len(t, recorded, len(a))
	for i, g := range a {
		assert.Equal(t, result.Gate{Metric: g.Metric, Tolerance: g.Tolerance.Text}, recorded[i])
	}
	assert.Equal(t, []result.Gate{}, ResultGates([]Gate{}), "every gate off stays an empty list")
	assert.Nil(t, ResultGates(nil))
}

func TestRepetitionsJSON(t *testing.T) {
	for _, r := range []Repetitions{{5, 5}, {5, 15}} {
		data, err := json.Marshal(r)
		require.NoError(t, err)
		var back Repetitions
		require.NoError(t, json.Unmarshal(data, &back))
		assert.Equal(t, r, back)
	}
	data, _ := json.Marshal(Repetitions{5, 5})
	assert.Equal(t, "5", string(data), "a fixed count hashes as it did before ranges")
}

func TestParseTail(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{"", 0, false}, {"p99", 0.99, false}, {" p95 ", 0.95, false}, {"p99.9", 0.999, false},
		{"p50", 0.5, false}, {"off", 0, false},
		{"p98", 0.98, false}, {"p99.99", 0.9999, false}, {"p99.999", 0, true}, {"p100", 0, true}, {"p49", 0, true}, {"mean", 0, true}, {"99", 0, true}, {"0.99", 0, true}, {"P99", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseTail(tt.in)
		if tt.wantErr {
			assert.Error(t, err, "ParseTail(%q)", tt.in)
			continue
		}
		require.NoError(t, err, "ParseTail(%q)", tt.in)
		assert.InDelta(t, tt.want, got, 1e-12, "ParseTail(%q) = %v, want %v", tt.in, got, tt.want)
	}
}

func TestTailNotHashed(t *testing.T) {
	a, b := Defaults(), Defaults()
	b.Compare.Tail = TailOff
	assert.Equal(t, a.Hash(), b.Hash(), "compare.tail changes how results are compared, not what is measured")
}

// A share (the error rate, KV-cache use, GPU utilisation, the prefix-cache
// hit rate) is gated in percentage points: a percentage of its baseline is
// refused, with a message that says how to write it, because against an
// error rate of 0 a relative tolerance could never decide.
func TestShareToleranceInPointsOnly(t *testing.T) {
	for _, tt := range []struct{ metric, tolerance, want string }{
		{"error_rate", "+50%", `gates.error_rate: tolerance "+50%": error_rate is a share, so its tolerance is in percentage points, not a percentage of the baseline (which may be 0): write e.g. +1 points`},
		{"error_rate", "0%", "error_rate is a share, so its tolerance is in percentage points"},
		{"kv_cache_peak", "+10%", "write e.g. +1 points"},
		{"gpu_utilization", "+5%", "gpu_utilization is a share"},
		{"prefix_cache_hit_rate", "-10%", "write e.g. -1 points"},
	} {
		t.Run(tt.metric+" "+tt.tolerance, func(t *testing.T) {
			_, err := Parse([]byte("gates:\n  "+tt.metric+": \""+tt.tolerance+"\"\nscenarios:\n  - name: s\n    synth: {requests: 10, input: {type: fixed, value: 10}, output: {type: fixed, value: 10}}\n    load: {concurrency: 1}\n"), "p.yaml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// Points, in any of their spellings, are accepted.
	for text, want := range map[string]float64{"+1 points": 0.01, "+1 point": 0.01, "+0.5 pts": 0.005, "+2 pt": 0.02, "0 points": 0} {
		c, err := Parse([]byte("gates:\n  error_rate: \""+text+"\"\nscenarios:\n  - name: s\n    synth: {requests: 10, input: {type: fixed, value: 10}, output: {type: fixed, value: 10}}\n    load: {concurrency: 1}\n"), "p.yaml")
		require.NoError(t, err, text)
		for _, g := range c.GatesOf(c.Scenarios[0]) {
			if g.Metric == "error_rate" {
				assert.False(t, g.Tolerance.Relative, text)
				assert.InDelta(t, want, g.Tolerance.Value, 1e-12, text)
			}
		}
	}
}
