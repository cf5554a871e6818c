package modelfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// tinyTensors is a tiny llama in one file: 232 parameters in 480 bytes.
var tinyTensors = []stTensor{
	{name: "model.embed_tokens.weight", dtype: "BF16", shape: []uint64{10, 8}},            // 80 elements, 160 bytes
	{name: "model.layers.0.self_attn.q_proj.weight", dtype: "F16", shape: []uint64{8, 8}}, // 64, 128
	{name: "model.layers.0.input_layernorm.weight", dtype: "F32", shape: []uint64{8}},     // 8, 32
	{name: "lm_head.weight", dtype: "BF16", shape: []uint64{10, 8}},                       // 80, 160
}

const tinyConfig = `{"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 8}`

var tinyShape = Shape{
	Arch: "llama", Params: 232, WeightBytes: 480, Layers: 2, KVHeads: 2, HeadDim: 2,
	Source: "safetensors header of model.safetensors + config.json",
	Notes:  []string{"no head_dim: head dimension = hidden_size / num_attention_heads = 8 / 4"},
}

// tinyDir is a directory holding the tiny llama as model.safetensors and
// its config.json.
func tinyDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "model.safetensors", encodeSafetensors(tinyTensors, -1))
	writeFile(t, dir, "config.json", []byte(tinyConfig))
	return dir
}

// One file and its config.json, read as the file or as its directory,
// through ReadSafetensors or Read.
func TestReadSafetensorsSingle(t *testing.T) {
	dir := tinyDir(t)
	file := filepath.Join(dir, "model.safetensors")
	for name, read := range map[string]func() (Shape, error){
		"ReadSafetensors(file)": func() (Shape, error) { return ReadSafetensors(file) },
		"ReadSafetensors(dir)":  func() (Shape, error) { return ReadSafetensors(dir) },
		"Read(file)":            func() (Shape, error) { return Read(file) },
		"Read(dir)":             func() (Shape, error) { return Read(dir) },
	} {
		s, err := read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(s, tinyShape) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", name, s, tinyShape)
		}
	}
}

// shardedDir is a directory of two shards, their index and config.json.
func shardedDir(t *testing.T, weightMap map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "model-00001-of-00002.safetensors", encodeSafetensors([]stTensor{
		{name: "model.embed_tokens.weight", dtype: "BF16", shape: []uint64{16, 8}},                // 128, 256
		{name: "model.layers.0.self_attn.q_proj.weight", dtype: "F8_E4M3", shape: []uint64{8, 8}}, // 64, 64
		{name: "model.layers.0.self_attn.q_proj.weight_scale", dtype: "F32", shape: []uint64{}},   // 1, 4
	}, -1))
	writeFile(t, dir, "model-00002-of-00002.safetensors", encodeSafetensors([]stTensor{
		{name: "model.layers.1.mlp.down_proj.weight", dtype: "BF16", shape: []uint64{8, 24}}, // 192, 384
		{name: "lm_head.weight", dtype: "BF16", shape: []uint64{16, 8}},                      // 128, 256
	}, -1))
	if weightMap == nil {
		weightMap = map[string]string{
			"model.embed_tokens.weight":                    "model-00001-of-00002.safetensors",
			"model.layers.0.self_attn.q_proj.weight":       "model-00001-of-00002.safetensors",
			"model.layers.0.self_attn.q_proj.weight_scale": "model-00001-of-00002.safetensors",
			"model.layers.1.mlp.down_proj.weight":          "model-00002-of-00002.safetensors",
			"lm_head.weight":                               "model-00002-of-00002.safetensors",
		}
	}
	index, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 964}, "weight_map": weightMap})
	writeFile(t, dir, indexFileName, index)
	writeFile(t, dir, "config.json", []byte(`{
		"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
		"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
		"quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}
	}`))
	return dir
}

