package modelfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/safeio"
)

// The files of a Hugging Face checkpoint that perfgate reads.
const (
	indexFileName  = "model.safetensors.index.json"
	singleFileName = "model.safetensors"
	configFileName = "config.json"
)

// Limits on what safetensors headers and the JSON files beside them may
// claim; see the package doc.
const (
	// maxSafetensorsHeader bounds a header's JSON: the safetensors
	// library's own limit (MAX_HEADER_SIZE).
	maxSafetensorsHeader = 100_000_000
	// maxJSONFile bounds config.json and model.safetensors.index.json. One
	// of the largest indexes, of a model of about 90,000 tensors, is under
	// 10 MiB.
	maxJSONFile = 64 << 20
	// maxTensorFieldJSON bounds the JSON of one tensor's shape or
	// data_offsets, before it is decoded, so that a header cannot make one
	// tensor a slice of millions of dimensions.
	maxTensorFieldJSON = 1 << 10
	// maxSafetensorsDims bounds a tensor's dimensions.
	maxSafetensorsDims = 32
	// maxSafetensorsTensors bounds the tensors of one header, and of all
	// the shards of a model together; one of the largest models has about
	// 90,000.
	maxSafetensorsTensors = 1 << 20
	// maxSafetensorsName bounds a tensor's name; real ones are under 200
	// bytes. Names are kept while the shards are read, to find a tensor
	// stored twice.
	maxSafetensorsName = 4 << 10
	// maxShards bounds the files an index may name.
	maxShards = 1 << 14
)

// safetensorsDTypeBits are the bits per element of the dtypes the
// safetensors library defines (Dtype::bitsize), to check each tensor's
// data_offsets against its shape. A dtype missing here is counted by its
// data_offsets unchecked, and Shape.Notes names it.
var safetensorsDTypeBits = map[string]uint64{
	"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
	"I16": 16, "U16": 16, "F16": 16, "BF16": 16,
	"I32": 32, "U32": 32, "F32": 32,
	"I64": 64, "U64": 64, "F64": 64, "C64": 64,
	"F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}

// ReadSafetensors reads the shape of a Hugging Face checkpoint at path:
// either one .safetensors file, or a directory holding
// model.safetensors.index.json (whose weight_map names the shards; every
// shard's header is read) or else model.safetensors. Params and WeightBytes
// come from the safetensors headers; the layers, heads and architecture
// from the config.json in the same directory, which must be there.
//
// Quantised checkpoints (config.json with quantization_config) are counted
// as stored: WeightBytes are the bytes of the files' tensors, and Params
// their elements, which undercounts weights packed several to an element;
// Notes says so.
func ReadSafetensors(path string) (Shape, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Shape{}, fmt.Errorf("read safetensors %s: %w", path, err)
	}
	if !st.IsDir() {
		return readSafetensorsSingle(path)
	}
	index := filepath.Join(path, indexFileName)
	hasIndex, err := fileExists(index)
	if err != nil {
		return Shape{}, fmt.Errorf("read safetensors %s: %w", path, err)
	}
	if hasIndex {
		return readSafetensorsShards(path)
	}
	single := filepath.Join(path, singleFileName)
	hasSingle, err := fileExists(single)
	if err != nil {
		return Shape{}, fmt.Errorf("read safetensors %s: %w", path, err)
	}
	if hasSingle {
		return readSafetensorsSingle(single)
	}
	return Shape{}, fmt.Errorf("read safetensors %s: the directory has neither %s nor %s (for a GGUF model, give the .gguf file)", path, indexFileName, singleFileName)
}

// fileExists says whether something is at path.
func fileExists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}

// readSafetensorsSingle reads one .safetensors file and the config.json
// beside it.
func readSafetensorsSingle(path string) (Shape, error) {
	dir := filepath.Dir(path)
	// One shard of several, read alone, would undercount the model.
	index := filepath.Join(dir, indexFileName)
	hasIndex, err := fileExists(index)
	if err != nil {
		return Shape{}, fmt.Errorf("read safetensors %s: %w", path, err)
	}
	if hasIndex {
		idx, err := readIndex(index)
		if err != nil {
			return Shape{}, err
		}
		if shards := idx.shards(); slices.Contains(shards, filepath.Base(path)) {
			return Shape{}, fmt.Errorf("read safetensors %s: it is one of the %d shards %s lists: read the directory %s for the whole model", path, len(shards), index, dir)
		}
	}

	h, err := readSafetensorsFile(path)
	if err != nil {
		return Shape{}, err
	}
	var t safetensorsTotals
	if err := t.add(h, path); err != nil {
		return Shape{}, err
	}
	return t.shape(dir, "safetensors header of "+displayName(path)+" + "+configFileName)
}

