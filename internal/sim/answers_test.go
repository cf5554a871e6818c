package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/quality"
)

// smallSuite has one item of each kind whose right answer is derived from
// its expected value, one in the completions form, and one whose answer is
// long enough to be cut by max_tokens.
const smallSuite = `{"id": "num", "messages": [{"role": "system", "content": "Answer with a number."}, {"role": "user", "content": "What is 6 times 7?"}], "max_tokens": 32, "scorer": "numeric", "expected": 42}
{"id": "choice", "messages": [{"role": "user", "content": "Which is a prime? A) 4 B) 6 C) 7 D) 9"}], "max_tokens": 32, "scorer": "choice", "expected": "C"}
{"id": "exact", "messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 32, "scorer": "exact", "expected": "Paris"}
{"id": "schema", "messages": [{"role": "user", "content": "Give {\"name\": \"Ada\", \"age\": 36} back as JSON."}], "max_tokens": 64, "scorer": "json_schema", "expected": {"name": "Ada", "age": 36}, "options": {"schema": {"type": "object", "required": ["name", "age"]}}}
{"id": "completion", "prompt": "Complete: the opposite of up is", "max_tokens": 32, "scorer": "exact", "expected": "down"}
{"id": "long", "messages": [{"role": "user", "content": "Explain briefly."}], "max_tokens": 64, "scorer": "contains", "expected": "steady state", "ideal": "In a steady state the\nqueue neither grows nor shrinks:\n` + "```" + `\narrivals = departures\n` + "```" + `"}
`

// testSuite is one suite read twice: by perfgate's loader, whose scorers
// judge what the simulator answers, and by the simulator's own reader,
// which answers from it.
type testSuite struct {
	*quality.Suite
	sim *AnswerSuite
}

// writeSuite writes a suite file into a temporary directory and loads it
// both ways.
func writeSuite(t *testing.T, name, content string) testSuite {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	s, err := quality.Load(path)
	require.NoError(t, err)
	as, err := LoadAnswers([]string{path})
	require.NoError(t, err)
	require.Len(t, as[0].Items, len(s.Items))
	return testSuite{Suite: s, sim: as[0]}
}

// bigSuite generates an n-item suite of exact items.
func bigSuite(t *testing.T, n int) testSuite {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id": "q%d", "messages": [{"role": "user", "content": "Say the word number %d."}], "scorer": "exact", "expected": "word%d"}`+"\n", i, i, i)
	}
	return writeSuite(t, "big.jsonl", b.String())
}

func answersConfig(seed int64, accuracy float64, suites ...testSuite) Config {
	c := testConfig()
	c.Seed, c.Accuracy = seed, accuracy
	for _, s := range suites {
		c.Answers = append(c.Answers, s.sim)
	}
	return c
}

// answered is one streamed response.
type answered struct {
	text   string
	chunks int
	finish string
	usage  int // usage.completion_tokens
}

// ask sends an item's request (its messages or prompt, with maxTokens) as a
// streaming request and reads the whole stream.
func ask(t *testing.T, s *Server, id string, it *quality.Item, maxTokens int) answered {
	t.Helper()
	url, body := s.URL()+"/v1/chat/completions", map[string]any{"model": "m", "max_tokens": maxTokens, "stream": true,
		"stream_options": map[string]bool{"include_usage": true}}
	if len(it.Request.Messages) > 0 {
		body["messages"] = it.Request.Messages
	} else {
		url, body["prompt"] = s.URL()+"/v1/completions", it.Request.Prompt
	}
	resp := post(t, context.Background(), url, id, body)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var a answered
	for _, ev := range readSSE(t, resp.Body) {
		if ev.data == "[DONE]" {
			continue
		}
		c := parseChunk(t, ev.data)
		if c.Usage != nil {
			a.usage = c.Usage.CompletionTokens
		}
		if len(c.Choices) == 0 {
			continue
		}
		if c.Choices[0].FinishReason != nil {
			a.finish = *c.Choices[0].FinishReason
		}
		if c.Choices[0].Delta != nil && c.Choices[0].Delta.Role != nil {
			continue // the chat role chunk
		}
		if c.Choices[0].FinishReason == nil {
			a.text += c.contentText()
			a.chunks++
		}
	}
	return a
}