// Two shards named by model.safetensors.index.json, with config.json: every
// shard's header is read; head_dim is taken as given; a quantised
// checkpoint is counted as stored, and noted.
func TestReadSafetensorsSharded(t *testing.T) {
	dir := shardedDir(t, nil)
	want := Shape{
		Arch: "qwen2", Params: 128 + 64 + 1 + 192 + 128, WeightBytes: 256 + 64 + 4 + 384 + 256,
		Layers: 2, KVHeads: 1, HeadDim: 16,
		Source: "safetensors headers of 2 shards (model.safetensors.index.json) + config.json",
		Notes: []string{
			`quantised checkpoint (quant_method "fp8"): WeightBytes are the bytes as stored; Params counts stored elements, fewer than the parameters where several are packed to an element`,
		},
	}
	for _, path := range []string{dir, filepath.Join(dir, indexFileName)} {
		s, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s, want) {
			t.Errorf("Read(%s):\ngot  %+v\nwant %+v", path, s, want)
		}
	}

	// One shard alone would undercount the model.
	_, err := Read(filepath.Join(dir, "model-00002-of-00002.safetensors"))
	if err == nil || !strings.Contains(err.Error(), "it is one of the 2 shards") {
		t.Errorf("one shard: %v", err)
	}
}

// The index's weight_map and the shards must agree; a shard name may not
// leave the directory.
func TestReadSafetensorsBadIndex(t *testing.T) {
	const s1, s2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
	for _, c := range []struct {
		name      string
		weightMap map[string]string
		want      string
	}{
		{"escaping shard name", map[string]string{"lm_head.weight": "../model-00002-of-00002.safetensors"}, `weight_map: tensor "lm_head.weight": shard "../model-00002-of-00002.safetensors" is not a file name in the index's directory`},
		{"absolute shard name", map[string]string{"lm_head.weight": "/etc/passwd"}, `shard "/etc/passwd" is not a file name`},
		{"empty weight_map", map[string]string{}, `key "weight_map" is missing or empty`},
		{"tensor not in its shard", map[string]string{"lm_head.weight": s1, "model.embed_tokens.weight": s1}, `puts tensor "lm_head.weight" in model-00001-of-00002.safetensors, whose header has no such tensor`},
		{"missing shard", map[string]string{"lm_head.weight": "model-00003-of-00003.safetensors"}, `model-00003-of-00003.safetensors: no such file`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(shardedDir(t, c.weightMap))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant one with %q", err, c.want)
			}
		})
	}

	// Tensors of the shards that the index does not list are counted, and
	// noted; so is a total_size that disagrees with the shards.
	s, err := Read(shardedDir(t, map[string]string{"lm_head.weight": s2, "model.embed_tokens.weight": s1}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Params != 513 || len(s.Notes) != 2 || !strings.Contains(s.Notes[1], "3 tensors in the shards are not in") {
		t.Errorf("unlisted tensors: %+v", s)
	}

	// A tensor in two shards would be counted twice.
	dir := shardedDir(t, nil)
	writeFile(t, dir, s2, encodeSafetensors([]stTensor{{name: "model.embed_tokens.weight", dtype: "BF16", shape: []uint64{16, 8}}}, -1))
	_, err = Read(dir)
	if err == nil || !strings.Contains(err.Error(), `tensor "model.embed_tokens.weight" is in both model-00001-of-00002.safetensors and model-00002-of-00002.safetensors`) {
		t.Errorf("tensor in two shards: %v", err)
	}
}

// Headers that are wrong: each error names the file, the tensor where
// there is one, and what was expected.
func TestReadSafetensorsBadHeader(t *testing.T) {
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"dtype and offsets disagree", encodeSafetensors([]stTensor{
			{name: "a", dtype: "F32", shape: []uint64{4}, offsets: []uint64{0, 8}},
			{name: "b", dtype: "BF16", shape: []uint64{4}, offsets: []uint64{8, 16}},
			{name: "c", dtype: "F4", shape: []uint64{3}, offsets: []uint64{16, 18}},
		}, -1), `2 tensors' data_offsets disagree with their dtype and shape: "a" (F32 × 4 elements, data_offsets [0, 8] = 8 bytes), "c" (F4 × 3 elements, data_offsets [16, 18] = 2 bytes)`},
		{"many disagree", encodeSafetensors([]stTensor{
			{name: "a", dtype: "F32", shape: []uint64{1}, offsets: []uint64{0, 1}},
			{name: "b", dtype: "F32", shape: []uint64{1}, offsets: []uint64{1, 2}},
			{name: "c", dtype: "F32", shape: []uint64{1}, offsets: []uint64{2, 3}},
			{name: "d", dtype: "F32", shape: []uint64{1}, offsets: []uint64{3, 4}},
			{name: "e", dtype: "F32", shape: []uint64{1}, offsets: []uint64{4, 5}},
			{name: "f", dtype: "F32", shape: []uint64{1}, offsets: []uint64{5, 6}},
		}, -1), `6 tensors' data_offsets disagree`},
		{"gap", encodeSafetensors([]stTensor{
			{name: "a", dtype: "U8", shape: []uint64{4}, offsets: []uint64{0, 4}},
			{name: "b", dtype: "U8", shape: []uint64{4}, offsets: []uint64{8, 12}},
		}, -1), `tensor "b": data_offsets [8, 12] do not start where the previous tensor ends (4)`},
		{"overlap", encodeSafetensors([]stTensor{
			{name: "a", dtype: "U8", shape: []uint64{4}, offsets: []uint64{0, 4}},
			{name: "b", dtype: "U8", shape: []uint64{4}, offsets: []uint64{2, 6}},
		}, -1), `tensor "b": data_offsets [2, 6] do not start`},
		{"not at 0", encodeSafetensors([]stTensor{{name: "a", dtype: "U8", shape: []uint64{4}, offsets: []uint64{4, 8}}}, -1), `tensor "a": data_offsets [4, 8] do not start where the previous tensor ends (0)`},
		{"truncated data", encodeSafetensors(tinyTensors, 100), `the header places tensor data up to byte`},
		{"header longer than the file", rawSafetensors(`{}`, 0)[:9], `the header length is 2 bytes, but the file has only 1 bytes after the length`},
		{"header too large", append([]byte{0, 0, 0, 0, 0, 0, 0, 0x40}, make([]byte, 64)...), `offset 0: the header length is 4611686018427387904 bytes; the most perfgate reads is 100000000`},
		{"empty header", rawSafetensors(``, 0), `offset 0: the header length is 0 bytes, too short`},
		{"not JSON", rawSafetensors(`{"a": `, 0), `the JSON header at offset 8: unexpected end of JSON input`},
		{"not an object", rawSafetensors(`["a"]`, 0), `the JSON header at offset 8: not a JSON object`},
		{"tensor not an object", rawSafetensors(`{"a": 3}`, 0), `tensor "a": json: cannot unmarshal number`},
		{"no dtype", rawSafetensors(`{"a": {"shape": [1], "data_offsets": [0, 1]}}`, 1), `tensor "a": no "dtype"`},
		{"no shape", rawSafetensors(`{"a": {"dtype": "U8", "data_offsets": [0, 1]}}`, 1), `tensor "a": no "shape"`},
		{"null shape", rawSafetensors(`{"a": {"dtype": "U8", "shape": null, "data_offsets": [0, 1]}}`, 1), `tensor "a": no "shape"`},
		{"negative dimension", rawSafetensors(`{"a": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 1]}}`, 1), `tensor "a": "shape": json: cannot unmarshal number -1`},
		{"three offsets", rawSafetensors(`{"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1, 2]}}`, 2), `tensor "a": data_offsets [0 1 2] are not [start, end]`},
		{"offsets backwards", rawSafetensors(`{"a": {"dtype": "U8", "shape": [1], "data_offsets": [1, 0]}}`, 2), `data_offsets [1 0] are not [start, end]`},
		{"element overflow", rawSafetensors(`{"a": {"dtype": "U8", "shape": [4294967296, 4294967296], "data_offsets": [0, 1]}}`, 1), `tensor "a": shape [4294967296 4294967296]: the element count overflows`},
		{"too many dimensions", rawSafetensors(`{"a": {"dtype": "U8", "shape": [`+strings.Repeat("1,", 40)+`1], "data_offsets": [0, 1]}}`, 1), `shape has 41 dimensions`},
		{"tensor name too long", rawSafetensors(`{"`+strings.Repeat("x", 5000)+`": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}`, 1), `a tensor name of 5000 bytes`},
		{"shape JSON too long", rawSafetensors(`{"a": {"dtype": "U8", "shape": [`+strings.Repeat(" ", 2000)+`1], "data_offsets": [0, 1]}}`, 1), `"shape" is 2003 bytes of JSON; the most perfgate reads is 1024`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "model.safetensors", c.file)
			writeFile(t, dir, "config.json", []byte(tinyConfig))
			_, err := Read(path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant one with %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "read safetensors "+path+": ") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// A dtype the safetensors library defined after perfgate's table is
// counted by its data_offsets, and noted.
func TestReadSafetensorsUnknownDType(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "model.safetensors", encodeSafetensors([]stTensor{
		{name: "a", dtype: "BF16", shape: []uint64{4}},
		{name: "b", dtype: "F3_NEW", shape: []uint64{8}, offsets: []uint64{8, 11}},
	}, -1))
	writeFile(t, dir, "config.json", []byte(tinyConfig))
	s, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Params != 12 || s.WeightBytes != 11 || len(s.Notes) != 2 || !strings.Contains(s.Notes[1], `dtype "F3_NEW" is unknown to perfgate`) {
		t.Errorf("got %+v", s)
	}
}

