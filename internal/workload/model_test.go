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
