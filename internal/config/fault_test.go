package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const faultConfig = `target: {base_urls: ["http://127.0.0.1:8001", "http://127.0.0.1:8002", "https://replica-3.internal"]}
stack:
  kind: process
  process: {command: [perfgate, sim, --addr, "127.0.0.1:${PERFGATE_PORT}"]}
scenarios:
  - name: lost
    synth: {requests: 64, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: poisson, rate: 8}
    duration: 1m
    slo: {ttft: 500ms}
    fault: {kill: replica, at: 20s}
    gates: {recovery: +5s}
`

// A fault scenario on replicas: base_url is the first replica, the
// recovery window takes its default, the killed replica is the last and is
// restarted, and a recovery gate applies.
func TestFaultDefaults(t *testing.T) {
	c, err := Parse([]byte(faultConfig), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8001", c.Target.BaseURL)
	assert.Len(t, c.Target.Replicas(), 3)
	s := c.Scenarios[0]
	require.NotNil(t, s.Fault)
	assert.True(t, s.Disturbed())
	assert.True(t, s.Fault.Restarts())
	assert.Equal(t, 2, s.Fault.ReplicaIndex(3), "the last")
	assert.Equal(t, DefaultRecoveryWindow, s.Load.RecoveryWindow)
	assert.Equal(t, 20*time.Second, s.Fault.At)
	var gated []string
	for _, g := range c.GatesOf(s) {
		gated = append(gated, g.Metric)
	}
	assert.Contains(t, gated, "recovery")
	assert.Equal(t, "443", ReplicaPort("https://replica-3.internal"))
	assert.Equal(t, "8002", ReplicaPort(c.Target.BaseURLs[1]))
	assert.True(t, c.Stack.Process.UsesPort())

	// The fault is part of what is measured: a config without it hashes
	// otherwise.
	plain, err := Parse([]byte(strings.TrimSuffix(faultConfig, "    fault: {kill: replica, at: 20s}\n    gates: {recovery: +5s}\n")), "p.yaml")
	require.NoError(t, err)
	assert.Nil(t, plain.Scenarios[0].Fault)
	assert.NotEqual(t, plain.Hash(), c.Hash())
}

// Replicas behind an external stack are routed over without a fault; a
// single base_url is one replica.
func TestReplicasWithoutAFault(t *testing.T) {
	c, err := Parse([]byte(`target: {base_urls: ["http://127.0.0.1:8001", "http://127.0.0.1:8002"]}
scenarios:
  - name: chat
    synth: {requests: 64, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: closed, concurrency: 4}
`), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8001", c.Target.BaseURL)
	assert.False(t, c.Scenarios[0].Disturbed())
	assert.Zero(t, c.Scenarios[0].Load.RecoveryWindow, "no recovery to look for")
	one := Target{BaseURL: "http://127.0.0.1:8000"}
	assert.Equal(t, []string{"http://127.0.0.1:8000"}, one.Replicas())
}

// --target names one server: beside replicas it is refused, not routed
// past them.
func TestQuickTargetRefusedBesideReplicas(t *testing.T) {
	c, err := Parse([]byte(faultConfig), "p.yaml")
	require.NoError(t, err)
	err = Quick{Target: "http://127.0.0.1:9000"}.Apply(c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "target.base_urls")
	assert.Equal(t, "http://127.0.0.1:8001", c.Target.BaseURL, "unchanged")
}
