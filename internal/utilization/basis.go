package utilization

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfgate/perfgate/internal/modelfile"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// Given is what the config says of the model and the GPUs
// (config.Utilization); a zero field is not given.
type Given struct {
	Params         float64
	BytesPerWeight float64
	Layers         int
	KVHeads        int
	HeadDim        int
	// KVBytes is the bytes of one KV-cache element (2 for FP16/BF16, 1
	// for an FP8 cache).
	KVBytes float64
	// GPU names the product to look up ("H100 SXM"); GPUs how many serve.
	GPU  string
	GPUs int
	// PeakBandwidthGBs and PeakTFLOPS override one GPU's peaks.
	PeakBandwidthGBs float64
	PeakTFLOPS       float64
}

// DefaultKVBytes is the bytes of a KV-cache element when neither the
// config nor the engine says: FP16/BF16, every engine's default cache.
const DefaultKVBytes = 2

// Basis is what MBU and MFU rest on, from the config (first), a model
// file's header, the engine's own account (/v1/models meta) and the GPUs
// perfgate identified: nil, with why, when there is not enough for either
// figure. Everything it took from a source or assumed is said in the
// basis's Sources and Assumed.
func Basis(g Given, file *modelfile.Shape, meta *Meta, gpus []result.GPU) (*result.UtilizationBasis, string) {
	b := &result.UtilizationBasis{}
	var sources, assumed []string
	from := func(what, where string) { sources = append(sources, what+": "+where) }

	// The model: the config's figures, else the file's, else the engine's.
	model := map[string]string{}
	pick := func(name string, cfg, fileV, metaV float64) float64 {
		switch {
		case cfg > 0:
			model[name] = "the config"
			return cfg
		case fileV > 0:
			model[name] = file.Source
			return fileV
		case metaV > 0:
			model[name] = "the engine's /v1/models"
			return metaV
		}
		return 0
	}
	var fs modelfile.Shape
	if file != nil {
		fs = *file
	}
	var m Meta
	if meta != nil {
		m = *meta
	}
	b.Params = pick("parameters", g.Params, fs.Params, m.Params)
	switch {
	case g.BytesPerWeight > 0 && b.Params > 0:
		b.WeightBytes = b.Params * g.BytesPerWeight
		model["weights"] = "parameters × utilization.bytes_per_weight"
	default:
		b.WeightBytes = pick("weights", 0, fs.WeightBytes, m.WeightBytes)
	}
	layers := pick("layers", float64(g.Layers), float64(fs.Layers), float64(m.Layers))
	kvHeads := pick("KV heads", float64(g.KVHeads), float64(fs.KVHeads), float64(m.KVHeads))
	headDim := pick("head size", float64(g.HeadDim), float64(fs.HeadDim), float64(m.HeadDim))
	kvBytes := pick("KV element bytes", g.KVBytes, 0, m.KVBytes)
	if layers > 0 && kvHeads > 0 && headDim > 0 {
		if kvBytes == 0 {
			kvBytes = DefaultKVBytes
			assumed = append(assumed, fmt.Sprintf("KV-cache elements of %d bytes, FP16/BF16 (set utilization.kv_bytes: 1 for an FP8 cache)", DefaultKVBytes))
		}
		b.KVBytesPerToken = 2 * layers * kvHeads * headDim * kvBytes
	} else {
		assumed = append(assumed, "no KV-cache reads in MBU: the model's layers, KV heads and head size are unknown (utilization.layers, kv_heads, head_dim, or a model_file), so MBU counts the weights alone, a lower bound")
	}
	for _, where := range uniqueValues(model) {
		var what []string
		for _, name := range []string{"parameters", "weights", "layers", "KV heads", "head size", "KV element bytes"} {
			if model[name] == where {
				what = append(what, name)
			}
		}
		from(strings.Join(what, ", "), where)
	}

	// The GPUs: the config's product and count, else those identified,
	// else the engine's declaration (the simulator's).
	b.GPUs = g.GPUs
	name, nameFrom := g.GPU, "utilization.gpu"
	if name == "" && m.Simulated && m.GPU != "" {
		// A simulated engine stands for its declared GPU, whatever GPUs
		// the machine it runs on has.
		name, nameFrom = m.GPU, "the simulator's declaration"
	}
	if name == "" && len(gpus) > 0 {
		name, nameFrom = gpus[0].Model, "the GPUs perfgate identified"
		if b.GPUs == 0 {
			b.GPUs = len(gpus)
		}
	}
	if name == "" && m.GPU != "" {
		name, nameFrom = m.GPU, "the engine's /v1/models"
	}
	b.GPUs = max(b.GPUs, 1)
	peak, known := Peak{}, false
	if name != "" && !(m.Simulated && nameFrom == "the simulator's declaration" && m.PeakBandwidthGBs > 0) {
		// A simulator declares its own peaks (scaled with its step time):
		// the table's would not fit its speed.
		peak, known = PeakOf(name)
	}
	b.PeakBandwidthGBs, b.PeakTFLOPS = peak.BandwidthGBs, peak.TFLOPS
	if known {
		b.GPU = peak.Product
		from("peaks", fmt.Sprintf("perfgate's table, %s for %q (%s)", peak.Product, name, nameFrom))
	} else if name != "" {
		b.GPU = textsafe.Cut(name, 100)
	}
	if m.PeakBandwidthGBs > 0 && !known {
		b.PeakBandwidthGBs = m.PeakBandwidthGBs
		from("peak bandwidth", "the engine's /v1/models")
	}
	if m.PeakTFLOPS > 0 && !known {
		b.PeakTFLOPS = m.PeakTFLOPS
		from("peak FLOPs", "the engine's /v1/models")
	}
	if g.PeakBandwidthGBs > 0 {
		b.PeakBandwidthGBs = g.PeakBandwidthGBs
		from("peak bandwidth", "utilization.peak_bandwidth_gbs")
	}
	if g.PeakTFLOPS > 0 {
		b.PeakTFLOPS = g.PeakTFLOPS
		from("peak FLOPs", "utilization.peak_tflops")
	}
	b.Simulated = m.Simulated
	b.Sources, b.Assumed = sources, assumed

	mbu := b.WeightBytes > 0 && b.PeakBandwidthGBs > 0
	mfu := b.Params > 0 && b.PeakTFLOPS > 0
	if !mbu && !mfu {
		var why []string
		if b.WeightBytes == 0 && b.Params == 0 {
			why = append(why, "the model's size is unknown (utilization.params and bytes_per_weight, or utilization.model_file; the engine's /v1/models gave none)")
		}
		switch {
		case name == "":
			why = append(why, "no GPU was identified (utilization.gpu names one)")
		case !known && b.PeakBandwidthGBs == 0:
			why = append(why, fmt.Sprintf("%q is not in perfgate's table of GPUs (utilization.peak_bandwidth_gbs and peak_tflops give its peaks)", name))
		}
		if len(why) == 0 {
			why = append(why, "the model's size and the GPUs' peaks do not meet")
		}
		return nil, strings.Join(why, "; ")
	}
	return b, ""
}

