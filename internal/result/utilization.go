package result

// Utilization in a result: how much of what the GPUs can do the model's
// decode and prefill used (MBU and MFU), and what those figures rest on.

// UtilizationBasis is what a run's MBU and MFU are computed from, said
// once per run: the model's size and KV cache per token, the GPUs' peaks,
// and where each came from. A figure it lacks is 0, and the repetitions
// have no MBU (no bandwidth or weights) or MFU (no FLOPs or parameters).
type UtilizationBasis struct {
	// Params is the model's parameter count; WeightBytes the bytes of its
	// weights as served (params × bytes a weight, or a model file's
	// tensors).
	Params      float64 `json:"params,omitempty"`
	WeightBytes float64 `json:"weight_bytes,omitempty"`
	// KVBytesPerToken is the KV cache one token of context takes: 2 (K
	// and V) × layers × KV heads × head size × bytes an element. 0 when
	// the model's shape is unknown: MBU then counts the weights alone,
	// a lower bound (Assumed says so).
	KVBytesPerToken float64 `json:"kv_bytes_per_token,omitempty"`
	// GPU names the product whose peaks are used ("H100 SXM"), and GPUs
	// how many serve the model: the peaks are per GPU, times GPUs.
	GPU  string `json:"gpu,omitempty"`
	GPUs int    `json:"gpus,omitempty"`
	// PeakBandwidthGBs (GB/s) and PeakTFLOPS (dense FP16/BF16) are one
	// GPU's peaks.
	PeakBandwidthGBs float64 `json:"peak_bandwidth_gbs,omitempty"`
	PeakTFLOPS       float64 `json:"peak_tflops,omitempty"`
	// Simulated says the figures are what perfgate's simulator declares it
	// stands for (an 8B model on an H100), not a GPU's.
	Simulated bool `json:"simulated,omitempty"`
	// Sources says where each input came from ("params, weights, layers,
	// KV heads, head size: GGUF header of model.gguf"; "peaks: the table,
	// for NVIDIA H100 80GB HBM3"), and Assumed what was assumed ("KV cache
	// elements of 2 bytes (utilization.kv_bytes)").
	Sources []string `json:"sources,omitempty"`
	Assumed []string `json:"assumed,omitempty"`
}

// Utilization is one repetition's MBU and MFU (see docs/headroom.md for
// the formulas): each nil when the basis or the repetition lacks what it
// needs (no decode of two or more tokens, no prompt tokens).
type Utilization struct {
	// MBU is the achieved bytes a second of decode (the weights read once
	// a decode step, the KV cache of every sequence's context read each
	// step) over the GPUs' peak bandwidth, 0..1.
	MBU *float64 `json:"mbu,omitempty"`
	// DecodeGBs is the achieved bytes a second of decode, in GB/s.
	DecodeGBs *float64 `json:"decode_gbs,omitempty"`
	// MFU is the FLOPs a second of the window's prefill (2 × parameters a
	// prompt token) over the GPUs' peak FLOPs, 0..1.
	MFU *float64 `json:"mfu,omitempty"`
	// PrefillTFLOPS is the achieved prefill FLOPs a second, in TFLOPS.
	PrefillTFLOPS *float64 `json:"prefill_tflops,omitempty"`
	// Impossible says why an MBU or MFU was left out: above 100%, which
	// no GPU does, so the basis (the peaks, the model's size) is wrong.
	Impossible string `json:"impossible,omitempty"`
}
