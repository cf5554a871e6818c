package utilization

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/modelfile"
	"github.com/perfgate/perfgate/internal/result"
)

// The names GPU sources give, to the products whose datasheet peaks apply.
func TestPeakOf(t *testing.T) {
	for name, want := range map[string]string{
		"NVIDIA H100 80GB HBM3":   "H100 SXM",
		"NVIDIA H100 PCIe":        "H100 PCIe",
		"NVIDIA H100 NVL":         "H100 NVL",
		"NVIDIA H200":             "H200 SXM",
		"NVIDIA H200 NVL":         "H200 NVL",
		"NVIDIA H20":              "H20",
		"NVIDIA A100-SXM4-80GB":   "A100 80GB SXM",
		"NVIDIA A100-SXM4-40GB":   "A100 40GB SXM",
		"NVIDIA A100 80GB PCIe":   "A100 80GB PCIe",
		"NVIDIA A100-PCIE-40GB":   "A100 40GB PCIe",
		"NVIDIA L40S":             "L40S",
		"NVIDIA L40":              "L40",
		"NVIDIA L4":               "L4",
		"NVIDIA A10":              "A10",
		"NVIDIA B200":             "B200",
		"NVIDIA GeForce RTX 4090": "GeForce RTX 4090",
		"Tesla T4":                "T4",
		"Tesla V100-SXM2-32GB":    "V100 SXM2",
		"simulated H100 SXM":      "H100 SXM",
		"h100 sxm":                "H100 SXM",
	} {
		p, ok := PeakOf(name)
		assert.True(t, ok, name)
		assert.Equal(t, want, p.Product, name)
		assert.Positive(t, p.BandwidthGBs, name)
		assert.Positive(t, p.TFLOPS, name)
	}
	for _, name := range []string{"", "NVIDIA A10G", "AMD Instinct MI300X", "NVIDIA A1000", "NVIDIA H2000"} {
		_, ok := PeakOf(name)
		assert.False(t, ok, "%q is not in the table", name)
	}
	h100, _ := PeakOf("NVIDIA H100 80GB HBM3")
	assert.Equal(t, Peak{"H100 SXM", 3350, 989}, h100)
	assert.Len(t, Products(), len(peaks))
}

func f64(x float64) *float64 { return &x }

// An 8B model in BF16 on one H100, decoding 8 sequences at 50 tokens a
// second each, 1,000-token prompts and 200-token answers: the worked
// example of docs/headroom.md, computed by hand.
func TestComputeWorkedExample(t *testing.T) {
	b, why := Basis(Given{Params: 8.03e9, BytesPerWeight: 2, Layers: 32, KVHeads: 8, HeadDim: 128, GPU: "H100 SXM"}, nil, nil, nil)
	require.NotNil(t, b, why)
	assert.Equal(t, 16.06e9, b.WeightBytes)
	assert.Equal(t, 131072.0, b.KVBytesPerToken, "2 × 32 × 8 × 128 × 2 bytes = 128 KiB")
	assert.Equal(t, 1, b.GPUs)
	assert.Contains(t, b.Assumed[0], "KV-cache elements of 2 bytes")

	r := &result.Repetition{Completed: 100, PromptTokens: 100_000, OutputTokens: 20_000,
		OutputThroughput: 400, InputThroughput: 2000, DecodeThroughput: f64(50)}
	u := Compute(b, r)
	require.NotNil(t, u)
	// 50 steps/s × 16.06 GB + 400 tok/s × 131072 B × (1000 + 100) tokens
	wantBytes := 50*16.06e9 + 400*131072.0*1100
	assert.InDelta(t, wantBytes/1e9, *u.DecodeGBs, 1e-9)
	assert.InDelta(t, wantBytes/1e9/3350, *u.MBU, 1e-12)
	assert.InDelta(t, 0.2569, *u.MBU, 0.001, "about 26%%: 803 + 58 GB/s of 3,350")
	assert.InDelta(t, 2*8.03e9*2000/1e12, *u.PrefillTFLOPS, 1e-9)
	assert.InDelta(t, 32.12/989, *u.MFU, 1e-9)

	// Two GPUs (tensor parallel): the peaks add up.
	b2 := *b
	b2.GPUs = 2
	u2 := Compute(&b2, r)
	assert.InDelta(t, *u.MBU/2, *u2.MBU, 1e-12)
	assert.InDelta(t, *u.MFU/2, *u2.MFU, 1e-12)

	// A peak too low for what was measured: no MBU above 100%, said why.
	low := *b
	low.PeakBandwidthGBs = 100
	lowU := Compute(&low, r)
	require.NotNil(t, lowU)
	assert.Nil(t, lowU.MBU)
	assert.NotNil(t, lowU.DecodeGBs, "the bytes moved are still a fact")
	assert.Contains(t, lowU.Impossible, "MBU of 861% cannot be")
	assert.NotNil(t, lowU.MFU)

	// Nothing decoded (one-token answers): no MBU; nothing completed: none.
	one := Compute(b, &result.Repetition{Completed: 4, PromptTokens: 4000, OutputTokens: 4, InputThroughput: 400})
	require.NotNil(t, one)
	assert.Nil(t, one.MBU)
	assert.NotNil(t, one.MFU)
	assert.Nil(t, Compute(b, &result.Repetition{Completed: 4, PromptTokens: 4000, OutputTokens: 4}), "neither")
	assert.Nil(t, Compute(b, &result.Repetition{}))
	assert.Nil(t, Compute(nil, r))
}

