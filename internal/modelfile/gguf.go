package modelfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strings"

	"github.com/perfgate/perfgate/internal/safeio"
)

// ggufMagic is the first four bytes of every GGUF file.
const ggufMagic = "GGUF"

// Limits on what a GGUF header may claim. A header is untrusted input: each
// length or count is checked against these before it is used, and nothing is
// allocated by a length the file claims beyond them.
const (
	// maxGGUFString bounds a metadata key, and a string value perfgate
	// keeps (general.architecture). String values it skips are bounded by
	// maxGGUFHeader instead: a long chat template is no reason to refuse a
	// model.
	maxGGUFString = 64 << 10
	// maxGGUFTensorName bounds a tensor's name. ggml itself refuses names
	// of 64 bytes or more (GGML_MAX_NAME); names are kept to find
	// duplicates, so this bounds what they hold together (64 MiB at most).
	maxGGUFTensorName = 1 << 10
	// maxGGUFArray bounds the elements of one array value. The largest real
	// arrays are vocabularies of a few hundred thousand tokens.
	maxGGUFArray = 1 << 24
	// maxGGUFKVs bounds the metadata key/value pairs; real files have tens.
	maxGGUFKVs = 1 << 20
	// maxGGUFTensors bounds the tensor infos; real files have thousands.
	maxGGUFTensors = 1 << 16
	// maxGGUFDims is ggml's GGML_MAX_DIMS.
	maxGGUFDims = 4
	// maxGGUFHeader bounds the bytes read before the tensor infos end. Real
	// headers are a few MiB to a few tens of MiB (the tokenizer's arrays);
	// this bounds the time a hostile file can keep the reader busy.
	maxGGUFHeader = 256 << 20
	// maxGGUFShapeKeys bounds the metadata keys kept because they may hold
	// a count perfgate needs (ggufShapeKeySuffixes). A real file has a
	// handful; they are kept because general.architecture, which says
	// which of them count, may come after them.
	maxGGUFShapeKeys = 64
	// maxShapeValue bounds a layer or head count or a dimension, so that
	// it fits an int everywhere.
	maxShapeValue = math.MaxInt32
)

// GGUF metadata value types.
const (
	ggufUint8 uint32 = iota
	ggufInt8
	ggufUint16
	ggufInt16
	ggufUint32
	ggufInt32
	ggufFloat32
	ggufBool
	ggufString
	ggufArray
	ggufUint64
	ggufInt64
	ggufFloat64
)

// ggufTypeNames are the value types' names, by number, for errors.
var ggufTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// ggufTypeName names value type t, or says that it is unknown.
func ggufTypeName(t uint32) string {
	if t < uint32(len(ggufTypeNames)) {
		return ggufTypeNames[t]
	}
	return fmt.Sprintf("unknown type %d", t)
}

// ggufFixedSize is the size in bytes of a value of type t, or 0 for a type
// of no fixed size (string, array) or an unknown type.
func ggufFixedSize(t uint32) uint64 {
	switch t {
	case ggufUint8, ggufInt8, ggufBool:
		return 1
	case ggufUint16, ggufInt16:
		return 2
	case ggufUint32, ggufInt32, ggufFloat32:
		return 4
	case ggufUint64, ggufInt64, ggufFloat64:
		return 8
	}
	return 0
}

// isGGUFInteger says whether t is one of the integer value types.
func isGGUFInteger(t uint32) bool {
	switch t {
	case ggufUint8, ggufInt8, ggufUint16, ggufInt16, ggufUint32, ggufInt32, ggufUint64, ggufInt64:
		return true
	}
	return false
}

// ggufShapeKeySuffixes end the metadata keys that may hold a count perfgate
// needs, "{arch}.block_count" and the like. The architecture prefix is only
// known once general.architecture has been read.
var ggufShapeKeySuffixes = []string{
	".block_count",
	".embedding_length",
	".attention.head_count",
	".attention.head_count_kv",
	".attention.key_length",
	".attention.value_length",
	".attention.kv_lora_rank",
}

// isGGUFShapeKey says whether key may hold a count perfgate needs.
func isGGUFShapeKey(key string) bool {
	for _, suffix := range ggufShapeKeySuffixes {
		if strings.HasSuffix(key, suffix) {
			return true
		}
	}
	return false
}

