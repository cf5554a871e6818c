package config

import (
	"strings"

	"github.com/perfgate/perfgate/internal/utilization"
)

// Utilization says what perfgate needs, beyond what it can find itself, to
// report MBU and MFU: the model's size and shape, and the GPUs' peaks.
// Every key is optional: a model file's header (ModelFile), the engine's own
// account (llama.cpp's server and perfgate's simulator give the model's size
// in /v1/models) and the GPUs perfgate identifies fill what is not given,
// and the result says where each figure came from.
type Utilization struct {
	// ModelFile is a GGUF file, a .safetensors file, or a directory of a
	// sharded safetensors checkpoint with its config.json, relative to the
	// config: its header gives the parameters, the weights' bytes, the
	// layers, the KV heads and the head size. Only the header is read.
	ModelFile string `yaml:"model_file" json:"model_file,omitempty"`
	// Params is the model's parameter count (8.03e9), and BytesPerWeight
	// the bytes a weight takes as served (2 for BF16, 1 for FP8 or INT8,
	// about 0.56 for a 4-bit quantisation with its scales).
	Params         float64 `yaml:"params" json:"params,omitempty"`
	BytesPerWeight float64 `yaml:"bytes_per_weight" json:"bytes_per_weight,omitempty"`
	// Layers, KVHeads and HeadDim are the model's shape, and KVBytes the
	// bytes of a KV-cache element (2 for FP16/BF16, the default; 1 for an
	// FP8 cache): a token of context takes 2 × layers × KV heads × head
	// size × KV bytes of cache.
	Layers  int     `yaml:"layers" json:"layers,omitempty"`
	KVHeads int     `yaml:"kv_heads" json:"kv_heads,omitempty"`
	HeadDim int     `yaml:"head_dim" json:"head_dim,omitempty"`
	KVBytes float64 `yaml:"kv_bytes" json:"kv_bytes,omitempty"`
	// GPU names the product whose peaks perfgate's table gives ("H100
	// SXM"), in place of the GPUs it identifies, and GPUs how many serve
	// the model (tensor parallelism: the peaks add up).
	GPU  string `yaml:"gpu" json:"gpu,omitempty"`
	GPUs int    `yaml:"gpus" json:"gpus,omitempty"`
	// PeakBandwidthGBs and PeakTFLOPS are one GPU's peak memory bandwidth
	// (GB/s) and dense FP16/BF16 throughput (TFLOPS), for a GPU the table
	// does not list or a clock the datasheet does not assume.
	PeakBandwidthGBs float64 `yaml:"peak_bandwidth_gbs" json:"peak_bandwidth_gbs,omitempty"`
	PeakTFLOPS       float64 `yaml:"peak_tflops" json:"peak_tflops,omitempty"`
}

// utilization checks the utilization section: every figure positive and
// within what a model or a GPU can be, the model file present.
func (v *validator) utilization() {
	u := v.c.Utilization
	if u.ModelFile != "" {
		v.exists("utilization.model_file", u.ModelFile, false)
	}
	for _, f := range []struct {
		key   string
		x, hi float64
		unit  string
		given bool
	}{
		{"params", u.Params, 1e14, "parameters", u.Params != 0},
		{"bytes_per_weight", u.BytesPerWeight, 8, "bytes", u.BytesPerWeight != 0},
		{"kv_bytes", u.KVBytes, 8, "bytes", u.KVBytes != 0},
		{"peak_bandwidth_gbs", u.PeakBandwidthGBs, 1e6, "GB/s", u.PeakBandwidthGBs != 0},
		{"peak_tflops", u.PeakTFLOPS, 1e6, "TFLOPS", u.PeakTFLOPS != 0},
	} {
		if f.given && !(f.x > 0 && f.x <= f.hi) {
			v.add("utilization."+f.key, "must be above 0 and at most %s %s, got %s", fmtFloat(f.hi), f.unit, fmtFloat(f.x))
		}
	}
	for _, f := range []struct {
		key string
		x   int
	}{{"layers", u.Layers}, {"kv_heads", u.KVHeads}, {"head_dim", u.HeadDim}, {"gpus", u.GPUs}} {
		if f.x != 0 {
			v.intIn("utilization."+f.key, f.x, 1, 10_000, "")
		}
	}
	if u.BytesPerWeight != 0 && u.Params == 0 && u.ModelFile == "" {
		v.add("utilization.bytes_per_weight", "needs utilization.params: the weights' bytes are parameters × bytes a weight")
	}
	if len(u.GPU) > 100 {
		v.add("utilization.gpu", "must be at most 100 characters, got %d", len(u.GPU))
	} else if _, known := utilization.PeakOf(u.GPU); u.GPU != "" && !known && (u.PeakBandwidthGBs == 0 || u.PeakTFLOPS == 0) {
		var names []string
		for _, p := range utilization.Products() {
			names = append(names, p.Product)
		}
		v.add("utilization.gpu", "%q is not in perfgate's table of GPUs (%s): give its peaks too, utilization.peak_bandwidth_gbs and peak_tflops",
			u.GPU, strings.Join(names, ", "))
	}
}
