package telemetry

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"

	dto "github.com/prometheus/client_model/go"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/httpguard"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
)

// The DCGM exporter's fields perfgate reads, and its labels. The exporter
// names each series after the DCGM field and labels it with the GPU:
//
//	DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-...",pci_bus_id="00000000:01:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-a",DCGM_FI_DRIVER_VERSION="550.54.15"} 40000
//
// A MIG-enabled GPU has a series per GPU instance (GPU_I_ID, GPU_I_PROFILE),
// whose framebuffer figures are the instance's share of the GPU's.
const (
	dcgmFBUsed     = "DCGM_FI_DEV_FB_USED"     // MiB
	dcgmFBFree     = "DCGM_FI_DEV_FB_FREE"     // MiB
	dcgmFBReserved = "DCGM_FI_DEV_FB_RESERVED" // MiB; newer exporters only
	dcgmGPUUtil    = "DCGM_FI_DEV_GPU_UTIL"    // %
	dcgmPower      = "DCGM_FI_DEV_POWER_USAGE" // W

	dcgmLabelGPU      = "gpu"
	dcgmLabelUUID     = "UUID"
	dcgmLabelModel    = "modelName"
	dcgmLabelDriver   = "DCGM_FI_DRIVER_VERSION"
	dcgmLabelInstance = "GPU_I_ID"
)

// DCGM's "blank" sentinels, each the first of a few (not found, not
// supported, no permission): an exporter that passes one through means "no
// value". Any other figure out of a GPU's range is refused, not taken for
// a blank (checkGPUSample).
const (
	dcgmInt32Blank = 0x7ffffff0         // DCGM_INT32_BLANK
	dcgmFP64Blank  = 1 << 47            // DCGM_FP64_BLANK
	dcgmInt64Blank = 0x7ffffffffffffff0 // DCGM_INT64_BLANK: 2^63 as a float64
	dcgmBlanks     = 16                 // each blank and the sentinels after it
)

// dcgmIsBlank reports whether v is one of DCGM's blank sentinels.
func dcgmIsBlank(v float64) bool {
	return (v >= dcgmInt32Blank && v < dcgmInt32Blank+dcgmBlanks) ||
		(v >= dcgmFP64Blank && v < dcgmFP64Blank+dcgmBlanks) ||
		v == dcgmInt64Blank
}

// dcgmPageLimit bounds the page read: an exporter with every field on a
// large machine is a few MiB. A larger page is an error, never read in
// part.
const dcgmPageLimit = 32 << 20

// dcgm reads a DCGM exporter's Prometheus page.
type dcgm struct {
	url    string
	client *http.Client
}

var _ GPUSource = (*dcgm)(nil)

// NewDCGM is a GPU source that reads the DCGM exporter page at url
// (http://gpu-host:9400/metrics): memory in use and free (and reserved, where
// the exporter has it), utilisation and power of each GPU. client nil is a
// client with a 5s timeout; either way no redirect is followed, and a client
// without a timeout gets one of 5s.
func NewDCGM(url string, client *http.Client) GPUSource {
	return &dcgm{url: url, client: guardClient(client)}
}

func (d *dcgm) Kind() string     { return config.GPUDCGM }
func (d *dcgm) Describe() string { return "dcgm " + d.url }
func (d *dcgm) Close() error     { return nil }

// Sample reads the page once.
func (d *dcgm) Sample(ctx context.Context) ([]GPUSample, error) {
	gpus, err := d.read(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]GPUSample, len(gpus))
	for i, g := range gpus {
		out[i] = g.sample
	}
	return out, nil
}

// Devices reads the page once and describes the GPUs from their labels. The
// exporter does not say the CUDA version.
func (d *dcgm) Devices(ctx context.Context) ([]result.GPU, error) {
	gpus, err := d.read(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]result.GPU, len(gpus))
	for i, g := range gpus {
		out[i] = result.GPU{
			Index:       g.sample.Index,
			Model:       g.model,
			UUID:        g.uuid,
			MemoryBytes: uint64(g.sample.MemoryTotalMiB * (1 << 20)),
			Driver:      g.driver,
		}
	}
	return out, nil
}

// dcgmGPU is one GPU as the page describes it.
type dcgmGPU struct {
	sample              GPUSample
	model, uuid, driver string
}

func (d *dcgm) read(ctx context.Context) ([]dcgmGPU, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Describe(), err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Describe(), err)
	}
	defer resp.Body.Close()
	if re := httpguard.Redirected(resp); re != nil {
		return nil, fmt.Errorf("%s: %w", d.Describe(), re)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %s", d.Describe(), resp.Status)
	}
	page, err := safeio.ReadAll(resp.Body, dcgmPageLimit, "the page")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Describe(), err)
	}
	gpus, err := parseDCGM(page)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Describe(), err)
	}
	return gpus, nil
}

