package quality

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/workload"
)

// parseOne parses a suite of the given lines, failing the test on an error.
func parseOne(t *testing.T, lines ...string) *Suite {
	t.Helper()
	s, err := Parse(strings.NewReader(strings.Join(lines, "\n")), "testdata/inline.jsonl")
	require.NoError(t, err)
	return s
}

// item parses a one-line suite and returns its item.
func item(t *testing.T, line string) *Item {
	t.Helper()
	return &parseOne(t, line).Items[0]
}

// TestLoadBroken loads every suite under testdata/bad and compares the error
// with testdata/bad/NAME.golden (go test -update rewrites them). Every
// problem must be a *workload.LineError naming the file, and the line and
// field where there is one.
func TestLoadBroken(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := Load(file)
			require.Error(t, err)
			assert.Nil(t, s)
			for _, e := range unjoin(err) {
				var le *workload.LineError
				require.Truef(t, errors.As(e, &le), "error %q is %T, want *workload.LineError", e, e)
				assert.Equal(t, file, le.File)
				assert.Truef(t, strings.HasPrefix(e.Error(), file+":") || le.Line == 0, "error %q does not name file:line", e)
			}
			golden := strings.TrimSuffix(file, ".jsonl") + ".golden"
			got := err.Error() + "\n"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/no-such-suite.jsonl")
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "read eval suite")
}

func TestParseDefaults(t *testing.T) {
	s := parseOne(t,
		`{"id":"q1","messages":[{"role":"user","content":"Capital of France?"}],"scorer":"exact","expected":"Paris","tags":["geo"]}`,
		``,
		`{"id":"q2","prompt":"2+2=","max_tokens":8,"temperature":0.7,"seed":7,"top_p":0.9,"response_format":{"type":"json_object"},"scorer":"numeric","expected":4}`,
	)
	assert.Equal(t, "inline", s.Name)
	assert.Equal(t, "testdata/inline.jsonl", s.Path)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, s.Hash)
	require.Len(t, s.Items, 2)

	q1 := s.Items[0]
	assert.Equal(t, "q1", q1.ID)
	assert.Equal(t, "q1", q1.Request.ID)
	assert.Equal(t, 1, q1.Line)
	assert.Equal(t, 1, q1.Request.Line)
	assert.Equal(t, DefaultMaxTokens, q1.Request.MaxTokens)
	require.NotNil(t, q1.Request.Temperature)
	assert.Equal(t, 0.0, *q1.Request.Temperature)
	require.NotNil(t, q1.Request.Seed)
	assert.Equal(t, int64(DefaultSeed), *q1.Request.Seed)
	assert.Equal(t, []string{"geo"}, q1.Request.Tags)
	assert.Equal(t, []string{"Paris"}, q1.Expected)
	assert.Regexp(t, `^[0-9a-f]{16}$`, q1.Hash)

	q2 := s.Items[1]
	assert.Equal(t, 3, q2.Line)
	assert.Equal(t, "2+2=", q2.Request.Prompt)
	assert.Equal(t, 8, q2.Request.MaxTokens)
	assert.Equal(t, 0.7, *q2.Request.Temperature)
	assert.Equal(t, int64(7), *q2.Request.Seed)
	assert.Equal(t, 0.9, *q2.Request.TopP)
	assert.JSONEq(t, `{"type":"json_object"}`, string(q2.Request.ResponseFormat))
	assert.Equal(t, []string{"4"}, q2.Expected)
}

func TestParseExpectedForms(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{`{"id":"a","prompt":"p","scorer":"numeric","expected":1.50}`, []string{"1.50"}},
		{`{"id":"a","prompt":"p","scorer":"numeric","expected":["1,234","-2e3"]}`, []string{"1,234", "-2e3"}},
		{`{"id":"a","prompt":"p","scorer":"exact","expected":1912}`, []string{"1912"}},
		{`{"id":"a","prompt":"p","scorer":"contains","expected":["Tolstoy","Leo Tolstoy"]}`, []string{"Tolstoy", "Leo Tolstoy"}},
		{`{"id":"a","prompt":"p","scorer":"json_schema","options":{"schema":{"type":"object"}},"expected":{ "b" : [1, 2], "a" : null }}`, []string{`{"b":[1,2],"a":null}`}},
		{`{"id":"a","prompt":"p","scorer":"json_schema","options":{"schema":{"type":"object"}}}`, nil},
		{`{"id":"a","prompt":"p","scorer":"json_valid"}`, nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, item(t, tt.line).Expected, "Parse(%s).Expected", tt.line)
	}
}

func TestParseManyErrors(t *testing.T) {
	_, err := Load("testdata/bad/many.jsonl")
	errs := unjoin(err)
	require.Len(t, errs, workload.MaxProblems+1)
	assert.Equal(t, "testdata/bad/many.jsonl: ... and 70 more", errs[workload.MaxProblems].Error())
}

func TestParseBOMAndCRLF(t *testing.T) {
	s, err := Parse(strings.NewReader("\xef\xbb\xbf"+`{"id":"a","prompt":"p","scorer":"exact","expected":"x"}`+"\r\n"+`{"id":"b","prompt":"p","scorer":"exact","expected":"y"}`+"\r\n"), "s.jsonl")
	require.NoError(t, err)
	assert.Len(t, s.Items, 2)
}

