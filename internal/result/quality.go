package result

import "regexp"

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
	// Error is why the request failed (the transport's error, or "not
	// answered" when the run ended before the item was sent). A failed item
	// scores 0 and does not pass, but it is no wrong answer: comparisons
	// leave it out of accuracy and the paired tests and count it in the
	// suite's error rate.
	Error string `json:"error,omitempty"`
	// ErrorKind classifies the failure: the request's error kind (http,
	// stream, timeout, connect, canceled, no_output with no finish reason,
	// ...), or unanswered. An empty answer with a finish reason is scored,
	// not failed.
	// Empty in results written before it was recorded: Error alone then
	// marks the failure.
	ErrorKind string `json:"error_kind,omitempty"`
}

// ErrorKindUnanswered is the error kind of an item the run ended before
// sending.
const ErrorKindUnanswered = "unanswered"

// Failed reports whether the item's request failed: it has no answer to
// score.
func (it *ItemOutcome) Failed() bool { return it.Error != "" || it.ErrorKind != "" }

// FailureKind is the item's error kind; "error" for a failure recorded
// without one (results written before kinds were), "" when it did not fail.
func (it *ItemOutcome) FailureKind() string {
	switch {
	case it.ErrorKind != "":
		return it.ErrorKind
	case it.Error != "":
		return "error"
	}
	return ""
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

// Answered returns how many items passed, and how many were answered: the
// accuracy of a run, its failed items left out.
func (s *SuiteResult) Answered() (pass, n int) {
	for i := range s.Items {
		if s.Items[i].Failed() {
			continue
		}
		n++
		if s.Items[i].Pass {
			pass++
		}
	}
	return pass, n
}

// Failed returns how many items' requests failed.
func (s *SuiteResult) Failed() int {
	n := 0
	for i := range s.Items {
		if s.Items[i].Failed() {
			n++
		}
	}
	return n
}

// FailedKinds counts the failed items by FailureKind; nil when none failed.
func (s *SuiteResult) FailedKinds() map[string]int {
	var out map[string]int
	for i := range s.Items {
		if k := s.Items[i].FailureKind(); k != "" {
			if out == nil {
				out = map[string]int{}
			}
			out[k]++
		}
	}
	return out
}

// errorKindPattern is what an item's error kind may be: a short lowercase
// word, as the request error kinds are.
var errorKindPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// itemFailure checks an item's failure: a kind needs an error to go with
// it, and a failed item has no answer, so it neither passes nor scores.
func (v *checker) itemFailure(p string, it *ItemOutcome) {
	switch {
	case it.ErrorKind != "" && !errorKindPattern.MatchString(it.ErrorKind):
		v.add(p+".error_kind", "want a lowercase word of at most 32 letters, digits and '_' (http, stream, timeout, unanswered, ...), got %q", it.ErrorKind)
	case it.ErrorKind != "" && it.Error == "":
		v.add(p+".error", "the item has error_kind %q but no error: a failed item says why", it.ErrorKind)
	}
	if it.Failed() && it.Pass {
		v.add(p+".pass", "the item's request failed (%s), so it cannot pass", it.FailureKind())
	}
	if it.Failed() && it.Score != 0 {
		v.add(p+".score", "the item's request failed (%s), so its score is 0, got %s", it.FailureKind(), fmtNum(it.Score))
	}
}
