package modelfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/internal/safeio"
)

// Shape is what perfgate needs of a model to compute MBU and MFU: how many
// parameters it has (FLOPs per token are about 2 × Params), how many bytes
// of weights decode reads per token (WeightBytes), and the attention shape
// that sizes the KV cache read per token (Layers × KVHeads × HeadDim, times
// 2 for keys and values, times the cache's bytes per element, which the
// serving engine chooses and no model file records).
type Shape struct {
	// Arch is the architecture: GGUF's general.architecture, or
	// config.json's model_type ("llama", "qwen2", ...).
	Arch string
	// Params is the parameter count: the sum of every tensor's elements.
	// For a safetensors checkpoint of packed quantised weights (GPTQ, AWQ)
	// it counts stored elements, not the parameters they pack; Notes says
	// so.
	Params float64
	// WeightBytes is the bytes of the weights as stored: the sum of every
	// tensor's data size, by its type's block size in GGUF and by its
	// data_offsets in safetensors.
	WeightBytes float64
	// Layers is the number of transformer blocks.
	Layers int
	// KVHeads is the number of key/value heads (fewer than the attention
	// heads with grouped-query attention); it is the attention heads when
	// the file gives no separate count, and the largest where the file
	// gives a count per layer (Notes says so).
	KVHeads int
	// HeadDim is the dimension of one attention head.
	HeadDim int
	// Source says what was read: "GGUF header of model.gguf",
	// "safetensors header of model.safetensors + config.json".
	Source string
	// Notes are the caveats a reader of the numbers should know: a value
	// that was derived rather than read, a count given per layer of which
	// the largest was taken, a quantised checkpoint. Empty when there are
	// none.
	Notes []string
}

// Read reads the shape of the model at path, choosing the format by what
// path is: a .gguf file (or any file that starts with GGUF's magic) is read
// by ReadGGUF; a .safetensors file, a model.safetensors.index.json, or a
// directory holding model.safetensors.index.json or model.safetensors is
// read by ReadSafetensors.
func Read(path string) (Shape, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Shape{}, fmt.Errorf("read model %s: %w", path, err)
	}
	if st.IsDir() {
		return ReadSafetensors(path)
	}
	base := filepath.Base(path)
	switch {
	case strings.EqualFold(filepath.Ext(base), ".gguf"):
		return readGGUFFile(path)
	case strings.EqualFold(filepath.Ext(base), ".safetensors"):
		return ReadSafetensors(path)
	case base == indexFileName:
		return ReadSafetensors(filepath.Dir(path))
	}
	// No telling extension: a GGUF file says what it is in its first bytes.
	isGGUF, err := startsWithGGUFMagic(path)
	if err != nil {
		return Shape{}, fmt.Errorf("read model %s: %w", path, err)
	}
	if isGGUF {
		return readGGUFFile(path)
	}
	return Shape{}, fmt.Errorf("read model %s: not a GGUF file (.gguf, or starting with %q), a safetensors file (.safetensors), %s, or a directory of safetensors files", path, ggufMagic, indexFileName)
}

// readGGUFFile opens the regular file at path and reads its GGUF header.
func readGGUFFile(path string) (Shape, error) {
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return Shape{}, fmt.Errorf("read GGUF %s: %w", path, err)
	}
	defer f.Close()
	return ReadGGUF(f, path)
}

// startsWithGGUFMagic says whether the regular file at path starts with
// GGUF's magic bytes.
func startsWithGGUFMagic(path string) (bool, error) {
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	magic := make([]byte, len(ggufMagic))
	if _, err := io.ReadFull(f, magic); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil // shorter than the magic: not GGUF
		}
		return false, err
	}
	return string(magic) == ggufMagic, nil
}

// displayName is the name a Source gives a file: its base name, which is
// what a reader of a report recognises.
func displayName(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return filepath.Base(name)
}
