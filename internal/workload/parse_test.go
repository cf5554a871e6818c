package workload

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// problems returns the message of every error joined in err.
func problems(t *testing.T, err error) []string {
	t.Helper()
	require.Error(t, err)
	var out []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			var le *LineError
			require.Truef(t, errors.As(e, &le), "error %q is %T, want *LineError", e, e)
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}

func TestLoadBroken(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"unknown_key.jsonl", []string{
			`testdata/unknown_key.jsonl:2: max_token: unknown key (did you mean "max_tokens"?); want one of id, model, messages, prompt, max_tokens, arrival_ms, session_id, turn, think_ms, temperature, top_p, seed, ignore_eos, min_tokens, response_format, tools, tool_choice, tags`,
		}},
		{"wrong_type.jsonl", []string{
			`testdata/wrong_type.jsonl:3: max_tokens: want an integer from 1 to 1048576, got a string`,
		}},
		{"negative_max_tokens.jsonl", []string{
			`testdata/negative_max_tokens.jsonl:1: max_tokens: want an integer from 1 to 1048576, got -5`,
		}},
		{"both.jsonl", []string{
			`testdata/both.jsonl:2: prompt: not allowed together with messages; set exactly one of messages (chat) and prompt (completions)`,
		}},
		{"neither.jsonl", []string{
			`testdata/neither.jsonl:1: messages: required: set messages (chat) or prompt (completions)`,
		}},
		{"invalid_json.jsonl", []string{
			`testdata/invalid_json.jsonl:4:42: invalid JSON: invalid character '}' looking for beginning of object key string`,
		}},
		{"duplicate_id.jsonl", []string{
			`testdata/duplicate_id.jsonl:4: id: "q1" already used on line 3`,
		}},
		{"empty.jsonl", []string{
			`testdata/empty.jsonl: no requests`,
		}},
		{"bad_response_format.jsonl", []string{
			`testdata/bad_response_format.jsonl:1: response_format: want a JSON object, got a string`,
		}},
		{"top_p_zero.jsonl", []string{
			`testdata/top_p_zero.jsonl:1: top_p: want a number greater than 0 and at most 1, got 0`,
		}},
		{"many_errors.jsonl", []string{
			`testdata/many_errors.jsonl:2: messages[0].role: must be one of system, user, assistant, tool, got "bot"`,
			`testdata/many_errors.jsonl:2: messages[1].content: must not be empty in a user message`,
			`testdata/many_errors.jsonl:2: max_tokens: want an integer from 1 to 1048576, got 0`,
			`testdata/many_errors.jsonl:2: temperature: want a number from 0 to 2, got -1`,
			`testdata/many_errors.jsonl:3: want a JSON object, got an array`,
			`testdata/many_errors.jsonl:4: arrival_ms: want a number from 0 to 1e9 (milliseconds from the start of the trace), got -3`,
			`testdata/many_errors.jsonl:4: tags[1]: want a string, got 7`,
			`testdata/many_errors.jsonl:4: min_tokens: want an integer from 0 to max_tokens (10), got 20`,
			`testdata/many_errors.jsonl:5: prompt: must not be empty`,
			`testdata/many_errors.jsonl:5: max_tokens: want an integer from 1 to 1048576, got 12.5`,
			`testdata/many_errors.jsonl:5: seed: want an integer, got a string`,
			`testdata/many_errors.jsonl:5: ignore_eos: want true or false, got 1`,
			`testdata/many_errors.jsonl:5: extra: unknown key; want one of id, model, messages, prompt, max_tokens, arrival_ms, session_id, turn, think_ms, temperature, top_p, seed, ignore_eos, min_tokens, response_format, tools, tool_choice, tags`,
			`testdata/many_errors.jsonl:6: messages: must not be empty`,
			`testdata/many_errors.jsonl:6: prompt: not allowed together with messages; set exactly one of messages (chat) and prompt (completions)`,
			`testdata/many_errors.jsonl:6: id: "ok1" already used on line 1`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			w, err := Load(filepath.Join("testdata", tt.file))
			assert.Nil(t, w)
			assert.Equal(t, tt.want, problems(t, err))
		})
	}
}

