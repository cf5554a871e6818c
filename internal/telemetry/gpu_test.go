package telemetry

import (
	"context"
	"errors"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

func gpuWatts(w float64) *float64 { return &w }

// gpuSampleOf is a sample of GPU index with memory used, utilisation and power (nil:
// none), on an 80 GiB board.
func gpuSampleOf(index int, usedMiB, utilPct float64, power *float64) GPUSample {
	return GPUSample{Index: index, MemoryUsedMiB: usedMiB, MemoryTotalMiB: 81559, UtilizationPct: utilPct, PowerW: power}
}

// sampleAt is a sample at sec seconds into the window.
func sampleAt(sec float64, gpus ...GPUSample) TimedSample {
	return TimedSample{At: time.Duration(sec * float64(time.Second)), GPUs: gpus}
}

// gpuPowerTrace is one GPU's samples every 0.5s with the given power.
func gpuPowerTrace(index int, w ...float64) []TimedSample {
	var out []TimedSample
	for i, p := range w {
		out = append(out, sampleAt(float64(i)*0.5, gpuSampleOf(index, 1000, 50, gpuWatts(p))))
	}
	return out
}

// mergeGPUTraces puts the GPUs of samples taken at the same moments together.
func mergeGPUTraces(traces ...[]TimedSample) []TimedSample {
	out := make([]TimedSample, len(traces[0]))
	for _, tr := range traces {
		for i, s := range tr {
			out[i].At = s.At
			out[i].GPUs = append(out[i].GPUs, s.GPUs...)
		}
	}
	return out
}

func TestSummariseGPUEnergy(t *testing.T) {
	// One GPU, samples at 0, 0.5, 1, 1.5, 2 s drawing 100, 200, 300, 200,
	// 100 W: the trapezoids are 0.5 s × (150 + 250 + 250 + 150) W = 400 J
	// over 2 s, a mean of 200 W; over the 2 s window that is 400 J, and
	// for 800 output tokens 0.5 J/token, 2 tokens/J.
	one := gpuPowerTrace(0, 100, 200, 300, 200, 100)
	// A second GPU drawing 50 W throughout adds 50 W.
	two := mergeGPUTraces(one, gpuPowerTrace(1, 50, 50, 50, 50, 50))

	tests := []struct {
		name                       string
		samples                    []TimedSample
		window                     time.Duration
		tokens                     int
		devices                    []int
		wantPower, wantEnergy      float64
		wantPerToken, wantPerJoule *float64
		wantPerGPU                 []float64 // each GPU's mean power
	}{
		{"one GPU", one, 2 * time.Second, 800, nil, 200, 400, gpuWatts(0.5), gpuWatts(2), []float64{200}},
		{"two GPUs sum", two, 2 * time.Second, 800, nil, 250, 500, gpuWatts(500.0 / 800), gpuWatts(800.0 / 500), []float64{200, 50}},
		{"devices filter", two, 2 * time.Second, 800, []int{1}, 50, 100, gpuWatts(100.0 / 800), gpuWatts(8), []float64{50}},
		{"window longer than the samples", one, 4 * time.Second, 800, nil, 200, 800, gpuWatts(1), gpuWatts(1), []float64{200}},
		{"zero tokens", one, 2 * time.Second, 0, nil, 200, 400, nil, gpuWatts(0), []float64{200}},
		{"one sample is its value", one[2:3], 2 * time.Second, 800, nil, 300, 600, gpuWatts(0.75), gpuWatts(800.0 / 600), []float64{300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SummariseGPU("nvml", 500*time.Millisecond, tt.samples, tt.window, tt.tokens, tt.devices)
			require.NotNil(t, got)
			assert.Equal(t, "nvml", got.Source)
			assert.Equal(t, result.Seconds(0.5), got.Interval)
			assert.Equal(t, len(tt.samples), got.Samples)
			require.NotNil(t, got.PowerMeanW)
			assert.InDelta(t, tt.wantPower, *got.PowerMeanW, 1e-9, "PowerMeanW")
			require.NotNil(t, got.EnergyJ)
			assert.InDelta(t, tt.wantEnergy, *got.EnergyJ, 1e-9, "EnergyJ")
			assertGPUFigure(t, "EnergyPerToken", tt.wantPerToken, got.EnergyPerToken)
			assertGPUFigure(t, "TokensPerJoule", tt.wantPerJoule, got.TokensPerJoule)
			require.Len(t, got.PerGPU, len(tt.wantPerGPU))
			for i, w := range tt.wantPerGPU {
				require.NotNil(t, got.PerGPU[i].PowerMeanW)
				assert.InDelta(t, w, *got.PerGPU[i].PowerMeanW, 1e-9, "PerGPU[%d].PowerMeanW", i)
			}
		})
	}
}

func assertGPUFigure(t *testing.T, what string, want, got *float64) {
	t.Helper()
	if want == nil {
		assert.Nil(t, got, what)
		return
	}
	if assert.NotNil(t, got, what) {
		assert.InDelta(t, *want, *got, 1e-9, what)
	}
}

func TestSummariseGPUMemoryAndUtilisation(t *testing.T) {
	samples := []TimedSample{
		sampleAt(0, gpuSampleOf(0, 30000, 40, nil), gpuSampleOf(1, 70000, 80, nil)),
		sampleAt(1, gpuSampleOf(0, 50000, 60, nil), gpuSampleOf(1, 60000, 100, nil)),
	}
	samples[1].GPUs[0].MemoryTotalMiB = 97871 // GPU 0 is the larger board

	got := SummariseGPU("nvidia-smi", time.Second, samples, 2*time.Second, 100, nil)
	require.NotNil(t, got)
	// The peak is the fullest GPU at any sample, with that GPU's total.
	assert.Equal(t, 70000.0, got.MemoryPeakMiB)
	assert.Equal(t, 81559.0, got.MemoryTotalMiB)
	require.NotNil(t, got.UtilizationMean)
	assert.InDelta(t, (0.4+0.8+0.6+1.0)/4, *got.UtilizationMean, 1e-12)
	assert.Equal(t, []result.GPUWindow{
		{Index: 0, MemoryPeakMiB: 50000, MemoryTotalMiB: 97871, UtilizationMean: gpuPtr(0.5)},
		{Index: 1, MemoryPeakMiB: 70000, MemoryTotalMiB: 81559, UtilizationMean: gpuPtr(0.9)},
	}, roundGPUWindows(got.PerGPU))
	// No power from any GPU: no power, no energy.
	assert.Nil(t, got.PowerMeanW)
	assert.Nil(t, got.EnergyJ)
	assert.Nil(t, got.EnergyPerToken)
	assert.Nil(t, got.TokensPerJoule)

	only0 := SummariseGPU("nvidia-smi", time.Second, samples, 2*time.Second, 100, []int{0})
	require.NotNil(t, only0)
	assert.Equal(t, 50000.0, only0.MemoryPeakMiB)
	assert.Equal(t, 97871.0, only0.MemoryTotalMiB)
	require.NotNil(t, only0.UtilizationMean)
	assert.InDelta(t, 0.5, *only0.UtilizationMean, 1e-12)
	require.Len(t, only0.PerGPU, 1)
}

// roundGPUWindows rounds utilisation so that equality ignores float noise.
func roundGPUWindows(ws []result.GPUWindow) []result.GPUWindow {
	out := make([]result.GPUWindow, len(ws))
	for i, w := range ws {
		if w.UtilizationMean != nil {
			w.UtilizationMean = gpuPtr(math.Round(*w.UtilizationMean*1e9) / 1e9)
		}
		out[i] = w
	}
	return out
}

func TestSummariseGPUMissing(t *testing.T) {
	t.Run("no samples", func(t *testing.T) {
		assert.Nil(t, SummariseGPU("nvml", time.Second, nil, time.Second, 10, nil))
	})
	t.Run("no selected GPU in the samples", func(t *testing.T) {
		assert.Nil(t, SummariseGPU("nvml", time.Second, gpuPowerTrace(0, 100, 100), time.Second, 10, []int{3}))
	})
	t.Run("a GPU without power in every sample makes the total unknown", func(t *testing.T) {
		samples := mergeGPUTraces(gpuPowerTrace(0, 100, 100), []TimedSample{sampleAt(0, gpuSampleOf(1, 1, 50, nil)), sampleAt(0.5, gpuSampleOf(1, 1, 50, nil))})
		got := SummariseGPU("nvidia-smi", time.Second, samples, time.Second, 10, nil)
		require.NotNil(t, got)
		assert.Nil(t, got.PowerMeanW)
		assert.Nil(t, got.EnergyJ)
		require.Len(t, got.PerGPU, 2)
		require.NotNil(t, got.PerGPU[0].PowerMeanW)
		assert.InDelta(t, 100, *got.PerGPU[0].PowerMeanW, 1e-9)
		assert.Nil(t, got.PerGPU[1].PowerMeanW)
	})
	t.Run("samples without power are skipped", func(t *testing.T) {
		// 100 W at 0 s, [N/A] at 1 s, 300 W at 2 s: the trapezoid
		// joins the two known points, 200 W.
		samples := []TimedSample{sampleAt(0, gpuSampleOf(0, 1, 50, gpuWatts(100))), sampleAt(1, gpuSampleOf(0, 1, 50, nil)), sampleAt(2, gpuSampleOf(0, 1, 50, gpuWatts(300)))}
		got := SummariseGPU("nvidia-smi", time.Second, samples, 2*time.Second, 10, nil)
		require.NotNil(t, got)
		require.NotNil(t, got.PowerMeanW)
		assert.InDelta(t, 200, *got.PowerMeanW, 1e-9)
		assert.Equal(t, 3, got.Samples)
	})
	t.Run("unknown utilisation is skipped", func(t *testing.T) {
		samples := []TimedSample{sampleAt(0, gpuSampleOf(0, 1, math.NaN(), nil)), sampleAt(1, gpuSampleOf(0, 1, 80, nil))}
		got := SummariseGPU("nvml", time.Second, samples, time.Second, 10, nil)
		require.NotNil(t, got)
		require.NotNil(t, got.UtilizationMean)
		assert.InDelta(t, 0.8, *got.UtilizationMean, 1e-12)
		require.NotNil(t, got.PerGPU[0].UtilizationMean)
		assert.InDelta(t, 0.8, *got.PerGPU[0].UtilizationMean, 1e-12)
	})
	t.Run("out-of-order samples are taken in time order", func(t *testing.T) {
		tr := gpuPowerTrace(0, 100, 200, 300, 200, 100)
		tr[0], tr[4], tr[1] = tr[4], tr[1], tr[0]
		got := SummariseGPU("nvml", time.Second, tr, 2*time.Second, 800, nil)
		require.NotNil(t, got)
		require.NotNil(t, got.PowerMeanW)
		assert.InDelta(t, 200, *got.PowerMeanW, 1e-9)
	})
	t.Run("zero window has power but no energy", func(t *testing.T) {
		got := SummariseGPU("nvml", time.Second, gpuPowerTrace(0, 100, 100), 0, 10, nil)
		require.NotNil(t, got)
		require.NotNil(t, got.PowerMeanW)
		assert.Nil(t, got.EnergyJ)
		assert.Nil(t, got.EnergyPerToken)
	})
}

// fakeGPUSource is a GPUSource whose Devices answers as told.
type fakeGPUSource struct {
	kind       string
	devicesErr error
	closed     bool
}

func (f *fakeGPUSource) Kind() string     { return f.kind }
func (f *fakeGPUSource) Describe() string { return f.kind }
func (f *fakeGPUSource) Devices(context.Context) ([]result.GPU, error) {
	if f.devicesErr != nil {
		return nil, f.devicesErr
	}
	return []result.GPU{{Index: 0, Model: "fake"}}, nil
}
func (f *fakeGPUSource) Sample(context.Context) ([]GPUSample, error) { return nil, nil }
func (f *fakeGPUSource) Close() error                                { f.closed = true; return nil }

func nvmlFails(msg string) func() (GPUSource, error) {
	return func() (GPUSource, error) { return nil, errors.New(msg) }
}

func smiNotOnPath(file string) (string, error) {
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

func fakeSMIPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "fake-nvidia-smi"))
	require.NoError(t, err)
	return p
}