// readSafetensorsShards reads every shard that dir's index names, and the
// config.json beside them.
func readSafetensorsShards(dir string) (Shape, error) {
	indexPath := filepath.Join(dir, indexFileName)
	idx, err := readIndex(indexPath)
	if err != nil {
		return Shape{}, err
	}
	shards := idx.shards()
	listed := map[string][]string{} // shard → the tensors the index puts in it
	for tensor, shard := range idx.WeightMap {
		listed[shard] = append(listed[shard], tensor)
	}

	var t safetensorsTotals
	shardOf := map[string]string{} // tensor → the shard it was found in
	for _, shard := range shards {
		path := filepath.Join(dir, shard)
		h, err := readSafetensorsFile(path)
		if err != nil {
			return Shape{}, err
		}
		inHeader := make(map[string]bool, len(h.tensors))
		for _, tensor := range h.tensors {
			if other, dup := shardOf[tensor.name]; dup {
				return Shape{}, fmt.Errorf("read safetensors %s: tensor %q is in both %s and %s", dir, tensor.name, other, shard)
			}
			shardOf[tensor.name] = shard
			inHeader[tensor.name] = true
		}
		if len(shardOf) > maxSafetensorsTensors {
			return Shape{}, fmt.Errorf("read safetensors %s: the shards hold more than %d tensors, the most perfgate reads", dir, maxSafetensorsTensors)
		}
		slices.Sort(listed[shard])
		for _, tensor := range listed[shard] {
			if !inHeader[tensor] {
				return Shape{}, fmt.Errorf("read safetensors %s: %s puts tensor %q in %s, whose header has no such tensor", dir, indexFileName, tensor, shard)
			}
		}
		if err := t.add(h, path); err != nil {
			return Shape{}, err
		}
	}

	s, err := t.shape(dir, fmt.Sprintf("safetensors headers of %d shards (%s) + %s", len(shards), indexFileName, configFileName))
	if err != nil {
		return Shape{}, err
	}
	if unlisted := len(shardOf) - len(idx.WeightMap); unlisted > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d tensors in the shards are not in %s's weight_map; they are counted", unlisted, indexFileName))
	}
	if total, err := strconv.ParseUint(idx.Metadata.TotalSize.String(), 10, 64); err == nil && total != t.weightBytes {
		s.Notes = append(s.Notes, fmt.Sprintf("%s's total_size is %d bytes; the shards' tensors are %d", indexFileName, total, t.weightBytes))
	}
	return s, nil
}

// safetensorsIndex is model.safetensors.index.json.
type safetensorsIndex struct {
	Metadata struct {
		TotalSize json.Number `json:"total_size"`
	} `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"` // tensor → shard file
}

// shards are the distinct files the index names, sorted.
func (idx *safetensorsIndex) shards() []string {
	var shards []string
	for _, shard := range idx.WeightMap {
		shards = append(shards, shard)
	}
	slices.Sort(shards)
	return slices.Compact(shards)
}

