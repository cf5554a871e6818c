package traceimport

import (
	"bytes"
	"os"
	"testing"

	"github.com/perfgate/perfgate/internal/workload"
)

// fuzzImport imports data as format, with and without the options that
// change the path taken, and checks that nothing panics and that whatever
// is imported loads.
func fuzzImport(t *testing.T, format string, data []byte) {
	rd, _ := NewRedactor([]byte("0123456789abcdef"))
	for _, o := range []Options{{}, {MaxTokens: 8, SkipUnsupported: true, Sessions: true, BlockSize: 4, Redact: rd, ForceOutput: true, KeepModels: true}} {
		res, err := Import(bytes.NewReader(data), "fuzz", format, o)
		if err != nil {
			continue
		}
		var buf bytes.Buffer
		if err := workload.Write(&buf, res.Requests); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if _, err := workload.Parse(&buf, "out"); err != nil {
			t.Fatalf("imported workload does not load: %v", err)
		}
	}
}

// seeds adds the example sample files and a few lines to f.
func seeds(f *testing.F, files []string, lines ...string) {
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, l := range lines {
		f.Add([]byte(l))
	}
}

func FuzzImportOpenAI(f *testing.F) {
	seeds(f, []string{"../../examples/imports/openai.jsonl", "../../examples/imports/openai-batch.jsonl"},
		`{"messages":[{"role":"user","content":"hi"}],"max_tokens":3}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, "openai", data) })
}

func FuzzImportShareGPT(f *testing.F) {
	seeds(f, []string{"../../examples/imports/sharegpt.json"},
		`{"id":"a","conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"a b"}]}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, "sharegpt", data) })
}

func FuzzImportMooncake(f *testing.F) {
	seeds(f, []string{"../../examples/imports/mooncake.jsonl"},
		`{"timestamp":0,"input_length":5,"output_length":2,"hash_ids":[1,2]}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, "mooncake", data) })
}

func FuzzImportAIPerf(f *testing.F) {
	seeds(f, []string{"../../examples/imports/aiperf-single.jsonl", "../../examples/imports/aiperf-multi.jsonl"},
		`{"text":"a","output_length":3}`)
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, "aiperf", data) })
}