// dcgmSeries gathers one GPU's figures from the page.
type dcgmSeries struct {
	model, uuid, driver string
	// The framebuffer figures, per GPU instance ("" for a whole GPU).
	used, free, reserved map[string]float64
	util, power          *float64
}

// parseDCGM reads an exporter page into its GPUs, in index order. A GPU's
// framebuffer figures are summed over its MIG instances; its utilisation and
// power are the first series' (they are the whole GPU's). A GPU without
// DCGM_FI_DEV_FB_USED is an error; without utilisation, its UtilizationPct is
// NaN; without power, PowerW is nil; without DCGM_FI_DEV_FB_FREE, its total is
// unknown (0).
func parseDCGM(page []byte) ([]dcgmGPU, error) {
	if len(page) > 0 && page[len(page)-1] != '\n' {
		// As ParsePage: a last line without its newline is whole. A copy:
		// page is the caller's.
		page = append(page[:len(page):len(page)], '\n')
	}
	families, err := parseExposition(page)
	if err != nil {
		return nil, fmt.Errorf("parse the page: %w", err)
	}
	byIndex := map[int]*dcgmSeries{}
	for _, name := range []string{dcgmFBUsed, dcgmFBFree, dcgmFBReserved, dcgmGPUUtil, dcgmPower} {
		mf := families[name]
		if mf == nil {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			index, err := strconv.Atoi(labels[dcgmLabelGPU])
			if err != nil || index < 0 {
				continue // not a GPU's series
			}
			v, ok := dcgmValue(m)
			if !ok {
				continue
			}
			s := byIndex[index]
			if s == nil {
				s = &dcgmSeries{used: map[string]float64{}, free: map[string]float64{}, reserved: map[string]float64{}}
				byIndex[index] = s
			}
			s.model = cmp.Or(s.model, labels[dcgmLabelModel])
			s.uuid = cmp.Or(s.uuid, labels[dcgmLabelUUID])
			s.driver = cmp.Or(s.driver, labels[dcgmLabelDriver])
			instance := labels[dcgmLabelInstance]
			switch name {
			case dcgmFBUsed:
				dcgmSetOnce(s.used, instance, v)
			case dcgmFBFree:
				dcgmSetOnce(s.free, instance, v)
			case dcgmFBReserved:
				dcgmSetOnce(s.reserved, instance, v)
			case dcgmGPUUtil:
				if s.util == nil {
					s.util = &v
				}
			case dcgmPower:
				if s.power == nil {
					s.power = &v
				}
			}
		}
	}
	if len(byIndex) == 0 {
		return nil, fmt.Errorf("no GPU on the page (no %s series labelled gpu: is it among the exporter's counters?)", dcgmFBUsed)
	}

	indices := slices.Sorted(maps.Keys(byIndex))
	out := make([]dcgmGPU, 0, len(indices))
	for _, i := range indices {
		s := byIndex[i]
		if len(s.used) == 0 {
			return nil, fmt.Errorf("GPU %d has no %s on the page", i, dcgmFBUsed)
		}
		g := dcgmGPU{model: s.model, uuid: s.uuid, driver: s.driver}
		g.sample.Index = i
		g.sample.MemoryUsedMiB = dcgmSum(s.used)
		if len(s.free) > 0 {
			g.sample.MemoryTotalMiB = g.sample.MemoryUsedMiB + dcgmSum(s.free) + dcgmSum(s.reserved)
		}
		g.sample.UtilizationPct = math.NaN()
		if s.util != nil {
			g.sample.UtilizationPct = *s.util
		}
		g.sample.PowerW = s.power
		if err := checkGPUSample(g.sample); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// dcgmValue is a series' value; false for a DCGM blank or NaN (no value).
// An infinite value is returned, for checkGPUSample to refuse.
func dcgmValue(m *dto.Metric) (float64, bool) {
	var v float64
	switch {
	case m.Gauge != nil:
		v = m.GetGauge().GetValue()
	case m.Untyped != nil:
		v = m.GetUntyped().GetValue()
	case m.Counter != nil:
		v = m.GetCounter().GetValue()
	default:
		return 0, false
	}
	if math.IsNaN(v) || dcgmIsBlank(v) {
		return 0, false
	}
	return v, true
}

// dcgmSetOnce sets m[k] unless it is set: a series repeated with other labels
// (the pod using the GPU) is the same figure.
func dcgmSetOnce(m map[string]float64, k string, v float64) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

func dcgmSum(m map[string]float64) float64 {
	var s float64
	for _, k := range slices.Sorted(maps.Keys(m)) { // a fixed order: a fixed sum
		s += m[k]
	}
	return s
}
