package quality

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/result"
)

// Paired is one suite answered on both sides, item by item: the input of the
// paired tests and of the drift report.
type Paired struct {
	// Common are the ids on both sides with the same content, in the
	// candidate's order, failed ones included; BaselineFailed and
	// CandidateFailed are aligned with it: 1 where that side's request
	// failed (the input of the error-rate gate).
	Common                          []string
	BaselineFailed, CandidateFailed []float64
	// Dropped counts the common items left out of Items because their
	// request failed on one side or both: a failed request is no answer,
	// neither right nor wrong.
	Dropped int
	// Items are the ids answered on both sides with the same content, in
	// the candidate's order; the slices below are aligned with it.
	Items []string
	// BaselinePass and CandidatePass are 1 for a pass, 0 for a fail.
	BaselinePass, CandidatePass []float64
	// BaselineScore and CandidateScore are the items' scores in [0, 1].
	BaselineScore, CandidateScore []float64
	// Identical is 1 where the candidate's output is byte-identical to the
	// baseline's.
	Identical []float64
	// OnlyBaseline and OnlyCandidate count items answered on one side only;
	// Changed counts items on both sides whose content (request, expected
	// answer, scorer) differs, which are not compared.
	OnlyBaseline, OnlyCandidate, Changed int
	// Drift summarises how the outputs differ.
	Drift Drift
	// Examples are the common items whose output changed: those whose
	// pass turned to fail first, then those whose request failed in the
	// candidate only, then fail to pass, then the rest, then those whose
	// request failed in the baseline only, each in suite order.
	Examples []Example
}

// Drift summarises output drift: under greedy decoding a changed output is
// evidence that numerics changed, even where the score did not.
type Drift struct {
	// Identical and Differ count paired items whose outputs are identical
	// or not.
	Identical, Differ int
	// FirstDiffChar and FirstDiffWord are the medians, over the items that
	// differ, of the position (0-based, in characters and in
	// whitespace-separated words) of the first difference: small means the
	// answers diverge early, large that a long common prefix was kept.
	FirstDiffChar, FirstDiffWord int
}

// Example is one paired item whose output changed.
type Example struct {
	ID                            string
	BaselinePass, CandidatePass   bool
	BaselineScore, CandidateScore float64
	// BaselineOutput and CandidateOutput are the outputs as received:
	// untrusted text for the renderer to escape and truncate.
	BaselineOutput, CandidateOutput string
	// FirstDiffChar and FirstDiffWord locate the first difference (0 when
	// a side failed).
	FirstDiffChar, FirstDiffWord int
	// BaselineError and CandidateError are why that side's request failed,
	// with its kind (http, stream, timeout, unanswered, ...); empty when it
	// was answered. A failed side has no pass: its Pass is false and its
	// output is whatever arrived before the failure.
	BaselineError      string `json:",omitempty"`
	BaselineErrorKind  string `json:",omitempty"`
	CandidateError     string `json:",omitempty"`
	CandidateErrorKind string `json:",omitempty"`
}

// Pair pairs the items of two answers of one suite by id. Items whose content
// hash differs between the sides are left out and counted in Changed.
func Pair(base, cand *result.SuiteResult) Paired {
	var p Paired
	byID := make(map[string]*result.ItemOutcome, len(base.Items))
	for i := range base.Items {
		byID[base.Items[i].ID] = &base.Items[i]
	}
	seen := map[string]bool{}
	var chars, words []int
	var regressed, newlyFailed, improved, other, recovered []Example
	for i := range cand.Items {
		c := &cand.Items[i]
		b, ok := byID[c.ID]
		switch {
		case !ok:
			p.OnlyCandidate++
			continue
		case b.Hash != c.Hash:
			seen[c.ID] = true
			p.Changed++
			continue
		}
		seen[c.ID] = true
		p.Common = append(p.Common, c.ID)
		p.BaselineFailed = append(p.BaselineFailed, boolValue(b.Failed()))
		p.CandidateFailed = append(p.CandidateFailed, boolValue(c.Failed()))
		if b.Failed() || c.Failed() {
			p.Dropped++
			if b.Failed() && c.Failed() {
				continue // no answer on either side: nothing changed to show
			}
			ex := Example{ID: c.ID, BaselinePass: b.Pass && !b.Failed(), CandidatePass: c.Pass && !c.Failed(),
				BaselineScore: b.Score, CandidateScore: c.Score, BaselineOutput: b.Output, CandidateOutput: c.Output}
			if b.Failed() {
				ex.BaselineError, ex.BaselineErrorKind = b.Error, b.FailureKind()
				recovered = append(recovered, ex)
			} else {
				ex.CandidateError, ex.CandidateErrorKind = c.Error, c.FailureKind()
				newlyFailed = append(newlyFailed, ex)
			}
			continue
		}
		p.Items = append(p.Items, c.ID)
		p.BaselinePass = append(p.BaselinePass, boolValue(b.Pass))
		p.CandidatePass = append(p.CandidatePass, boolValue(c.Pass))
		p.BaselineScore = append(p.BaselineScore, b.Score)
		p.CandidateScore = append(p.CandidateScore, c.Score)
		same := b.Output == c.Output
		p.Identical = append(p.Identical, boolValue(same))
		if same {
			p.Drift.Identical++
			continue
		}
		p.Drift.Differ++
		ch, w := FirstDifference(b.Output, c.Output)
		chars, words = append(chars, ch), append(words, w)
		ex := Example{ID: c.ID, BaselinePass: b.Pass, CandidatePass: c.Pass, BaselineScore: b.Score, CandidateScore: c.Score,
			BaselineOutput: b.Output, CandidateOutput: c.Output, FirstDiffChar: ch, FirstDiffWord: w}
		switch {
		case b.Pass && !c.Pass:
			regressed = append(regressed, ex)
		case !b.Pass && c.Pass:
			improved = append(improved, ex)
		default:
			other = append(other, ex)
		}
	}
	for _, b := range base.Items {
		if !seen[b.ID] {
			p.OnlyBaseline++
		}
	}
	p.Drift.FirstDiffChar, p.Drift.FirstDiffWord = medianInt(chars), medianInt(words)
	p.Examples = slices.Concat(regressed, newlyFailed, improved, other, recovered)
	return p
}

// FirstDifference returns where a and b first differ: the index of the first
// differing character (rune) and of the first differing whitespace-separated
// word. Equal strings give their length in both.
func FirstDifference(a, b string) (char, word int) {
	i := 0
	for i < len(a) && i < len(b) {
		ra, na := utf8.DecodeRuneInString(a[i:])
		rb, nb := utf8.DecodeRuneInString(b[i:])
		if ra != rb || na != nb {
			break
		}
		i += na
		char++
	}
	wa, wb := strings.Fields(a), strings.Fields(b)
	for word < len(wa) && word < len(wb) && wa[word] == wb[word] {
		word++
	}
	return char, word
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// medianInt is the lower median, 0 for none.
func medianInt(v []int) int {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
