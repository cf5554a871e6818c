package modelfile

// ggmlType is how ggml stores one tensor type: blockSize elements packed in
// typeSize bytes. A tensor of n elements takes n / blockSize × typeSize
// bytes, and its first dimension must be a multiple of blockSize.
type ggmlType struct {
	name      string
	blockSize uint64 // elements per block
	typeSize  uint64 // bytes per block
}

// ggmlTypes are ggml's tensor types by their number in a GGUF tensor info
// (enum ggml_type in ggml/include/ggml.h), with the block size and type
// size of ggml's type_traits table in ggml/src/ggml.c. The numbers were
// taken from ggml_blck_size and ggml_type_size of a llama.cpp build (ggml
// 0.21.0), and agree with gguf-py's GGML_QUANT_SIZES. A number missing here
// is one ggml does not define, or one it removed (removedGGMLTypes).
var ggmlTypes = map[uint32]ggmlType{
	0:  {"F32", 1, 4},
	1:  {"F16", 1, 2},
	2:  {"Q4_0", 32, 18},
	3:  {"Q4_1", 32, 20},
	6:  {"Q5_0", 32, 22},
	7:  {"Q5_1", 32, 24},
	8:  {"Q8_0", 32, 34},
	9:  {"Q8_1", 32, 36},
	10: {"Q2_K", 256, 84},
	11: {"Q3_K", 256, 110},
	12: {"Q4_K", 256, 144},
	13: {"Q5_K", 256, 176},
	14: {"Q6_K", 256, 210},
	15: {"Q8_K", 256, 292},
	16: {"IQ2_XXS", 256, 66},
	17: {"IQ2_XS", 256, 74},
	18: {"IQ3_XXS", 256, 98},
	19: {"IQ1_S", 256, 50},
	20: {"IQ4_NL", 32, 18},
	21: {"IQ3_S", 256, 110},
	22: {"IQ2_S", 256, 82},
	23: {"IQ4_XS", 256, 136},
	24: {"I8", 1, 1},
	25: {"I16", 1, 2},
	26: {"I32", 1, 4},
	27: {"I64", 1, 8},
	28: {"F64", 1, 8},
	29: {"IQ1_M", 256, 56},
	30: {"BF16", 1, 2},
	34: {"TQ1_0", 256, 54},
	35: {"TQ2_0", 256, 66},
	39: {"MXFP4", 32, 17},
	40: {"NVFP4", 64, 36},
	41: {"Q1_0", 128, 18},
	42: {"Q2_0", 64, 18},
}

// removedGGMLTypes are type numbers ggml once defined and has since
// dropped from GGUF files (their data is repacked at load time now), so an
// error can name what a file holds rather than call it unknown.
var removedGGMLTypes = map[uint32]string{
	4:  "Q4_2",
	5:  "Q4_3",
	31: "Q4_0_4_4",
	32: "Q4_0_4_8",
	33: "Q4_0_8_8",
	36: "IQ4_NL_4_4",
	37: "IQ4_NL_4_8",
	38: "IQ4_NL_8_8",
}
