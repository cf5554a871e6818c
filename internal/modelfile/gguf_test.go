package modelfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

// readGGUFBytes reads a GGUF header from data, named small.gguf.
func readGGUFBytes(data []byte) (Shape, error) {
	return ReadGGUF(bytes.NewReader(data), "small.gguf")
}

// Every field of a small header: metadata of every value type is skipped
// or read, and each tensor's bytes follow its ggml type's blocks (Q8_0: 32
// elements in 34 bytes; Q4_K: 256 in 144; Q6_K: 256 in 210; Q4_0: 32 in
// 18).
func TestReadGGUF(t *testing.T) {
	s, err := readGGUFBytes(smallGGUF())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, smallGGUFShape) {
		t.Errorf("got  %+v\nwant %+v", s, smallGGUFShape)
	}
}

// One tensor of each of the types the brief lists, and some IQ types:
// WeightBytes is elements / block size × type size.
func TestGGUFTensorBytes(t *testing.T) {
	for _, c := range []struct {
		typ   uint32
		name  string
		dims  []uint64
		bytes float64
	}{
		{0, "F32", []uint64{10, 3}, 30 * 4},
		{1, "F16", []uint64{10, 3}, 30 * 2},
		{30, "BF16", []uint64{10, 3}, 30 * 2},
		{2, "Q4_0", []uint64{64, 2}, 4 * 18},
		{3, "Q4_1", []uint64{64, 2}, 4 * 20},
		{6, "Q5_0", []uint64{64, 2}, 4 * 22},
		{7, "Q5_1", []uint64{64, 2}, 4 * 24},
		{8, "Q8_0", []uint64{4096, 1024}, 4096 * 1024 / 32 * 34},
		{9, "Q8_1", []uint64{64, 2}, 4 * 36},
		{10, "Q2_K", []uint64{512, 3}, 6 * 84},
		{11, "Q3_K", []uint64{512, 3}, 6 * 110},
		{12, "Q4_K", []uint64{4096, 14336}, 4096 * 14336 / 256 * 144},
		{13, "Q5_K", []uint64{512, 3}, 6 * 176},
		{14, "Q6_K", []uint64{512, 3}, 6 * 210},
		{15, "Q8_K", []uint64{512, 3}, 6 * 292},
		{16, "IQ2_XXS", []uint64{256}, 66},
		{19, "IQ1_S", []uint64{256}, 50},
		{20, "IQ4_NL", []uint64{64}, 2 * 18},
		{23, "IQ4_XS", []uint64{256, 2}, 2 * 136},
		{29, "IQ1_M", []uint64{256}, 56},
		{39, "MXFP4", []uint64{64}, 2 * 17},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ggmlTypes[c.typ].name; got != c.name {
				t.Fatalf("ggml type %d is %q, want %q", c.typ, got, c.name)
			}
			kvs := []ggufKV{kvStr("general.architecture", "llama"), kvU32("llama.block_count", 1),
				kvU32("llama.attention.head_count", 1), kvU32("llama.attention.key_length", 8)}
			s, err := readGGUFBytes(encodeGGUF(3, kvs, []ggufTensor{{"w", c.dims, c.typ}}))
			if err != nil {
				t.Fatal(err)
			}
			elems := 1.0
			for _, d := range c.dims {
				elems *= float64(d)
			}
			if s.Params != elems || s.WeightBytes != c.bytes {
				t.Errorf("params %v bytes %v, want %v and %v", s.Params, s.WeightBytes, elems, c.bytes)
			}
		})
	}
}

