package quality

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
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
