package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no input makes Parse panic, and every error it returns is
// *Errors with at least one problem.
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
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "testdata/fuzz.yaml")
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
	})
}
