package utilization

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/perfgate/perfgate/internal/textsafe"
)

// Meta is what an engine says of its model and hardware in its /v1/models
// answer's "meta" object: llama.cpp's server gives n_params and size (the
// weights' bytes); perfgate's simulator adds the shape and the GPU it
// stands for, and says it is simulated. A zero field was not said.
type Meta struct {
	Params, WeightBytes          float64
	Layers, KVHeads, HeadDim     int
	KVBytes                      float64
	GPU                          string
	PeakBandwidthGBs, PeakTFLOPS float64
	Simulated                    bool
}

// The bounds a server's meta must keep to: a model of up to 10^14
// parameters (a hundred times the largest served), 10^15 bytes, 10^4
// layers, heads and head sizes, 16 bytes an element, 10^6 GB/s and TFLOPS.
const (
	maxMetaParams = 1e14
	maxMetaBytes  = 1e15
	maxMetaShape  = 10_000
	maxMetaPeak   = 1e6
	maxMetaGPU    = 100
)

// ParseMeta reads a model's meta object. The server is untrusted: a field
// of the wrong type, a count that cannot be true (negative, not finite,
// past the bounds above) is refused with its name, never used; an absent
// meta (nil, null) is no meta and no error.
func ParseMeta(raw json.RawMessage) (*Meta, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v struct {
		NParams   *float64 `json:"n_params"`
		Size      *float64 `json:"size"`
		NLayer    *float64 `json:"n_layer"`
		NHeadKV   *float64 `json:"n_head_kv"`
		HeadDim   *float64 `json:"head_dim"`
		KVBytes   *float64 `json:"kv_bytes_per_element"`
		GPU       *string  `json:"gpu"`
		Bandwidth *float64 `json:"peak_bandwidth_gbs"`
		TFLOPS    *float64 `json:"peak_tflops"`
		Simulated *bool    `json:"simulated"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("the model's meta: %w", err)
	}
	m := &Meta{}
	var bad []string
	num := func(name string, p *float64, hi float64, whole bool) float64 {
		if p == nil {
			return 0
		}
		x := *p
		if !(x >= 0 && x <= hi) || (whole && x != math.Trunc(x)) {
			bad = append(bad, fmt.Sprintf("%s %g (want %s from 0 to %g)", name, x, map[bool]string{true: "a whole number", false: "a number"}[whole], hi))
			return 0
		}
		return x
	}
	m.Params = num("n_params", v.NParams, maxMetaParams, false)
	m.WeightBytes = num("size", v.Size, maxMetaBytes, false)
	m.Layers = int(num("n_layer", v.NLayer, maxMetaShape, true))
	m.KVHeads = int(num("n_head_kv", v.NHeadKV, maxMetaShape, true))
	m.HeadDim = int(num("head_dim", v.HeadDim, maxMetaShape, true))
	m.KVBytes = num("kv_bytes_per_element", v.KVBytes, 16, false)
	m.PeakBandwidthGBs = num("peak_bandwidth_gbs", v.Bandwidth, maxMetaPeak, false)
	m.PeakTFLOPS = num("peak_tflops", v.TFLOPS, maxMetaPeak, false)
	if v.GPU != nil {
		m.GPU = strings.TrimSpace(textsafe.Cut(*v.GPU, maxMetaGPU))
	}
	m.Simulated = v.Simulated != nil && *v.Simulated
	if len(bad) > 0 {
		return nil, fmt.Errorf("the model's meta: %s", strings.Join(bad, "; "))
	}
	return m, nil
}