func TestOpenGPU(t *testing.T) {
	fake := fakeSMIPath(t)
	var containerArgv []string
	container := func(ctx context.Context, argv []string) ([]byte, error) {
		containerArgv = argv
		return LocalCommand(ctx, append([]string{fake}, argv[1:]...))
	}
	containerDown := func(context.Context, []string) ([]byte, error) {
		return nil, errors.New("docker exec: create: container is not running")
	}
	// dead is a DCGM page nobody serves: a closed port.
	dead := "http://127.0.0.1:1/metrics"

	tests := []struct {
		name     string
		o        GPUOptions
		wantKind string
		wantDesc string
		wantWhy  string
	}{{
		name:    "auto with nothing",
		o:       GPUOptions{LookPath: smiNotOnPath, OpenNVML: nvmlFails("NVML needs a cgo build of perfgate")},
		wantWhy: "no GPU source: NVML: NVML needs a cgo build of perfgate; nvidia-smi: not found on PATH; no docker stack to run it in",
	}, {
		name: "auto finds nvidia-smi here",
		o: GPUOptions{OpenNVML: nvmlFails("no GPU"),
			LookPath: func(file string) (string, error) { return fake, nil }, NvidiaSMI: []string{fake}},
		wantKind: "nvidia-smi",
		wantDesc: fake,
	}, {
		name: "auto falls back to the container",
		o: GPUOptions{OpenNVML: nvmlFails("no GPU"), LookPath: smiNotOnPath,
			Container: container, Where: "container perfgate-1a2b"},
		wantKind: "nvidia-smi",
		wantDesc: "nvidia-smi in container perfgate-1a2b",
	}, {
		name: "auto with a container that fails",
		o: GPUOptions{OpenNVML: nvmlFails("no GPU"), LookPath: smiNotOnPath,
			Container: containerDown, Where: "container perfgate-1a2b"},
		wantWhy: "no GPU source: NVML: no GPU; nvidia-smi: not found on PATH; " +
			"nvidia-smi in container perfgate-1a2b: docker exec: create: container is not running",
	}, {
		name: "auto tries DCGM first and falls back",
		o: GPUOptions{DCGMURL: dead, OpenNVML: nvmlFails("no GPU"),
			LookPath: func(string) (string, error) { return fake, nil }, NvidiaSMI: []string{fake}},
		wantKind: "nvidia-smi",
	}, {
		name: "auto prefers NVML",
		o: GPUOptions{OpenNVML: func() (GPUSource, error) { return &fakeGPUSource{kind: "nvml"}, nil },
			LookPath: func(string) (string, error) { return fake, nil }, NvidiaSMI: []string{fake}},
		wantKind: "nvml",
	}, {
		name: "auto: NVML whose devices fail is passed over",
		o: GPUOptions{OpenNVML: func() (GPUSource, error) {
			return &fakeGPUSource{kind: "nvml", devicesErr: errors.New("NVML: GPU 0: name: Unknown Error")}, nil
		},
			LookPath: smiNotOnPath},
		wantWhy: "no GPU source: NVML: GPU 0: name: Unknown Error; nvidia-smi: not found on PATH; no docker stack to run it in",
	}, {
		name:    "simulator",
		o:       GPUOptions{Simulated: true, OpenNVML: func() (GPUSource, error) { panic("NVML tried for the simulator") }},
		wantWhy: "off (the target is perfgate's simulator, which uses no GPU)",
	}, {
		name:    "off",
		o:       GPUOptions{Mode: "off", OpenNVML: func() (GPUSource, error) { panic("NVML tried when off") }},
		wantWhy: "off (telemetry.gpu: off)",
	}, {
		name: "explicit nvml tries only NVML",
		o: GPUOptions{Mode: "nvml", OpenNVML: nvmlFails("libnvidia-ml.so.1 not found"),
			LookPath: func(string) (string, error) { return fake, nil }, NvidiaSMI: []string{fake}},
		wantWhy: "no GPU source: NVML: libnvidia-ml.so.1 not found",
	}, {
		name:     "explicit nvidia-smi for the simulator",
		o:        GPUOptions{Mode: "nvidia-smi", Simulated: true, LookPath: func(string) (string, error) { return fake, nil }, NvidiaSMI: []string{fake}},
		wantKind: "nvidia-smi",
	}, {
		name:    "explicit nvidia-smi not found",
		o:       GPUOptions{Mode: "nvidia-smi", LookPath: smiNotOnPath, OpenNVML: func() (GPUSource, error) { panic("NVML tried") }},
		wantWhy: "no GPU source: nvidia-smi: not found on PATH; no docker stack to run it in",
	}, {
		name:    "explicit dcgm unreachable",
		o:       GPUOptions{Mode: "dcgm", DCGMURL: dead, OpenNVML: func() (GPUSource, error) { panic("NVML tried") }},
		wantWhy: "no GPU source: dcgm " + dead + ": Get ",
	}, {
		name:    "explicit dcgm without a URL",
		o:       GPUOptions{Mode: "dcgm"},
		wantWhy: "no GPU source: DCGM: telemetry.dcgm_url is not set",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, devices, why := OpenGPU(context.Background(), tt.o)
			if tt.wantWhy != "" {
				assert.Nil(t, src)
				assert.Nil(t, devices)
				assert.True(t, strings.HasPrefix(why, tt.wantWhy), "OpenGPU() unavailable = %q, want %q", why, tt.wantWhy)
				return
			}
			require.NotNil(t, src, "unavailable: %s", why)
			t.Cleanup(func() { _ = src.Close() })
			assert.Empty(t, why)
			assert.Equal(t, tt.wantKind, src.Kind())
			if tt.wantDesc != "" {
				assert.Equal(t, tt.wantDesc, src.Describe())
			}
			assert.NotEmpty(t, devices)
		})
	}
	assert.Equal(t, []string{"nvidia-smi", "-q"}, containerArgv, "the container runs the configured command")
}