// A real-looking Llama 3 8B in a Q4_K_M-like mix (Q4_K matrices, Q6_K for
// attn_v, ffn_down and output, F32 norms), with its 128,256-token
// vocabulary: 8.03 B parameters in 5.17 GB, 32 layers, 8 KV heads of 128.
func TestReadGGUFLlama8B(t *testing.T) {
	var tensors []ggufTensor
	var wantBytes float64
	for _, ts := range llama8B() {
		// GGUF lists dimensions innermost first.
		dims := make([]uint64, len(ts.shape))
		elems := 1.0
		for i, d := range ts.shape {
			dims[len(dims)-1-i] = d
			elems *= float64(d)
		}
		typ := uint32(typeQ4_K)
		switch ts.kind {
		case "norm":
			typ = typeF32
			wantBytes += elems * 4
		case "attn_v", "ffn_down", "output":
			typ = typeQ6_K
			wantBytes += elems / 256 * 210
		default:
			wantBytes += elems / 256 * 144
		}
		tensors = append(tensors, ggufTensor{ts.ggufName, dims, typ})
	}
	tokens := make([]any, 128256)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("tok%d", i)
	}
	kvs := []ggufKV{
		kvStr("general.architecture", "llama"),
		kvStr("general.name", "Meta Llama 3 8B Instruct"),
		kvU32("llama.block_count", 32),
		kvU32("llama.context_length", 8192),
		kvU32("llama.embedding_length", 4096),
		kvU32("llama.feed_forward_length", 14336),
		kvU32("llama.attention.head_count", 32),
		kvU32("llama.attention.head_count_kv", 8),
		{"llama.rope.freq_base", ggufFloat32, 500000.0},
		kvU32("llama.vocab_size", 128256),
		kvU32("llama.rope.dimension_count", 128),
		{"tokenizer.ggml.tokens", ggufArray, ggufArr{ggufString, tokens}},
	}
	s, err := ReadGGUF(bytes.NewReader(encodeGGUF(3, kvs, tensors)), "/models/Meta-Llama-3-8B-Instruct-Q4_K_M.gguf")
	if err != nil {
		t.Fatal(err)
	}
	want := Shape{
		Arch: "llama", Params: llama8BParams, WeightBytes: wantBytes, Layers: 32, KVHeads: 8, HeadDim: 128,
		Source: "GGUF header of Meta-Llama-3-8B-Instruct-Q4_K_M.gguf",
		Notes:  []string{"no llama.attention.key_length: head dimension = embedding_length / head_count = 4096 / 32"},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %+v\nwant %+v", s, want)
	}
	// llama.cpp's Q4_K_M file of Llama 3 8B is 4.92 GB: it keeps half of
	// attn_v and ffn_down in Q4_K, where this mix has all of them in Q6_K.
	if s.WeightBytes < 4.9e9 || s.WeightBytes > 5.2e9 {
		t.Errorf("WeightBytes %.4g, want about 5.17e9", s.WeightBytes)
	}
}