// ggufCount is the value of a metadata key that may hold a count: a single
// integer, or an array of integers, one per layer, as some models give
// their heads.
type ggufCount struct {
	value   int64  // the integer, or the largest of the array's
	least   int64  // the smallest of the array's integers
	values  uint64 // how many integers the array held; 0 for a single integer
	zeros   uint64 // how many of the array's integers are 0
	badType string // the value's type, when it is not an integer or an array of them
}

// ReadGGUF reads the shape of a model from the GGUF header at the start of
// r; name names the file in errors and in Shape.Source.
//
// It takes an io.Reader rather than an io.ReaderAt: a GGUF header is read
// strictly front to back, and every value before the tensor infos must be
// read (a string array's elements carry their own lengths) to find where
// they start, so nothing is gained by random access; a plain reader also
// takes a pipe, a download or a decompressor. It reads through the tensor
// infos and stops there, before the tensor data, and may read ahead of that
// point into its own buffer; it never reads more than maxGGUFHeader bytes.
func ReadGGUF(r io.Reader, name string) (Shape, error) {
	d := &ggufDecoder{r: bufio.NewReaderSize(r, 64<<10), name: name}
	h, err := d.header()
	if err != nil {
		return Shape{}, err
	}
	return h.shape(name)
}

// ggufHeader is what perfgate keeps of a GGUF header.
type ggufHeader struct {
	arch        string
	archFound   bool
	counts      map[string]ggufCount // by key, for keys isGGUFShapeKey accepts
	params      uint64               // Σ elements of every tensor
	weightBytes uint64               // Σ bytes of every tensor
}

// ggufDecoder reads a GGUF header, keeping count of the bytes read so that
// errors can say where they are.
type ggufDecoder struct {
	r    *bufio.Reader
	name string
	off  int64 // bytes read so far: the offset of the next byte
	buf  [8]byte
}

// errorf is an error at offset off of the file.
func (d *ggufDecoder) errorf(off int64, format string, args ...any) error {
	return fmt.Errorf("read GGUF %s: offset %d: %w", d.name, off, fmt.Errorf(format, args...))
}

// readFull reads len(b) bytes, what they are being what. It refuses to pass
// maxGGUFHeader, and a file that ends first gives io.ErrUnexpectedEOF.
func (d *ggufDecoder) readFull(b []byte, what string) error {
	if int64(len(b)) > maxGGUFHeader-d.off {
		return d.errorf(d.off, "reading %s: the header would be larger than %s, the most perfgate reads of a GGUF header", what, safeio.FormatBytes(maxGGUFHeader))
	}
	if _, err := io.ReadFull(d.r, b); err != nil {
		return d.readError(d.off, what, err)
	}
	d.off += int64(len(b))
	return nil
}

// readError is the error of a read of what at offset off that failed with
// err: a file that ends there gives io.ErrUnexpectedEOF.
func (d *ggufDecoder) readError(off int64, what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return d.errorf(off, "reading %s: the file ends inside its header: %w", what, io.ErrUnexpectedEOF)
	}
	return d.errorf(off, "reading %s: %w", what, err)
}

// uint reads an unsigned little-endian integer of size bytes (1, 2, 4 or 8).
func (d *ggufDecoder) uint(size int, what string) (uint64, error) {
	b := d.buf[:size]
	if err := d.readFull(b, what); err != nil {
		return 0, err
	}
	switch size {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(b)), nil
	}
	return binary.LittleEndian.Uint64(b), nil
}

// u32 reads a uint32.
func (d *ggufDecoder) u32(what string) (uint32, error) {
	v, err := d.uint(4, what)
	return uint32(v), err
}

// u64 reads a uint64.
func (d *ggufDecoder) u64(what string) (uint64, error) {
	return d.uint(8, what)
}

// skip reads and discards n bytes through the reader's own buffer,
// refusing at once an n that would pass maxGGUFHeader.
func (d *ggufDecoder) skip(n uint64, what string) error {
	if n > uint64(maxGGUFHeader-d.off) {
		return d.errorf(d.off, "%s claims %d bytes: the header would be larger than %s, the most perfgate reads of a GGUF header", what, n, safeio.FormatBytes(maxGGUFHeader))
	}
	discarded, err := d.r.Discard(int(n)) // n < maxGGUFHeader fits an int
	d.off += int64(discarded)
	if err != nil {
		return d.readError(d.off, what, err)
	}
	return nil
}

