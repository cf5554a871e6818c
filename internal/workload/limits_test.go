package workload

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/safeio/safeiotest"
)

// Load reads only regular files, at once: a named pipe with no writer (which
// would block a plain open forever), a device that never ends (which would
// exhaust memory) and a directory are each refused, naming the path.
func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	safeiotest.RefusesWhatIsNotAFile(t, "w.jsonl", func(p string) error { _, err := Load(p); return err })
}

// A line longer than MaxLineBytes stops the reading at that line, with the
// problems of the lines before it; the line is never held whole.
func TestParseLineTooLong(t *testing.T) {
	in := `{"prompt":"ok","max_tokens":0}` + "\n" + `{"prompt":"` + strings.Repeat("x", MaxLineBytes) + `","max_tokens":1}` + "\n"
	w, err := Parse(strings.NewReader(in), "big.jsonl")
	assert.Nil(t, w)
	assert.Equal(t, []string{
		"big.jsonl:1: max_tokens: want an integer from 1 to 1048576, got 0",
		"big.jsonl:2: the line is longer than 8 MiB, the most perfgate reads in one line",
	}, problems(t, err))

	// A line of exactly MaxLineBytes is read.
	exact := `{"prompt":"` + strings.Repeat("x", MaxLineBytes-len(`{"prompt":"","max_tokens":1}`)) + `","max_tokens":1}`
	require.Len(t, exact, MaxLineBytes)
	_, err = Parse(strings.NewReader(exact+"\r\n"), "exact.jsonl")
	assert.NoError(t, err)
}

// A reader past its size limit is reported at the line where it was passed.
func TestReadLinesFileTooLarge(t *testing.T) {
	in := strings.Repeat(`{"prompt":"x","max_tokens":1}`+"\n", 10)
	var lines int
	err := ReadLines(safeio.LimitReader(strings.NewReader(in), 100, "w.jsonl"), "w.jsonl", func(int, []byte) { lines++ })
	var le *LineError
	require.True(t, errors.As(err, &le), "ReadLines error %v is %T, want *LineError", err, err)
	assert.Equal(t, "w.jsonl:4: the file is larger than 100 bytes, the most perfgate reads in such a file", err.Error())
	assert.Equal(t, 3, lines, "the whole lines before the limit are read")
}

// A JSON syntax error is placed at its line and character column, a
// byte-order mark and multi-byte characters not counted as columns.
func TestParseSyntaxErrorColumn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"prompt":"héllo wörld",,"max_tokens":1}`, "c.jsonl:1:25: invalid JSON: invalid character ',' looking for beginning of object key string"},
		{"\xef\xbb\xbf" + `{"prompt":"x",}`, "c.jsonl:1:15: invalid JSON: invalid character '}' looking for beginning of object key string"},
		{"\n\n" + `{"prompt":"x","max_tokens":1`, "c.jsonl:3:29: invalid JSON: unexpected end of JSON input"},
		{`{"prompt":"x","max_tokens":01}`, "c.jsonl:1:29: invalid JSON: invalid character '1' after object key:value pair"},
	} {
		_, err := Parse(strings.NewReader(tc.in), "c.jsonl")
		assert.Equal(t, []string{tc.want}, problems(t, err), "Parse(%q)", tc.in)
	}
}

// A byte-order mark at the start of a file is read as one, and only there.
func TestParseByteOrderMarkOnlyAtStart(t *testing.T) {
	w, err := Parse(strings.NewReader("\xef\xbb\xbf"+`{"prompt":"x","max_tokens":8}`+"\n"+`{"prompt":"y","max_tokens":8}`), "bom.jsonl")
	require.NoError(t, err)
	assert.Len(t, w.Requests, 2)

	_, err = Parse(strings.NewReader(`{"prompt":"x","max_tokens":8}`+"\n\xef\xbb\xbf"+`{"prompt":"y","max_tokens":8}`), "bom.jsonl")
	assert.Equal(t, []string{"bom.jsonl:2:1: invalid JSON: invalid character 'ï' looking for beginning of value"}, problems(t, err))
}

// Messages are sentences, never Go: no type names, no "json:", no "%!".
func TestProblemsAreSentences(t *testing.T) {
	lines := []string{
		`{"prompt":"x","max_tokens":"8"}`, `{"prompt":"x","max_tokens":8,"seed":[1]}`, `{"prompt":{},"max_tokens":8}`,
		`{"prompt":"x","max_tokens":8,"ignore_eos":"yes"}`, `{"prompt":"x","max_tokens":8,"top_p":true}`,
		`{"prompt":"x","max_tokens":8,"tags":[null]}`, `{"messages":[{"role":1}],"max_tokens":8}`, `[`, `nul`, "\x00",
	}
	for _, line := range lines {
		_, err := Parse(strings.NewReader(line), "s.jsonl")
		require.Error(t, err, "Parse(%q)", line)
		for _, goism := range []string{"%!", "json:", "Go ", "float64", "int64", "[]string", "map[", "<nil>", "unmarshal"} {
			assert.NotContains(t, err.Error(), goism, "Parse(%q)", line)
		}
	}
}

// The lengths file of an empirical distribution is read with the same
// bounds: a regular file, lines of at most MaxLineBytes.
func TestReadLengthsBounded(t *testing.T) {
	_, err := readLengths("/dev/zero")
	assert.ErrorIs(t, err, safeio.ErrNotRegular)

	path := filepath.Join(t.TempDir(), "lengths.txt")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("1"), MaxLineBytes+1), 0o644))
	_, err = readLengths(path)
	assert.EqualError(t, err, path+":1: the line is longer than 8 MiB, the most perfgate reads in one line")
}

// quotedText matches a quoted string in a message: text from the file.
var quotedText = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
