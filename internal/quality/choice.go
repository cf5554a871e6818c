package quality

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// choiceScorer extracts the letter a multiple-choice answer chose and passes
// when it is one of the expected letters.
type choiceScorer struct {
	choices string // the valid letters, upper case
	want    string // the accepted letters, upper case
}

var (
	// answerRe finds "answer is X", "answer: X", "Answer: (X)", "answer is
	// option X", "**Answer:** X".
	answerRe = regexp.MustCompile(`(?i)\banswers?\s*(?:is\b\s*:?|:)[\s*_]*(?:(?:option|choice|letter)\s+)?[\s*_(\[]*([a-z])`)
	// tokenRe finds a letter standing alone in parentheses, brackets or bold.
	tokenRe = regexp.MustCompile(`\(([A-Za-z])\)|\[([A-Za-z])\]|\*\*([A-Za-z])\*\*`)
)

func (s *choiceScorer) score(output string) Score {
	c, ok := s.extract(output)
	if !ok {
		return fail("no choice found")
	}
	detail := "chose " + string(c)
	if strings.IndexByte(s.want, c) >= 0 {
		return pass(detail)
	}
	return fail(detail)
}

func (s *choiceScorer) continuous() bool { return false }

// extract finds the chosen letter, trying in order:
//  1. an explicit "answer is X" / "answer: X" (any case, X optionally in
//     parentheses or bold), the last one that names a valid letter; a
//     lower-case "a" followed by a word ("the answer is a bit long") is the
//     article and does not count;
//  2. an output, or its first line, that is only the letter, optionally in
//     parentheses, brackets or bold, with a trailing "." or ")";
//  3. the last "(X)", "[X]" or "**X**" standing alone;
//  4. a letter at the start followed by ")", "." or ":" ("B) Paris").
//
// Only letters of s.choices count, in either case. A letter must stand
// alone: the "A" of "A good answer is C" is never taken.
func (s *choiceScorer) extract(out string) (byte, bool) {
	ms := answerRe.FindAllStringSubmatchIndex(out, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		at, end := ms[i][2], ms[i][3]
		c, rest := out[at], out[end:]
		if !s.valid(c) || startsAlnum(rest) || (c == 'a' && wordFollows(rest)) {
			continue
		}
		return upper(c), true
	}

	t := strings.TrimSpace(out)
	if c, ok := s.bare(t); ok {
		return c, true
	}
	if first, _, found := strings.Cut(t, "\n"); found {
		if c, ok := s.bare(first); ok {
			return c, true
		}
	}

	ms = tokenRe.FindAllStringSubmatchIndex(out, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if endsAlnum(out[:m[0]]) || startsAlnum(out[m[1]:]) {
			continue
		}
		for g := 2; g < len(m); g += 2 {
			if m[g] >= 0 && s.valid(out[m[g]]) {
				return upper(out[m[g]]), true
			}
		}
	}

	t = strings.TrimLeft(out, " \t\r\n*_")
	if len(t) >= 2 && s.valid(t[0]) && strings.IndexByte(").:", t[1]) >= 0 && !startsAlnum(t[2:]) {
		return upper(t[0]), true
	}
	return 0, false
}

// bare returns the letter when t is only a letter with markup around it:
// "B", "(B)", "**B**", "B.", "[b]".
func (s *choiceScorer) bare(t string) (byte, bool) {
	t = strings.TrimLeft(t, " \t*_([")
	t = strings.TrimRight(t, " \t\r*_)].:")
	if len(t) == 1 && s.valid(t[0]) {
		return upper(t[0]), true
	}
	return 0, false
}

// valid reports whether c is a letter of the choices, in either case.
func (s *choiceScorer) valid(c byte) bool {
	return isASCIILetter(c) && strings.IndexByte(s.choices, upper(c)) >= 0
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// startsAlnum reports whether s starts with a letter or digit.
func startsAlnum(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// endsAlnum reports whether s ends with a letter or digit.
func endsAlnum(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// wordFollows reports whether s is white space and then a word: what follows
// the article in "a bit".
func wordFollows(s string) bool {
	t := strings.TrimLeft(s, " \t")
	return len(t) < len(s) && startsAlnum(t)
}