// uniqueValues are m's values, each once, in the order of their keys'
// first use in the model's fields.
func uniqueValues(m map[string]string) []string {
	var out []string
	for _, name := range []string{"parameters", "weights", "layers", "KV heads", "head size", "KV element bytes"} {
		v, ok := m[name]
		if !ok {
			continue
		}
		seen := false
		for _, o := range out {
			seen = seen || o == v
		}
		if !seen {
			out = append(out, v)
		}
	}
	return out
}

// Compute is a repetition's MBU and MFU on basis b; nil when b is nil or
// the repetition completed nothing.
//
//	steps/s      = D, the repetition's decode rate of one sequence (tokens a second after its first)
//	context      = mean prompt tokens + mean output tokens / 2, a sequence's mean context while it decodes
//	decode bytes/s = D × weight bytes + output tokens/s × KV bytes a token × context
//	MBU          = decode bytes/s / (peak bandwidth × GPUs)
//	MFU          = 2 × parameters × prompt tokens/s / (peak FLOPs × GPUs)
//
// Every decode step reads the weights once, and each sequence in the batch
// reads its context's KV cache: with B sequences decoding at once (output
// tokens a second over D), that is D × B × KV a token × context a second.
func Compute(b *result.UtilizationBasis, r *result.Repetition) *result.Utilization {
	if b == nil || r.Completed <= 0 {
		return nil
	}
	gpus := float64(max(b.GPUs, 1))
	out := &result.Utilization{}
	if b.WeightBytes > 0 && b.PeakBandwidthGBs > 0 && r.DecodeThroughput != nil && *r.DecodeThroughput > 0 && finite(*r.DecodeThroughput) {
		d := *r.DecodeThroughput
		ctx := (float64(r.PromptTokens) + float64(r.OutputTokens)/2) / float64(r.Completed)
		bytes := d*b.WeightBytes + r.OutputThroughput*b.KVBytesPerToken*ctx
		if finite(bytes) && bytes > 0 {
			gbs := bytes / 1e9
			mbu := gbs / (b.PeakBandwidthGBs * gpus)
			out.DecodeGBs = &gbs
			if mbu <= 1 {
				out.MBU = &mbu
			} else {
				out.Impossible = fmt.Sprintf("MBU of %.0f%% cannot be: decode moved %.4g GB/s, past %d × %.4g GB/s; the peak bandwidth or the weights' bytes (%.4g GB) are wrong",
					100*mbu, gbs, int(gpus), b.PeakBandwidthGBs, b.WeightBytes/1e9)
			}
		}
	}
	if b.Params > 0 && b.PeakTFLOPS > 0 && r.InputThroughput > 0 && finite(r.InputThroughput) {
		tflops := 2 * b.Params * r.InputThroughput / 1e12
		mfu := tflops / (b.PeakTFLOPS * gpus)
		out.PrefillTFLOPS = &tflops
		if mfu <= 1 {
			out.MFU = &mfu
		} else {
			why := fmt.Sprintf("MFU of %.0f%% cannot be: prefill did %.4g TFLOPS, past %d × %.4g; the peak FLOPs or the parameters (%.4g) are wrong",
				100*mfu, tflops, int(gpus), b.PeakTFLOPS, b.Params)
			out.Impossible = strings.TrimPrefix(out.Impossible+"; "+why, "; ")
		}
	}
	if out.DecodeGBs == nil && out.PrefillTFLOPS == nil {
		return nil
	}
	return out
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
