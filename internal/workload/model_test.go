package workload

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A line may name its model (a LoRA adapter, say); the canonical form keeps
// it, and a workload without any hashes as it did before the key existed.
func TestModelPerLine(t *testing.T) {
	src := `{"id":"a","prompt":"hi","max_tokens":4,"model":"sql-lora"}
{"id":"b","prompt":"hi","max_tokens":4}
`
	w, err := Parse(strings.NewReader(src), "w.jsonl")
	require.NoError(t, err)
	assert.Equal(t, "sql-lora", w.Requests[0].Model)
	assert.Empty(t, w.Requests[1].Model)
	var out bytes.Buffer
	require.NoError(t, Write(&out, w.Requests))
	assert.Equal(t, `{"id":"a","model":"sql-lora","prompt":"hi","max_tokens":4}`+"\n"+`{"id":"b","prompt":"hi","max_tokens":4}`+"\n", out.String())

	plain, err := Parse(strings.NewReader(`{"id":"b","prompt":"hi","max_tokens":4}`+"\n"), "p.jsonl")
	require.NoError(t, err)
	assert.Equal(t, "sha256:", Hash(plain.Requests)[:7])
	assert.NotEqual(t, Hash(plain.Requests), Hash(w.Requests[:1]))

	for _, bad := range []struct{ line, want string }{
		{`{"prompt":"hi","max_tokens":4,"model":""}`, `model: must not be empty`},
		{`{"prompt":"hi","max_tokens":4,"model":7}`, `model: want a string`},
		{`{"prompt":"hi","max_tokens":4,"model":"` + strings.Repeat("m", MaxModelName+1) + `"}`, `model: 257 bytes, more than the 256`},
		{`{"prompt":"hi","max_tokens":4,"model":"a\u0007b"}`, `model: has a control character`},
	} {
		_, err := Parse(strings.NewReader(bad.line+"\n"), "bad.jsonl")
		require.Error(t, err, bad.line)
		assert.Contains(t, err.Error(), bad.want)
	}
}

// A synthetic mix of models: each request names one, drawn by weight from
// a stream of its own, so the lengths and texts are those of the same spec
// without models; the same seed draws the same names.
func TestSynthModels(t *testing.T) {
	spec := SynthSpec{Requests: 2000, Input: Dist{Type: "fixed", Value: 8}, Output: Dist{Type: "uniform", Min: 4, Max: 64}}
	plain, err := Synthesize(spec, ".", 3)
	require.NoError(t, err)
	spec.Models, err = ParseModels("sql-lora:0.6, chat-lora:0.3,base:0.1")
	require.NoError(t, err)
	mixed, err := Synthesize(spec, ".", 3)
	require.NoError(t, err)
	again, err := Synthesize(spec, ".", 3)
	require.NoError(t, err)
	counts := map[string]int{}
	for i := range mixed {
		assert.Equal(t, plain[i].Messages, mixed[i].Messages)
		assert.Equal(t, plain[i].MaxTokens, mixed[i].MaxTokens)
		assert.Equal(t, again[i].Model, mixed[i].Model)
		counts[mixed[i].Model]++
	}
	assert.InDelta(t, 1200, counts["sql-lora"], 90)
	assert.InDelta(t, 600, counts["chat-lora"], 80)
	assert.InDelta(t, 200, counts["base"], 50)
	assert.Len(t, counts, 3)

	for _, bad := range []struct{ in, want string }{
		{"a:x", `"a:x": the weight after ':' is not a number`},
		{" , ", "no model in"},
	} {
		_, err := ParseModels(bad.in)
		assert.ErrorContains(t, err, bad.want)
	}
	ms, err := ParseModels("org/model:v2:3")
	require.NoError(t, err)
	assert.Equal(t, []ModelShare{{Name: "org/model:v2", Weight: 3}}, ms)

	spec.Models = []ModelShare{{Name: "a", Weight: 0}, {Name: "a", Weight: 1}, {Name: "", Weight: 1}}
	var msgs []string
	for _, p := range spec.Problems() {
		msgs = append(msgs, p.String())
	}
	assert.Contains(t, strings.Join(msgs, "\n"), "models[0].weight: must be a number > 0, got 0")
	assert.Contains(t, strings.Join(msgs, "\n"), `models[1].name: "a" is listed twice`)
	assert.Contains(t, strings.Join(msgs, "\n"), "models[2].name: must not be empty")
}