// askAll asks every item of s concurrently, by item id.
func askAll(t *testing.T, srv *Server, s testSuite) map[string]answered {
	t.Helper()
	out := make(map[string]answered, len(s.Items))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range s.Items {
		it := &s.Items[i]
		wg.Go(func() {
			a := ask(t, srv, it.ID, it, it.Request.MaxTokens)
			mu.Lock()
			out[it.ID] = a
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

func TestAnswersAccuracyOneAndZero(t *testing.T) {
	suite := writeSuite(t, "small.jsonl", smallSuite)
	for _, acc := range []float64{1, 0} {
		t.Run(fmt.Sprint(acc), func(t *testing.T) {
			srv := startSim(t, answersConfig(1, acc, suite))
			got := askAll(t, srv.Server, suite)
			recs := srv.records(t)
			for i := range suite.Items {
				it := &suite.Items[i]
				a := got[it.ID]
				sc := it.Score(a.text)
				assert.Equal(t, acc == 1, sc.Pass, "item %s: Score(%q) = %+v", it.ID, a.text, sc)
				assert.Equal(t, "stop", a.finish, "item %s", it.ID)
				assert.Equal(t, a.chunks, a.usage, "item %s: usage.completion_tokens, want the chunks sent", it.ID)
				rec := recs[it.ID]
				assert.Equal(t, a.chunks, rec.OutputTokens, "item %s: truth output_tokens", it.ID)
				assert.Equal(t, "small", rec.EvalSuite)
				assert.Equal(t, it.ID, rec.EvalItem)
				if assert.NotNil(t, rec.EvalRight, "item %s: eval_right", it.ID) {
					assert.Equal(t, acc == 1, *rec.EvalRight, "item %s: eval_right", it.ID)
				}
			}
			if acc == 1 {
				long := got["long"]
				assert.Equal(t, suite.Items[len(suite.Items)-1].Ideal, long.text, "the ideal, newlines and code fences kept")
				assert.Greater(t, long.chunks, 1)
			}
		})
	}
}

func TestAnswersCutAtMaxTokens(t *testing.T) {
	suite := writeSuite(t, "small.jsonl", smallSuite)
	srv := startSim(t, answersConfig(1, 1, suite))
	it := &suite.Items[len(suite.Items)-1]
	require.Equal(t, "long", it.ID)
	whole := ask(t, srv.Server, "whole", it, 64)
	require.Equal(t, "stop", whole.finish)
	require.Greater(t, whole.chunks, 3)
	cut := ask(t, srv.Server, "cut", it, 3)
	assert.Equal(t, "length", cut.finish)
	assert.Equal(t, 3, cut.chunks)
	assert.Equal(t, 3, cut.usage)
	assert.Less(t, len(cut.text), len(whole.text))
	assert.True(t, strings.HasPrefix(whole.text, cut.text), "cut %q is not a prefix of %q", cut.text, whole.text)
	exact := ask(t, srv.Server, "exact", it, whole.chunks)
	assert.Equal(t, "stop", exact.finish, "max_tokens = the answer's length is not a cut")
	assert.Equal(t, whole.text, exact.text)
}

func TestAnswersOtherPromptsGetFiller(t *testing.T) {
	suite := writeSuite(t, "small.jsonl", smallSuite)
	srv := startSim(t, answersConfig(1, 1, suite))
	prompt := "What is 6 times 7?" // an item's last message, not its whole prompt text
	resp := post(t, context.Background(), srv.URL()+"/v1/chat/completions", "f", map[string]any{
		"messages": []map[string]string{{"role": "user", "content": prompt}}, "max_tokens": 7, "stream": true})
	defer resp.Body.Close()
	var text string
	var finish string
	for _, ev := range readSSE(t, resp.Body) {
		if ev.data == "[DONE]" {
			continue
		}
		c := parseChunk(t, ev.data)
		text += c.contentText()
		if len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
			finish = *c.Choices[0].FinishReason
		}
	}
	g := filler{}.generate(genRequest{Prompt: prompt, MaxTokens: 7, Seed: 1})
	var want string
	for i := range g.Len() {
		want += g.Token(i)
	}
	assert.Equal(t, want, text)
	assert.Equal(t, "length", finish)
	recs := srv.records(t)
	assert.Empty(t, recs["f"].EvalItem)
	assert.Nil(t, recs["f"].EvalRight)
}

// Two sims with the same seed answer every item with the same bytes.
func TestAnswersAA(t *testing.T) {
	suite := writeSuite(t, "small.jsonl", smallSuite)
	a := askAll(t, startSim(t, answersConfig(5, 0.5, suite)).Server, suite)
	b := askAll(t, startSim(t, answersConfig(5, 0.5, suite)).Server, suite)
	require.Equal(t, a, b)
}

// rightSet is the ids of the items the answerer answers right.
func rightSet(t *testing.T, s testSuite, seed int64, accuracy float64) map[string]bool {
	t.Helper()
	a, err := newAnswerer([]*AnswerSuite{s.sim}, seed, accuracy, filler{})
	require.NoError(t, err)
	out := map[string]bool{}
	for i := range s.Items {
		it := &s.Items[i]
		g := a.generate(genRequest{Prompt: s.sim.Items[i].Prompt, MaxTokens: it.Request.MaxTokens, Seed: 99})
		ag, ok := g.(answerGen)
		require.True(t, ok, "item %s is not answered", it.ID)
		var text string
		for j := range g.Len() {
			text += g.Token(j)
		}
		require.Equal(t, ag.right, it.Score(text).Pass, "item %s: right=%v but Score(%q)", it.ID, ag.right, text)
		if ag.right {
			out[it.ID] = true
		}
	}
	return out
}

func TestAnswersAccuracyShareAndCoupling(t *testing.T) {
	s := bigSuite(t, 500)
	r7 := rightSet(t, s, 1, 0.7)
	share := float64(len(r7)) / 500
	assert.InDelta(t, 0.7, share, 0.06, "share right at accuracy 0.7")

	r6, r9 := rightSet(t, s, 1, 0.6), rightSet(t, s, 1, 0.9)
	for id := range r6 {
		assert.True(t, r9[id], "item %s right at 0.6 but not at 0.9", id)
	}
	for id := range r7 {
		assert.True(t, r9[id], "item %s right at 0.7 but not at 0.9", id)
	}
	assert.Less(t, len(r6), len(r9))

	assert.Equal(t, r7, rightSet(t, s, 1, 0.7), "same seed, same set")
	assert.NotEqual(t, r7, rightSet(t, s, 2, 0.7), "another seed draws another set")
	assert.Len(t, rightSet(t, s, 1, 1), 500)
	assert.Empty(t, rightSet(t, s, 1, 0))
}

func TestAnswerTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"42", []string{"42"}},
		{"The answer is 42.", []string{"The", " answer", " is", " 42."}},
		{"a  b", []string{"a", "  b"}},
		{" lead", []string{" lead"}},
		{"x\n```go\n    return\n```", []string{"x\n```go\n", "    return\n```"}},
		{"trail ", []string{"trail", " "}},
		{"", []string{" "}},
	} {
		got := answerTokens(tc.in)
		assert.Equal(t, tc.want, got, "answerTokens(%q)", tc.in)
		if tc.in != "" {
			assert.Equal(t, tc.in, strings.Join(got, ""), "tokens of %q concatenate back", tc.in)
		}
	}
}

