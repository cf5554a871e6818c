package sim

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/quality"
)

// LoadAnswers loads the eval suites of --answers, one per path, reporting
// every suite's loading errors (quality.Load's file:line errors).
func LoadAnswers(paths []string) ([]*quality.Suite, error) {
	var suites []*quality.Suite
	var errs []error
	for _, p := range paths {
		s, err := quality.Load(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		suites = append(suites, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return suites, nil
}

// answerer is the generator of --answers: a request whose prompt text is an
// eval item's answers it, right or wrong as drawn once for the item; any
// other request goes to next (filler).
type answerer struct {
	byPrompt map[string]*answer
	next     generator
}

// answer is what the sim answers one eval item, fixed at Start.
type answer struct {
	suite  string // the suite's name
	item   string // the item's ID
	right  bool
	tokens []string // the answer text split into output tokens
	// toolItem says the item is scored by tool_call; call is the tool call
	// a right answer to it makes (its first expected call), nil for a
	// wrong one, which is text.
	toolItem bool
	call     *toolCall
}

// newAnswerer builds the answer of every item of suites. An item whose
// scorer gives no right answer, and two items with the same prompt text but
// different expected answers, are errors: the sim must not start.
func newAnswerer(suites []*quality.Suite, seed int64, accuracy float64, next generator) (*answerer, error) {
	a := &answerer{byPrompt: map[string]*answer{}, next: next}
	type first struct {
		it      *quality.Item
		where   string
		correct string
		wrong   string
	}
	seen := map[string]first{}
	var errs []error
	for _, s := range suites {
		file := s.Path
		if file == "" {
			file = s.Name
		}
		for i := range s.Items {
			it := &s.Items[i]
			where := fmt.Sprintf("%s:%d (item %q)", file, it.Line, it.ID)
			correct, err := it.CorrectAnswer()
			if err != nil {
				// quality's message starts with the line, which where names.
				msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("line %d: ", it.Line))
				errs = append(errs, fmt.Errorf("%s: no right answer to serve: %s", where, msg))
				continue
			}
			wrong := it.WrongAnswer()
			key := itemPrompt(it)
			if f, dup := seen[key]; dup {
				if !sameAnswers(f.it, it, f.correct, f.wrong, correct, wrong) {
					errs = append(errs, fmt.Errorf("%s and %s have the same prompt text but different expected answers; the sim cannot tell them apart", f.where, where))
				}
				continue // the first item answers for both
			}
			seen[key] = first{it: it, where: where, correct: correct, wrong: wrong}
			right := drawUnit(seed, it.ID, key) < accuracy
			text := wrong
			if right {
				text = correct
			}
			ans := &answer{suite: s.Name, item: it.ID, right: right, tokens: answerTokens(text)}
			ans.toolItem = it.Scorer == "tool_call"
			if right && ans.toolItem {
				var calls []quality.Call
				if json.Unmarshal([]byte(text), &calls) == nil && len(calls) > 0 {
					ans.call = &toolCall{name: calls[0].Name, args: string(calls[0].Arguments)}
				}
			}
			a.byPrompt[key] = ans
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return a, nil
}

// sameAnswers reports whether items a and b, with the same prompt text,
// expect the same answers: the same scorer and expected values, and each
// one's right answer passes the other while its wrong answer fails it (which
// catches differing scorer options).
func sameAnswers(a, b *quality.Item, aRight, aWrong, bRight, bWrong string) bool {
	return a.Scorer == b.Scorer && slices.Equal(a.Expected, b.Expected) &&
		b.Score(aRight).Pass && !b.Score(aWrong).Pass &&
		a.Score(bRight).Pass && !a.Score(bWrong).Pass
}

// itemPrompt is an item's prompt text as decodeRequest computes it for the
// request the item sends: chat messages' contents joined by newlines, or the
// completions prompt.
func itemPrompt(it *quality.Item) string {
	if len(it.Request.Messages) > 0 {
		parts := make([]string, len(it.Request.Messages))
		for i, m := range it.Request.Messages {
			parts[i] = m.Content
		}
		return strings.Join(parts, "\n")
	}
	return it.Request.Prompt
}

// drawUnit maps (seed, item id, prompt text) to [0,1), uniformly. An item is
// answered right iff its draw is below the accuracy, so with one seed the
// items right at a lower accuracy are a subset of those right at a higher
// one, and nothing depends on the request or on arrival order.
func drawUnit(seed int64, id, prompt string) float64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], uint64(len(id)))
	h.Write(b[:])
	h.Write([]byte(id))
	h.Write([]byte(prompt))
	return float64(splitmix(h.Sum64())>>11) / (1 << 53)
}

// answerTokens splits an answer into output tokens: a new token starts at
// each space that follows a non-space, so tokens are words with their
// leading spaces, newlines and code fences stay inside them, and the tokens
// concatenate back to the text. An empty answer is one space (token 0 is
// never empty).
func answerTokens(text string) []string {
	if text == "" {
		return []string{" "}
	}
	var toks []string
	start := 0
	for i := 1; i < len(text); i++ {
		if text[i] == ' ' && text[i-1] != ' ' {
			toks = append(toks, text[start:i])
			start = i
		}
	}
	return append(toks, text[start:])
}

func (a *answerer) generate(req genRequest) generation {
	ans, ok := a.byPrompt[req.Prompt]
	if !ok {
		return a.next.generate(req)
	}
	n := min(len(ans.tokens), max(req.MaxTokens, 1))
	finish := "stop"
	if n < len(ans.tokens) {
		finish = "length"
	}
	return answerGen{answer: ans, n: n, finish: finish}
}

// answerGen streams an item's answer, cut at max_tokens.
type answerGen struct {
	*answer
	n      int
	finish string
}

func (g answerGen) Len() int             { return g.n }
func (g answerGen) Token(i int) string   { return g.tokens[i] }
func (g answerGen) FinishReason() string { return g.finish }

// toolAnswer is the answer to the tool_call item whose prompt is prompt;
// false for any other prompt.
func (a *answerer) toolAnswer(prompt string) (*answer, bool) {
	ans, ok := a.byPrompt[prompt]
	return ans, ok && ans.toolItem
}
