package result

// SuiteResult is one eval suite answered in a run: every item's outcome, so
// that a later comparison can pair each item with the baseline's answer to
// the same item.
type SuiteResult struct {
	// Name is the suite's name (its file's base name).
	Name string `json:"name"`
	// Path is the suite file as configured.
	Path string `json:"path"`
	// Hash identifies the suite's content ("sha256:<hex>").
	Hash string `json:"hash"`
	// Mode is interleaved or separate.
	Mode string `json:"mode"`
	// Interleaved is how many items were answered amid the measured load;
	// the rest were answered alone after it.
	Interleaved int `json:"interleaved"`
	// Continuous is true when some item's scorer gives scores between 0 and
	// 1 (reference), which makes the mean score gateable.
	Continuous bool `json:"continuous,omitempty"`
	// Gates are the quality gates configured when the suite ran, so that
	// `perfgate compare` needs no config. An empty list means every quality
	// gate was off.
	Gates []Gate `json:"gates"`
	// Items are the outcomes, in the suite's order.
	Items []ItemOutcome `json:"items"`
}

// ItemOutcome is one eval item's answer and its score. Output is the model's
// text as received: untrusted data, which every renderer escapes and
// truncates.
type ItemOutcome struct {
	ID string `json:"id"`
	// Hash identifies the item's content: an item that changed between
	// baseline and candidate is not paired.
	Hash   string  `json:"hash"`
	Scorer string  `json:"scorer"`
	Score  float64 `json:"score"`
	Pass   bool    `json:"pass"`
	// Detail says what the scorer saw ("chose B", "number 1234").
	Detail       string `json:"detail,omitempty"`
	Output       string `json:"output"`
	OutputTokens int    `json:"output_tokens"`
	FinishReason string `json:"finish_reason,omitempty"`
	// Repetition is the repetition whose load carried the item; 0 when it
	// was answered alone.
	Repetition int `json:"repetition,omitempty"`
	// Error is why the request failed; a failed item scores 0 and fails.
	Error string `json:"error,omitempty"`
}

// Passed returns how many items passed, and how many there are.
func (s *SuiteResult) Passed() (pass, n int) {
	for _, it := range s.Items {
		if it.Pass {
			pass++
		}
	}
	return pass, len(s.Items)
}

// Failed returns how many items' requests failed.
func (s *SuiteResult) Failed() int {
	n := 0
	for _, it := range s.Items {
		if it.Error != "" {
			n++
		}
	}
	return n
}