// A header cut short at any byte is an error, never a panic.
func TestReadSafetensorsTruncated(t *testing.T) {
	full := encodeSafetensors(tinyTensors, -1)
	headerEnd := 8 + int(full[0]) + int(full[1])<<8
	for n := range headerEnd {
		_, err := readSafetensorsHeader(bytes.NewReader(full[:n]), int64(n), "model.safetensors")
		if err == nil {
			t.Fatalf("cut at %d of %d header bytes: no error", n, headerEnd)
		}
	}
	// With the size the whole file would have, it reads to the end of the
	// header and finds it cut.
	for n := range headerEnd {
		_, err := readSafetensorsHeader(bytes.NewReader(full[:n]), int64(len(full)), "model.safetensors")
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d of %d header bytes: %v, want unexpected EOF", n, headerEnd, err)
		}
	}
}

// A header length of 1<<62 or longer than the file is refused at once,
// without allocating it.
func TestReadSafetensorsHostileLength(t *testing.T) {
	for _, n := range []uint64{1 << 62, maxSafetensorsHeader} {
		data := rawSafetensors("{}", 0)
		data[0], data[1], data[2], data[3], data[4], data[5], data[6], data[7] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24), byte(n>>32), byte(n>>40), byte(n>>48), byte(n>>56)
		var err error
		start := time.Now()
		allocated := allocatedBy(func() {
			_, err = readSafetensorsHeader(bytes.NewReader(data), int64(len(data)), "model.safetensors")
		})
		if err == nil || time.Since(start) > time.Second || allocated > 1<<20 {
			t.Errorf("length %d: %v, allocated %d bytes", n, err, allocated)
		}
	}
}

