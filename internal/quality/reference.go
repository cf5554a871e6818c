package quality

import (
	"fmt"
	"strings"
	"unicode"
)

// referenceScorer scores an output by its similarity to the best of one or
// more reference answers; it passes at or above the threshold.
type referenceScorer struct {
	metric    string // rouge_l or chrf
	threshold float64
	refs      []string
}

func (s *referenceScorer) score(output string) Score {
	best := 0.0
	for _, ref := range s.refs {
		best = max(best, similarity(s.metric, output, ref))
	}
	return Score{Value: best, Pass: best >= s.threshold, Detail: fmt.Sprintf("%s %.3f", s.metric, best)}
}

func (s *referenceScorer) continuous() bool { return true }

// similarity is the metric's similarity of out to ref, in [0, 1].
func similarity(metric, out, ref string) float64 {
	if metric == "chrf" {
		return chrF(out, ref)
	}
	return rougeL(out, ref)
}

// words splits s into lower-cased word tokens: runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// rougeL is ROUGE-L F1: with L the length of the longest common subsequence
// of the word tokens of out and ref, precision L/len(out), recall
// L/len(ref), and F1 their harmonic mean. It is 0 when either has no words.
func rougeL(out, ref string) float64 {
	c, r := words(out), words(ref)
	if len(c) == 0 || len(r) == 0 {
		return 0
	}
	l := lcs(c, r)
	if l == 0 {
		return 0
	}
	p, rec := float64(l)/float64(len(c)), float64(l)/float64(len(r))
	return 2 * p * rec / (p + rec)
}

// lcs is the length of the longest common subsequence of a and b, in
// O(len(a)·len(b)) time and O(len(b)) memory.
func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// chrOrder and chrBeta are chrF's parameters, as sacrebleu's defaults.
const (
	chrOrder = 6
	chrBeta  = 2.0
)

// chrF is sentence-level chrF as sacrebleu computes it (char_order 6,
// word_order 0, beta 2, case kept, white space removed), scaled to [0, 1].
// For each n in 1..6 it counts the character n-grams of out and of ref and
// the matches (the sum over n-grams of the smaller count). Precision and
// recall are averaged over the orders where both sides have n-grams, and the
// score is F-beta of the two averages: (1+β²)PR / (β²P + R).
func chrF(out, ref string) float64 {
	h := []rune(strings.Join(strings.Fields(out), ""))
	r := []rune(strings.Join(strings.Fields(ref), ""))
	var sumP, sumR float64
	effective := 0
	for n := 1; n <= chrOrder; n++ {
		if len(h) < n || len(r) < n {
			continue
		}
		hg, rg := ngrams(h, n), ngrams(r, n)
		match := 0
		for g, c := range hg {
			match += min(c, rg[g])
		}
		sumP += float64(match) / float64(len(h)-n+1)
		sumR += float64(match) / float64(len(r)-n+1)
		effective++
	}
	if effective == 0 {
		return 0
	}
	p, rec := sumP/float64(effective), sumR/float64(effective)
	if p+rec == 0 {
		return 0
	}
	b2 := chrBeta * chrBeta
	return (1 + b2) * p * rec / (b2*p + rec)
}

// ngrams counts the n-grams of s.
func ngrams(s []rune, n int) map[string]int {
	m := make(map[string]int, len(s)-n+1)
	for i := 0; i+n <= len(s); i++ {
		m[string(s[i:i+n])]++
	}
	return m
}