// readIndex reads model.safetensors.index.json at path. Each shard it names
// must be a plain file name: a name that leaves the directory ("../x", an
// absolute path) is refused.
func readIndex(path string) (*safetensorsIndex, error) {
	data, err := safeio.ReadFile(path, maxJSONFile)
	if err != nil {
		return nil, fmt.Errorf("read safetensors index %s: %w", path, err)
	}
	var idx safetensorsIndex
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("read safetensors index %s: %w", path, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("read safetensors index %s: key %q is missing or empty: it names the shard of each tensor", path, "weight_map")
	}
	for tensor, shard := range idx.WeightMap {
		if shard == "" || shard != filepath.Base(shard) || strings.ContainsAny(shard, `/\`) || shard == "." || shard == ".." {
			return nil, fmt.Errorf("read safetensors index %s: weight_map: tensor %q: shard %q is not a file name in the index's directory", path, tensor, shard)
		}
	}
	if n := len(idx.shards()); n > maxShards {
		return nil, fmt.Errorf("read safetensors index %s: weight_map names %d shards; the most perfgate reads is %d", path, n, maxShards)
	}
	return &idx, nil
}

// readSafetensorsFile reads the header of the regular file at path,
// checking its tensors' data against the file's size.
func readSafetensorsFile(path string) (*safetensorsHeader, error) {
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("read safetensors %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read safetensors %s: %w", path, err)
	}
	return readSafetensorsHeader(f, st.Size(), path)
}

// safetensorsTensor is what perfgate keeps of one tensor of a header.
type safetensorsTensor struct {
	name       string
	dtype      string
	elems      uint64
	start, end uint64 // data_offsets: the tensor's bytes within the data section
}

// safetensorsHeader is what perfgate keeps of one file's header.
type safetensorsHeader struct {
	tensors []safetensorsTensor // sorted by name
}

// readSafetensorsHeader reads the header at the start of r: an 8-byte
// little-endian length, then that many bytes of JSON. size is the file's
// size, against which the length and the tensors' data_offsets are
// checked; name names the file in errors. It reads nothing past the header.
func readSafetensorsHeader(r io.Reader, size int64, name string) (*safetensorsHeader, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("read safetensors %s: %w", name, fmt.Errorf(format, args...))
	}
	var lenBytes [8]byte
	if _, err := io.ReadFull(r, lenBytes[:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fail("offset 0: reading the header length (8 bytes): %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBytes[:])
	switch {
	case n > maxSafetensorsHeader:
		return nil, fail("offset 0: the header length is %d bytes; the most perfgate reads is %d (the safetensors library's own limit)", n, maxSafetensorsHeader)
	case size < 8 || n > uint64(size-8):
		return nil, fail("offset 0: the header length is %d bytes, but the file has only %d bytes after the length", n, max(size-8, 0))
	case n < 2:
		return nil, fail("offset 0: the header length is %d bytes, too short for a JSON object", n)
	}
	header := make([]byte, n)
	if _, err := io.ReadFull(r, header); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fail("offset 8: reading the %d-byte JSON header: %w", n, err)
	}
	h, dataSize, err := parseSafetensorsHeader(header)
	if err != nil {
		return nil, fail("the JSON header at offset 8: %w", err)
	}
	// 8 + n + dataSize cannot overflow: n < 2^27, dataSize < 2^63.
	if end := 8 + n + dataSize; end > uint64(size) {
		return nil, fail("the header places tensor data up to byte %d, but the file has %d bytes: is it truncated?", end, size)
	}
	return h, nil
}

// parseSafetensorsHeader parses a header's JSON, checks each tensor's
// data_offsets against its dtype and shape, and checks that the tensors
// fill the data section from its start without gaps or overlaps, as the
// safetensors library requires. dataSize is the end of the last tensor.
func parseSafetensorsHeader(header []byte) (h *safetensorsHeader, dataSize uint64, err error) {
	if !bytes.HasPrefix(bytes.TrimLeft(header, " \t\r\n"), []byte("{")) {
		return nil, 0, errors.New("not a JSON object")
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(header, &entries); err != nil {
		return nil, 0, err
	}
	if len(entries) > maxSafetensorsTensors {
		return nil, 0, fmt.Errorf("%d tensors; the most perfgate reads is %d", len(entries), maxSafetensorsTensors)
	}
	h = &safetensorsHeader{}
	var disagree []string
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		if name == "__metadata__" {
			continue
		}
		if len(name) > maxSafetensorsName {
			return nil, 0, fmt.Errorf("a tensor name of %d bytes (%q...); the most perfgate reads is %d", len(name), name[:64], maxSafetensorsName)
		}
		t, err := parseSafetensorsTensor(name, entries[name])
		if err != nil {
			return nil, 0, fmt.Errorf("tensor %q: %w", name, err)
		}
		if bitsPer, known := safetensorsDTypeBits[t.dtype]; known {
			hi, wantBits := bits.Mul64(t.elems, bitsPer)
			if hi != 0 || wantBits%8 != 0 || wantBits/8 != t.end-t.start {
				disagree = append(disagree, fmt.Sprintf("%q (%s × %d elements, data_offsets [%d, %d] = %d bytes)", name, t.dtype, t.elems, t.start, t.end, t.end-t.start))
			}
		}
		h.tensors = append(h.tensors, t)
	}
	if len(disagree) > 0 {
		shown := disagree[:min(len(disagree), 5)]
		more := ""
		if len(disagree) > len(shown) {
			more = fmt.Sprintf(", and %d more", len(disagree)-len(shown))
		}
		return nil, 0, fmt.Errorf("%d tensors' data_offsets disagree with their dtype and shape: %s%s", len(disagree), strings.Join(shown, ", "), more)
	}

	byOffset := slices.Clone(h.tensors)
	slices.SortStableFunc(byOffset, func(a, b safetensorsTensor) int {
		if a.start != b.start {
			return compareUint64(a.start, b.start)
		}
		return compareUint64(a.end, b.end)
	})
	for _, t := range byOffset {
		if t.start != dataSize {
			return nil, 0, fmt.Errorf("tensor %q: data_offsets [%d, %d] do not start where the previous tensor ends (%d): tensors must fill the data section without gaps or overlaps", t.name, t.start, t.end, dataSize)
		}
		dataSize = t.end
	}
	return h, dataSize, nil
}

// compareUint64 orders two uint64s for slices.SortFunc.
func compareUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// parseSafetensorsTensor parses one tensor's entry:
// {"dtype": "BF16", "shape": [4096, 4096], "data_offsets": [0, 33554432]}.
func parseSafetensorsTensor(name string, raw json.RawMessage) (safetensorsTensor, error) {
	var e struct {
		DType       string          `json:"dtype"`
		Shape       json.RawMessage `json:"shape"`
		DataOffsets json.RawMessage `json:"data_offsets"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return safetensorsTensor{}, err
	}
	if e.DType == "" {
		return safetensorsTensor{}, errors.New(`no "dtype"`)
	}
	shape, err := decodeUints(e.Shape, "shape")
	if err != nil {
		return safetensorsTensor{}, err
	}
	if len(shape) > maxSafetensorsDims {
		return safetensorsTensor{}, fmt.Errorf("shape has %d dimensions; the most perfgate reads is %d", len(shape), maxSafetensorsDims)
	}
	offsets, err := decodeUints(e.DataOffsets, "data_offsets")
	if err != nil {
		return safetensorsTensor{}, err
	}
	if len(offsets) != 2 || offsets[0] > offsets[1] || offsets[1] > math.MaxInt64 {
		return safetensorsTensor{}, fmt.Errorf("data_offsets %v are not [start, end] with start ≤ end", offsets)
	}
	elems := uint64(1)
	for _, dim := range shape {
		hi, lo := bits.Mul64(elems, dim)
		if hi != 0 || lo > math.MaxInt64 {
			return safetensorsTensor{}, fmt.Errorf("shape %v: the element count overflows", shape)
		}
		elems = lo
	}
	return safetensorsTensor{name: name, dtype: e.DType, elems: elems, start: offsets[0], end: offsets[1]}, nil
}

// decodeUints decodes a JSON array of unsigned integers, field's value,
// refusing one whose JSON is longer than maxTensorFieldJSON.
func decodeUints(raw json.RawMessage, field string) ([]uint64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("no %q", field)
	}
	if len(raw) > maxTensorFieldJSON {
		return nil, fmt.Errorf("%q is %d bytes of JSON; the most perfgate reads is %d", field, len(raw), maxTensorFieldJSON)
	}
	var v []uint64
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%q: %w", field, err)
	}
	return v, nil
}

