// Package modelfile reads the shape of an LLM from its model files: the
// parameter count, the bytes of the weights as stored, the number of
// transformer blocks, the key/value heads and the head dimension. perfgate
// needs them to report model-bandwidth utilisation (MBU: the bytes decode
// must read per token, weights plus KV cache, against the GPU's peak
// bandwidth) and model-FLOPs utilisation (MFU).
//
// It reads two formats:
//
//   - GGUF (llama.cpp), versions 2 and 3: the metadata key/value pairs and
//     the tensor infos at the front of the file (ReadGGUF).
//   - safetensors (Hugging Face): the JSON header of one file, or of every
//     shard named by model.safetensors.index.json, plus the config.json
//     beside them for the layers and heads (ReadSafetensors).
//
// Read picks between them by a path's extension or a directory's contents.
//
// It never reads tensor data: a model file is gigabytes, and only its header
// says what perfgate needs. Headers are untrusted input: every length,
// count and dimension they claim is bounded before it is used, so that a
// corrupt or hostile file gives an error, never a panic, a hang or an
// allocation the size of the claim. The limits are the max* constants in
// gguf.go and safetensors.go.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package modelfile
