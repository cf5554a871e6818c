//go:build cgo

package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// nvmlBuilt says whether this build can use NVML.
const nvmlBuilt = true

// nvmlSource reads the GPUs through NVML, the driver's library
// (libnvidia-ml.so.1, loaded at run time).
type nvmlSource struct {
	mu      sync.Mutex
	devices []nvml.Device // nil once closed
}

var _ GPUSource = (*nvmlSource)(nil)

// OpenNVML loads the driver's NVML library and opens every GPU it sees. An
// error means NVML is unavailable: the library is not there (no NVIDIA
// driver, or a container started without the NVIDIA runtime), it would not
// start, or it sees no GPU. The caller closes the source.
func OpenNVML() (GPUSource, error) {
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, errors.New("libnvidia-ml.so.1 not found (no NVIDIA driver here; " +
				"a container needs --gpus or the NVIDIA container runtime)")
		}
		return nil, fmt.Errorf("init: %w", ret)
	}
	n, ret := nvml.DeviceGetCount()
	if ret != nvml.SUCCESS {
		_ = nvml.Shutdown()
		return nil, fmt.Errorf("count GPUs: %w", ret)
	}
	if n == 0 {
		_ = nvml.Shutdown()
		return nil, errors.New("no GPU")
	}
	devices := make([]nvml.Device, n)
	for i := range devices {
		d, ret := nvml.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			_ = nvml.Shutdown()
			return nil, fmt.Errorf("GPU %d: %w", i, ret)
		}
		devices[i] = d
	}
	return &nvmlSource{devices: devices}, nil
}

func (s *nvmlSource) Kind() string     { return config.GPUNVML }
func (s *nvmlSource) Describe() string { return "nvml" }

// Devices describes each GPU: name, UUID, memory, and the driver's version
// and the CUDA version it supports.
func (s *nvmlSource) Devices(ctx context.Context) ([]result.GPU, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.devices == nil {
		return nil, errNVMLClosed
	}
	driver, ret := nvml.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		driver = ""
	}
	cuda := ""
	if v, ret := nvml.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS && v > 0 {
		cuda = fmt.Sprintf("%d.%d", v/1000, v%1000/10) // 12040 is 12.4
	}
	out := make([]result.GPU, len(s.devices))
	for i, d := range s.devices {
		name, ret := d.GetName()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML: GPU %d: name: %w", i, ret)
		}
		uuid, ret := d.GetUUID()
		if ret != nvml.SUCCESS {
			uuid = ""
		}
		mem, ret := d.GetMemoryInfo()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML: GPU %d: memory: %w", i, ret)
		}
		out[i] = result.GPU{Index: i, Model: name, UUID: uuid, MemoryBytes: mem.Total, Driver: driver, CUDA: cuda}
	}
	return out, nil
}

// Sample reads each GPU's memory, utilisation and power. Utilisation that
// NVML cannot give (a MIG-enabled GPU) is NaN; power it cannot give is nil.
func (s *nvmlSource) Sample(ctx context.Context) ([]GPUSample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.devices == nil {
		return nil, errNVMLClosed
	}
	out := make([]GPUSample, len(s.devices))
	for i, d := range s.devices {
		mem, ret := d.GetMemoryInfo()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML: GPU %d: memory: %w", i, ret)
		}
		g := GPUSample{
			Index:          i,
			MemoryUsedMiB:  float64(mem.Used) / (1 << 20),
			MemoryTotalMiB: float64(mem.Total) / (1 << 20),
			UtilizationPct: math.NaN(),
		}
		if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
			g.UtilizationPct = float64(u.Gpu)
		}
		if mw, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
			w := float64(mw) / 1000
			g.PowerW = &w
		}
		out[i] = g
	}
	return out, nil
}

// Close shuts NVML down; a second Close does nothing.
func (s *nvmlSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.devices == nil {
		return nil
	}
	s.devices = nil
	if ret := nvml.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML: shutdown: %w", ret)
	}
	return nil
}

var errNVMLClosed = errors.New("NVML: closed")
