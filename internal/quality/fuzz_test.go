package quality

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/workload"
)

// fuzzLines are one item of every scorer, with options that take other
// paths.
var fuzzLines = []string{
	`{"id":"exact","prompt":"p","scorer":"exact","expected":["Leo Tolstoy","Tolstoy"]}`,
	`{"id":"exact-kept","prompt":"p","scorer":"exact","expected":"3.14","options":{"case_sensitive":true,"keep_punctuation":true}}`,
	`{"id":"contains","prompt":"p","scorer":"contains","expected":"García Márquez"}`,
	`{"id":"regex","prompt":"p","scorer":"regex","expected":["\\bH2O\\b","^yes"],"options":{"case_insensitive":true},"ideal":"Yes: H2O."}`,
	`{"id":"choice","prompt":"p","scorer":"choice","expected":"C"}`,
	`{"id":"choice5","prompt":"p","scorer":"choice","expected":["a","E"],"options":{"choices":"ABCDE"}}`,
	`{"id":"numeric","prompt":"p","scorer":"numeric","expected":"1,234"}`,
	`{"id":"numeric-tol","prompt":"p","scorer":"numeric","expected":-0.5,"options":{"abs_tol":0.1,"rel_tol":0.01}}`,
	`{"id":"json_valid","prompt":"p","scorer":"json_valid"}`,
	`{"id":"json_schema","prompt":"p","scorer":"json_schema","options":{"schema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}},"required":["a"]}},"expected":{"a":[1,2]}}`,
	`{"id":"rouge","prompt":"p","scorer":"reference","expected":["the cat is on the mat","a dog"]}`,
	`{"id":"chrf","prompt":"p","scorer":"reference","expected":"Schöne Grüße","options":{"metric":"chrf","threshold":0.3}}`,
}

// FuzzScore scores arbitrary outputs with every scorer: no panic, a value in
// [0, 1], a short valid Detail, and a pass that agrees with the value.
func FuzzScore(f *testing.F) {
	for _, seed := range []string{
		"", "The answer is (C).", "$1,234.50", "-1e999", "```json\n{\"a\": [1, 2]}\n```", `{"a": [1, "x"]}`,
		"A good answer is C", "**Answer:** b", "\\boxed{1,234}", "#### -0.5", "[[[[[[[[", `{"a":` + strings.Repeat("[", 200),
		"the cat sat on the mat", "Schöne Grüße", "\xff\xfe", "−.5e-3 km", "answer is a", "```", "```json\n",
	} {
		f.Add(seed)
	}
	s, err := Parse(strings.NewReader(strings.Join(fuzzLines, "\n")), "fuzz.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, out string) {
		for i := range s.Items {
			it := &s.Items[i]
			sc := it.Score(out)
			if math.IsNaN(sc.Value) || sc.Value < 0 || sc.Value > 1 {
				t.Fatalf("%s: Score(%q).Value = %v", it.ID, out, sc.Value)
			}
			if len(sc.Detail) > maxDetail || sc.Detail == "" {
				t.Fatalf("%s: Score(%q).Detail = %q", it.ID, out, sc.Detail)
			}
			if !it.Continuous() && sc.Pass != (sc.Value == 1) {
				t.Fatalf("%s: Score(%q) = %+v: pass and value disagree", it.ID, out, sc)
			}
			if utf8.ValidString(out) && !utf8.ValidString(sc.Detail) {
				t.Fatalf("%s: Score(%q).Detail = %q is not valid UTF-8", it.ID, out, sc.Detail)
			}
		}
	})
}

// TestScoreEveryScorer runs the fuzz seeds through the right and wrong
// answers of every fuzz item.
func TestScoreEveryScorer(t *testing.T) {
	s, err := Parse(strings.NewReader(strings.Join(fuzzLines, "\n")), "fuzz.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Items {
		it := &s.Items[i]
		right, err := it.CorrectAnswer()
		if err != nil {
			t.Fatalf("%s: CorrectAnswer: %v", it.ID, err)
		}
		if sc := it.Score(right); !sc.Pass {
			t.Errorf("%s: Score(CorrectAnswer %q) = %+v", it.ID, right, sc)
		}
		if sc := it.Score(it.WrongAnswer()); sc.Pass {
			t.Errorf("%s: Score(WrongAnswer %q) = %+v", it.ID, it.WrongAnswer(), sc)
		}
	}
}

// FuzzSuite: no suite makes Parse panic or run long (schemas and regular
// expressions included); every error is a *workload.LineError naming the
// file and, but for a problem with the file as a whole, a line, in
// sentences; and an item that loads scores its own correct answer without
// panicking. The seed corpus (testdata/fuzz/FuzzSuite) holds hostile
// items: deep and exponential schemas, byte-order marks, huge numbers.
func FuzzSuite(f *testing.F) {
	f.Add([]byte(strings.Join(fuzzLines, "\n")))
	files, _ := filepath.Glob("testdata/bad/*.jsonl")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil && len(b) < 8<<10 { // big seeds only slow the mutator
			f.Add(b)
		}
	}
	const name = "testdata/fuzz.jsonl"
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			s    *Suite
			err  error
			done = make(chan struct{})
		)
		go func() { s, err = Parse(bytes.NewReader(data), name); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Parse(%q) did not return within 10s", data)
		}
		if err == nil {
			for i := range s.Items {
				it := &s.Items[i]
				if right, err := it.CorrectAnswer(); err == nil {
					_ = it.Score(right)
				}
				_ = it.Score(it.WrongAnswer())
			}
			return
		}
		if s != nil {
			t.Fatal("Parse returned a suite and an error")
		}
		for _, e := range unjoin(err) {
			var le *workload.LineError
			if !errors.As(e, &le) {
				t.Fatalf("error %q is %T, want *workload.LineError", e, e)
			}
			whole := le.Msg == "no items" || strings.HasPrefix(le.Msg, "... and ")
			if le.File != name || (le.Line == 0 && !whole) {
				t.Errorf("error %q names no file and line", e)
			}
			msg := fuzzQuoted.ReplaceAllString(le.Msg, `""`) // the file's own text may say anything
			for _, goism := range []string{"%!", "json: cannot", "Go struct", "Go value", "float64", "int64", "[]string", "map[", "<nil>", "unmarshal"} {
				if strings.Contains(msg, goism) && !bytes.Contains(data, []byte(goism)) { // unless the input says it
					t.Errorf("error %q speaks Go (%s)", e, goism)
				}
			}
		}
	})
}

// fuzzQuoted matches a quoted string in a message: text from the file.
var fuzzQuoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