// str reads a string (a uint64 length, then the bytes) of at most limit
// bytes.
func (d *ggufDecoder) str(what string, limit uint64) (string, error) {
	start := d.off
	n, err := d.u64(what)
	if err != nil {
		return "", err
	}
	if n > limit {
		return "", d.errorf(start, "%s is %d bytes long; the most perfgate reads is %d", what, n, limit)
	}
	b := make([]byte, n)
	if err := d.readFull(b, what); err != nil {
		return "", err
	}
	return string(b), nil
}

// skipString reads past a string without keeping it.
func (d *ggufDecoder) skipString(what string) error {
	n, err := d.u64(what)
	if err != nil {
		return err
	}
	return d.skip(n, what)
}

// header reads the magic, the version, the counts, the metadata and the
// tensor infos, and stops.
func (d *ggufDecoder) header() (*ggufHeader, error) {
	magic := make([]byte, len(ggufMagic))
	if err := d.readFull(magic, "the magic"); err != nil {
		return nil, err
	}
	if string(magic) != ggufMagic {
		return nil, d.errorf(0, "the file starts with %q, not %q: not a GGUF file", magic, ggufMagic)
	}
	version, err := d.u32("the version")
	if err != nil {
		return nil, err
	}
	if err := d.checkVersion(version); err != nil {
		return nil, err
	}
	h := &ggufHeader{counts: map[string]ggufCount{}}

	countsAt := d.off
	tensorCount, err := d.u64("tensor_count")
	if err != nil {
		return nil, err
	}
	if tensorCount > maxGGUFTensors {
		return nil, d.errorf(countsAt, "tensor_count is %d; the most perfgate reads is %d", tensorCount, maxGGUFTensors)
	}
	kvCount, err := d.u64("metadata_kv_count")
	if err != nil {
		return nil, err
	}
	if kvCount > maxGGUFKVs {
		return nil, d.errorf(countsAt+8, "metadata_kv_count is %d; the most perfgate reads is %d", kvCount, maxGGUFKVs)
	}

	for i := range kvCount {
		if err := d.keyValue(h, i); err != nil {
			return nil, err
		}
	}
	names := make(map[string]bool, min(tensorCount, 1024))
	for i := range tensorCount {
		if err := d.tensorInfo(h, i, names); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// checkVersion accepts GGUF versions 2 and 3.
func (d *ggufDecoder) checkVersion(version uint32) error {
	switch {
	case version == 2 || version == 3:
		return nil
	case version == 1:
		return d.errorf(4, "GGUF version 1 is not supported (its lengths are 32-bit; llama.cpp dropped it too): convert the file with a current llama.cpp")
	case version != 0 && version&0xFFFF == 0:
		return d.errorf(4, "GGUF version %d (0x%08x) looks byte-swapped: the file is probably big-endian, which perfgate does not read", version, version)
	}
	return d.errorf(4, "GGUF version %d is not supported: perfgate reads versions 2 and 3", version)
}

// keyValue reads metadata pair i, keeping general.architecture and the
// counts perfgate may need, and skipping every other value.
func (d *ggufDecoder) keyValue(h *ggufHeader, i uint64) error {
	keyAt := d.off
	key, err := d.str(fmt.Sprintf("metadata key #%d", i), maxGGUFString)
	if err != nil {
		return err
	}
	if key == "" {
		return d.errorf(keyAt, "metadata key #%d is empty", i)
	}
	typeAt := d.off
	typ, err := d.u32(fmt.Sprintf("the type of key %q", key))
	if err != nil {
		return err
	}
	switch {
	case key == "general.architecture":
		if h.archFound {
			return d.errorf(keyAt, "key %q appears twice", key)
		}
		if typ != ggufString {
			return d.errorf(typeAt, "key %q: expected a string, got %s", key, ggufTypeName(typ))
		}
		h.arch, err = d.str(fmt.Sprintf("the value of key %q", key), maxGGUFString)
		h.archFound = true
		return err
	case isGGUFShapeKey(key):
		if _, dup := h.counts[key]; dup {
			return d.errorf(keyAt, "key %q appears twice", key)
		}
		if len(h.counts) >= maxGGUFShapeKeys {
			return d.errorf(keyAt, "key %q: more than %d keys end in %s; perfgate keeps no more", key, maxGGUFShapeKeys, strings.Join(ggufShapeKeySuffixes, ", "))
		}
		c, err := d.count(key, typ)
		if err != nil {
			return err
		}
		h.counts[key] = c
		return nil
	}
	return d.skipValue(key, typ)
}

// count reads the value of a key that may hold a count: an integer or an
// array of integers. A value of another type is skipped and remembered as
// such: it is an error only if perfgate turns out to need that key.
func (d *ggufDecoder) count(key string, typ uint32) (ggufCount, error) {
	what := fmt.Sprintf("the value of key %q", key)
	if isGGUFInteger(typ) {
		v, err := d.integer(typ, key, what)
		return ggufCount{value: v}, err
	}
	if typ != ggufArray {
		return ggufCount{badType: ggufTypeName(typ)}, d.skipValue(key, typ)
	}
	elemAt := d.off
	elem, err := d.u32(fmt.Sprintf("the element type of key %q", key))
	if err != nil {
		return ggufCount{}, err
	}
	n, err := d.u64(fmt.Sprintf("the element count of key %q", key))
	if err != nil {
		return ggufCount{}, err
	}
	if n > maxGGUFArray {
		return ggufCount{}, d.errorf(elemAt+4, "key %q: array of %d elements; the most perfgate reads is %d", key, n, maxGGUFArray)
	}
	if !isGGUFInteger(elem) {
		return ggufCount{badType: "array of " + ggufTypeName(elem)}, d.skipArray(key, elem, n, elemAt)
	}
	if n == 0 {
		return ggufCount{badType: "empty array"}, nil
	}
	c := ggufCount{values: n, value: -1, least: math.MaxInt64}
	for range n {
		v, err := d.integer(elem, key, what)
		if err != nil {
			return ggufCount{}, err
		}
		c.value = max(c.value, v)
		c.least = min(c.least, v)
		if v == 0 {
			c.zeros++
		}
	}
	return c, nil
}

// integer reads an integer of type typ, which must lie in [0,
// maxShapeValue]: a count or a dimension.
func (d *ggufDecoder) integer(typ uint32, key, what string) (int64, error) {
	at := d.off
	u, err := d.uint(int(ggufFixedSize(typ)), what)
	if err != nil {
		return 0, err
	}
	var v int64
	switch typ {
	case ggufInt8:
		v = int64(int8(u))
	case ggufInt16:
		v = int64(int16(u))
	case ggufInt32:
		v = int64(int32(u))
	case ggufInt64:
		v = int64(u)
	default: // unsigned
		if u > maxShapeValue {
			return 0, d.errorf(at, "key %q: %d is out of range for a count (0 to %d)", key, u, maxShapeValue)
		}
		v = int64(u)
	}
	if v < 0 || v > maxShapeValue {
		return 0, d.errorf(at, "key %q: %d is out of range for a count (0 to %d)", key, v, maxShapeValue)
	}
	return v, nil
}

// skipValue reads past a value of type typ without keeping it.
func (d *ggufDecoder) skipValue(key string, typ uint32) error {
	what := fmt.Sprintf("the value of key %q", key)
	switch typ {
	case ggufString:
		return d.skipString(what)
	case ggufArray:
		elemAt := d.off
		elem, err := d.u32(fmt.Sprintf("the element type of key %q", key))
		if err != nil {
			return err
		}
		n, err := d.u64(fmt.Sprintf("the element count of key %q", key))
		if err != nil {
			return err
		}
		if n > maxGGUFArray {
			return d.errorf(elemAt+4, "key %q: array of %d elements; the most perfgate reads is %d", key, n, maxGGUFArray)
		}
		return d.skipArray(key, elem, n, elemAt)
	}
	size := ggufFixedSize(typ)
	if size == 0 {
		return d.errorf(d.off-4, "key %q: value type %d is not a GGUF type (0 to %d)", key, typ, len(ggufTypeNames)-1)
	}
	return d.skip(size, what)
}

// skipArray reads past the n elements of type elem of an array; n has been
// checked against maxGGUFArray, so n × 8 cannot overflow.
func (d *ggufDecoder) skipArray(key string, elem uint32, n uint64, elemAt int64) error {
	what := fmt.Sprintf("an element of key %q", key)
	switch elem {
	case ggufString:
		for range n {
			if err := d.skipString(what); err != nil {
				return err
			}
		}
		return nil
	case ggufArray:
		// llama.cpp refuses nested arrays too; skipping them would need
		// recursion that a hostile file could make deep.
		return d.errorf(elemAt, "key %q: an array of arrays, which GGUF readers do not support", key)
	}
	size := ggufFixedSize(elem)
	if size == 0 {
		return d.errorf(elemAt, "key %q: array element type %d is not a GGUF type (0 to %d)", key, elem, len(ggufTypeNames)-1)
	}
	return d.skip(n*size, fmt.Sprintf("the %d elements of key %q", n, key))
}

// tensorInfo reads tensor info i (name, dimensions, ggml type, offset) and
// adds its elements and bytes to h's totals. names holds the names seen so
// far, to refuse a duplicate, which would be counted twice.
func (d *ggufDecoder) tensorInfo(h *ggufHeader, i uint64, names map[string]bool) error {
	nameAt := d.off
	name, err := d.str(fmt.Sprintf("the name of tensor #%d", i), maxGGUFTensorName)
	if err != nil {
		return err
	}
	if names[name] {
		return d.errorf(nameAt, "tensor %q appears twice", name)
	}
	names[name] = true

	dimsAt := d.off
	nDims, err := d.u32(fmt.Sprintf("the dimension count of tensor %q", name))
	if err != nil {
		return err
	}
	if nDims > maxGGUFDims {
		return d.errorf(dimsAt, "tensor %q has %d dimensions; ggml has at most %d", name, nDims, maxGGUFDims)
	}
	elems := uint64(1)
	firstDim := uint64(1) // ggml's ne[0]; 1 for a scalar
	for j := range nDims {
		dimAt := d.off
		dim, err := d.u64(fmt.Sprintf("dimension %d of tensor %q", j, name))
		if err != nil {
			return err
		}
		if dim == 0 {
			return d.errorf(dimAt, "tensor %q: dimension %d is 0", name, j)
		}
		if j == 0 {
			firstDim = dim
		}
		hi, lo := bits.Mul64(elems, dim)
		if hi != 0 || lo > math.MaxInt64 {
			return d.errorf(dimAt, "tensor %q: the element count overflows at dimension %d (%d)", name, j, dim)
		}
		elems = lo
	}

	typeAt := d.off
	typeNum, err := d.u32(fmt.Sprintf("the ggml type of tensor %q", name))
	if err != nil {
		return err
	}
	t, ok := ggmlTypes[typeNum]
	if !ok {
		if removed, ok := removedGGMLTypes[typeNum]; ok {
			return d.errorf(typeAt, "tensor %q: ggml type %d (%s) was removed from GGUF files; re-convert the model with a current llama.cpp", name, typeNum, removed)
		}
		return d.errorf(typeAt, "tensor %q: ggml type %d is unknown to perfgate (a type newer than its table of ggml's types, or a corrupt file)", name, typeNum)
	}
	if firstDim%t.blockSize != 0 {
		return d.errorf(typeAt, "tensor %q: type %s packs %d elements a block, but its first dimension is %d", name, t.name, t.blockSize, firstDim)
	}
	hi, size := bits.Mul64(elems/t.blockSize, t.typeSize)
	if hi != 0 || size > math.MaxInt64 {
		return d.errorf(typeAt, "tensor %q: its size in bytes overflows", name)
	}
	if _, err := d.u64(fmt.Sprintf("the data offset of tensor %q", name)); err != nil {
		return err
	}

	params, carry := bits.Add64(h.params, elems, 0)
	if carry != 0 {
		return d.errorf(nameAt, "tensor %q: the total element count of the tensors overflows", name)
	}
	weightBytes, carry := bits.Add64(h.weightBytes, size, 0)
	if carry != 0 {
		return d.errorf(nameAt, "tensor %q: the total size of the tensors overflows", name)
	}
	h.params, h.weightBytes = params, weightBytes
	return nil
}

// shape turns what was read into a Shape: the architecture names the keys
// that hold the layers, heads and head dimension.
func (h *ggufHeader) shape(name string) (Shape, error) {
	fail := func(format string, args ...any) (Shape, error) {
		return Shape{}, fmt.Errorf("read GGUF %s: %w", name, fmt.Errorf(format, args...))
	}
	if !h.archFound {
		return fail("key %q is missing: it names the architecture, whose keys give the layers and heads", "general.architecture")
	}
	if h.arch == "" {
		return fail("key %q is empty", "general.architecture")
	}
	s := Shape{
		Arch:        h.arch,
		Params:      float64(h.params),
		WeightBytes: float64(h.weightBytes),
		Source:      "GGUF header of " + displayName(name),
	}
	// need returns the value of a key that must be present.
	need := func(suffix, purpose string) (int, error) {
		key := h.arch + suffix
		c, ok := h.counts[key]
		if !ok {
			return 0, fmt.Errorf("read GGUF %s: key %q is missing: it gives %s", name, key, purpose)
		}
		return s.countValue(name, key, c)
	}

	var err error
	if s.Layers, err = need(".block_count", "the number of layers"); err != nil {
		return Shape{}, err
	}
	heads, err := need(".attention.head_count", "the number of attention heads")
	if err != nil {
		return Shape{}, err
	}

	s.KVHeads = heads
	kvKey := h.arch + ".attention.head_count_kv"
	if c, ok := h.counts[kvKey]; ok {
		if s.KVHeads, err = s.countValue(name, kvKey, c); err != nil {
			return Shape{}, err
		}
	} else {
		s.Notes = append(s.Notes, fmt.Sprintf("no %s: KV heads taken to be the %d attention heads", kvKey, heads))
	}

	keyLenKey := h.arch + ".attention.key_length"
	if c, ok := h.counts[keyLenKey]; ok {
		if s.HeadDim, err = s.countValue(name, keyLenKey, c); err != nil {
			return Shape{}, err
		}
	} else {
		embedding, err := need(".embedding_length", "the model dimension, which over the heads gives the head dimension when "+keyLenKey+" is absent")
		if err != nil {
			return Shape{}, err
		}
		if heads == 0 || embedding%heads != 0 {
			return fail("key %q (%d) is not a multiple of %q (%d), and there is no %q to give the head dimension", h.arch+".embedding_length", embedding, h.arch+".attention.head_count", heads, keyLenKey)
		}
		s.HeadDim = embedding / heads
		s.Notes = append(s.Notes, fmt.Sprintf("no %s: head dimension = embedding_length / head_count = %d / %d", keyLenKey, embedding, heads))
	}

	valueLenKey := h.arch + ".attention.value_length"
	if c, ok := h.counts[valueLenKey]; ok && c.badType == "" && c.value != int64(s.HeadDim) {
		s.Notes = append(s.Notes, fmt.Sprintf("%s is %d, unlike the key length %d: the KV cache holds keys and values of different sizes", valueLenKey, c.value, s.HeadDim))
	}

	loraKey := h.arch + ".attention.kv_lora_rank"
	if c, ok := h.counts[loraKey]; ok && c.badType == "" {
		s.Notes = append(s.Notes, fmt.Sprintf("%s is %d: multi-head latent attention caches a compressed latent per layer, not KV heads × head dimension", loraKey, c.value))
	}

	for _, v := range []struct {
		what  string
		value int
	}{{"layers", s.Layers}, {"attention heads", heads}, {"KV heads", s.KVHeads}, {"head dimension", s.HeadDim}} {
		if v.value <= 0 {
			return fail("%s is %d; it must be at least 1", v.what, v.value)
		}
	}
	return s, nil
}

// countValue is the value of count c of key, noting when it was the largest
// of values given per layer.
func (s *Shape) countValue(name, key string, c ggufCount) (int, error) {
	if c.badType != "" {
		return 0, fmt.Errorf("read GGUF %s: key %q: expected an integer or an array of integers, got %s", name, key, c.badType)
	}
	if c.values > 0 {
		note := fmt.Sprintf("%s is given per layer (%d values, %d to %d): took the largest, %d", key, c.values, c.least, c.value, c.value)
		if c.zeros > 0 {
			note += fmt.Sprintf("; %d of the %d are 0 (layers without attention)", c.zeros, c.values)
		}
		s.Notes = append(s.Notes, note)
	}
	return int(c.value), nil
}
