package modelfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// This file builds model files for the tests: GGUF headers (encodeGGUF),
// safetensors files (encodeSafetensors) and the llama-8B shape both
// formats are tested with.

// ggufBuf writes GGUF's little-endian encoding, for encodeGGUF and for
// hand-made hostile headers.
type ggufBuf struct{ bytes.Buffer }

func (b *ggufBuf) u8(v uint8)   { b.WriteByte(v) }
func (b *ggufBuf) u16(v uint16) { b.Write(binary.LittleEndian.AppendUint16(nil, v)) }
func (b *ggufBuf) u32(v uint32) { b.Write(binary.LittleEndian.AppendUint32(nil, v)) }
func (b *ggufBuf) u64(v uint64) { b.Write(binary.LittleEndian.AppendUint64(nil, v)) }
func (b *ggufBuf) str(s string) { b.u64(uint64(len(s))); b.WriteString(s) }

// start writes the magic, the version and the two counts.
func (b *ggufBuf) start(version uint32, tensors, kvs uint64) {
	b.WriteString(ggufMagic)
	b.u32(version)
	b.u64(tensors)
	b.u64(kvs)
}

// ggufKV is one metadata pair for encodeGGUF. val is an int for the integer
// types, a float64 for the float types, a bool, a string, or a ggufArr.
type ggufKV struct {
	key string
	typ uint32
	val any
}

// ggufArr is an array value: elements of type elem.
type ggufArr struct {
	elem uint32
	vals []any
}

// ggufTensor is one tensor info for encodeGGUF; typ is a ggml type number.
type ggufTensor struct {
	name string
	dims []uint64
	typ  uint32
}

// Shorthands for common metadata pairs.
func kvStr(key, v string) ggufKV     { return ggufKV{key, ggufString, v} }
func kvU32(key string, v int) ggufKV { return ggufKV{key, ggufUint32, v} }

// value writes a value of type typ.
func (b *ggufBuf) value(typ uint32, v any) {
	switch typ {
	case ggufUint8, ggufInt8:
		b.u8(uint8(v.(int)))
	case ggufUint16, ggufInt16:
		b.u16(uint16(v.(int)))
	case ggufUint32, ggufInt32:
		b.u32(uint32(v.(int)))
	case ggufUint64, ggufInt64:
		b.u64(uint64(v.(int)))
	case ggufFloat32:
		b.u32(math.Float32bits(float32(v.(float64))))
	case ggufFloat64:
		b.u64(math.Float64bits(v.(float64)))
	case ggufBool:
		if v.(bool) {
			b.u8(1)
		} else {
			b.u8(0)
		}
	case ggufString:
		b.str(v.(string))
	case ggufArray:
		a := v.(ggufArr)
		b.u32(a.elem)
		b.u64(uint64(len(a.vals)))
		for _, e := range a.vals {
			b.value(a.elem, e)
		}
	default:
		// A type GGUF does not define: nothing to write, for tests of
		// what the reader says of it.
		if v != nil {
			panic(fmt.Sprintf("ggufBuf.value: type %d with a value", typ))
		}
	}
}

// encodeGGUF encodes a GGUF header: magic, version, counts, the metadata
// pairs and the tensor infos, with offsets as a writer would lay them out
// (32-byte aligned). It writes no tensor data: the reader must stop before
// it.
func encodeGGUF(version uint32, kvs []ggufKV, tensors []ggufTensor) []byte {
	var b ggufBuf
	b.start(version, uint64(len(tensors)), uint64(len(kvs)))
	for _, kv := range kvs {
		b.str(kv.key)
		b.u32(kv.typ)
		b.value(kv.typ, kv.val)
	}
	offset := uint64(0)
	for _, t := range tensors {
		b.str(t.name)
		b.u32(uint32(len(t.dims)))
		elems := uint64(1)
		for _, d := range t.dims {
			b.u64(d)
			elems *= d
		}
		b.u32(t.typ)
		b.u64(offset)
		if tt, ok := ggmlTypes[t.typ]; ok {
			offset += (elems/tt.blockSize*tt.typeSize + 31) / 32 * 32
		}
	}
	return b.Bytes()
}

