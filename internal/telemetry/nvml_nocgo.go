//go:build !cgo

package telemetry

import "errors"

// nvmlBuilt says whether this build can use NVML: NVML is a C library, which
// a build without cgo (the release image) cannot load.
const nvmlBuilt = false

// OpenNVML always fails in a build without cgo: NVML is a C library. Such a
// build reads the GPUs with nvidia-smi or a DCGM exporter instead.
func OpenNVML() (GPUSource, error) {
	return nil, errors.New("NVML needs a cgo build of perfgate")
}
