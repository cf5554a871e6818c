package config

import (
	"net/url"
	"slices"
	"strings"
	"time"
)

// Telemetry metric-page settings.
const (
	// TelemetryAuto reads the engine's page at target.base_url + /metrics,
	// or picks the first GPU source that answers.
	TelemetryAuto = "auto"
	// TelemetryOff reads nothing.
	TelemetryOff = "off"
)

// GPU sources.
const (
	GPUNVML      = "nvml"       // NVML, through the driver's library (a cgo build)
	GPUNvidiaSMI = "nvidia-smi" // nvidia-smi --query-gpu, here or in the stack's container
	GPUDCGM      = "dcgm"       // a DCGM exporter's Prometheus page (telemetry.dcgm_url)
)

var gpuSources = []string{TelemetryAuto, GPUNVML, GPUNvidiaSMI, GPUDCGM, TelemetryOff}

// Sampling interval bounds: faster than 100ms and nvidia-smi or a busy
// engine cannot keep up; slower than 5s and a repetition of a few seconds
// has one sample or none.
const (
	MinTelemetryInterval = 100 * time.Millisecond
	MaxTelemetryInterval = 5 * time.Second
)

// Telemetry says what perfgate samples beside the measurement: the serving
// engine's Prometheus page and the GPUs, every Interval during each measured
// repetition (never during warm-up). A source that cannot be read makes the
// run say "unavailable" once; it never fails the run.
type Telemetry struct {
	// Metrics is the engine's Prometheus page: auto (target.base_url +
	// /metrics), off, a path on the target (/metrics), or a full URL.
	Metrics string `yaml:"metrics" json:"metrics"`
	// Interval is the time between samples of the page and the GPUs.
	Interval time.Duration `yaml:"interval" json:"interval"`
	// GPU is the GPU source: auto (dcgm when dcgm_url is set, else NVML,
	// else nvidia-smi here, else nvidia-smi in a docker stack's container;
	// off when the target is perfgate's simulator), nvml, nvidia-smi, dcgm
	// or off.
	GPU string `yaml:"gpu" json:"gpu"`
	// NvidiaSMI is the nvidia-smi command: its argv before the query flags.
	// Empty is nvidia-smi from PATH.
	NvidiaSMI []string `yaml:"nvidia_smi" json:"nvidia_smi,omitempty"`
	// DCGMURL is a DCGM exporter's metrics page
	// (http://gpu-host:9400/metrics).
	DCGMURL string `yaml:"dcgm_url" json:"dcgm_url,omitempty"`
	// Devices are the indices of the GPUs that serve the model; empty is
	// every GPU the source sees. Memory, utilisation, power and energy
	// count only these.
	Devices []int `yaml:"devices" json:"devices,omitempty"`
}

// Cost prices the serving GPUs, so that results say what a million tokens
// cost at the measured throughput and goodput.
type Cost struct {
	// USDPerGPUHour is what one GPU costs an hour, in US dollars.
	USDPerGPUHour float64 `yaml:"usd_per_gpu_hour" json:"usd_per_gpu_hour"`
	// GPUs is how many GPUs are paid for while the model is served.
	GPUs int `yaml:"gpus" json:"gpus"`
}

// USDPerSecond is what the deployment costs a second.
func (c Cost) USDPerSecond() float64 { return c.USDPerGPUHour * float64(c.GPUs) / 3600 }

// MetricsURL is the engine metrics page to read, or "" when telemetry.metrics
// is off.
func (c *Config) MetricsURL() string {
	m := strings.TrimSpace(c.Telemetry.Metrics)
	switch {
	case m == TelemetryOff:
		return ""
	case m == TelemetryAuto || m == "":
		return strings.TrimRight(c.Target.BaseURL, "/") + "/metrics"
	case strings.HasPrefix(m, "/"):
		return strings.TrimRight(c.Target.BaseURL, "/") + m
	}
	return m
}

func (v *validator) telemetry() {
	t := v.c.Telemetry
	switch m := strings.TrimSpace(t.Metrics); {
	case m == TelemetryAuto, m == TelemetryOff, strings.HasPrefix(m, "/"):
	case !httpURL(m):
		v.add("telemetry.metrics", "must be auto, off, a path on the target (/metrics) or an http(s) URL, got %q", t.Metrics)
	}
	if t.Interval < MinTelemetryInterval || t.Interval > MaxTelemetryInterval {
		v.add("telemetry.interval", "must be between %s and %s, got %s", MinTelemetryInterval, MaxTelemetryInterval, t.Interval)
	}
	v.oneOf("telemetry.gpu", t.GPU, gpuSources)
	if t.DCGMURL != "" && !httpURL(t.DCGMURL) {
		v.add("telemetry.dcgm_url", "must be an http(s) URL like http://gpu-host:9400/metrics, got %q", t.DCGMURL)
	}
	if t.GPU == GPUDCGM && t.DCGMURL == "" {
		v.add("telemetry.dcgm_url", "is required when telemetry.gpu is dcgm")
	}
	if len(t.NvidiaSMI) > 0 && strings.TrimSpace(t.NvidiaSMI[0]) == "" {
		v.add("telemetry.nvidia_smi", "the command's first word must not be empty")
	}
	for i, d := range t.Devices {
		if d < 0 {
			v.add("telemetry.devices", "GPU index must be >= 0, got %d", d)
		} else if slices.Index(t.Devices, d) != i {
			v.add("telemetry.devices", "GPU %d is listed twice", d)
		}
	}
	if c := v.c.Cost; c != nil {
		if !(c.USDPerGPUHour > 0 && c.USDPerGPUHour <= MaxUSDPerGPUHour) {
			v.add("cost.usd_per_gpu_hour", "must be > 0 and at most %s (US dollars per GPU-hour), got %s", fmtFloat(MaxUSDPerGPUHour), fmtFloat(c.USDPerGPUHour))
		}
		v.intIn("cost.gpus", c.GPUs, 1, MaxGPUs, "")
	}
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