// safetensorsTotals sums the tensors of one or more headers.
type safetensorsTotals struct {
	params, weightBytes uint64
	unknownDTypes       []string // sorted, distinct
}

// add adds the tensors of header h, read from path, to the totals.
func (t *safetensorsTotals) add(h *safetensorsHeader, path string) error {
	for _, tensor := range h.tensors {
		params, carry := bits.Add64(t.params, tensor.elems, 0)
		if carry != 0 {
			return fmt.Errorf("read safetensors %s: tensor %q: the total element count overflows", path, tensor.name)
		}
		weightBytes, carry := bits.Add64(t.weightBytes, tensor.end-tensor.start, 0)
		if carry != 0 {
			return fmt.Errorf("read safetensors %s: tensor %q: the total size overflows", path, tensor.name)
		}
		t.params, t.weightBytes = params, weightBytes
		if _, known := safetensorsDTypeBits[tensor.dtype]; !known {
			if i, found := slices.BinarySearch(t.unknownDTypes, tensor.dtype); !found {
				t.unknownDTypes = slices.Insert(t.unknownDTypes, i, tensor.dtype)
			}
		}
	}
	return nil
}

// shape reads the config.json in dir and makes the Shape of the totals.
func (t *safetensorsTotals) shape(dir, source string) (Shape, error) {
	configPath := filepath.Join(dir, configFileName)
	data, err := safeio.ReadFile(configPath, maxJSONFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Shape{}, fmt.Errorf("read safetensors %s: no %s beside it: it gives the layers and heads", dir, configFileName)
		}
		return Shape{}, fmt.Errorf("read config %s: %w", configPath, err)
	}
	s, err := parseConfig(data, configPath)
	if err != nil {
		return Shape{}, err
	}
	s.Params = float64(t.params)
	s.WeightBytes = float64(t.weightBytes)
	s.Source = source
	for _, dtype := range t.unknownDTypes {
		s.Notes = append(s.Notes, fmt.Sprintf("dtype %q is unknown to perfgate: its tensors' bytes are taken from their data_offsets unchecked", dtype))
	}
	return s, nil
}

