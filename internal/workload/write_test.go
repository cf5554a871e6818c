package workload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseString(t *testing.T, s string) *Workload {
	t.Helper()
	w, err := Parse(strings.NewReader(s), "t.jsonl")
	require.NoError(t, err)
	return w
}

func TestWriteFormat(t *testing.T) {
	w := parseString(t, `{"tags":["a"],"max_tokens":8,"id":"x","prompt":"if a < b && c > d {}","temperature":0.5,"response_format":{ "type" : "json_object" }}`)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, w.Requests))
	assert.Equal(t, `{"id":"x","prompt":"if a < b && c > d {}","max_tokens":8,"temperature":0.5,"response_format":{"type":"json_object"},"tags":["a"]}`+"\n", buf.String())

	sum := sha256.Sum256(buf.Bytes())
	assert.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), w.Hash, "the hash is of the canonical bytes")
}

func TestHashInsensitive(t *testing.T) {
	a := parseString(t, `{"id":"a","prompt":"hi","max_tokens":8,"arrival_ms":100}
{"id":"b","messages":[{"role":"user","content":"yo"}],"max_tokens":16,"response_format":{"type":"json_object"}}
`)
	same := []string{
		// key order, spacing, number spelling, CRLF, trailing blank lines
		"{ \"max_tokens\": 8, \"prompt\": \"hi\", \"id\": \"a\", \"arrival_ms\": 100.0 }\r\n" +
			"{\"messages\": [ {\"content\": \"yo\", \"role\": \"user\"} ], \"max_tokens\": 16, \"id\": \"b\", \"response_format\": {  \"type\":\"json_object\" }}\r\n\r\n",
		// explicit nulls are the same as absent; escapes decode alike
		`{"id":"a","prompt":"h\u0069","max_tokens":8,"arrival_ms":1e2,"temperature":null}
{"id":"b","messages":[{"role":"user","content":"yo"}],"max_tokens":16,"response_format":{"type":"json_object"},"tags":[]}`,
	}
	for _, s := range same {
		assert.Equal(t, a.Hash, parseString(t, s).Hash, "%s", s)
	}

	different := []string{
		`{"id":"a","prompt":"hi ","max_tokens":8,"arrival_ms":100}
{"id":"b","messages":[{"role":"user","content":"yo"}],"max_tokens":16,"response_format":{"type":"json_object"}}`,
		`{"id":"a","prompt":"hi","max_tokens":9,"arrival_ms":100}
{"id":"b","messages":[{"role":"user","content":"yo"}],"max_tokens":16,"response_format":{"type":"json_object"}}`,
		// order of requests matters
		`{"id":"b","messages":[{"role":"user","content":"yo"}],"max_tokens":16,"response_format":{"type":"json_object"}}
{"id":"a","prompt":"hi","max_tokens":8,"arrival_ms":100}`,
		`{"id":"a","prompt":"hi","max_tokens":8,"arrival_ms":100}
{"id":"b","messages":[{"role":"user","content":"yo"}],"max_tokens":16}`,
	}
	for _, s := range different {
		assert.NotEqual(t, a.Hash, parseString(t, s).Hash, "%s", s)
	}
}

func TestHashStable(t *testing.T) {
	// A fixed value: if this changes, every stored baseline's workload hash
	// changes with it, so it must only change on purpose. It is sha256sum of the
	// line as written, newline included.
	w := parseString(t, `{"id":"q1","messages":[{"role":"user","content":"Hi"}],"max_tokens":64}`)
	assert.Equal(t, "sha256:92aaa9d772605b6737818677e84f4a10e2683695868cb8d888f5432638ab51b0", w.Hash)
}

func TestHashInvalidResponseFormatDoesNotPanic(t *testing.T) {
	reqs := []Request{{ID: "x", Prompt: "p", MaxTokens: 1, ResponseFormat: []byte("{not json")}}
	assert.NotPanics(t, func() { Hash(reqs) })
	assert.Error(t, Write(&bytes.Buffer{}, reqs))
}
