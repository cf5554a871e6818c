package sim

import "hash/fnv"

// generator decides what a request answers: filler answers filler words;
// answerer (answers.go, --answers) answers eval items, right with
// probability Accuracy, and passes other requests to filler.
type generator interface {
	generate(req genRequest) generation
}

// genRequest is what a generator sees of a request.
type genRequest struct {
	Prompt    string // the prompt text (chat: the messages' contents joined by newlines)
	MaxTokens int
	Seed      int64
}

// generation is the output of one request: Len tokens, each its own chunk.
type generation interface {
	// Len is the number of output tokens, 1..max_tokens.
	Len() int
	// Token returns the text of token i; token 0 is never empty.
	Token(i int) string
	// FinishReason is "length" or "stop".
	FinishReason() string
}

var fillerVocab = [...]string{
	"the", "model", "token", "stream", "batch", "cache", "latency", "engine",
	"serves", "requests", "quickly", "and", "steady", "of", "a", "simulated",
	"answer", "with", "words", "that", "mean", "nothing", "in", "particular",
	"while", "time", "passes", "per", "step", "on", "this", "server",
}

// filler answers max_tokens seeded words: the same seed and prompt give the
// same text.
type filler struct{}

func (filler) generate(req genRequest) generation {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(uint64(req.Seed) >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(req.Prompt))
	return fillerGen{n: max(req.MaxTokens, 1), key: h.Sum64()}
}

type fillerGen struct {
	n   int
	key uint64
}

func (g fillerGen) Len() int             { return g.n }
func (g fillerGen) FinishReason() string { return "length" }

func (g fillerGen) Token(i int) string {
	w := fillerVocab[splitmix(g.key+uint64(i))%uint64(len(fillerVocab))]
	if i == 0 {
		return w
	}
	return " " + w
}

// splitmix is SplitMix64's finaliser: a good 64-bit mix for counters.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// thinker is a reasoning model's generation: n tokens of thinking, then the
// answer, the whole cut at max_tokens (a reasoning-only answer, finish
// reason length, when max_tokens is n or less).
type thinker struct {
	answer   generation
	n, max   int
	thoughts fillerGen
}

func newThinker(answer generation, n, maxTokens int, key uint64) thinker {
	return thinker{answer: answer, n: n, max: max(maxTokens, 1), thoughts: fillerGen{n: n, key: key ^ 0x5eed}}
}

func (g thinker) Len() int { return min(g.n+g.answer.Len(), g.max) }

func (g thinker) Token(i int) string {
	if i < g.n {
		return g.thoughts.Token(i)
	}
	return g.answer.Token(i - g.n)
}

func (g thinker) FinishReason() string {
	if g.n+g.answer.Len() > g.max {
		return "length"
	}
	return g.answer.FinishReason()
}

// thinking reports whether token i is reasoning.
func (g thinker) thinking(i int) bool { return i < g.n }