// hfConfig is what perfgate reads of a Hugging Face config.json.
type hfConfig struct {
	ModelType          string         `json:"model_type"`
	NumHiddenLayers    *int           `json:"num_hidden_layers"`
	NumAttentionHeads  *int           `json:"num_attention_heads"`
	NumKeyValueHeads   *int           `json:"num_key_value_heads"`
	HeadDim            *int           `json:"head_dim"`
	HiddenSize         *int           `json:"hidden_size"`
	KVLoraRank         *int           `json:"kv_lora_rank"`
	QuantizationConfig map[string]any `json:"quantization_config"`
	// TextConfig holds the language model's settings in the config of a
	// multimodal model (LLaVA, Qwen2-VL, Gemma 3...).
	TextConfig *hfConfig `json:"text_config"`
}

// parseConfig reads the architecture, layers and heads from config.json's
// contents, data; name names the file in errors. The Shape it returns has
// no Params, WeightBytes or Source.
func parseConfig(data []byte, name string) (Shape, error) {
	fail := func(format string, args ...any) (Shape, error) {
		return Shape{}, fmt.Errorf("read config %s: %w", name, fmt.Errorf(format, args...))
	}
	var top hfConfig
	if err := json.Unmarshal(data, &top); err != nil {
		return fail("%w", err)
	}
	c := &top
	var s Shape
	if c.NumHiddenLayers == nil && c.TextConfig != nil {
		c = c.TextConfig
		s.Notes = append(s.Notes, "layers and heads are from config.json's text_config (the language model of a multimodal model)")
	}
	s.Arch = top.ModelType
	if s.Arch == "" {
		s.Arch = c.ModelType
	}

	var err error
	if s.Layers, err = configCount(c.NumHiddenLayers, "num_hidden_layers", name); err != nil {
		return Shape{}, err
	}
	heads, err := configCount(c.NumAttentionHeads, "num_attention_heads", name)
	if err != nil {
		return Shape{}, err
	}
	s.KVHeads = heads
	if c.NumKeyValueHeads != nil {
		if s.KVHeads, err = configCount(c.NumKeyValueHeads, "num_key_value_heads", name); err != nil {
			return Shape{}, err
		}
	} else {
		s.Notes = append(s.Notes, fmt.Sprintf("no num_key_value_heads: KV heads taken to be the %d attention heads", heads))
	}
	if c.HeadDim != nil {
		if s.HeadDim, err = configCount(c.HeadDim, "head_dim", name); err != nil {
			return Shape{}, err
		}
	} else {
		hidden, err := configCount(c.HiddenSize, "hidden_size", name)
		if err != nil {
			return Shape{}, err
		}
		if hidden%heads != 0 {
			return fail("hidden_size (%d) is not a multiple of num_attention_heads (%d), and there is no head_dim", hidden, heads)
		}
		s.HeadDim = hidden / heads
		s.Notes = append(s.Notes, fmt.Sprintf("no head_dim: head dimension = hidden_size / num_attention_heads = %d / %d", hidden, heads))
	}

	if c.KVLoraRank != nil {
		s.Notes = append(s.Notes, fmt.Sprintf("kv_lora_rank is %d: multi-head latent attention caches a compressed latent per layer, not KV heads × head dimension", *c.KVLoraRank))
	}
	if top.QuantizationConfig != nil {
		method, _ := top.QuantizationConfig["quant_method"].(string)
		s.Notes = append(s.Notes, fmt.Sprintf("quantised checkpoint (quant_method %q): WeightBytes are the bytes as stored; Params counts stored elements, fewer than the parameters where several are packed to an element", method))
	}
	return s, nil
}

// configCount is the value of config.json's key, which must be present and
// a positive count.
func configCount(v *int, key, name string) (int, error) {
	if v == nil {
		return 0, fmt.Errorf("read config %s: key %q is missing", name, key)
	}
	if *v <= 0 || *v > maxShapeValue {
		return 0, fmt.Errorf("read config %s: key %q is %d; it must be 1 to %d", name, key, *v, maxShapeValue)
	}
	return *v, nil
}
