package workload

import "slices"

// Vocabulary returns a copy of the word list synthetic prompts are drawn
// from: short, common English words, each about one token after a space in
// the usual tokenizers. Importers that synthesise text (internal/traceimport,
// for Mooncake traces' hash blocks) draw from it so that their prompts have
// the same words-to-tokens shape as Synthesize's.
func Vocabulary() []string { return slices.Clone(vocabulary) }