// ggml type numbers the tests use.
const (
	typeF32  = 0
	typeF16  = 1
	typeQ4_0 = 2
	typeQ8_0 = 8
	typeQ4_K = 12
	typeQ6_K = 14
	typeBF16 = 30
)

// smallGGUF is a small llama-like header with every kind of metadata value
// and tensors of several ggml types; smallGGUFShape is what it reads as.
func smallGGUF() []byte {
	return encodeGGUF(3, smallKVs(), smallTensors())
}

func smallKVs() []ggufKV {
	return []ggufKV{
		kvStr("general.architecture", "llama"),
		kvStr("general.name", "tiny test model"),
		kvU32("general.alignment", 32),
		{"general.file_type", ggufUint32, 15},
		{"general.flag", ggufBool, true},
		{"general.u8", ggufUint8, 7},
		{"general.i8", ggufInt8, -7},
		{"general.u16", ggufUint16, 700},
		{"general.i16", ggufInt16, -700},
		{"general.i32", ggufInt32, -70000},
		{"general.i64", ggufInt64, -7},
		{"general.f64", ggufFloat64, 2.5},
		{"llama.context_length", ggufUint64, 4096},
		kvU32("llama.block_count", 2),
		kvU32("llama.embedding_length", 64),
		kvU32("llama.feed_forward_length", 192),
		kvU32("llama.attention.head_count", 4),
		kvU32("llama.attention.head_count_kv", 2),
		{"llama.rope.freq_base", ggufFloat32, 500000.0},
		{"llama.attention.layer_norm_rms_epsilon", ggufFloat32, 1e-5},
		{"tokenizer.ggml.model", ggufString, "gpt2"},
		{"tokenizer.ggml.tokens", ggufArray, ggufArr{ggufString, []any{"<s>", "</s>", "a", "b", "ab", ""}}},
		{"tokenizer.ggml.scores", ggufArray, ggufArr{ggufFloat32, []any{0.0, 0.0, -1.0, -1.0, -2.0, -3.0}}},
		{"tokenizer.ggml.token_type", ggufArray, ggufArr{ggufInt32, []any{3, 3, 1, 1, 1, 1}}},
		{"tokenizer.ggml.empty", ggufArray, ggufArr{ggufUint64, nil}},
		{"tokenizer.chat_template", ggufString, "{% for m in messages %}{{ m.content }}{% endfor %}"},
	}
}

func smallTensors() []ggufTensor {
	return []ggufTensor{
		{"token_embd.weight", []uint64{64, 10}, typeQ8_0},     // 640 elements: 20 blocks of 34 bytes = 680
		{"blk.0.attn_q.weight", []uint64{256, 4}, typeQ4_K},   // 1024: 4 blocks of 144 = 576
		{"blk.0.attn_norm.weight", []uint64{64}, typeF32},     // 64: 256
		{"blk.0.ffn_up.weight", []uint64{64, 3}, typeF16},     // 192: 384
		{"blk.1.ffn_down.weight", []uint64{3, 64}, typeBF16},  // 192: 384
		{"output.weight", []uint64{256, 2, 1, 1}, typeQ6_K},   // 512: 2 blocks of 210 = 420
		{"blk.1.attn_k.weight", []uint64{32, 2, 2}, typeQ4_0}, // 128: 4 blocks of 18 = 72
	}
}

var smallGGUFShape = Shape{
	Arch:        "llama",
	Params:      640 + 1024 + 64 + 192 + 192 + 512 + 128,
	WeightBytes: 680 + 576 + 256 + 384 + 384 + 420 + 72,
	Layers:      2,
	KVHeads:     2,
	HeadDim:     16,
	Source:      "GGUF header of small.gguf",
	Notes:       []string{"no llama.attention.key_length: head dimension = embedding_length / head_count = 64 / 4"},
}

// llama8B is the tensors of Llama 3 8B (Hugging Face names and shapes,
// outermost dimension first, as safetensors writes them): 8,030,261,248
// parameters. kind says what a tensor is, to choose its quantisation.
type llama8BTensor struct {
	hfName, ggufName string
	shape            []uint64 // outermost first
	kind             string   // "embed", "norm", "attn_v", "ffn_down", "output", "matrix"
}

