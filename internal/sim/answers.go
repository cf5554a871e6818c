package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
)

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
func newAnswerer(suites []*AnswerSuite, seed int64, accuracy float64, next generator) (*answerer, error) {
	a := &answerer{byPrompt: map[string]*answer{}, next: next}
	type first struct {
		it    *AnswerItem
		where string
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
			if f, dup := seen[it.Prompt]; dup {
				if f.it.Key != it.Key {
					errs = append(errs, fmt.Errorf("%s and %s have the same prompt text but different expected answers; the sim cannot tell them apart", f.where, where))
				}
				continue // the first item answers for both
			}
			seen[it.Prompt] = first{it: it, where: where}
			right := drawUnit(seed, it.ID, it.Prompt) < accuracy
			text := it.Wrong
			if right {
				text = it.Right
			}
			ans := &answer{suite: s.Name, item: it.ID, right: right, tokens: answerTokens(text), toolItem: it.Scorer == "tool_call"}
			if right {
				ans.call = it.Call
			}
			a.byPrompt[it.Prompt] = ans
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return a, nil
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
