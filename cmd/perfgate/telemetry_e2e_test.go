package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/stat"
)

// telemetryConfig is a short closed-loop scenario on the simulator with
// telemetry sampled every 100ms, GPUs read through the given nvidia-smi, a
// price, and only the given gates.
const telemetryConfig = `
target: {base_url: %q}
warmup: {method: none}
repetitions: %d
telemetry:
  interval: 100ms
  gpu: nvidia-smi
  nvidia_smi: [%q]
cost: {usd_per_gpu_hour: 3.6, gpus: 2}
gates: %s
scenarios:
  - name: chat
    synth: {requests: 24, input: {type: fixed, value: 64}, output: {type: fixed, value: 16}}
    load: {type: closed, concurrency: 8}
    slo: {ttft: 1s}
`

// noLatencyGates turns every default gate off, so that a test about
// telemetry gates does not depend on timing.
const noLatencyGates = "ttft.p95: off, ttft.p99: off, tpot.p99: off, e2e.p99: off, output_throughput: off, goodput: off, error_rate: off, cold_start: off"

// fakeSMI is the fake nvidia-smi of the telemetry package's tests.
func fakeSMI(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../internal/telemetry/testdata/fake-nvidia-smi")
	require.NoError(t, err)
	_, err = os.Stat(p)
	require.NoError(t, err, "the fake nvidia-smi is missing")
	return p
}

func telemetrySim(t *testing.T) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.StepBase = 8 * time.Millisecond
	url, _ := startSim(t, cfg)
	return url
}

// Against the simulator, every repetition carries the engine's KV-cache and
// queue telemetry and the server-side TTFT, whose difference from the
// client's is small; with a fake nvidia-smi drawing a constant 250 W on
// each of two GPUs, energy per token is 500 W × the window over its output
// tokens; and cost follows from the price.
func TestRunTelemetryAgainstSimulator(t *testing.T) {
	t.Setenv("FAKE_SMI_GPUS", "2")
	t.Setenv("FAKE_SMI_POWER", "250")
	t.Setenv("FAKE_SMI_MEMORY_USED", "40000")
	conf := writeConfig(t, fmt.Sprintf(telemetryConfig, telemetrySim(t), 3, fakeSMI(t), "{"+noLatencyGates+"}"))
	out := filepath.Join(filepath.Dir(conf), "r.json")
	var stdout, stderr bytes.Buffer
	require.NoError(t, Main(context.Background(), []string{"run", "-c", conf, "-o", out}, &stdout, &stderr), stderr.String())
	res, err := result.Read(out)
	require.NoError(t, err)

	require.NotNil(t, res.Telemetry)
	assert.True(t, res.Telemetry.Engine.Available(), "%+v", res.Telemetry.Engine)
	assert.True(t, strings.HasPrefix(res.Telemetry.Engine.Source, "vllm http://127.0.0.1:"), res.Telemetry.Engine.Source)
	assert.Contains(t, res.Telemetry.GPU.Source, "nvidia-smi")
	assert.Contains(t, stderr.String(), "engine telemetry: vllm http://127.0.0.1:")
	require.Len(t, res.Identity.GPUs, 2)
	assert.Equal(t, "NVIDIA H100 80GB HBM3", res.Identity.GPUs[0].Model)
	assert.Equal(t, "12.4", res.Identity.GPUs[0].CUDA)
	assert.NotEmpty(t, res.Identity.GPUs[1].Driver)
	require.NotNil(t, res.Cost)
	assert.Equal(t, 2, res.Cost.GPUs)

	reps := res.Scenarios[0].Repetitions
	require.Len(t, reps, 3)
	for _, r := range reps {
		e := r.Engine
		require.NotNil(t, e, "repetition %d: engine telemetry", r.Index)
		assert.Equal(t, "vllm", e.Adapter)
		assert.GreaterOrEqual(t, e.Scrapes, 2)
		require.NotNil(t, e.KVCachePeak, "repetition %d", r.Index)
		require.NotNil(t, e.KVCacheMean)
		assert.Greater(t, *e.KVCachePeak, 0.0, "8 requests in flight hold KV cache")
		assert.LessOrEqual(t, *e.KVCacheMean, *e.KVCachePeak)
		require.NotNil(t, e.WaitingPeak)
		require.NotNil(t, e.RunningPeak)
		assert.Greater(t, *e.RunningPeak, 0.0)
		require.NotNil(t, e.Preemptions)
		assert.Zero(t, *e.Preemptions, "the simulator never preempts")
		require.NotNil(t, e.PrefixCacheHitRate)

		// The simulator's own TTFT histogram counted exactly this window's requests.
		require.NotNil(t, e.ServerTTFT)
		assert.Equal(t, float64(r.Completed), e.ServerTTFT.Count, "repetition %d", r.Index)
		require.NotNil(t, e.TTFTOverheadMS)
		assert.InDelta(t, r.TTFT.Mean-e.ServerTTFT.Mean, *e.TTFTOverheadMS, 1e-9)
		// Small: the client, loopback HTTP and SSE framing, not the engine.
		assert.Greater(t, *e.TTFTOverheadMS, -1.0, "the client cannot see a first token before the server sends it")
		assert.Less(t, *e.TTFTOverheadMS, 25.0, "client TTFT %.2f ms, server %.2f ms", r.TTFT.Mean, e.ServerTTFT.Mean)
		t.Logf("repetition %d: client TTFT mean %.2f ms, server %.2f ms, overhead %.3f ms; KV peak %.1f%%",
			r.Index, r.TTFT.Mean, e.ServerTTFT.Mean, *e.TTFTOverheadMS, 100**e.KVCachePeak)

		g := r.GPU
		require.NotNil(t, g, "repetition %d: GPU telemetry", r.Index)
		assert.Equal(t, "nvidia-smi", g.Source)
		assert.GreaterOrEqual(t, g.Samples, 2)
		assert.Equal(t, 40000.0, g.MemoryPeakMiB)
		require.NotNil(t, g.PowerMeanW)
		assert.InDelta(t, 500.0, *g.PowerMeanW, 1e-9, "two GPUs at 250 W")
		// Hand arithmetic: J = W × s; J/token = J / output tokens. (The
		// window is timed in whole nanoseconds, hence a relative 1e-6.)
		wantJ := 500 * float64(r.Duration)
		require.NotNil(t, g.EnergyJ)
		assert.InEpsilon(t, wantJ, *g.EnergyJ, 1e-6)
		require.NotNil(t, g.EnergyPerToken)
		assert.InEpsilon(t, wantJ/float64(r.OutputTokens), *g.EnergyPerToken, 1e-6)
		require.NotNil(t, g.TokensPerJoule)
		assert.InEpsilon(t, float64(r.OutputTokens)/wantJ, *g.TokensPerJoule, 1e-6)

		// Cost: 2 GPUs at $3.60/h is $0.002/s.
		c := r.Cost
		require.NotNil(t, c)
		wantUSD := 0.002 * float64(r.Duration)
		assert.InDelta(t, wantUSD/float64(r.OutputTokens)*1e6, c.USDPerMOutput, 1e-9)
		require.NotNil(t, c.USDPerMInput)
		assert.InDelta(t, wantUSD/float64(r.PromptTokens)*1e6, *c.USDPerMInput, 1e-9)
		require.NotNil(t, c.USDPerMOutputGoodput)
		assert.InDelta(t, wantUSD/float64(r.GoodOutputTokens)*1e6, *c.USDPerMOutputGoodput, 1e-9)
	}
	// The summary shows telemetry.
	assert.Contains(t, stdout.String(), "telemetry")
}

