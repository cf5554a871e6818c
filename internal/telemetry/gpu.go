package telemetry

// GPU telemetry: choosing a source (OpenGPU) and folding a window's samples
// into a repetition's figures (SummariseGPU). The sources are in nvml_*.go,
// smi.go and dcgm.go.
//
// A GPUSample's UtilizationPct is NaN when the source could not read it (a
// MIG-enabled GPU reports no utilisation; nvidia-smi prints [N/A]): NaN is
// "unknown", never zero, and SummariseGPU skips it.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// The figures a GPU can truthfully report. A sample with a figure outside
// them is refused whole (an error that names the figure, and the sample is
// skipped), never averaged: every source's samples are checked
// (checkGPUSample), at the source for nvidia-smi and DCGM, and by the
// Collector for any source.
//
//   - Memory in use and in all: from 0 to maxGPUMemoryMiB (16 TiB; the
//     largest GPUs hold a few hundred GiB).
//   - Utilisation: from 0 to 100 percent, or NaN for unknown.
//   - Power draw: from 0 to maxGPUPowerW (10 kW; the largest boards draw
//     1 to 3 kW), or nil for unknown.
const (
	maxGPUMemoryMiB = 16 << 20
	maxGPUPowerW    = 10_000
)

// checkGPUSample says which figure of g cannot be true; nil when none.
func checkGPUSample(g GPUSample) error {
	// Written so that NaN fails every range: NaN compares false.
	switch {
	case g.Index < 0:
		return fmt.Errorf("GPU index %d cannot be true", g.Index)
	case !(g.MemoryUsedMiB >= 0 && g.MemoryUsedMiB <= maxGPUMemoryMiB):
		return fmt.Errorf("GPU %d: memory in use of %s MiB cannot be true (from 0 to 16 TiB)", g.Index, formatValue(g.MemoryUsedMiB))
	case !(g.MemoryTotalMiB >= 0 && g.MemoryTotalMiB <= maxGPUMemoryMiB):
		return fmt.Errorf("GPU %d: total memory of %s MiB cannot be true (from 0 to 16 TiB)", g.Index, formatValue(g.MemoryTotalMiB))
	case !math.IsNaN(g.UtilizationPct) && !(g.UtilizationPct >= 0 && g.UtilizationPct <= 100):
		return fmt.Errorf("GPU %d: utilisation of %s%% cannot be true (from 0 to 100)", g.Index, formatValue(g.UtilizationPct))
	case g.PowerW != nil && !(*g.PowerW >= 0 && *g.PowerW <= maxGPUPowerW):
		return fmt.Errorf("GPU %d: power draw of %s W cannot be true (a GPU draws from 0 to %d W)", g.Index, formatValue(*g.PowerW), maxGPUPowerW)
	}
	return nil
}

// checkGPUSamples checks every GPU of a sample.
func checkGPUSamples(gs []GPUSample) error {
	for _, g := range gs {
		if err := checkGPUSample(g); err != nil {
			return err
		}
	}
	return nil
}

// TimedSample is one Sample taken At after the window's start.
type TimedSample struct {
	At   time.Duration
	GPUs []GPUSample
}

