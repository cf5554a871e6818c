package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/workload"
)

func TestThinkTime(t *testing.T) {
	c, err := Parse([]byte(scenarioYAML("    load: {concurrency: 2, think_time: \"lognormal:mean=3000,stddev=2000\"}")), "p.yaml")
	require.NoError(t, err)
	d, err := c.Scenarios[0].Load.ThinkDist()
	require.NoError(t, err)
	assert.Equal(t, &workload.Dist{Type: workload.DistLognormal, Mean: 3000, Stddev: 2000}, d, "ThinkDist()")

	none, err := Load{}.ThinkDist()
	assert.NoError(t, err)
	assert.Nil(t, none, "ThinkDist() of no think_time")
}

func TestThinkTimeErrors(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{`"lognormal:mean=3000"`, `p.yaml:4:40: scenarios[0].load.think_time: want a distribution of milliseconds like lognormal:mean=3000,stddev=2000: lognormal: missing parameter "stddev"; want mean, stddev, min, max`},
		{`"empirical:file=x.txt"`, `p.yaml:4:40: scenarios[0].load.think_time: empirical is not supported for a think time; want fixed, uniform, normal or lognormal`},
		{`"3s"`, `p.yaml:4:40: scenarios[0].load.think_time: want a distribution of milliseconds like lognormal:mean=3000,stddev=2000: unknown distribution "3s"; want one of fixed, uniform, normal, lognormal, empirical`},
	} {
		_, err := Parse([]byte(scenarioYAML("    load: {concurrency: 2, think_time: "+tc.value+"}")), "p.yaml")
		require.Error(t, err, tc.value)
		assert.Equal(t, tc.want, err.Error(), "Parse(think_time: %s)", tc.value)
	}
}