const llama8BParams = 8_030_261_248

func llama8B() []llama8BTensor {
	const hidden, kv, ffn, vocab = 4096, 1024, 14336, 128256
	ts := []llama8BTensor{{"model.embed_tokens.weight", "token_embd.weight", []uint64{vocab, hidden}, "embed"}}
	for i := range 32 {
		hf := func(s string) string { return fmt.Sprintf("model.layers.%d.%s.weight", i, s) }
		gg := func(s string) string { return fmt.Sprintf("blk.%d.%s.weight", i, s) }
		ts = append(ts,
			llama8BTensor{hf("input_layernorm"), gg("attn_norm"), []uint64{hidden}, "norm"},
			llama8BTensor{hf("self_attn.q_proj"), gg("attn_q"), []uint64{hidden, hidden}, "matrix"},
			llama8BTensor{hf("self_attn.k_proj"), gg("attn_k"), []uint64{kv, hidden}, "matrix"},
			llama8BTensor{hf("self_attn.v_proj"), gg("attn_v"), []uint64{kv, hidden}, "attn_v"},
			llama8BTensor{hf("self_attn.o_proj"), gg("attn_output"), []uint64{hidden, hidden}, "matrix"},
			llama8BTensor{hf("post_attention_layernorm"), gg("ffn_norm"), []uint64{hidden}, "norm"},
			llama8BTensor{hf("mlp.gate_proj"), gg("ffn_gate"), []uint64{ffn, hidden}, "matrix"},
			llama8BTensor{hf("mlp.up_proj"), gg("ffn_up"), []uint64{ffn, hidden}, "matrix"},
			llama8BTensor{hf("mlp.down_proj"), gg("ffn_down"), []uint64{hidden, ffn}, "ffn_down"},
		)
	}
	return append(ts,
		llama8BTensor{"model.norm.weight", "output_norm.weight", []uint64{hidden}, "norm"},
		llama8BTensor{"lm_head.weight", "output.weight", []uint64{vocab, hidden}, "output"},
	)
}

// llama8BConfig is Llama 3 8B's config.json, abridged.
const llama8BConfig = `{
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "num_hidden_layers": 32,
  "num_attention_heads": 32,
  "num_key_value_heads": 8,
  "vocab_size": 128256,
  "torch_dtype": "bfloat16"
}`

// stTensor is one tensor for encodeSafetensors; its data_offsets are laid
// out contiguously by its dtype's size, unless offsets is set.
type stTensor struct {
	name    string
	dtype   string
	shape   []uint64
	offsets []uint64
}

// encodeSafetensors encodes a safetensors file: the header for tensors,
// then dataLen zero bytes of data (-1: exactly the bytes the header
// places).
func encodeSafetensors(tensors []stTensor, dataLen int) []byte {
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	end := uint64(0)
	for _, t := range tensors {
		offsets := t.offsets
		if offsets == nil {
			elems := uint64(1)
			for _, d := range t.shape {
				elems *= d
			}
			n := elems * safetensorsDTypeBits[t.dtype] / 8
			offsets = []uint64{end, end + n}
		}
		end = max(end, offsets[1])
		shape := t.shape
		if shape == nil {
			shape = []uint64{}
		}
		header[t.name] = map[string]any{"dtype": t.dtype, "shape": shape, "data_offsets": offsets}
	}
	js, err := json.Marshal(header)
	if err != nil {
		panic(err)
	}
	if dataLen < 0 {
		dataLen = int(end)
	}
	return rawSafetensors(string(js), dataLen)
}

// rawSafetensors is a safetensors file of the given header JSON and dataLen
// zero bytes of data.
func rawSafetensors(headerJSON string, dataLen int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(headerJSON)))
	b = append(b, headerJSON...)
	return append(b, make([]byte, dataLen)...)
}

// writeFile writes data to dir/name.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// allocatedBy is the bytes f allocates on the heap. The package's tests do
// not run in parallel, so nothing else allocates meanwhile.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
