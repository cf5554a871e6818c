package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// FuzzParse: no input makes Parse panic or run long; every error it returns
// is *Errors with at least one problem, each naming the file and a line or a
// field path (or the file as a whole: its size, or a count of problems left
// out), in sentences rather than Go syntax. The seed corpus
// (testdata/fuzz/FuzzParse) holds the hostile documents: deep nesting,
// aliases of aliases, huge numbers, NaN and infinities, byte-order marks.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	files = append(files, "testdata/good.yaml")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("scenarios: [{name: a, synth: {requests: 1, input: {type: fixed, value: 1}, output: {type: fixed, value: 1}}, load: {concurrency: 1}}]"))
	f.Add([]byte("a: &x {b: 1}\nc: *x\n<<: *x\n"))
	f.Add([]byte("target: !!str 5\n"))
	const name = "testdata/fuzz.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			c    *Config
			err  error
			done = make(chan struct{})
		)
		go func() { c, err = Parse(data, name); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Parse(%q) did not return within 10s", data)
		}
		if err == nil {
			if c == nil {
				t.Fatal("Parse returned nil config and nil error")
			}
			_ = c.Hash()
			return
		}
		errs, ok := err.(*Errors)
		if !ok {
			t.Fatalf("Parse error is %T, want *Errors: %v", err, err)
		}
		if len(errs.Problems) == 0 {
			t.Fatal("Parse returned *Errors with no problems")
		}
		if len(errs.Problems) > maxProblems+1 {
			t.Fatalf("Parse returned %d problems, want at most %d", len(errs.Problems), maxProblems+1)
		}
		for _, p := range errs.Problems {
			wholeFile := strings.HasPrefix(p.Msg, "the file is") || strings.HasPrefix(p.Msg, "... and ")
			if p.File != name || (p.Line == 0 && p.Path == "" && !wholeFile) {
				t.Errorf("problem %q names no file, line or field", p.Error())
			}
			if goSyntax.MatchString(quoted.ReplaceAllString(p.Msg, `""`)) { // the file's own text may say anything
				t.Errorf("problem %q speaks Go", p.Error())
			}
		}
	})
}

// quoted matches a Go-quoted string in a message: text from the file.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
