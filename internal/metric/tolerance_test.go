package metric

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The telemetry and cost metrics take tolerances in their own units, with
// the sign of their bad direction.
func TestParseToleranceTelemetryUnits(t *testing.T) {
	tests := []struct {
		metric, text string
		relative     bool
		value        float64
		err          string
	}{
		{"gpu_memory_peak", "+5%", true, 0.05, ""},
		{"gpu_memory_peak", "+512 MiB", false, 512, ""},
		{"gpu_memory_peak", "+2 GiB", false, 2048, ""},
		{"gpu_memory_peak", "+2GiB", false, 2048, ""},
		{"gpu_memory_peak", "+2 GB", false, 0, "want e.g. +5% or +512 MiB or +2 GiB"},
		{"gpu_memory_peak", "-5%", false, 0, "lower-is-better, so its tolerance is how far it may grow: +5%"},
		{"gpu_power", "+20 W", false, 20, ""},
		{"energy_per_token", "+0.05 J/tok", false, 0.05, ""},
		{"tokens_per_joule", "-1 tok/J", false, 1, ""},
		{"tokens_per_joule", "+1 tok/J", false, 0, "higher-is-better"},
		{"cost_per_mtok", "+0.05 $/Mtok", false, 0.05, ""},
		{"cost_per_mtok_goodput", "+10%", true, 0.1, ""},
		{"waiting_peak", "+4", false, 4, ""},
		{"preemptions", "+4 req", false, 0, "want e.g. +10% or +4"},
		{"kv_cache_peak", "+5 points", false, 0.05, ""},
		{"prefix_cache_hit_rate", "-5 points", false, 0.05, ""},
		{"ttft_overhead", "+2ms", false, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.metric+" "+tt.text, func(t *testing.T) {
			m, err := Lookup(tt.metric)
			require.NoError(t, err)
			tol, err := ParseTolerance(m, tt.text)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.relative, tol.Relative)
			assert.InDelta(t, tt.value, tol.Value, 1e-12)
		})
	}
}

// Every metric has a unit, a title, a group and a doc line; telemetry
// metrics say so.
func TestCatalogueComplete(t *testing.T) {
	for _, m := range append(All(), QualityMetrics()...) {
		assert.NotEmpty(t, m.Title, m.Name)
		assert.NotEmpty(t, m.Unit(), m.Name)
		assert.NotEmpty(t, m.Group, m.Name)
		if !m.Quality {
			assert.NotEmpty(t, m.Doc, m.Name)
		}
	}
	for name, want := range map[string]bool{"gpu_memory_peak": true, "cost_per_mtok": true, "kv_cache_peak": true, "ttft.p99": false, "goodput": false} {
		m, err := Lookup(name)
		require.NoError(t, err)
		assert.Equal(t, want, m.Telemetry(), name)
	}
	m, err := Lookup("gpu_memory_peak")
	require.NoError(t, err)
	assert.Equal(t, "MiB", m.Unit())
}

// docs/gating.md lists every telemetry metric with its unit and direction,
// so the reference cannot fall behind the catalogue.
func TestGatingDocsListTelemetryMetrics(t *testing.T) {
	doc, err := os.ReadFile("../../docs/gating.md")
	require.NoError(t, err)
	for _, m := range All() {
		if !m.Telemetry() {
			continue
		}
		row := fmt.Sprintf("| `%s` | %s | %s | %s |", m.Name, m.Unit(), m.Better(), m.Doc)
		assert.Contains(t, string(doc), row, "docs/gating.md row for %s", m.Name)
	}
}