func TestOpenGPUClosesFailedSource(t *testing.T) {
	f := &fakeGPUSource{kind: "nvml", devicesErr: errors.New("NVML: GPU 0: name: Unknown Error")}
	_, _, why := OpenGPU(context.Background(), GPUOptions{Mode: "nvml", OpenNVML: func() (GPUSource, error) { return f, nil }})
	assert.Equal(t, "no GPU source: NVML: GPU 0: name: Unknown Error", why)
	assert.True(t, f.closed, "a source whose Devices failed is closed")
}

func TestOpenNVMLHere(t *testing.T) {
	// This machine has no NVIDIA driver; a GPU runner may. Either way
	// OpenNVML must answer, not crash.
	src, err := OpenNVML()
	if !nvmlBuilt {
		require.EqualError(t, err, "NVML needs a cgo build of perfgate")
		assert.Nil(t, src)
		return
	}
	if err != nil {
		assert.Nil(t, src)
		t.Logf("OpenNVML() error (expected without a driver): %v", err)
		return
	}
	t.Cleanup(func() { assert.NoError(t, src.Close()) })
	devices, err := src.Devices(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, devices)
	samples, err := src.Sample(context.Background())
	require.NoError(t, err)
	require.Len(t, samples, len(devices))
	for _, s := range samples {
		assert.Greater(t, s.MemoryTotalMiB, 0.0)
	}
	t.Logf("NVML devices: %+v; sample: %+v", devices, samples)
}
