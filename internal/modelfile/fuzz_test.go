package modelfile

import (
	"bytes"
	"testing"
)

// FuzzGGUF reads arbitrary bytes as a GGUF header: never a panic, a hang or
// a huge allocation, and a shape read without error is a sane one.
func FuzzGGUF(f *testing.F) {
	f.Add(smallGGUF())
	f.Add(encodeGGUF(2, smallKVs(), smallTensors()))
	f.Add(encodeGGUF(3, []ggufKV{
		kvStr("general.architecture", "jamba"),
		kvU32("jamba.block_count", 4),
		kvU32("jamba.attention.head_count", 32),
		{"jamba.attention.head_count_kv", ggufArray, ggufArr{ggufUint16, []any{0, 8, 0, 4}}},
		kvU32("jamba.attention.key_length", 128),
		kvU32("jamba.attention.value_length", 64),
		kvU32("jamba.attention.kv_lora_rank", 512),
	}, []ggufTensor{{"w", []uint64{256, 2}, typeQ4_K}, {"v", []uint64{32}, typeQ8_0}}))
	f.Add([]byte("GGUF"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadGGUF(bytes.NewReader(data), "fuzz.gguf")
		if err != nil {
			return
		}
		if s.Arch == "" || s.Layers < 1 || s.KVHeads < 1 || s.HeadDim < 1 || s.Params < 0 || s.WeightBytes < 0 {
			t.Errorf("insane shape without error: %+v", s)
		}
	})
}

// FuzzSafetensors reads arbitrary bytes as a safetensors file's header and
// as a config.json: never a panic or a huge allocation, and what reads
// without error is sane.
func FuzzSafetensors(f *testing.F) {
	f.Add(encodeSafetensors(tinyTensors, -1), []byte(tinyConfig))
	f.Add(encodeSafetensors([]stTensor{
		{name: "a", dtype: "F8_E4M3", shape: []uint64{8, 8}},
		{name: "b", dtype: "F4", shape: []uint64{2, 3}},
		{name: "c", dtype: "NEW", shape: []uint64{}, offsets: []uint64{35, 40}},
	}, -1), []byte(`{"model_type": "llava", "text_config": {"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 8}, "quantization_config": {"quant_method": "awq"}}`))
	f.Add(rawSafetensors(`{"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}`, 1), []byte(llama8BConfig))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, file, config []byte) {
		h, err := readSafetensorsHeader(bytes.NewReader(file), int64(len(file)), "fuzz.safetensors")
		if err == nil {
			var total uint64
			for _, tensor := range h.tensors {
				if tensor.end < tensor.start {
					t.Errorf("tensor %q: offsets [%d, %d]", tensor.name, tensor.start, tensor.end)
				}
				total += tensor.end - tensor.start
			}
			if total > uint64(len(file)) {
				t.Errorf("tensors of %d bytes in a file of %d", total, len(file))
			}
		}
		s, err := parseConfig(config, "fuzz/config.json")
		if err == nil && (s.Layers < 1 || s.KVHeads < 1 || s.HeadDim < 1) {
			t.Errorf("insane shape without error: %+v", s)
		}
	})
}
