package quality

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// Every record that is not OK is a failed item with its error and kind, not
// a wrong answer; an item never sent is one too.
func TestOutcomesFailedItems(t *testing.T) {
	suite, err := Parse(strings.NewReader(
		`{"id":"ok","prompt":"2+2=","scorer":"numeric","expected":4}`+"\n"+
			`{"id":"http","prompt":"3+3=","scorer":"numeric","expected":6}`+"\n"+
			`{"id":"stream","prompt":"4+4=","scorer":"numeric","expected":8}`+"\n"+
			`{"id":"empty","prompt":"5+5=","scorer":"numeric","expected":10}`+"\n"+
			`{"id":"unsent","prompt":"6+6=","scorer":"numeric","expected":12}`+"\n"+
			`{"id":"blank","prompt":"7+7=","scorer":"numeric","expected":14}`+"\n"), "evals/t.jsonl")
	require.NoError(t, err)
	answers := map[string]*result.Record{
		"ok":     {ID: "ok", Text: "The answer is 4.", Repetition: 2},
		"http":   {ID: "http", ErrorKind: "http", Error: "http 500: simulated engine error", Repetition: 1},
		"stream": {ID: "stream", ErrorKind: "stream", Error: "stream: connection reset by peer", Text: "The answer is", Repetition: 1},
		// A kind with no message: still a failure, never scored.
		"empty": {ID: "empty", ErrorKind: "no_output", Text: "10"},
		// A stream that ended properly, finish_reason and all, with no
		// text: answered, wrongly (a broken chat template), not failed.
		"blank": {ID: "blank", ErrorKind: "no_output", Error: "no_output: the stream ended with [DONE] but carried no output text", FinishReason: "stop", Repetition: 1},
	}
	r := suite.Outcomes("evals/t.jsonl", config.QualityInterleaved, answers, nil)
	require.Len(t, r.Items, 6)
	want := []struct {
		pass       bool
		kind, err  string
		output     string
		repetition int
	}{
		{true, "", "", "The answer is 4.", 2},
		{false, "http", "http 500: simulated engine error", "", 1},
		{false, "stream", "stream: connection reset by peer", "The answer is", 1},
		{false, "no_output", "request failed (no_output)", "10", 0},
		{false, result.ErrorKindUnanswered, "not answered", "", 0},
		{false, "", "", "", 1},
	}
	for i, w := range want {
		it := r.Items[i]
		assert.Equal(t, w.pass, it.Pass, it.ID)
		assert.Equal(t, w.kind, it.ErrorKind, it.ID)
		assert.Equal(t, w.err, it.Error, it.ID)
		assert.Equal(t, w.output, it.Output, it.ID)
		assert.Equal(t, w.repetition, it.Repetition, it.ID)
		assert.Equal(t, w.kind != "", it.Failed(), it.ID)
		if it.Failed() {
			assert.Zero(t, it.Score, it.ID)
		}
	}
	assert.Equal(t, 4, r.Failed())
	pass, n := r.Answered()
	assert.Equal(t, [2]int{1, 2}, [2]int{pass, n}, "accuracy is over the answered items, the empty answer among them")
	assert.Equal(t, "stop", r.Items[5].FinishReason)
	assert.Contains(t, r.Items[5].Detail, "no output")
	assert.Equal(t, map[string]int{"http": 1, "stream": 1, "no_output": 1, "unanswered": 1}, r.FailedKinds())
	assert.Equal(t, 4, r.Interleaved)
}
