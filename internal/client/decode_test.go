package client

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeSeeds are chunks for the differential test: real ones and cases
// chosen to tempt the fast path into disagreeing with encoding/json.
var decodeSeeds = []string{
	`{"choices":[{"delta":{"content":"a\nb\t\"c\"\\ \/ \u00e9\u4e2d"}}]}`,
	`{"choices":[{"delta":{"content":"\ud83d\ude00"}}]}`,
	`{"choices":[{"delta":{"content":"\ud83d"}}]}`,
	`{"choices":[{"delta":{"content":"bad \xff utf8"}}]}`,
	`{"choices":[{"delta":{"content":null,"role":"assistant"},"finish_reason":null}]}`,
	`{"choices":[{"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":6,"completion_tokens":8,"prompt_tokens_details":{"cached_tokens":0}}}`,
	`{"choices":[],"usage":null}`,
	`{"choices":null}`,
	`{"choices":[null]}`,
	`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`,
	`{"choices":[{"delta":{"content":"a"}},5]}`,
	`{"Choices":[{"delta":{"content":"a"}}]}`,
	`{"choices":[{"Delta":{"content":"a"}}]}`,
	`{"choices":[{"delta":{"CONTENT":"a"}}]}`,
	`{"ch\u006fices":[{"delta":{"content":"a"}}]}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":[]}`,
	`{"choices":[{"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[{"delta":{"reasoning_content":"think"}}]}`,
	`{"choices":[{"delta":{"reasoning":"","content":""}}]}`,
	`{"usage":{"prompt_tokens":1.5}}`,
	`{"usage":{"prompt_tokens":-0,"completion_tokens":99999999999999999999}}`,
	`{"usage":{"prompt_tokens":"5"}}`,
	`{"object":"error","message":"boom"}`,
	`{"object":"\u0065rror","message":"boom"}`,
	`{"error":null,"choices":[{"text":"x"}]}`,
	`{"error":{"message":"m"}}`,
	`{"x":[1,2,{"y":[true,false,null,-1.5e+3,"s\"\\"]}],"choices":[{"text":"ok"}]}`,
	`{"x":tru}`,
	`{"x":01}`,
	`{"x":1.}`,
	`{"choices":[{"text":"a"}]} x`,
	`{"choices":[{"text":"a"}]}  `,
	`{"choices":[{"text":"a\u0000"}]}`,
	"{\"choices\":[{\"text\":\"a\x01\"}]}",
	`null`,
	`[]`,
	`{`,
	`{"choices":[{"text":"a"`,
	` { "choices" : [ { "text" : "spaced" } ] } `,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Paris\"}"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f"}},{"index":1,"function":{"name":"g"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":null}}]}`,
	`{"choices":[{"delta":{"tool_calls":[null]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":1.5}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":-1}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":1e2}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":99999999}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"index":1}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"Index":0}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":null,"id":null}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a","Name":"b"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\ud83d"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":{"index":0}}}]}`,
	`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":40,"completion_tokens_details":{"reasoning_tokens":32}}}`,
	`{"choices":[],"usage":{"completion_tokens":4,"completion_tokens_details":{"reasoning_tokens":"3"}}}`,
	`{"choices":[],"usage":{"completion_tokens":4,"completion_tokens_details":null}}`,
	`{"choices":[],"usage":{"completion_tokens":4,"completion_tokens_details":[1]}}`,
	`{"choices":[],"usage":{"completion_tokens":4,"completion_tokens_details":{"reasoning_tokens":1,"reasoning_tokens":2}}}`,
	`{"choices":[],"usage":{"completion_tokens":4,"completion_tokens_details":{"Reasoning_Tokens":1}}}`,
	`{"choices":[],"usage":{"completion_tokens":4,"completion_tokens_details":{"reasoning_tokens":-1,"audio_tokens":0}}}`,
	`{"choices":[{"delta":{"reasoning_content":"\u4e00 think"}}]}`,
	"{\"choices\":[{\"delta\":{\"reasoning\":\"bad \xff\"}}]}",
}

func fixtureChunks(t testing.TB) []string {
	t.Helper()
	var out []string
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.sse"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && data != "[DONE]" {
				out = append(out, data)
			}
		}
	}
	return out
}

// checkDecode fails if the fast path answers differently from encoding/json.
func checkDecode(t *testing.T, data []byte) (fast bool) {
	var got, want decoded
	var scratch []byte
	fast = fastDecode(data, &scratch, &got)
	e := slowDecode(data, &want)
	if !fast {
		return false
	}
	if e != nil {
		t.Fatalf("fastDecode(%q) accepted what encoding/json rejects: %v", data, e)
	}
	if !bytes.Equal(got.content, want.content) || !bytes.Equal(got.text, want.text) ||
		!bytes.Equal(got.finish, want.finish) || got.reasoning != want.reasoning ||
		got.hasUsage != want.hasUsage || got.usage != want.usage || !sameTools(got.tools, want.tools) ||
		got.reasoningBytes != want.reasoningBytes {
		t.Fatalf("fastDecode(%q) = %+v, encoding/json gives %+v", data, got, want)
	}
	return true
}

func sameTools(a, b []toolFragment) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.index != y.index || x.hasIndex != y.hasIndex || !bytes.Equal(x.id, y.id) || !bytes.Equal(x.typ, y.typ) ||
			!bytes.Equal(x.name, y.name) || !bytes.Equal(x.args, y.args) {
			return false
		}
	}
	return true
}

func TestFastDecodeAgrees(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecode(t, []byte(s))
	}
	chunks := fixtureChunks(t)
	require.NotEmpty(t, chunks)
	for _, c := range chunks {
		fast := checkDecode(t, []byte(c))
		// Every real token chunk takes the fast path; only error events don't.
		assert.Equal(t, !strings.Contains(c, `"error"`), fast, "fast path for %.100q", c)
	}
	assert.True(t, checkDecode(t, []byte(decodeSeeds[0])), "escapes take the fast path")
}

// FuzzFastDecode checks fastDecode against encoding/json:
// go test -run x -fuzz FuzzFastDecode ./internal/client/
func FuzzFastDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	for _, c := range fixtureChunks(f) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, data) })
}