// Llama 3 8B as Hugging Face ships it (BF16, config.json): the header
// alone, checked against the size the file would have.
func TestReadSafetensorsLlama8B(t *testing.T) {
	var tensors []stTensor
	for _, ts := range llama8B() {
		tensors = append(tensors, stTensor{name: ts.hfName, dtype: "BF16", shape: ts.shape})
	}
	file := encodeSafetensors(tensors, 0) // the header, no data
	size := int64(len(file)) + 2*llama8BParams
	h, err := readSafetensorsHeader(bytes.NewReader(file), size, "model.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	var totals safetensorsTotals
	if err := totals.add(h, "model.safetensors"); err != nil {
		t.Fatal(err)
	}
	if totals.params != llama8BParams || totals.weightBytes != 2*llama8BParams {
		t.Errorf("params %d, bytes %d", totals.params, totals.weightBytes)
	}
	s, err := parseConfig([]byte(llama8BConfig), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.Arch != "llama" || s.Layers != 32 || s.KVHeads != 8 || s.HeadDim != 128 {
		t.Errorf("config: %+v", s)
	}

	// One byte short of the data is a truncated file.
	if _, err := readSafetensorsHeader(bytes.NewReader(file), size-1, "model.safetensors"); err == nil || !strings.Contains(err.Error(), "is it truncated?") {
		t.Errorf("one byte short: %v", err)
	}
}

// config.json's keys, their defaults, and what is noted.
func TestParseConfig(t *testing.T) {
	for _, c := range []struct {
		name, config string
		want         Shape
	}{
		{"all given", `{"model_type": "mistral", "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 5120}`,
			Shape{Arch: "mistral", Layers: 40, KVHeads: 8, HeadDim: 128}},
		{"null head_dim and KV heads", `{"model_type": "gpt_neox", "num_hidden_layers": 6, "num_attention_heads": 8, "num_key_value_heads": null, "head_dim": null, "hidden_size": 512}`,
			Shape{Arch: "gpt_neox", Layers: 6, KVHeads: 8, HeadDim: 64, Notes: []string{
				"no num_key_value_heads: KV heads taken to be the 8 attention heads",
				"no head_dim: head dimension = hidden_size / num_attention_heads = 512 / 8",
			}}},
		{"multimodal", `{"model_type": "llava", "vision_config": {"num_hidden_layers": 24}, "text_config": {"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096, "head_dim": 128}}`,
			Shape{Arch: "llava", Layers: 32, KVHeads: 8, HeadDim: 128, Notes: []string{
				"layers and heads are from config.json's text_config (the language model of a multimodal model)",
			}}},
		{"MLA and GPTQ", `{"model_type": "deepseek_v3", "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "head_dim": 192, "kv_lora_rank": 512, "quantization_config": {"quant_method": "gptq", "bits": 4}}`,
			Shape{Arch: "deepseek_v3", Layers: 61, KVHeads: 128, HeadDim: 192, Notes: []string{
				"kv_lora_rank is 512: multi-head latent attention caches a compressed latent per layer, not KV heads × head dimension",
				`quantised checkpoint (quant_method "gptq"): WeightBytes are the bytes as stored; Params counts stored elements, fewer than the parameters where several are packed to an element`,
			}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := parseConfig([]byte(c.config), "config.json")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, c.want) {
				t.Errorf("got  %+v\nwant %+v", s, c.want)
			}
		})
	}

	for _, c := range []struct{ name, config, want string }{
		{"not JSON", `{`, "read config dir/config.json: unexpected end of JSON input"},
		{"no layers", `{"num_attention_heads": 4, "hidden_size": 8}`, `key "num_hidden_layers" is missing`},
		{"no heads", `{"num_hidden_layers": 4, "hidden_size": 8}`, `key "num_attention_heads" is missing`},
		{"no hidden_size", `{"num_hidden_layers": 4, "num_attention_heads": 4}`, `key "hidden_size" is missing`},
		{"zero heads", `{"num_hidden_layers": 4, "num_attention_heads": 0, "hidden_size": 8}`, `key "num_attention_heads" is 0; it must be 1 to 2147483647`},
		{"negative KV heads", `{"num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": -2, "hidden_size": 8}`, `key "num_key_value_heads" is -2`},
		{"a string", `{"num_hidden_layers": "4"}`, `cannot unmarshal string`},
		{"a fraction", `{"num_hidden_layers": 4.5}`, `cannot unmarshal number 4.5`},
		{"not a multiple", `{"num_hidden_layers": 4, "num_attention_heads": 3, "hidden_size": 8}`, `hidden_size (8) is not a multiple of num_attention_heads (3), and there is no head_dim`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseConfig([]byte(c.config), "dir/config.json")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "read config dir/config.json: ") {
				t.Fatalf("error %v\nwant one with %q", err, c.want)
			}
		})
	}
}

// Where there is no config.json, or nothing to read, the error says what
// is missing.
func TestReadSafetensorsMissingFiles(t *testing.T) {
	dir := tinyDir(t)
	if err := os.Remove(filepath.Join(dir, "config.json")); err != nil {
		t.Fatal(err)
	}
	_, err := Read(dir)
	if err == nil || !strings.Contains(err.Error(), "no config.json beside it: it gives the layers and heads") {
		t.Errorf("no config.json: %v", err)
	}

	empty := t.TempDir()
	_, err = Read(empty)
	want := fmt.Sprintf("read safetensors %s: the directory has neither model.safetensors.index.json nor model.safetensors", empty)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("empty directory: %v", err)
	}
}