// SummariseGPU folds a window's samples into the repetition's GPU telemetry.
// kind is the source's Kind and interval the time asked for between samples;
// window is the repetition's measured duration and outputTokens its output
// tokens. devices (empty: all) selects the GPUs by index.
//
// Memory is the peak of any one selected GPU (headroom is per GPU), with that
// GPU's total. Utilisation is the mean over samples and GPUs of the figures
// known. Power is, per GPU, the time-weighted mean of its samples by the
// trapezoid rule (one sample: its value), skipping samples without power; the
// total is the sum over GPUs, and nil when a selected GPU had no power in any
// sample. Energy is that mean power over the whole window (none for an empty
// window); energy per token and tokens per joule follow from it, nil where
// their divisor is zero.
//
// It returns nil when no sample has a selected GPU: there is nothing to say.
func SummariseGPU(kind string, interval time.Duration, samples []TimedSample, window time.Duration, outputTokens int, devices []int) *result.GPUTelemetry {
	ordered := slices.Clone(samples)
	slices.SortStableFunc(ordered, func(a, b TimedSample) int { return cmp.Compare(a.At, b.At) })

	gpus := map[int]*gpuWindow{}
	var utilSum float64
	var utilN int
	for _, s := range ordered {
		for _, g := range s.GPUs {
			if len(devices) > 0 && !slices.Contains(devices, g.Index) {
				continue
			}
			w := gpus[g.Index]
			if w == nil {
				w = &gpuWindow{index: g.Index}
				gpus[g.Index] = w
			}
			w.add(s.At, g)
			if !math.IsNaN(g.UtilizationPct) {
				utilSum += g.UtilizationPct / 100
				utilN++
			}
		}
	}
	if len(gpus) == 0 {
		return nil
	}

	t := &result.GPUTelemetry{
		Source:   kind,
		Interval: result.Seconds(interval.Seconds()),
		Samples:  len(samples),
	}
	if utilN > 0 {
		t.UtilizationMean = gpuPtr(utilSum / float64(utilN))
	}
	indices := slices.Sorted(maps.Keys(gpus))
	power, havePower := 0.0, true
	for _, i := range indices {
		pw := gpus[i].summary()
		t.PerGPU = append(t.PerGPU, pw)
		if len(t.PerGPU) == 1 || pw.MemoryPeakMiB > t.MemoryPeakMiB {
			t.MemoryPeakMiB, t.MemoryTotalMiB = pw.MemoryPeakMiB, pw.MemoryTotalMiB
		}
		if pw.PowerMeanW == nil {
			havePower = false
		} else {
			power += *pw.PowerMeanW
		}
	}
	if !havePower {
		return t
	}
	t.PowerMeanW = &power
	if window <= 0 {
		return t
	}
	energy := power * window.Seconds()
	t.EnergyJ = &energy
	if outputTokens > 0 {
		t.EnergyPerToken = gpuPtr(energy / float64(outputTokens))
	}
	if energy > 0 && outputTokens >= 0 {
		t.TokensPerJoule = gpuPtr(float64(outputTokens) / energy)
	}
	return t
}

// gpuWindow gathers one GPU's samples over a window.
type gpuWindow struct {
	index       int
	samples     int
	peak, total float64
	utilSum     float64
	utilN       int
	power       []powerPoint
}

type powerPoint struct {
	at time.Duration
	w  float64
}

func (w *gpuWindow) add(at time.Duration, g GPUSample) {
	if w.samples == 0 || g.MemoryUsedMiB > w.peak {
		w.peak = g.MemoryUsedMiB
	}
	w.total = max(w.total, g.MemoryTotalMiB)
	w.samples++
	if !math.IsNaN(g.UtilizationPct) {
		w.utilSum += g.UtilizationPct / 100
		w.utilN++
	}
	if g.PowerW != nil {
		w.power = append(w.power, powerPoint{at, *g.PowerW})
	}
}

func (w *gpuWindow) summary() result.GPUWindow {
	r := result.GPUWindow{Index: w.index, MemoryPeakMiB: w.peak, MemoryTotalMiB: w.total}
	if w.utilN > 0 {
		r.UtilizationMean = gpuPtr(w.utilSum / float64(w.utilN))
	}
	if len(w.power) > 0 {
		r.PowerMeanW = gpuPtr(powerMean(w.power))
	}
	return r
}

// powerMean is the mean of a piecewise-linear signal through pts
// (ordered by time) over their span, by the trapezoid rule. One point, or
// points all at one moment, have no span: their plain mean is returned.
func powerMean(pts []powerPoint) float64 {
	span := (pts[len(pts)-1].at - pts[0].at).Seconds()
	if span <= 0 {
		var sum float64
		for _, p := range pts {
			sum += p.w
		}
		return sum / float64(len(pts))
	}
	var area float64
	for i := 1; i < len(pts); i++ {
		area += (pts[i].at - pts[i-1].at).Seconds() * (pts[i].w + pts[i-1].w) / 2
	}
	return area / span
}

func gpuPtr(v float64) *float64 { return &v }

// GPUOptions say how to find a GPU source.
type GPUOptions struct {
	// Mode is config.Telemetry.GPU: auto, nvml, nvidia-smi, dcgm or off.
	// Empty is auto.
	Mode string
	// NvidiaSMI is the nvidia-smi command before its flags; empty is
	// nvidia-smi from PATH.
	NvidiaSMI []string
	// DCGMURL is a DCGM exporter's metrics page.
	DCGMURL string
	// Container, if set, runs a command inside the stack's container
	// (docker stacks); Where names it for messages ("container
	// perfgate-1a2b").
	Container CommandRunner
	Where     string
	// Simulated is true when the target is perfgate's simulator: auto then
	// picks nothing.
	Simulated bool
	// Client reads the DCGM page; nil is a client with a 5s timeout.
	Client *http.Client
	// LookPath finds nvidia-smi here; nil is exec.LookPath.
	LookPath func(string) (string, error)
	// OpenNVML opens NVML; nil is OpenNVML.
	OpenNVML func() (GPUSource, error)
}

