package metric

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a percentile may be written as: p50 to p99.99, at most two decimals,
// one spelling each.
func TestParsePercentile(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  string // a part of the error; "" for none
	}{
		{"p50", 50, ""}, {"p75", 75, ""}, {"p90", 90, ""}, {"p99", 99, ""},
		{"p99.9", 99.9, ""}, {"p99.99", 99.99, ""}, {"p99.5", 99.5, ""}, {"p50.01", 50.01, ""},
		{"p95.05", 95.05, ""},
		{"p100", 0, "p100 is the maximum"},
		{"p49", 0, "below p50"}, {"p49.99", 0, "below p50"}, {"p0", 0, "below p50"},
		{"p99.999", 0, "more than two decimals"},
		{"p9x", 0, "not a percentile"}, {"p", 0, "not a percentile"}, {"", 0, "not a percentile"},
		{"99", 0, "not a percentile"}, {"p99.", 0, "not a percentile"}, {"p.9", 0, "not a percentile"},
		{"p-99", 0, "not a percentile"}, {"p+99", 0, "not a percentile"}, {"p99.9.9", 0, "not a percentile"},
		{"p 99", 0, "not a percentile"}, {"mean", 0, "not a percentile"}, {"p1e2", 0, "not a percentile"},
		{"P99", 0, "write p99"},
		{"p99.0", 0, "is written p99"}, {"p99.90", 0, "is written p99.9"}, {"p099", 0, "is written p99"},
		{"p99.00", 0, "is written p99"},
	}
	for _, tt := range tests {
		got, err := ParsePercentile(tt.in)
		if tt.err != "" {
			require.Error(t, err, "ParsePercentile(%q) = %v, want an error", tt.in, got)
			assert.Contains(t, err.Error(), tt.err, "ParsePercentile(%q)", tt.in)
			assert.False(t, IsPercentile(tt.in), "IsPercentile(%q)", tt.in)
			continue
		}
		require.NoError(t, err, "ParsePercentile(%q)", tt.in)
		assert.InDelta(t, tt.want, got, 1e-9, "ParsePercentile(%q) = %v, want %v", tt.in, got, tt.want)
		h, _ := parseHundredths(tt.in)
		assert.Equal(t, tt.in, percentileName(h), "the name of %d hundredths", h)
	}
}

// Every latency percentile is a metric, of every family, beyond the
// catalogue's five; a misspelt one says why.
func TestLookupPercentiles(t *testing.T) {
	for _, name := range []string{"ttft.p99.99", "itl.p75", "e2e.p50.5", "tpot.p99.9"} {
		m, err := Lookup(name)
		require.NoError(t, err, "Lookup(%q)", name)
		assert.Equal(t, name, m.Name)
		assert.Equal(t, Latency, m.Kind)
		assert.False(t, m.HigherIsBetter)
		assert.Equal(t, GroupLatency, m.Group)
	}
	m, _ := Lookup("ttft.p99.99")
	assert.Equal(t, "TTFT p99.99", m.Title)
	for name, want := range map[string]string{
		"ttft.p99.999": "more than two decimals",
		"ttft.p100":    "p100 is the maximum",
		"itl.p9x":      "not a percentile",
		"e2e.P99":      "write p99",
		"gpu.p99":      "unknown metric",
	} {
		_, err := Lookup(name)
		require.Error(t, err, "Lookup(%q)", name)
		assert.Contains(t, err.Error(), want, "Lookup(%q)", name)
	}
}

// A percentile outside the catalogue sorts among its family's, by value,
// and the catalogue's order is unchanged.
func TestOrderPercentiles(t *testing.T) {
	names := []string{"ttft.mean", "ttft.p99.99", "e2e.p75", "ttft.p50", "ttft.p75", "ttft.p99.9", "output_throughput", "ttft.p99.95", "tpot.p50"}
	slices.SortFunc(names, func(a, b string) int { return Order(a) - Order(b) })
	assert.Equal(t, []string{"ttft.p50", "ttft.p75", "ttft.p99.9", "ttft.p99.95", "ttft.p99.99", "ttft.mean", "tpot.p50", "e2e.p75", "output_throughput"}, names)
	all := All()
	for i := 1; i < len(all); i++ {
		assert.Less(t, Order(all[i-1].Name), Order(all[i].Name), "%s before %s", all[i-1].Name, all[i].Name)
	}
}

// AllWith is the catalogue with a result's own percentiles in place of the
// defaults; with the defaults, it is the catalogue.
func TestAllWith(t *testing.T) {
	assert.Equal(t, All(), AllWith(DefaultPercentiles))
	var latency []string
	for _, m := range AllWith([]string{"p99.99", "p75", "bad", "p75"}) {
		if m.Group == GroupLatency && !m.PerStart {
			latency = append(latency, m.Name)
		}
	}
	assert.Equal(t, []string{"ttft.p75", "ttft.p99.99", "ttft.mean", "tpot.p75", "tpot.p99.99", "tpot.mean",
		"itl.p75", "itl.p99.99", "itl.mean", "e2e.p75", "e2e.p99.99", "e2e.mean",
		"ttfa.p50", "ttfa.p95", "ttfa.p99", "recovery"}, latency, "time to first answer is not a family: its three are fixed; a step load's recovery is one figure")
}

// CheckPercentiles, the one check of a percentiles list that configs, the
// flag and results share: each problem with the item's index (and the
// earlier item it repeats or follows), the list's own problems alone.
func TestCheckPercentiles(t *testing.T) {
	type got struct {
		Index, Earlier int
		Msg            string
	}
	check := func(list []string, ascending bool) []got {
		var out []got
		for _, err := range CheckPercentiles(list, ascending) {
			var pe *PercentileError
			require.ErrorAs(t, err, &pe)
			out = append(out, got{pe.Index, pe.Earlier, err.Error()})
		}
		return out
	}
	assert.Empty(t, check([]string{"p99", "p50", "p99.99"}, false))
	assert.Empty(t, check([]string{"p50", "p99", "p99.99"}, true))
	assert.Equal(t, []got{{-1, -1, "list at least one percentile (p50 to p99.99), or leave it out for the defaults (p50, p90, p95, p99, p99.9)"}}, check(nil, false))
	long := make([]string, 0, MaxPercentiles+1)
	for i := range MaxPercentiles + 1 {
		long = append(long, percentileName(5000+i*100))
	}
	assert.Equal(t, []got{{-1, -1, "at most 12 percentiles, got 13"}}, check(long, true))
	assert.Equal(t, []got{
		{1, -1, `"p9x" is not a percentile: want p50 to p99.99, at most two decimals (p75, p99.9, p99.99)`},
		{2, 0, "p99 is listed twice"},
		{3, 0, "want ascending percentiles, got p50 after p99"},
		{4, -1, `"P99" is not a percentile: write p99`},
	}, check([]string{"p99", "p9x", "p99", "p50", "P99"}, true))
	assert.Equal(t, []got{{2, 0, "p99 is listed twice"}}, check([]string{"p99", "p50", "p99"}, false))
}