// Where each input comes from: the config first, then a model file, then
// the engine's meta; the GPU by name, else those identified, else what a
// simulator declares; and no basis, with why, when neither figure can be.
func TestBasisSources(t *testing.T) {
	file := &modelfile.Shape{Params: 1e9, WeightBytes: 0.6e9, Layers: 16, KVHeads: 4, HeadDim: 64, Source: "GGUF header of m.gguf"}
	meta := &Meta{Params: 2e9, WeightBytes: 4e9, GPU: "simulated H100 SXM", PeakBandwidthGBs: 3350, PeakTFLOPS: 989, Simulated: true}
	gpus := []result.GPU{{Model: "NVIDIA A100-SXM4-80GB"}, {Model: "NVIDIA A100-SXM4-80GB"}}

	b, _ := Basis(Given{}, file, nil, gpus)
	require.NotNil(t, b)
	assert.Equal(t, 0.6e9, b.WeightBytes)
	assert.Equal(t, "A100 80GB SXM", b.GPU)
	assert.Equal(t, 2, b.GPUs)
	assert.Equal(t, 2.0*16*4*64*2, b.KVBytesPerToken)
	assert.Contains(t, b.Sources, "parameters, weights, layers, KV heads, head size: GGUF header of m.gguf")
	assert.False(t, b.Simulated)

	b, _ = Basis(Given{Params: 3e9, BytesPerWeight: 1, KVBytes: 1}, file, meta, gpus)
	assert.Equal(t, 3e9, b.Params)
	assert.Equal(t, 3e9, b.WeightBytes)
	assert.Equal(t, 2.0*16*4*64*1, b.KVBytesPerToken, "an FP8 cache")
	assert.True(t, b.Simulated, "the simulator's declaration, not the machine's GPUs")
	assert.Equal(t, "simulated H100 SXM", b.GPU, "the simulator's own declaration, its peaks")
	assert.Equal(t, 3350.0, b.PeakBandwidthGBs)
	assert.Equal(t, 1, b.GPUs)

	b, _ = Basis(Given{}, nil, meta, nil)
	require.NotNil(t, b)
	assert.Equal(t, 4e9, b.WeightBytes)
	assert.Contains(t, b.Assumed[0], "no KV-cache reads in MBU")

	b, why := Basis(Given{}, nil, nil, []result.GPU{{Model: "NVIDIA H100 80GB HBM3"}})
	assert.Nil(t, b)
	assert.Contains(t, why, "the model's size is unknown")
	b, why = Basis(Given{Params: 1e9, BytesPerWeight: 2}, nil, nil, []result.GPU{{Model: "AMD Instinct MI300X"}})
	assert.Nil(t, b)
	assert.Contains(t, why, `"AMD Instinct MI300X" is not in perfgate's table`)
	b, _ = Basis(Given{Params: 1e9, BytesPerWeight: 2, PeakBandwidthGBs: 5300, PeakTFLOPS: 1307}, nil, nil, []result.GPU{{Model: "AMD Instinct MI300X"}})
	require.NotNil(t, b)
	assert.Equal(t, 5300.0, b.PeakBandwidthGBs)
	assert.Equal(t, "AMD Instinct MI300X", b.GPU)
	b, why = Basis(Given{Params: 1e9, BytesPerWeight: 2}, nil, nil, nil)
	assert.Nil(t, b)
	assert.Contains(t, why, "no GPU was identified")
}

// A server's meta is untrusted: what cannot be true is refused by name.
func TestParseMeta(t *testing.T) {
	m, err := ParseMeta(json.RawMessage(`{"vocab_type":2,"n_vocab":32000,"n_ctx_train":4096,"n_embd":256,"n_params":28000000,"size":56000000}`))
	require.NoError(t, err)
	assert.Equal(t, &Meta{Params: 28e6, WeightBytes: 56e6}, m, "llama.cpp's server's meta")
	for _, raw := range []string{"", "null"} {
		m, err := ParseMeta(json.RawMessage(raw))
		assert.NoError(t, err)
		assert.Nil(t, m)
	}
	for raw, want := range map[string]string{
		`{"n_params": -1}`:            "n_params -1",
		`{"size": 1e300}`:             "size 1e+300",
		`{"n_layer": 1.5}`:            "n_layer 1.5 (want a whole number",
		`{"n_params": "8B"}`:          "cannot unmarshal",
		`[1,2]`:                       "cannot unmarshal",
		`{"peak_tflops": 1e7}`:        "peak_tflops",
		`{"kv_bytes_per_element":99}`: "kv_bytes_per_element 99",
	} {
		_, err := ParseMeta(json.RawMessage(raw))
		require.Error(t, err, raw)
		assert.Contains(t, err.Error(), want, raw)
	}
	m, err = ParseMeta(json.RawMessage(`{"gpu": "H100\u001b[31m` + string(make([]byte, 0)) + `"}`))
	require.NoError(t, err)
	assert.NotContains(t, m.GPU, "\x1b", "a control character never reaches a log")
}

func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(`{"n_params":8030000000,"size":16060000000,"n_layer":32,"n_head_kv":8,"head_dim":128,"kv_bytes_per_element":2,"gpu":"simulated H100 SXM","peak_bandwidth_gbs":3350,"peak_tflops":989,"simulated":true}`))
	f.Add([]byte(`{"n_params":-5}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := ParseMeta(raw)
		if err != nil || m == nil {
			return
		}
		for _, x := range []float64{m.Params, m.WeightBytes, m.KVBytes, m.PeakBandwidthGBs, m.PeakTFLOPS} {
			if !(x >= 0) || math.IsInf(x, 0) {
				t.Fatalf("ParseMeta(%q) kept %v", raw, x)
			}
		}
		if m.Layers < 0 || m.KVHeads < 0 || m.HeadDim < 0 || len(m.GPU) > maxMetaGPU {
			t.Fatalf("ParseMeta(%q) = %+v", raw, m)
		}
	})
}
