package quality

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDetail is the most bytes a Score's Detail has.
const maxDetail = 200

// normalize is the answer normalisation of exact and contains, as SQuAD's
// evaluation script does it: lower-case (unless keepCase), delete every
// Unicode punctuation character (unless keepPunct), drop the articles a, an
// and the (in any case), and collapse runs of white space to one space,
// trimmed. "The  U.S.A.!" becomes "usa".
func normalize(s string, keepCase, keepPunct bool) string {
	if !keepCase {
		s = strings.ToLower(s)
	}
	if !keepPunct {
		s = strings.Map(func(r rune) rune {
			if unicode.IsPunct(r) {
				return -1
			}
			return r
		}, s)
	}
	words := strings.Fields(s)
	out := words[:0]
	for _, w := range words {
		if isArticle(w) {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

func isArticle(w string) bool {
	return strings.EqualFold(w, "a") || strings.EqualFold(w, "an") || strings.EqualFold(w, "the")
}

// exactScorer passes when the normalised output equals one normalised
// expected answer.
type exactScorer struct {
	keepCase, keepPunct bool
	want                []string // normalised
}

func (s *exactScorer) score(output string) Score {
	got := normalize(output, s.keepCase, s.keepPunct)
	for _, w := range s.want {
		if got == w {
			return pass("exact match")
		}
	}
	return fail("got " + quoted(got, 48))
}

func (s *exactScorer) continuous() bool { return false }

// containsScorer passes when one normalised expected answer appears in the
// normalised output as whole words.
type containsScorer struct {
	keepCase, keepPunct bool
	want                []string // normalised
}

func (s *containsScorer) score(output string) Score {
	got := " " + normalize(output, s.keepCase, s.keepPunct) + " "
	for _, w := range s.want {
		if strings.Contains(got, " "+w+" ") {
			return pass("contains " + quoted(w, 48))
		}
	}
	return fail("expected answer not found")
}

func (s *containsScorer) continuous() bool { return false }

// regexScorer passes when one pattern matches anywhere in the output.
type regexScorer struct {
	patterns []*regexp.Regexp
}

func (s *regexScorer) score(output string) Score {
	for i, re := range s.patterns {
		if re.MatchString(output) {
			if len(s.patterns) == 1 {
				return pass("pattern matched")
			}
			return pass(fmt.Sprintf("pattern %d matched", i+1))
		}
	}
	return fail("no pattern matched")
}

func (s *regexScorer) continuous() bool { return false }

func pass(detail string) Score { return Score{Value: 1, Pass: true, Detail: detail} }
func fail(detail string) Score { return Score{Value: 0, Pass: false, Detail: detail} }

// quoted quotes s, Go-style, cut to at most n bytes of s.
func quoted(s string, n int) string {
	return strconv.Quote(clip(s, n))
}

// clip cuts s to at most n bytes on a rune boundary, marking a cut with "...".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
