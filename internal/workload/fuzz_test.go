package workload

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzWorkload: no input makes Parse panic or run long; every error is
// *LineError (joined) naming the file and, but for a problem with the file
// as a whole, a line; no message speaks Go; and whatever parses survives a
// round trip through Write and Parse with the same hash. The seed corpus
// (testdata/fuzz/FuzzWorkload) holds the hostile cases: a byte-order mark,
// deep nesting, huge and non-finite numbers, NUL bytes, broken UTF-8.
func FuzzWorkload(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":"<a href=\"x\">&amp;</a>\u2028"}],"max_tokens":1,"response_format":{"b":1.0,"a":[]}}`))
	f.Add([]byte("{\"prompt\":\"\xff\xfe\",\"max_tokens\":3,\"arrival_ms\":-0}\n\n"))
	const name = "fuzz.jsonl"
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			w    *Workload
			err  error
			done = make(chan struct{})
		)
		go func() { w, err = Parse(bytes.NewReader(data), name); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Parse(%q) did not return within 10s", data)
		}
		if err != nil {
			if w != nil {
				t.Fatalf("Parse returned a workload and an error")
			}
			checkProblems(t, err, name, data)
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, w.Requests); err != nil {
			t.Fatalf("Write: %v", err)
		}
		w2, err := Parse(&buf, "round.jsonl")
		if err != nil {
			t.Fatalf("Parse(Write(Parse(x))): %v\n%s", err, buf.Bytes())
		}
		if w2.Hash != w.Hash {
			t.Fatalf("hash after round trip = %s, want %s\n%s", w2.Hash, w.Hash, buf.Bytes())
		}
	})
}

// checkProblems fails t unless every error joined in err is a *LineError
// naming file and a line (or the file as a whole), in sentences.
func checkProblems(t *testing.T, err error, file string, input []byte) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var le *LineError
		if !errors.As(e, &le) {
			t.Fatalf("error %q is %T, want *LineError", e, e)
		}
		whole := le.Msg == "no requests" || strings.HasPrefix(le.Msg, "... and ")
		if le.File != file || (le.Line == 0 && !whole) {
			t.Errorf("error %q names no file and line", e)
		}
		msg := quotedText.ReplaceAllString(le.Msg, `""`) // the file's own text may say anything
		for _, goism := range []string{"%!", "json: cannot", "Go struct", "Go value", "float64", "int64", "[]string", "map[", "<nil>", "unmarshal"} {
			if strings.Contains(msg, goism) && !bytes.Contains(input, []byte(goism)) { // unless the input says it
				t.Errorf("error %q speaks Go (%s)", e, goism)
			}
		}
	}
}
