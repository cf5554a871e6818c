package telemetry

import (
	"context"

	"github.com/perfgate/perfgate/internal/result"
)

// GPUSample is one GPU at one moment.
type GPUSample struct {
	// Index is the GPU's index as the driver numbers them.
	Index int
	// MemoryUsedMiB and MemoryTotalMiB are the GPU's memory in use and in all.
	MemoryUsedMiB  float64
	MemoryTotalMiB float64
	// UtilizationPct is the share of the last sample period a kernel ran, 0..100.
	UtilizationPct float64
	// PowerW is the power draw in watts; nil when the source cannot say
	// (nvidia-smi prints [N/A] on some boards).
	PowerW *float64
}

// GPUSource reads the GPUs a source can see.
type GPUSource interface {
	// Kind is nvml, nvidia-smi or dcgm: result.GPUTelemetry.Source.
	Kind() string
	// Describe names the source for people: "nvidia-smi in container
	// perfgate-1a2b", "dcgm http://gpu:9400/metrics".
	Describe() string
	// Devices describes each GPU, for the result's identity.
	Devices(ctx context.Context) ([]result.GPU, error)
	// Sample reads every GPU once.
	Sample(ctx context.Context) ([]GPUSample, error)
	// Close frees what the source holds (NVML's handle).
	Close() error
}

// CommandRunner runs a command and returns its standard output: here
// (LocalCommand), or inside the stack's container.
type CommandRunner func(ctx context.Context, argv []string) ([]byte, error)