// gpuTry is one way to a GPU source. A try with no open names only why it
// could not be made.
type gpuTry struct {
	name string // "NVML", "nvidia-smi": prefixes why it could not be opened
	open func() (GPUSource, error)
}

// OpenGPU picks the GPU source as o.Mode says. auto tries, in order, the DCGM
// exporter (when o.DCGMURL is set), NVML, nvidia-smi here (found with
// LookPath) and nvidia-smi in the stack's container (o.Container), and takes
// the first whose Devices call succeeds; it picks nothing for perfgate's
// simulator. An explicit mode tries only that source (nvidia-smi: here, then
// in the container).
//
// It returns the source and its devices, or nil and why there is none,
// naming each try and why it failed. It never fails: GPU telemetry never
// fails a run. The caller closes the source.
func OpenGPU(ctx context.Context, o GPUOptions) (src GPUSource, devices []result.GPU, unavailable string) {
	var tries []gpuTry
	switch mode := cmp.Or(strings.TrimSpace(o.Mode), config.TelemetryAuto); mode {
	case config.TelemetryOff:
		return nil, nil, "off (telemetry.gpu: off)"
	case config.TelemetryAuto:
		if o.Simulated {
			return nil, nil, "off (the target is perfgate's simulator, which uses no GPU)"
		}
		if o.DCGMURL != "" {
			tries = append(tries, o.dcgmTry())
		}
		tries = append(tries, o.nvmlTry())
		tries = append(tries, o.smiTries()...)
	case config.GPUNVML:
		tries = append(tries, o.nvmlTry())
	case config.GPUNvidiaSMI:
		tries = append(tries, o.smiTries()...)
	case config.GPUDCGM:
		if o.DCGMURL == "" {
			return nil, nil, "no GPU source: DCGM: telemetry.dcgm_url is not set"
		}
		tries = append(tries, o.dcgmTry())
	default:
		return nil, nil, fmt.Sprintf("no GPU source: unknown telemetry.gpu %q (want auto, nvml, nvidia-smi, dcgm or off)", o.Mode)
	}

	var why []string
	for _, t := range tries {
		src, devices, err := openGPUTry(ctx, t)
		if err == nil {
			return src, devices, ""
		}
		why = append(why, err.Error())
	}
	return nil, nil, "no GPU source: " + strings.Join(why, "; ")
}

// openGPUTry opens t's source and reads its devices. An error opening it is
// named by t; an error from the source names the source itself.
func openGPUTry(ctx context.Context, t gpuTry) (GPUSource, []result.GPU, error) {
	src, err := t.open()
	if err != nil {
		if t.name != "" {
			err = fmt.Errorf("%s: %w", t.name, err)
		}
		return nil, nil, err
	}
	devices, err := src.Devices(ctx)
	if err != nil {
		_ = src.Close()
		return nil, nil, err
	}
	return src, devices, nil
}

func (o GPUOptions) dcgmTry() gpuTry {
	return gpuTry{name: "DCGM " + o.DCGMURL, open: func() (GPUSource, error) {
		return NewDCGM(o.DCGMURL, o.Client), nil
	}}
}

func (o GPUOptions) nvmlTry() gpuTry {
	open := o.OpenNVML
	if open == nil {
		open = OpenNVML
	}
	return gpuTry{name: "NVML", open: open}
}

// smiTries are nvidia-smi here, then in the stack's container.
func (o GPUOptions) smiTries() []gpuTry {
	argv := o.NvidiaSMI
	if len(argv) == 0 {
		argv = []string{"nvidia-smi"}
	}
	lookPath := o.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	local := gpuTry{name: "nvidia-smi", open: func() (GPUSource, error) {
		if _, err := lookPath(argv[0]); err != nil {
			if errors.Is(err, exec.ErrNotFound) && !strings.Contains(argv[0], "/") {
				return nil, errors.New("not found on PATH")
			}
			return nil, err
		}
		return NewNvidiaSMI(LocalCommand, argv, ""), nil
	}}
	if o.Container == nil {
		return []gpuTry{local, {open: func() (GPUSource, error) {
			return nil, errors.New("no docker stack to run it in")
		}}}
	}
	where := "in " + cmp.Or(o.Where, "the stack's container")
	inContainer := gpuTry{name: "nvidia-smi " + where, open: func() (GPUSource, error) {
		return NewNvidiaSMI(o.Container, argv, where), nil
	}}
	return []gpuTry{local, inContainer}
}