func TestItemPromptMatchesRequest(t *testing.T) {
	suite := writeSuite(t, "small.jsonl", smallSuite)
	for i := range suite.Items {
		it := &suite.Items[i]
		body := map[string]any{"max_tokens": 5}
		api := apiChat
		if len(it.Request.Messages) > 0 {
			body["messages"] = it.Request.Messages
		} else {
			body["prompt"], api = it.Request.Prompt, apiCompletions
		}
		b, err := json.Marshal(body)
		require.NoError(t, err)
		req, err := decodeRequest(b, api)
		require.NoError(t, err)
		assert.Equal(t, req.promptText, suite.sim.Items[i].Prompt, "item %s", it.ID)
	}
}

func TestAnswersConfigErrors(t *testing.T) {
	small := writeSuite(t, "small.jsonl", smallSuite)
	conflict := writeSuite(t, "other.jsonl",
		`{"id": "cap", "messages": [{"role": "user", "content": "What is the capital of France?"}], "scorer": "exact", "expected": "Lyon"}`+"\n")
	same := writeSuite(t, "same.jsonl",
		`{"id": "cap", "messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 8, "scorer": "exact", "expected": "Paris"}`+"\n")
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"accuracy without answers", func(c *Config) { c.Accuracy = 0.5 }, []string{"--accuracy", "--answers"}},
		{"accuracy above 1", func(c *Config) { c.Answers, c.Accuracy = []*AnswerSuite{small.sim}, 1.5 }, []string{"--accuracy: must be in [0,1], got 1.5"}},
		{"accuracy negative", func(c *Config) { c.Answers, c.Accuracy = []*AnswerSuite{small.sim}, -0.1 }, []string{"--accuracy"}},
		{"same prompt, other answer", func(c *Config) { c.Answers = []*AnswerSuite{small.sim, conflict.sim} },
			[]string{"--answers", "small.jsonl:3", `"exact"`, "other.jsonl:1", `"cap"`, "same prompt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			_, err = Start(context.Background(), "127.0.0.1:0", c)
			require.Error(t, err, "Start must refuse what Validate refuses")
		})
	}
	c := DefaultConfig()
	c.Answers, c.Accuracy = []*AnswerSuite{small.sim, same.sim}, 0
	require.NoError(t, c.Validate(), "the same item in two suites is no conflict")
}

