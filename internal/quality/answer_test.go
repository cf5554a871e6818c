package quality

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exampleSuites loads every suite of examples/evals.
func exampleSuites(t *testing.T) []*Suite {
	t.Helper()
	files, err := filepath.Glob("../../examples/evals/*.jsonl")
	require.NoError(t, err)
	require.Len(t, files, 4)
	var suites []*Suite
	for _, f := range files {
		s, err := Load(f)
		require.NoError(t, err)
		suites = append(suites, s)
	}
	return suites
}

// TestExampleSuites checks, for every item of every example suite, that
// CorrectAnswer passes and WrongAnswer fails, and that each request tells the
// model what form the answer takes.
func TestExampleSuites(t *testing.T) {
	sizes := map[string]int{}
	for _, s := range exampleSuites(t) {
		sizes[s.Name] = len(s.Items)
		for i := range s.Items {
			it := &s.Items[i]
			right, err := it.CorrectAnswer()
			require.NoError(t, err, "%s: item %s", s.Name, it.ID)
			assert.True(t, it.Score(right).Pass, "%s: item %s: CorrectAnswer %q fails: %s", s.Name, it.ID, right, it.Score(right).Detail)
			wrong := it.WrongAnswer()
			assert.False(t, it.Score(wrong).Pass, "%s: item %s: WrongAnswer %q passes", s.Name, it.ID, wrong)
			require.Len(t, it.Request.Messages, 1, "%s: item %s", s.Name, it.ID)
			assert.Regexp(t, `(?i)answer|reply|extract`, it.Request.Messages[0].Content, "%s: item %s", s.Name, it.ID)
		}
	}
	assert.Equal(t, 200, sizes["arithmetic"])
	assert.GreaterOrEqual(t, sizes["facts"], 30)
	assert.GreaterOrEqual(t, sizes["multiple_choice"], 30)
	assert.GreaterOrEqual(t, sizes["json_extraction"], 20)
}

func TestCorrectAnswer(t *testing.T) {
	tests := []struct {
		line, want, err string
	}{
		{`{"id":"q","prompt":"p","scorer":"exact","expected":["Tolstoy","Leo Tolstoy"]}`, "Tolstoy", ""},
		{`{"id":"q","prompt":"p","scorer":"contains","expected":"Paris"}`, "Paris", ""},
		{`{"id":"q","prompt":"p","scorer":"choice","expected":"b"}`, "The answer is (B).", ""},
		{`{"id":"q","prompt":"p","scorer":"numeric","expected":-1.5e3}`, "The answer is -1.5e3.", ""},
		{`{"id":"q","prompt":"p","scorer":"numeric","expected":"1,234"}`, "The answer is 1,234.", ""},
		{`{"id":"q","prompt":"p","scorer":"reference","expected":"the cat is on the mat"}`, "the cat is on the mat", ""},
		{`{"id":"q","prompt":"p","scorer":"json_valid"}`, "{}", ""},
		{`{"id":"q","prompt":"p","scorer":"json_schema","options":{"schema":{"type":"object"}},"expected":{"a": [1, 2]}}`, "```json\n{\"a\":[1,2]}\n```", ""},
		{`{"id":"q","prompt":"p","scorer":"regex","expected":"\\bH2O\\b","ideal":"It is H2O."}`, "It is H2O.", ""},
		{`{"id":"q","prompt":"p","scorer":"exact","expected":"Paris","ideal":"paris!"}`, "paris!", ""},
		{`{"id":"q","prompt":"p","scorer":"regex","expected":"\\bH2O\\b"}`, "", "line 1: scorer regex cannot make a right answer from its expected value: set ideal, a whole right response"},
		{`{"id":"q","prompt":"p","scorer":"json_schema","options":{"schema":{"type":"object"}}}`, "", "line 1: scorer json_schema cannot make a right answer from its expected value: set ideal, a whole right response"},
		// Punctuation kept: the expected answer is the whole response.
		{`{"id":"q","prompt":"p","scorer":"exact","expected":"The answer is (B).","options":{"keep_punctuation":true}}`, "The answer is (B).", ""},
	}
	for _, tt := range tests {
		got, err := item(t, tt.line).CorrectAnswer()
		if tt.err != "" {
			assert.EqualError(t, err, tt.err, "CorrectAnswer of %s", tt.line)
			continue
		}
		require.NoError(t, err, "CorrectAnswer of %s", tt.line)
		assert.Equal(t, tt.want, got, "CorrectAnswer of %s", tt.line)
	}
}

// TestCorrectAnswerChecked checks the errors of items that did not come from
// Parse (which rejects a failing ideal).
func TestCorrectAnswerChecked(t *testing.T) {
	it := &Item{ID: "q", Scorer: "exact", Expected: []string{"Paris"}, Ideal: "Rome", Line: 4}
	_, err := it.CorrectAnswer()
	assert.EqualError(t, err, `line 4: ideal does not pass its scorer (got "rome")`)

	it = &Item{ID: "q", Scorer: "choice", Expected: []string{"Z"}, Line: 5}
	_, err = it.CorrectAnswer()
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "line 5: "), err.Error())
}

func TestWrongAnswer(t *testing.T) {
	tests := []struct {
		line, want string
	}{
		{`{"id":"q","prompt":"p","scorer":"exact","expected":"Paris"}`, "I do not know."},
		{`{"id":"q","prompt":"p","scorer":"contains","expected":["know","not"]}`, "I cannot produce that."},
		{`{"id":"q","prompt":"p","scorer":"regex","expected":"(?i)I do not|cannot","ideal":"I cannot"}`, "No."},
		{`{"id":"q","prompt":"p","scorer":"choice","expected":"A"}`, "The answer is (B)."},
		{`{"id":"q","prompt":"p","scorer":"choice","expected":["A","B","C"]}`, "The answer is (D)."},
		{`{"id":"q","prompt":"p","scorer":"choice","expected":["A","B","C","D"]}`, "I do not know."},
		{`{"id":"q","prompt":"p","scorer":"numeric","expected":42}`, "The answer is 43."},
		{`{"id":"q","prompt":"p","scorer":"numeric","expected":[42, 43]}`, "The answer is 85."},
		{`{"id":"q","prompt":"p","scorer":"numeric","expected":10,"options":{"abs_tol":5}}`, "The answer is 21."},
		{`{"id":"q","prompt":"p","scorer":"numeric","expected":-1,"options":{"rel_tol":3}}`, "The answer is 6."},
		{`{"id":"q","prompt":"p","scorer":"reference","expected":"I do not know the answer"}`, "I cannot produce that."},
		{`{"id":"q","prompt":"p","scorer":"json_valid"}`, "I cannot produce that."},
		{`{"id":"q","prompt":"p","scorer":"json_schema","options":{"schema":{"type":"object"}}}`, "I cannot produce that."},
	}
	for _, tt := range tests {
		it := item(t, tt.line)
		got := it.WrongAnswer()
		assert.Equal(t, tt.want, got, "WrongAnswer of %s", tt.line)
		assert.False(t, it.Score(got).Pass, "WrongAnswer of %s passes", tt.line)
	}
}