func TestParseLineProblems(t *testing.T) {
	tests := []struct {
		line string
		want string // the one problem, without "x.jsonl:1: "
	}{
		{`{"prompt":"x"}`, `max_tokens: required: an integer from 1 to 1048576`},
		{`{"prompt":"x","max_tokens":null}`, `max_tokens: required: an integer from 1 to 1048576`},
		{`{"prompt":"x","max_tokens":1e2}`, ``}, // 100: a whole number in any form
		{`{"prompt":"x","max_tokens":100.0}`, ``},
		{`{"prompt":"x","max_tokens":-5}`, `max_tokens: want an integer from 1 to 1048576, got -5`},
		{`{"prompt":"x","max_tokens":2097152}`, `max_tokens: want an integer from 1 to 1048576, got 2097152`},
		{`{"prompt":"x","max_tokens":8,"temperature":2.5}`, `temperature: want a number from 0 to 2, got 2.5`},
		{`{"prompt":"x","max_tokens":8,"arrival_ms":2e9}`, `arrival_ms: want a number from 0 to 1e9 (milliseconds from the start of the trace), got 2e9`},
		{`{"prompt":"x","max_tokens":8,"seed":1e300}`, `seed: integer 1e300 is out of range`},
		{`{"prompt":"x","max_tokens":8,"seed":1.5}`, `seed: want an integer, got 1.5`},
		{`{"prompt":"x","max_tokens":8,"temperature":1e999}`, `temperature: want a number from 0 to 2, got 1e999`},
		{`{"prompt":"x","max_tokens":99999999999999999999}`, `max_tokens: want an integer from 1 to 1048576, got 99999999999999999999`},
		{`{"prompt":"x","max_tokens":8,"arrival_ms":1e999}`, `arrival_ms: want a number from 0 to 1e9 (milliseconds from the start of the trace), got 1e999`},
		{`{"prompt":"x","max_tokens":8,"top_p":1.5}`, `top_p: want a number greater than 0 and at most 1, got 1.5`},
		{`{"prompt":"x","max_tokens":8,"min_tokens":-1}`, `min_tokens: want an integer from 0 to 1048576, got -1`},
		{`{"prompt":"x","max_tokens":8,"response_format":[1]}`, `response_format: want a JSON object, got an array`},
		{`{"prompt":"x","max_tokens":8,"tags":"a"}`, `tags: want an array of strings, got a string`},
		{`{"prompt":"x","max_tokens":8,"tags":[""]}`, `tags[0]: must not be empty`},
		{`{"prompt":"x","prompt":"y","max_tokens":8}`, `prompt: key appears more than once`},
		{`{"prompt":7,"max_tokens":8}`, `prompt: want a string, got 7`},
		{`{"messages":{"role":"user"},"max_tokens":8}`, `messages: want an array of messages, got an object`},
		{`{"messages":["hi"],"max_tokens":8}`, `messages[0]: want an object, got a string`},
		{`{"messages":[{"content":"hi"}],"max_tokens":8}`, `messages[0].role: required; want one of system, user, assistant, tool`},
		{`{"messages":[{"role":"user","content":"hi","name":"x"}],"max_tokens":8}`, `messages[0].name: unknown key; want role, content`},
		{`{"messages":[{"role":"user","contnt":"hi"}],"max_tokens":8}`, `messages[0].contnt: unknown key (did you mean "content"?); want role, content` +
			"\nx.jsonl:1: messages[0].content: required in a user message"},
		{`{"messages":[{"role":"assistant"}],"max_tokens":8}`, ``},
		{`{"messages":[{"role":"user","content":[{"type":"text"}]}],"max_tokens":8}`, `messages[0].content: want a string, got an array`},
		{`{"prompt":"x","max_tokens":8} {"prompt":"y"}`, `invalid JSON: invalid character '{' after top-level value`},
		{`{"prompt":"x","max_tokens":8`, `invalid JSON: unexpected end of JSON input`},
		{`"just a string"`, `want a JSON object, got a string`},
		{`{"id":"line-1","prompt":"x","max_tokens":8}` + "\n" + `{"prompt":"x","max_tokens":8}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.line), "x.jsonl")
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			want := "x.jsonl:1: " + tt.want
			if col, ok := jsonColumns[tt.line]; ok {
				want = fmt.Sprintf("x.jsonl:1:%d: %s", col, tt.want)
			}
			assert.Equal(t, strings.Split(want, "\n"), problems(t, err))
		})
	}
}

// jsonColumns are the columns of TestParseLineProblems's syntax errors: the
// character the JSON decoder stopped at, or just after the end of the line.
var jsonColumns = map[string]int{
	`{"prompt":"x","max_tokens":8} {"prompt":"y"}`: 31,
	`{"prompt":"x","max_tokens":8`:                 29,
}

func TestParseAssignedIDCollision(t *testing.T) {
	in := `{"id":"line-2","prompt":"a","max_tokens":8}
{"prompt":"b","max_tokens":8}
{"prompt":"c","max_tokens":8}
{"id":"line-3","prompt":"d","max_tokens":8}
`
	_, err := Parse(strings.NewReader(in), "x.jsonl")
	assert.Equal(t, []string{
		`x.jsonl:2: id: "line-2" (assigned because the request has no id) already used on line 1`,
		`x.jsonl:4: id: "line-3" already used on line 3 (assigned there because that request has no id)`,
	}, problems(t, err))
}

func TestParseCapsErrors(t *testing.T) {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, `{"id":"r%d","prompt":"x","max_tokens":0}`+"\n", i)
	}
	_, err := Parse(strings.NewReader(b.String()), "big.jsonl")
	got := problems(t, err)
	require.Len(t, got, 51)
	assert.Equal(t, "big.jsonl:50: max_tokens: want an integer from 1 to 1048576, got 0", got[49])
	assert.Equal(t, "big.jsonl: ... and 10 more", got[50])
}

func TestLoadValid(t *testing.T) {
	w, err := Load("testdata/valid.jsonl")
	require.NoError(t, err)
	assert.Equal(t, "testdata/valid.jsonl", w.Path)
	require.Len(t, w.Requests, 3)

	r := w.Requests[0]
	assert.Equal(t, "chat-1", r.ID)
	assert.Equal(t, 1, r.Line)
	assert.Equal(t, []Message{{"system", "You are terse."}, {"user", "What is 2+2?"}}, r.Messages)
	assert.Equal(t, 16, r.MaxTokens)
	assert.Equal(t, 0.0, *r.Temperature)
	assert.Equal(t, 1.0, *r.TopP)
	assert.Equal(t, int64(7), *r.Seed)
	assert.True(t, *r.IgnoreEOS)
	assert.Equal(t, 1, *r.MinTokens)
	assert.Equal(t, []string{"short", "math"}, r.Tags)
	assert.Nil(t, r.ArrivalMS)

	r = w.Requests[1]
	assert.Equal(t, "line-3", r.ID, "a missing id is line-N, blank lines counted")
	assert.Equal(t, 3, r.Line)
	assert.Equal(t, 12.5, *r.ArrivalMS)

	r = w.Requests[2]
	assert.Equal(t, "rf", r.ID)
	assert.Equal(t, `{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}}`, string(r.ResponseFormat))
	assert.Equal(t, Hash(w.Requests), w.Hash)
}

func TestLoadCRLFAndNull(t *testing.T) {
	w, err := Load("testdata/crlf.jsonl")
	require.NoError(t, err)
	require.Len(t, w.Requests, 2)
	assert.Equal(t, "windows line endings", w.Requests[0].Prompt)
	assert.Nil(t, w.Requests[1].Temperature, "null is the same as absent")
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/nope.jsonl")
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "testdata/nope.jsonl")
}

func TestParseBOM(t *testing.T) {
	w, err := Parse(strings.NewReader("\xef\xbb\xbf"+`{"prompt":"x","max_tokens":8}`), "bom.jsonl")
	require.NoError(t, err)
	assert.Equal(t, "x", w.Requests[0].Prompt)
}

func TestLineErrorFormat(t *testing.T) {
	tests := []struct {
		e    LineError
		want string
	}{
		{LineError{File: "workloads/chat.jsonl", Line: 12, Field: "max_tokens", Msg: "want an integer from 1 to 1048576, got 0"}, "workloads/chat.jsonl:12: max_tokens: want an integer from 1 to 1048576, got 0"},
		{LineError{File: "workloads/chat.jsonl", Line: 3, Column: 7, Msg: "invalid JSON"}, "workloads/chat.jsonl:3:7: invalid JSON"},
		{LineError{File: "workloads/chat.jsonl", Line: 3, Msg: "invalid JSON"}, "workloads/chat.jsonl:3: invalid JSON"},
		{LineError{File: "workloads/x.jsonl", Msg: "no requests"}, "workloads/x.jsonl: no requests"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.e.Error())
	}
}

func TestLoadSessions(t *testing.T) {
	w, err := Load("testdata/sessions_valid.jsonl")
	require.NoError(t, err)
	require.Len(t, w.Requests, 4)
	assert.Equal(t, "s1", w.Requests[2].SessionID)
	assert.Equal(t, 2, w.Requests[2].Turn)
	require.NotNil(t, w.Requests[2].ThinkMS)
	assert.Equal(t, 1500.0, *w.Requests[2].ThinkMS)
	assert.JSONEq(t, `[{"type":"function","function":{"name":"lookup","parameters":{"type":"object"}}}]`, string(w.Requests[1].Tools))
	assert.Equal(t, `"auto"`, string(w.Requests[1].ToolChoice))

	var buf bytes.Buffer
	require.NoError(t, Write(&buf, w.Requests))
	again, err := Parse(&buf, "again")
	require.NoError(t, err)
	assert.Equal(t, w.Hash, again.Hash, "the canonical form keeps the session keys")
}

func TestLoadSessionsBroken(t *testing.T) {
	_, err := Load("testdata/sessions_bad.jsonl")
	require.Error(t, err)
	assert.Equal(t, []string{
		`testdata/sessions_bad.jsonl:2: turn: session "a" already has turn 1, on line 1`,
		`testdata/sessions_bad.jsonl:3: turn: required with session_id: the turn's number in its session, from 1`,
		`testdata/sessions_bad.jsonl:4: session_id: required with turn: the session the turn belongs to`,
		`testdata/sessions_bad.jsonl:5: think_ms: not allowed on turn 1: a session's first turn is sent when the session arrives; think_ms is the pause before a later turn`,
		`testdata/sessions_bad.jsonl:6: arrival_ms: only turn 1 of a session may set arrival_ms (turn 2 is sent after turn 1's end plus think_ms)`,
		`testdata/sessions_bad.jsonl:8: tools: want a JSON array of tools, got an object`,
		`testdata/sessions_bad.jsonl:8: tool_choice: want a string or a JSON object, got 3`,
		`testdata/sessions_bad.jsonl:7: turn: session "e" has turn 3 but no turn 2: number a session's turns 1, 2, 3, ... without gaps`,
	}, problems(t, err))
}