// With no GPU tool, the run succeeds, says so once, and its repetitions
// carry no GPU figures; a gate on a GPU metric then cannot pass and says why.
func TestRunTelemetryUnavailable(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no nvidia-smi anywhere
	url := telemetrySim(t)
	conf := writeConfig(t, fmt.Sprintf(telemetryConfig, url, 2, "nvidia-smi", "{}"))
	out := filepath.Join(filepath.Dir(conf), "r.json")
	var stdout, stderr bytes.Buffer
	require.NoError(t, Main(context.Background(), []string{"run", "-c", conf, "-o", out}, &stdout, &stderr), stderr.String())
	assert.Equal(t, 1, strings.Count(stderr.String(), "GPU telemetry: unavailable"), stderr.String())
	res, err := result.Read(out)
	require.NoError(t, err)
	assert.NotEmpty(t, res.Telemetry.GPU.Unavailable)
	assert.Empty(t, res.Identity.GPUs)
	for _, r := range res.Scenarios[0].Repetitions {
		assert.Nil(t, r.GPU)
		assert.NotNil(t, r.Engine, "the engine page is still read")
	}
}

// A gate on gpu_memory_peak fails when the GPUs use 20% more memory than
// the baseline's, and passes when they use the same.
func TestGateGPUMemoryPeakWithFakeSMI(t *testing.T) {
	t.Setenv("FAKE_SMI_MEMORY_USED", "40000")
	conf := writeConfig(t, fmt.Sprintf(telemetryConfig, telemetrySim(t), 5, fakeSMI(t), "{"+noLatencyGates+", gpu_memory_peak: +5%}"))
	promoteBaseline(t, conf)

	t.Run("same memory passes", func(t *testing.T) {
		v, stderr, err := gate(t, conf, telemetrySim(t))
		require.NoError(t, err, stderr)
		require.Len(t, v.Scenarios[0].Gates, 1)
		assert.Equal(t, "gpu_memory_peak", v.Scenarios[0].Gates[0].Metric)
		assert.Equal(t, stat.Pass, v.Outcome)
	})
	t.Run("20% more memory regresses", func(t *testing.T) {
		t.Setenv("FAKE_SMI_MEMORY_USED", "48000")
		v, stderr, err := gate(t, conf, telemetrySim(t))
		require.Error(t, err, stderr)
		assert.Equal(t, exit.Regression, exit.Code(err))
		g := v.Scenarios[0].Gates[0]
		assert.Equal(t, stat.Regression, g.Outcome, g.Reason)
		assert.Equal(t, "MiB", g.Unit)
	})
	t.Run("no GPU tool cannot pass", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		bad := filepath.Join(filepath.Dir(conf), "nosmi.yaml")
		require.NoError(t, os.WriteFile(bad, []byte(fmt.Sprintf(telemetryConfig, "http://127.0.0.1:1", 5, "nvidia-smi", "{"+noLatencyGates+", gpu_memory_peak: +5%}")), 0o644))
		// The baseline knew its GPUs and this run does not: refused as a
		// hardware mismatch before anything is compared.
		_, stderr, err := gate(t, bad, telemetrySim(t))
		require.Error(t, err)
		assert.Equal(t, exit.Usage, exit.Code(err))
		assert.Contains(t, err.Error(), "GPU: 1× NVIDIA H100 80GB HBM3 → (none)", stderr)
		// Told to compare anyway, the gate cannot be evaluated, and says why.
		_, stderr, err = gate(t, bad, telemetrySim(t), "--allow-mismatch")
		require.Error(t, err)
		assert.Equal(t, exit.Usage, exit.Code(err))
		assert.Contains(t, err.Error(), "gpu_memory_peak was not measured in repetition 1: no GPU telemetry", stderr)
		assert.Contains(t, err.Error(), "GPU telemetry was unavailable: no GPU source: nvidia-smi: not found on PATH")
	})
}