// TestHash checks what changes an item's and a suite's hash, and what does
// not.
func TestHash(t *testing.T) {
	base := `{"id":"q1","messages":[{"role":"user","content":"Q?"}],"scorer":"exact","expected":"Paris"}`
	b := parseOne(t, base)
	same := []string{
		`{ "expected" : "Paris", "scorer":"exact", "messages":[{"content":"Q?","role":"user"}], "id":"q1" }`,
		`{"id":"q1","messages":[{"role":"user","content":"Q?"}],"scorer":"exact","expected":"Paris","max_tokens":256,"temperature":0,"seed":1234}`,
		`{"id":"q1","messages":[{"role":"user","content":"Q?"}],"scorer":"exact","expected":"Paris","options":{"case_sensitive":false}}`,
	}
	for _, line := range same {
		s := parseOne(t, line)
		assert.Equal(t, b.Items[0].Hash, s.Items[0].Hash, "item hash of %s", line)
		assert.Equal(t, b.Hash, s.Hash, "suite hash of %s", line)
	}
	// The id, tags and ideal are not the item's content, but are the suite's.
	for _, line := range []string{
		`{"id":"q2","messages":[{"role":"user","content":"Q?"}],"scorer":"exact","expected":"Paris"}`,
		`{"id":"q1","messages":[{"role":"user","content":"Q?"}],"scorer":"exact","expected":"Paris","tags":["x"]}`,
		`{"id":"q1","messages":[{"role":"user","content":"Q?"}],"scorer":"exact","expected":"Paris","ideal":"Paris."}`,
	} {
		s := parseOne(t, line)
		assert.Equal(t, b.Items[0].Hash, s.Items[0].Hash, "item hash of %s", line)
		assert.NotEqual(t, b.Hash, s.Hash, "suite hash of %s", line)
	}
	differ := []string{
		`{"id":"q1","messages":[{"role":"user","content":"Q!"}],"scorer":"exact","expected":"Paris"}`,
		`{"id":"q1","messages":[{"role":"user","content":"Q?"}],"scorer":"exact","expected":"Rome"}`,
		`{"id":"q1","messages":[{"role":"user","content":"Q?"}],"scorer":"contains","expected":"Paris"}`,
		`{"id":"q1","messages":[{"role":"user","content":"Q?"}],"scorer":"exact","expected":"Paris","options":{"case_sensitive":true}}`,
		`{"id":"q1","messages":[{"role":"user","content":"Q?"}],"scorer":"exact","expected":"Paris","max_tokens":10}`,
		`{"id":"q1","messages":[{"role":"user","content":"Q?"}],"scorer":"exact","expected":"Paris","seed":1}`,
	}
	for _, line := range differ {
		s := parseOne(t, line)
		assert.NotEqual(t, b.Items[0].Hash, s.Items[0].Hash, "item hash of %s", line)
		assert.NotEqual(t, b.Hash, s.Hash, "suite hash of %s", line)
	}
}

// TestHashSchemaFile checks that an item naming a schema file is hashed with
// the file's content, not its name.
func TestHashSchemaFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	line := `{"id":"q1","prompt":"p","scorer":"json_schema","options":{"schema_file":"s.json"}}`
	write("suite.jsonl", line)
	write("s.json", `{"type":"object"}`)
	a, err := Load(filepath.Join(dir, "suite.jsonl"))
	require.NoError(t, err)
	write("s.json", `{"type":"array"}`)
	b, err := Load(filepath.Join(dir, "suite.jsonl"))
	require.NoError(t, err)
	assert.NotEqual(t, a.Items[0].Hash, b.Items[0].Hash)
	assert.NotEqual(t, a.Hash, b.Hash)
}

// TestPackageDocExample parses the suite shown in the package doc.
func TestPackageDocExample(t *testing.T) {
	s := parseOne(t,
		`{"id":"capital-fr","messages":[{"role":"user","content":"Capital of France? One word."}],"scorer":"exact","expected":"Paris"}`,
		`{"id":"sum","prompt":"2+2=","max_tokens":8,"scorer":"numeric","expected":4}`,
	)
	require.Len(t, s.Items, 2)
	assert.True(t, s.Items[0].Score("Paris.").Pass)
	assert.True(t, s.Items[1].Score(" 4").Pass)
}

// TestScoreConcurrent scores outputs of every scorer from many goroutines:
// a loaded suite is safe for concurrent use (go test -race).
func TestScoreConcurrent(t *testing.T) {
	s, err := Parse(strings.NewReader(strings.Join(fuzzLines, "\n")), "fuzz.jsonl")
	require.NoError(t, err)
	outs := []string{"The answer is (C).", `{"a": [1, 2]}`, "1,234", "the cat is on the mat", "Yes: H2O."}
	done := make(chan bool)
	for g := 0; g < 8; g++ {
		go func() {
			for i := range s.Items {
				for _, out := range outs {
					s.Items[i].Score(out)
				}
			}
			done <- true
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
}
