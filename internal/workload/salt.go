package workload

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// saltWords is how many words a salt has: with the 320-word vocabulary,
// 320^5 ≈ 3.4e12 salts, so two passes of a run never share one by chance.
const saltWords = 5

// SaltText is the salt of one pass over a workload, drawn from seed: a few
// common words and a blank line, which a prompt or prefix cache cannot have
// seen before the pass, and which costs a real engine about saltWords+2
// prompt tokens (perfgate's simulator counts saltWords).
func SaltText(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0x5a17))
	return strings.Join(words(r, saltWords, make([]string, 0, saltWords)), " ") + "\n\n"
}

// Salted returns a copy of r whose text starts with salt: the first message's
// content for a chat request, the prompt for a completions one. Salting the
// very start of the text defeats every prefix cache (a cache matches a prompt
// from its first token on) while requests salted alike keep the prefixes
// they share. r itself, and its Messages, are left as they are.
func (r *Request) Salted(salt string) Request {
	out := *r
	if len(r.Messages) > 0 {
		out.Messages = slices.Clone(r.Messages)
		out.Messages[0].Content = salt + out.Messages[0].Content
	} else {
		out.Prompt = salt + r.Prompt
	}
	return out
}
