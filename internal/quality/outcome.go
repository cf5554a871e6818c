package quality

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// Outcomes scores every item of s from its answer (the record of its
// request, by item id) and returns the suite's result. An item with no
// answer (the run ended before it was sent) or whose request failed (any
// record that is not OK: an HTTP error, a timeout, a broken stream) is a
// failed item: it scores 0 and does not pass, and Error and ErrorKind say
// why. A failed item is not a wrong answer: comparisons leave it out of
// accuracy and count it in the suite's error rate.
//
// An empty answer is a wrong answer, not a failure (answeredEmpty): a model
// that answers nothing (a broken chat template) must lose accuracy, not
// only raise the error rate, which max_error_rate bounds.
func (s *Suite) Outcomes(path, mode string, answers map[string]*result.Record, gates []config.Gate) result.SuiteResult {
	out := result.SuiteResult{Name: s.Name, Path: path, Hash: s.Hash, Mode: mode, Continuous: s.Continuous(), Gates: config.ResultGates(gates),
		Items: make([]result.ItemOutcome, 0, len(s.Items))}
	for i := range s.Items {
		it := &s.Items[i]
		o := result.ItemOutcome{ID: it.ID, Hash: it.Hash, Scorer: it.Scorer}
		a, ok := answers[it.ID]
		switch {
		case !ok:
			o.Error, o.ErrorKind = "not answered", result.ErrorKindUnanswered
		case answeredEmpty(a):
			// Scored as given: no text, which no sensible expected
			// answer matches.
			sc := it.Score("")
			o.Score, o.Pass, o.Detail = sc.Value, sc.Pass, "no output: "+sc.Detail
			if sc.Detail == "" {
				o.Detail = "no output"
			}
			o.OutputTokens, o.FinishReason, o.Repetition = a.OutputTokens, a.FinishReason, a.Repetition
		case !a.OK() || a.Error != "":
			o.Error, o.ErrorKind = a.Error, a.ErrorKind
			if o.Error == "" {
				o.Error = "request failed (" + a.ErrorKind + ")"
			}
			if o.ErrorKind == "" {
				o.ErrorKind = "error"
			}
			o.Output, o.OutputTokens, o.Repetition = a.Text, a.OutputTokens, a.Repetition
		case it.Scorer == "tool_call" && len(a.ToolCalls) == 0:
			// Text is no call, even text shaped like one.
			o.Detail = "no tool call: the answer was text"
			o.Output, o.OutputTokens, o.FinishReason, o.Repetition = a.Text, a.OutputTokens, a.FinishReason, a.Repetition
		default:
			text := a.Text
			if it.Scorer == "tool_call" {
				text = CallsText(a.ToolCalls) // the calls are the answer
			}
			sc := it.Score(text)
			o.Score, o.Pass, o.Detail = sc.Value, sc.Pass, sc.Detail
			o.Output, o.OutputTokens, o.FinishReason, o.Repetition = text, a.OutputTokens, a.FinishReason, a.Repetition
		}
		if ok && a.Repetition > 0 {
			out.Interleaved++
		}
		out.Items = append(out.Items, o)
	}
	return out
}

// answeredEmpty reports whether a's request completed but carried no text:
// the client's no_output (a stream that ended properly) with a finish
// reason, the server saying it was done. Such an item was answered, with
// nothing: a transport error (http, stream, timeout, connect, canceled) or
// an empty stream with no finish reason stays a failed item.
func answeredEmpty(a *result.Record) bool {
	return a.ErrorKind == string(client.ErrNoOutput) && a.FinishReason != "" && a.Text == ""
}

// FailedError says too many of a suite's requests failed for its accuracy to
// mean anything: the run fails (exit 3) rather than gate on it.
type FailedError struct {
	Suite        string
	Failed, N    int
	MaxErrorRate float64
	// Example is one failure's error.
	Example string
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("eval suite %s: %d of %d items failed to answer (over max_error_rate %.1f%%), e.g. %s",
		e.Suite, e.Failed, e.N, 100*e.MaxErrorRate, e.Example)
}

// CheckFailures returns a *FailedError when more than maxErrorRate of the
// suite's items failed to answer.
func CheckFailures(s *result.SuiteResult, maxErrorRate float64) error {
	failed, n := s.Failed(), len(s.Items)
	if n == 0 || float64(failed)/float64(n) <= maxErrorRate {
		return nil
	}
	e := &FailedError{Suite: s.Name, Failed: failed, N: n, MaxErrorRate: maxErrorRate}
	for _, it := range s.Items {
		if it.Error != "" {
			e.Example = it.ID + ": " + it.Error
			break
		}
	}
	return e
}
