package quality

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Score scores one output with the item's scorer. Any output is scored,
// however long or malformed; Value is in [0, 1] and Detail at most 200 bytes.
//
// An Item that did not come from Load or Parse has its scorer built from
// Scorer and Expected with default options, on each call; when that fails
// the output fails with Detail saying why.
func (it *Item) Score(output string) Score {
	s := it.scorer
	if s == nil {
		var err error
		if s, err = it.defaultScorer(); err != nil {
			return fail(clip("no scorer: "+err.Error(), maxDetail))
		}
	}
	sc := s.score(output)
	if math.IsNaN(sc.Value) {
		sc.Value = 0
	}
	sc.Value = min(max(sc.Value, 0), 1)
	sc.Detail = clip(sc.Detail, maxDetail)
	return sc
}

// defaultScorer builds the scorer of an item made in code.
func (it *Item) defaultScorer() (scorer, error) {
	b := &builder{opts: defaultOptions(), expected: it.Expected}
	s := b.build(it.Scorer)
	if s == nil {
		return nil, errors.New(strings.Join(b.problems, "; "))
	}
	return s, nil
}

// Continuous reports whether the item's scores take values between 0 and 1
// (the reference scorer), not only 0 and 1.
func (it *Item) Continuous() bool {
	if it.scorer != nil {
		return it.scorer.continuous()
	}
	return it.Scorer == "reference"
}

// Continuous reports whether any item of the suite is continuous.
func (s *Suite) Continuous() bool {
	for i := range s.Items {
		if s.Items[i].Continuous() {
			return true
		}
	}
	return false
}

// CorrectAnswer returns a whole response that the item's scorer passes: its
// Ideal when set, else one made from the expected answer: for exact,
// contains and reference the first expected answer; for choice "The answer
// is (B)."; for numeric "The answer is 42."; for json_valid "{}"; for
// json_schema the expected value in a ```json code fence. A regex item, and a
// json_schema item without an expected value, need an ideal. The answer is
// checked against the scorer: an error says when it does not pass.
func (it *Item) CorrectAnswer() (string, error) {
	if it.Ideal != "" {
		if sc := it.Score(it.Ideal); !sc.Pass {
			return "", fmt.Errorf("line %d: ideal does not pass its scorer (%s)", it.Line, sc.Detail)
		}
		return it.Ideal, nil
	}
	var ans string
	switch {
	case it.Scorer == "json_valid":
		ans = "{}"
	case len(it.Expected) == 0 || it.Scorer == "regex":
		return "", fmt.Errorf("line %d: scorer %s cannot make a right answer from its expected value: set ideal, a whole right response", it.Line, it.Scorer)
	case it.Scorer == "choice":
		ans = fmt.Sprintf("The answer is (%s).", strings.ToUpper(strings.TrimSpace(it.Expected[0])))
	case it.Scorer == "numeric":
		ans = fmt.Sprintf("The answer is %s.", strings.TrimSpace(it.Expected[0]))
	case it.Scorer == "json_schema":
		ans = "```json\n" + it.Expected[0] + "\n```"
	case it.Scorer == "tool_call":
		ans = callsAnswer(it.Expected)
	default: // exact, contains, reference
		ans = it.Expected[0]
	}
	if sc := it.Score(ans); !sc.Pass {
		return "", fmt.Errorf("line %d: the answer made from expected, %q, does not pass its scorer (%s): set ideal", it.Line, clip(ans, 60), sc.Detail)
	}
	return ans, nil
}

// WrongAnswer returns a response that the item's scorer fails, in the style
// of CorrectAnswer: for numeric a different number ("The answer is 43.",
// beyond the tolerance), for choice another letter ("The answer is (C)."),
// for json_valid and json_schema "I cannot produce that.", otherwise "I do
// not know." (or, should that pass, another refusal). Every response tried is checked against the
// scorer; an item that passes everything gets the last one tried.
func (it *Item) WrongAnswer() string {
	var tries []string
	switch s := it.scorer.(type) {
	case *numericScorer:
		for _, w := range s.want {
			tol := s.absTol + s.relTol*math.Abs(w)
			for _, v := range []float64{w + 1, 2*w + 1, w + 2*tol + 1, -w - 2*tol - 1} {
				tries = append(tries, "The answer is "+fmtNumber(v)+".")
			}
		}
	case *choiceScorer:
		for _, c := range s.choices {
			if !strings.ContainsRune(s.want, c) {
				tries = append(tries, fmt.Sprintf("The answer is (%c).", c))
			}
		}
	case *jsonScorer:
		tries = append(tries, "I cannot produce that.")
	}
	tries = append(tries, "I do not know.", "I cannot produce that.", "No.", "")
	for _, t := range tries {
		if !it.Score(t).Pass {
			return t
		}
	}
	return tries[len(tries)-1]
}
