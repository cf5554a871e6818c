package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// load.arrivals: same is the default, hashed and recorded as if left out;
// fresh is recorded in the result and changes the hash.
func TestLoadArrivals(t *testing.T) {
	parse := func(extra string) *Config {
		t.Helper()
		c, err := Parse([]byte(`
scenarios:
  - name: chat
    workload: testdata/workloads/chat.jsonl
    load: {type: gamma, rate: 4, burstiness: 0.5`+extra+`}
`), "perfgate.yaml")
		require.NoError(t, err)
		return c
	}
	none, same, fresh := parse(""), parse(", arrivals: same"), parse(", arrivals: fresh")
	assert.Equal(t, none.Hash(), same.Hash())
	assert.NotEqual(t, none.Hash(), fresh.Hash())
	assert.False(t, same.Scenarios[0].Load.FreshArrivals())
	assert.True(t, fresh.Scenarios[0].Load.FreshArrivals())
	assert.Empty(t, same.Scenarios[0].Load.Result().Arrivals)
	assert.Equal(t, "fresh", fresh.Scenarios[0].Load.Result().Arrivals)
}