// key_length gives the head dimension where present (Gemma's heads are not
// embedding_length / head_count); a value_length that differs is noted.
func TestReadGGUFKeyLength(t *testing.T) {
	kvs := []ggufKV{
		kvStr("general.architecture", "gemma2"),
		kvU32("gemma2.block_count", 26),
		kvU32("gemma2.embedding_length", 2304),
		kvU32("gemma2.attention.head_count", 8),
		kvU32("gemma2.attention.head_count_kv", 4),
		kvU32("gemma2.attention.key_length", 256),
		kvU32("gemma2.attention.value_length", 128),
	}
	s, err := readGGUFBytes(encodeGGUF(3, kvs, []ggufTensor{{"w", []uint64{8}, typeF32}}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Arch != "gemma2" || s.Layers != 26 || s.KVHeads != 4 || s.HeadDim != 256 {
		t.Errorf("got %+v", s)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "gemma2.attention.value_length is 128") {
		t.Errorf("notes %q, want one about value_length", s.Notes)
	}
}

// head_count_kv absent: the KV heads are the attention heads, and Notes
// says so. The architecture may come after its keys.
func TestReadGGUFNoKVHeads(t *testing.T) {
	kvs := []ggufKV{
		kvU32("phi2.block_count", 32),
		kvU32("phi2.embedding_length", 2560),
		kvU32("phi2.attention.head_count", 32),
		kvStr("general.architecture", "phi2"),
	}
	s, err := readGGUFBytes(encodeGGUF(3, kvs, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Shape{Arch: "phi2", Layers: 32, KVHeads: 32, HeadDim: 80, Source: "GGUF header of small.gguf", Notes: []string{
		"no phi2.attention.head_count_kv: KV heads taken to be the 32 attention heads",
		"no phi2.attention.key_length: head dimension = embedding_length / head_count = 2560 / 32",
	}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %+v\nwant %+v", s, want)
	}
}

// head_count_kv given per layer, as an array (some hybrid models have
// layers without attention): the largest, noted with the layers that have
// none. Any integer type will do, in both forms.
func TestReadGGUFPerLayerKVHeads(t *testing.T) {
	kvs := []ggufKV{
		kvStr("general.architecture", "jamba"),
		{"jamba.block_count", ggufUint64, 4},
		{"jamba.attention.head_count", ggufArray, ggufArr{ggufInt32, []any{32, 32, 32, 32}}},
		{"jamba.attention.head_count_kv", ggufArray, ggufArr{ggufUint16, []any{0, 8, 0, 4}}},
		{"jamba.attention.key_length", ggufInt16, 128},
	}
	s, err := readGGUFBytes(encodeGGUF(2, kvs, nil))
	if err != nil {
		t.Fatal(err)
	}
	if s.Layers != 4 || s.KVHeads != 8 || s.HeadDim != 128 {
		t.Errorf("got %+v", s)
	}
	want := []string{
		"jamba.attention.head_count is given per layer (4 values, 32 to 32): took the largest, 32",
		"jamba.attention.head_count_kv is given per layer (4 values, 0 to 8): took the largest, 8; 2 of the 4 are 0 (layers without attention)",
	}
	if !reflect.DeepEqual(s.Notes, want) {
		t.Errorf("notes %q\nwant  %q", s.Notes, want)
	}
}

// Versions: 2 and 3 read alike; 1, newer ones and byte-swapped ones are
// refused, saying why.
func TestReadGGUFVersions(t *testing.T) {
	kvs, tensors := smallKVs(), smallTensors()
	v2, err := readGGUFBytes(encodeGGUF(2, kvs, tensors))
	if err != nil || !reflect.DeepEqual(v2, smallGGUFShape) {
		t.Errorf("version 2: %+v, %v", v2, err)
	}
	for _, c := range []struct {
		version uint32
		want    string
	}{
		{1, "offset 4: GGUF version 1 is not supported"},
		{0, "GGUF version 0 is not supported: perfgate reads versions 2 and 3"},
		{4, "GGUF version 4 is not supported"},
		{3 << 24, "big-endian"},
	} {
		_, err := readGGUFBytes(encodeGGUF(c.version, kvs, tensors))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "read GGUF small.gguf: ") {
			t.Errorf("version %d: error %v, want one with %q", c.version, err, c.want)
		}
	}
	_, err = readGGUFBytes([]byte("GGML\x03\x00\x00\x00"))
	if err == nil || !strings.Contains(err.Error(), `the file starts with "GGML", not "GGUF": not a GGUF file`) {
		t.Errorf("bad magic: %v", err)
	}
}

// Headers that are well formed but do not give a shape, or give a wrong
// one: the error names the key or tensor, and says what was expected.
func TestReadGGUFBadShape(t *testing.T) {
	arch := kvStr("general.architecture", "llama")
	layers, heads, emb := kvU32("llama.block_count", 2), kvU32("llama.attention.head_count", 4), kvU32("llama.embedding_length", 64)
	f32 := []ggufTensor{{"w", []uint64{4}, typeF32}}
	for _, c := range []struct {
		name    string
		kvs     []ggufKV
		tensors []ggufTensor
		want    string
	}{
		{"no architecture", []ggufKV{layers, heads, emb}, f32, `key "general.architecture" is missing`},
		{"empty architecture", []ggufKV{kvStr("general.architecture", ""), layers, heads, emb}, f32, `key "general.architecture" is empty`},
		{"architecture not a string", []ggufKV{kvU32("general.architecture", 1)}, f32, `key "general.architecture": expected a string, got uint32`},
		{"architecture twice", []ggufKV{arch, arch}, f32, `key "general.architecture" appears twice`},
		{"no block_count", []ggufKV{arch, heads, emb}, f32, `key "llama.block_count" is missing: it gives the number of layers`},
		{"no head_count", []ggufKV{arch, layers, emb}, f32, `key "llama.attention.head_count" is missing`},
		{"no embedding_length", []ggufKV{arch, layers, heads}, f32, `key "llama.embedding_length" is missing`},
		{"block_count a string", []ggufKV{arch, {"llama.block_count", ggufString, "2"}, heads, emb}, f32, `key "llama.block_count": expected an integer or an array of integers, got string`},
		{"block_count a float", []ggufKV{arch, {"llama.block_count", ggufFloat32, 2.0}, heads, emb}, f32, `got float32`},
		{"head_count an array of strings", []ggufKV{arch, layers, {"llama.attention.head_count", ggufArray, ggufArr{ggufString, []any{"4"}}}, emb}, f32, `got array of string`},
		{"head_count an empty array", []ggufKV{arch, layers, {"llama.attention.head_count", ggufArray, ggufArr{ggufUint32, nil}}, emb}, f32, `got empty array`},
		{"block_count twice", []ggufKV{arch, layers, layers, heads, emb}, f32, `key "llama.block_count" appears twice`},
		{"zero layers", []ggufKV{arch, kvU32("llama.block_count", 0), heads, emb}, f32, `layers is 0; it must be at least 1`},
		{"zero KV heads", []ggufKV{arch, layers, heads, emb, kvU32("llama.attention.head_count_kv", 0)}, f32, `KV heads is 0`},
		{"zero heads", []ggufKV{arch, layers, kvU32("llama.attention.head_count", 0), emb}, f32, `is not a multiple of`},
		{"negative count", []ggufKV{arch, {"llama.block_count", ggufInt32, -1}}, f32, `key "llama.block_count": -1 is out of range`},
		{"huge count", []ggufKV{arch, {"llama.block_count", ggufUint64, 1 << 40}}, f32, `1099511627776 is out of range`},
		{"embedding not a multiple of heads", []ggufKV{arch, layers, kvU32("llama.attention.head_count", 3), emb}, f32, `"llama.embedding_length" (64) is not a multiple of "llama.attention.head_count" (3)`},
		{"empty key", []ggufKV{kvStr("", "x")}, f32, `offset 24: metadata key #0 is empty`},
		{"unknown value type", []ggufKV{{"general.x", 13, nil}}, f32, `key "general.x": value type 13 is not a GGUF type`},
		{"unknown element type", []ggufKV{{"general.x", ggufArray, ggufArr{99, nil}}}, f32, `key "general.x": array element type 99 is not a GGUF type`},
		{"array of arrays", []ggufKV{{"general.x", ggufArray, ggufArr{ggufArray, nil}}}, f32, `key "general.x": an array of arrays`},
		{"unknown ggml type", []ggufKV{arch}, []ggufTensor{{"blk.0.w", []uint64{4}, 99}}, `tensor "blk.0.w": ggml type 99 is unknown to perfgate`},
		{"removed ggml type", []ggufKV{arch}, []ggufTensor{{"w", []uint64{32}, 31}}, `ggml type 31 (Q4_0_4_4) was removed from GGUF files`},
		{"row not a multiple of the block", []ggufKV{arch}, []ggufTensor{{"w", []uint64{100, 4}, typeQ4_K}}, `tensor "w": type Q4_K packs 256 elements a block, but its first dimension is 100`},
		{"zero dimension", []ggufKV{arch}, []ggufTensor{{"w", []uint64{4, 0}, typeF32}}, `tensor "w": dimension 1 is 0`},
		{"five dimensions", []ggufKV{arch}, []ggufTensor{{"w", []uint64{1, 1, 1, 1, 1}, typeF32}}, `tensor "w" has 5 dimensions; ggml has at most 4`},
		{"element count overflow", []ggufKV{arch}, []ggufTensor{{"w", []uint64{1 << 32, 1 << 32}, typeF32}}, `tensor "w": the element count overflows at dimension 1`},
		{"byte count overflow", []ggufKV{arch}, []ggufTensor{{"w", []uint64{1 << 31, 1 << 31}, typeF32}}, `tensor "w": its size in bytes overflows`},
		{"total overflow", []ggufKV{arch}, []ggufTensor{
			{"a", []uint64{1 << 31, 1 << 31}, 24}, {"b", []uint64{1 << 31, 1 << 31}, 24},
			{"c", []uint64{1 << 31, 1 << 31}, 24}, {"d", []uint64{1 << 31, 1 << 31}, 24},
		}, `tensor "d": the total element count of the tensors overflows`},
		{"tensor twice", []ggufKV{arch}, []ggufTensor{{"w", []uint64{4}, typeF32}, {"w", []uint64{4}, typeF32}}, `tensor "w" appears twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readGGUFBytes(encodeGGUF(3, c.kvs, c.tensors))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant one with %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "read GGUF small.gguf: ") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

// A header cut short at any byte is an error that says where, never a
// panic or a shape; the whole header reads without any tensor data.
func TestReadGGUFTruncated(t *testing.T) {
	full := smallGGUF()
	if _, err := readGGUFBytes(full); err != nil {
		t.Fatal(err)
	}
	for n := range len(full) {
		_, err := readGGUFBytes(full[:n])
		if err == nil {
			t.Fatalf("header cut at %d of %d bytes: no error", n, len(full))
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "offset ") {
			t.Fatalf("header cut at %d of %d bytes: %v, want an unexpected EOF at an offset", n, len(full), err)
		}
	}
}

// Lengths and counts a hostile header claims give a clear error at once,
// without allocating anything of their size or reading on for it.
func TestReadGGUFHostileLengths(t *testing.T) {
	arch := func(b *ggufBuf) { b.str("general.architecture"); b.u32(ggufString); b.str("llama") }
	for _, c := range []struct {
		name  string
		build func(b *ggufBuf)
		want  string
	}{
		{"key length 1<<62", func(b *ggufBuf) {
			b.start(3, 0, 1)
			b.u64(1 << 62)
		}, "offset 24: metadata key #0 is 4611686018427387904 bytes long; the most perfgate reads is 65536"},
		{"architecture length 1<<62", func(b *ggufBuf) {
			b.start(3, 0, 1)
			b.str("general.architecture")
			b.u32(ggufString)
			b.u64(1 << 62)
		}, `the value of key "general.architecture" is 4611686018427387904 bytes long`},
		{"skipped string length 1<<62", func(b *ggufBuf) {
			b.start(3, 0, 1)
			b.str("tokenizer.chat_template")
			b.u32(ggufString)
			b.u64(1 << 62)
		}, `the value of key "tokenizer.chat_template" claims 4611686018427387904 bytes: the header would be larger than 256 MiB`},
		{"array count 1<<60", func(b *ggufBuf) {
			b.start(3, 0, 2)
			arch(b)
			b.str("tokenizer.ggml.tokens")
			b.u32(ggufArray)
			b.u32(ggufString)
			b.u64(1 << 60)
		}, `key "tokenizer.ggml.tokens": array of 1152921504606846976 elements; the most perfgate reads is 16777216`},
		{"count array 1<<60", func(b *ggufBuf) {
			b.start(3, 0, 1)
			b.str("llama.attention.head_count_kv")
			b.u32(ggufArray)
			b.u32(ggufUint32)
			b.u64(1 << 60)
		}, `key "llama.attention.head_count_kv": array of 1152921504606846976 elements`},
		{"fixed-size array past the header limit", func(b *ggufBuf) {
			b.start(3, 0, 1)
			b.str("general.big")
			b.u32(ggufArray)
			b.u32(ggufFloat64)
			b.u64(1 << 24) // 128 MiB: allowed, but the file ends first
		}, "unexpected EOF"},
		{"string array of huge strings", func(b *ggufBuf) {
			b.start(3, 0, 1)
			b.str("tokenizer.ggml.merges")
			b.u32(ggufArray)
			b.u32(ggufString)
			b.u64(3)
			b.u64(1 << 62)
		}, `an element of key "tokenizer.ggml.merges" claims 4611686018427387904 bytes`},
		{"tensor count 1<<40", func(b *ggufBuf) {
			b.start(3, 1<<40, 0)
		}, "offset 8: tensor_count is 1099511627776; the most perfgate reads is 65536"},
		{"metadata count 1<<60", func(b *ggufBuf) {
			b.start(3, 0, 1<<60)
		}, "offset 16: metadata_kv_count is 1152921504606846976; the most perfgate reads is 1048576"},
		{"tensor name length 1<<62", func(b *ggufBuf) {
			b.start(3, 1, 1)
			arch(b)
			b.u64(1 << 62)
		}, "the name of tensor #0 is 4611686018427387904 bytes long; the most perfgate reads is 1024"},
		{"tensor dimensions 1<<31", func(b *ggufBuf) {
			b.start(3, 1, 1)
			arch(b)
			b.str("w")
			b.u32(1 << 31)
		}, `tensor "w" has 2147483648 dimensions`},
		{"value type 1<<31", func(b *ggufBuf) {
			b.start(3, 0, 1)
			b.str("general.x")
			b.u32(1 << 31)
		}, "value type 2147483648 is not a GGUF type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b ggufBuf
			c.build(&b)
			data := b.Bytes()
			var err error
			start := time.Now()
			allocated := allocatedBy(func() { _, err = readGGUFBytes(data) })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant one with %q", err, c.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if allocated > 1<<20 {
				t.Errorf("allocated %d bytes", allocated)
			}
		})
	}
}

// endless is a reader that repeats its bytes for ever.
type endless struct {
	pattern []byte
	off     int
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.pattern[e.off:])
		n += c
		e.off = (e.off + c) % len(e.pattern)
	}
	return n, nil
}

// A stream that never ends but is a valid header as far as it goes (a
// vocabulary of 16M tokens of 64 KiB each) stops at maxGGUFHeader: the
// reader cannot be kept busy for ever, nor made to hold what it skips.
func TestReadGGUFEndlessHeader(t *testing.T) {
	var b ggufBuf
	b.start(3, 0, 1)
	b.str("tokenizer.ggml.tokens")
	b.u32(ggufArray)
	b.u32(ggufString)
	b.u64(maxGGUFArray)
	var token ggufBuf
	token.str(strings.Repeat("x", maxGGUFString))
	r := io.MultiReader(bytes.NewReader(b.Bytes()), &endless{pattern: token.Bytes()})

	var err error
	allocated := allocatedBy(func() { _, err = ReadGGUF(r, "endless.gguf") })
	if err == nil || !strings.Contains(err.Error(), "the header would be larger than 256 MiB") {
		t.Fatalf("error %v, want the header limit", err)
	}
	if allocated > 1<<20 {
		t.Errorf("allocated %d bytes", allocated)
	}
}

// ReadGGUF stops after the tensor infos: the tensor data after them is
// never read.
func TestReadGGUFStopsBeforeTensorData(t *testing.T) {
	header := smallGGUF()
	r := &countingReader{r: io.MultiReader(bytes.NewReader(header), &endless{pattern: []byte{0xAB}})}
	if _, err := ReadGGUF(r, "small.gguf"); err != nil {
		t.Fatal(err)
	}
	// The reader buffers 64 KiB at a time: it may read ahead that far.
	if r.n > int64(len(header))+64<<10 {
		t.Errorf("read %d bytes of a %d-byte header and endless data", r.n, len(header))
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ggmlTypes agrees with ggml on the types the brief lists, and every entry
// is sane.
func TestGGMLTypes(t *testing.T) {
	want := map[uint32]ggmlType{
		0: {"F32", 1, 4}, 1: {"F16", 1, 2}, 30: {"BF16", 1, 2},
		2: {"Q4_0", 32, 18}, 3: {"Q4_1", 32, 20}, 6: {"Q5_0", 32, 22}, 7: {"Q5_1", 32, 24},
		8: {"Q8_0", 32, 34}, 9: {"Q8_1", 32, 36},
		10: {"Q2_K", 256, 84}, 11: {"Q3_K", 256, 110}, 12: {"Q4_K", 256, 144},
		13: {"Q5_K", 256, 176}, 14: {"Q6_K", 256, 210}, 15: {"Q8_K", 256, 292},
	}
	for n, w := range want {
		if got := ggmlTypes[n]; got != w {
			t.Errorf("type %d: %+v, want %+v", n, got, w)
		}
	}
	names := map[string]bool{}
	for n, tt := range ggmlTypes {
		if tt.blockSize == 0 || tt.typeSize == 0 || names[tt.name] {
			t.Errorf("type %d: %+v", n, tt)
		}
		names[tt.name] = true
		if _, removed := removedGGMLTypes[n]; removed {
			t.Errorf("type %d is both known and removed", n)
		}
	}
}