func TestLoadAnswers(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(good, []byte(smallSuite), 0o644))
	require.NoError(t, os.WriteFile(bad, []byte(`{"id": "x", "prompt": "p", "scorer": "exact"}`+"\n"), 0o644))
	suites, err := LoadAnswers([]string{good})
	require.NoError(t, err)
	require.Len(t, suites, 1)
	_, err = LoadAnswers([]string{good, bad, filepath.Join(dir, "missing.jsonl")})
	require.ErrorContains(t, err, "bad.jsonl:1")
	require.ErrorContains(t, err, "missing.jsonl")

	// An item the simulator cannot make a right answer for, a regex
	// without an ideal, is refused with its line and id.
	regex := filepath.Join(dir, "regex.jsonl")
	require.NoError(t, os.WriteFile(regex, []byte(`{"id": "ok", "prompt": "Say hi.", "scorer": "exact", "expected": "hi"}
{"id": "rx", "prompt": "Name a colour.", "scorer": "regex", "expected": "^(red|blue)$"}
`), 0o644))
	_, err = LoadAnswers([]string{regex})
	for _, w := range []string{"regex.jsonl:2", `"rx"`, "regex", "ideal"} {
		require.ErrorContains(t, err, w)
	}
}

func TestAccuracyFlag(t *testing.T) {
	c := DefaultConfig()
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	RegisterFlags(fs, &c)
	f := fs.Lookup("accuracy")
	require.NotNil(t, f)
	require.Equal(t, "1", f.DefValue)
	require.Contains(t, f.Usage, "not models")
	require.NoError(t, fs.Parse([]string{"--accuracy", "0.3"}))
	require.Equal(t, 0.3, c.Accuracy)
}

// --answer-seed draws which items are right in --seed's place: two
// simulators of one model with seeds of their own answer alike.
func TestAnswerSeed(t *testing.T) {
	a, b := testConfig(), testConfig()
	a.Seed, b.Seed = 3, 4
	assert.Equal(t, int64(3), a.answerSeed(), "--seed, without --answer-seed")
	a.AnswerSeed, b.AnswerSeed = 9, 9
	assert.Equal(t, a.answerSeed(), b.answerSeed())
	s := bigSuite(t, 200)
	assert.Equal(t, rightSet(t, s, a.answerSeed(), 0.8), rightSet(t, s, b.answerSeed(), 0.8))

	c := DefaultConfig()
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	RegisterFlags(fs, &c)
	require.NoError(t, fs.Parse([]string{"--seed", "5", "--answer-seed", "9"}))
	assert.Equal(t, int64(5), c.Seed)
	assert.Equal(t, int64(9), c.answerSeed())
}
