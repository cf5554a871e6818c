package quality

import (
	"github.com/perfgate/perfgate/internal/workload"
)

// DefaultSeed is the sampling seed sent with an item that names none, so that
// a server that samples despite temperature 0 is as repeatable as it can be.
const DefaultSeed = 1234

// DefaultMaxTokens is an item's max_tokens when it names none.
const DefaultMaxTokens = 256

// Item is one eval item: the request to send, what a right answer is, and
// how to tell.
type Item struct {
	// ID names the item; unique in its suite.
	ID string
	// Request is what is sent: messages or prompt, max_tokens, sampling
	// parameters (temperature defaults to 0, seed to DefaultSeed). Its ID is
	// the item's.
	Request workload.Request
	// Scorer is the scorer's name (exact, contains, regex, choice, numeric,
	// json_valid, json_schema, reference).
	Scorer string
	// Expected are the acceptable answers as written in the suite (one or
	// more); empty for json_valid, and for json_schema without an expected
	// value.
	Expected []string
	// Ideal is an optional whole right response (what `perfgate sim
	// --answers` answers when right); empty when the suite gives none.
	Ideal string
	// Line is the item's 1-based line in its file.
	Line int
	// Hash identifies the item's content (request, expected answers, scorer
	// and options): an item whose content changed between baseline and
	// candidate is not compared with its old outcome.
	Hash string

	scorer scorer
}

// Score is one output's score under its item's scorer.
type Score struct {
	// Value is in [0, 1]: 0 or 1 for pass/fail scorers, a similarity for
	// reference.
	Value float64
	// Pass is whether the output counts as right.
	Pass bool
	// Detail says what the scorer saw, for reports: "chose B", "number
	// 1234", "schema: /name: missing property". Untrusted text in it is the
	// renderer's to escape.
	Detail string
}

// scorer scores one output. Implementations are built, and their options
// checked, when a suite is loaded.
type scorer interface {
	score(output string) Score
	// continuous is true when scores are not only 0 and 1.
	continuous() bool
}

// Suite is a loaded eval suite.
type Suite struct {
	// Name is the file's base name without .jsonl: what reports and gates
	// call the suite.
	Name string
	// Path is the file it was loaded from.
	Path string
	// Hash is "sha256:<hex>" over the items' content.
	Hash  string
	Items []Item
}
