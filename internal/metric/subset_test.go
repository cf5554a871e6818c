package metric

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A subset metric is its base metric of some requests: the base's unit and
// direction, a title that says which requests; a subset or base it cannot
// have is refused with what it can.
func TestLookupSubset(t *testing.T) {
	for _, c := range []struct {
		name, title, subset string
		higher              bool
	}{
		{"ttft.p95@structured", "TTFT p95 (structured)", "structured", false},
		{"tpot.p50@free", "TPOT p50 (free)", "free", false},
		{"e2e.p99.9@model:meta-llama/Llama-3.1-8B", "E2E p99.9 (model meta-llama/Llama-3.1-8B)", "model:meta-llama/Llama-3.1-8B", false},
		{"decode_throughput@structured", "decode throughput (structured)", "structured", true},
		{"error_rate@model:sql-lora", "error rate (model sql-lora)", "model:sql-lora", false},
		{"ttft.p99@model:my lora", "TTFT p99 (model my lora)", "model:my lora", false},
	} {
		m, err := Lookup(c.name)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.name, m.Name)
		assert.Equal(t, c.title, m.Title)
		assert.Equal(t, c.subset, m.Subset)
		assert.Equal(t, c.higher, m.HigherIsBetter, c.name)
	}
	for _, c := range []struct{ name, want string }{
		{"ttft.p95@vip", `unknown subset "vip"`},
		{"ttft.p95@model:", "a model's name"},
		{"ttft.p95@model:a\u0007b", "no control characters"},
		{"goodput@structured", "a subset (@structured) has the latency statistics"},
		{"cold_start@free", "not cold_start"},
		{"kv_cache_peak@free", "not kv_cache_peak"},
		{"recovery@structured", "not recovery"},
		{"ttfx.p95@free", `unknown metric "ttfx.p95"`},
	} {
		_, err := Lookup(c.name)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}

// A subset metric comes right after its base in report order.
func TestOrderSubset(t *testing.T) {
	assert.Less(t, Order("ttft.p95"), Order("ttft.p95@structured"))
	assert.Less(t, Order("ttft.p95@structured"), Order("ttft.p99"))
}
