package sim

import "fmt"

// Declared is what the simulator stands for: the model and the GPU whose
// figures it approximates, for bandwidth and compute utilisation figures
// (bytes a decode step must read against PeakBandwidthGBs, FLOPs against
// PeakTFLOPS). It is a declaration, not a measurement: nothing the
// simulator does reads weights or computes anything, and its step times
// come from StepBase, PerSeq and PerPrefillToken, not from these figures.
// GET /v1/models serves it in each model's "meta".
type Declared struct {
	// Params is the model's parameter count.
	Params float64
	// BytesPerWeight is the size of a weight in bytes (2: bf16).
	BytesPerWeight float64
	// Layers, KVHeads and HeadDim shape the KV cache: each token holds a K
	// and a V vector of KVHeads × HeadDim elements in every layer.
	Layers, KVHeads, HeadDim int
	// KVBytesPerElement is the size of a KV-cache element in bytes (2:
	// bf16).
	KVBytesPerElement float64
	// GPU names the accelerator, marked as simulated.
	GPU string
	// PeakBandwidthGBs is the GPU's peak memory bandwidth in GB/s (10^9
	// bytes a second).
	PeakBandwidthGBs float64
	// PeakTFLOPS is the GPU's peak dense BF16 throughput in TFLOP/s.
	PeakTFLOPS float64
}

// WeightBytes is the size of the weights in bytes: Params × BytesPerWeight.
func (d Declared) WeightBytes() float64 { return d.Params * d.BytesPerWeight }

// KVBytesPerToken is the KV cache one token takes, in bytes: K and V ×
// Layers × KVHeads × HeadDim × KVBytesPerElement.
func (d Declared) KVBytesPerToken() float64 {
	return 2 * float64(d.Layers*d.KVHeads*d.HeadDim) * d.KVBytesPerElement
}

// Declared is what the simulator stands for (see Declared): the model and
// GPU DefaultConfig's figures approximate, an 8B Llama-shaped model (8.03e9
// parameters, 32 layers, 8 KV heads of 128 dimensions) in bf16 on one H100
// SXM (3350 GB/s, 989 dense BF16 TFLOP/s). A simulator of shorter steps
// (StepBase, as tests set it) stands for a GPU as much faster: its peaks
// scale by DefaultConfig's StepBase over its own, so that the utilisation
// figures computed from its speed keep their meaning (about 40% MBU at one
// sequence, at any StepBase). The regression knobs (Slowdown, stalls,
// drift) do not change what it stands for: they show as lower figures.
func (c Config) Declared() Declared {
	d := Declared{
		Params:            8.03e9,
		BytesPerWeight:    2,
		Layers:            32,
		KVHeads:           8,
		HeadDim:           128,
		KVBytesPerElement: 2,
		GPU:               "simulated H100 SXM",
		PeakBandwidthGBs:  3350,
		PeakTFLOPS:        989,
	}
	if base := DefaultConfig().StepBase; c.StepBase > 0 && c.StepBase != base {
		scale := float64(base) / float64(c.StepBase)
		d.PeakBandwidthGBs *= scale
		d.PeakTFLOPS *= scale
		d.GPU = fmt.Sprintf("simulated H100 SXM, %.3gx as fast (--step-base %s)", scale, c.StepBase)
	}
	return d
}
