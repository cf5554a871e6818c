package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// load.overload: fail is the default, hashed and recorded as if left out;
// measure is declared in the result and changes the hash.
func TestLoadOverload(t *testing.T) {
	parse := func(extra string) *Config {
		t.Helper()
		c, err := Parse([]byte(`
scenarios:
  - name: chat
    workload: testdata/workloads/chat.jsonl
    load: {type: poisson, rate: 12`+extra+`}
`), "perfgate.yaml")
		require.NoError(t, err)
		return c
	}
	none, fail, measure := parse(""), parse(", overload: fail"), parse(", overload: measure")
	assert.Equal(t, none.Hash(), fail.Hash())
	assert.NotEqual(t, none.Hash(), measure.Hash())
	assert.False(t, fail.Scenarios[0].Load.Overloads())
	assert.True(t, measure.Scenarios[0].Load.Overloads())
	assert.Empty(t, fail.Scenarios[0].Load.Result().Overload)
	assert.Equal(t, "measure", measure.Scenarios[0].Load.Result().Overload)
}
