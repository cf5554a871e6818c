package traceimport

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/workload"
)

// importString imports src as format with o.
func importString(t *testing.T, format, src string, o Options) (*Result, error) {
	t.Helper()
	return Import(strings.NewReader(src), "in", format, o)
}

// mustParse checks that reqs write and load back.
func mustParse(t *testing.T, reqs []workload.Request) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, workload.Write(&buf, reqs))
	_, err := workload.Parse(&buf, "out")
	require.NoError(t, err)
}

func TestImportErrors(t *testing.T) {
	tests := []struct {
		name, format, src string
		o                 Options
		want              string
	}{
		{"openai no max", "openai", `{"messages":[{"role":"user","content":"hi"}]}`, Options{},
			"in:1: max_tokens: required: the body has neither max_tokens nor max_completion_tokens; give --max-tokens N to import such requests with max_tokens N"},
		{"openai image", "openai", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}],"max_tokens":5}`, Options{},
			"in:1: messages[0].content[0]: a image_url part: perfgate sends text only (--skip-unsupported skips such requests, and counts them)"},
		{"openai batch url", "openai", `{"custom_id":"a","method":"POST","url":"/v1/embeddings","body":{"input":"x"}}`, Options{},
			`in:1: url: want /v1/chat/completions or /v1/completions (the APIs perfgate replays), got "/v1/embeddings"`},
		{"openai batch missing", "openai", `{"custom_id":"a","url":"/v1/completions","body":{"prompt":"x","max_tokens":3}}`, Options{},
			"in:1: method: required in a Batch API line (custom_id, method, url, body)"},
		{"openai n", "openai", `{"prompt":"x","max_tokens":3,"n":2}`, Options{},
			"in:1: n: want 1 (perfgate asks for one completion a request), got 2"},
		{"openai range via parse", "openai", `{"custom_id":"a","method":"POST","url":"/v1/completions","body":{"prompt":"x","max_tokens":3,"temperature":5}}`, Options{},
			"in:1: body.temperature: want a number from 0 to 2, got 5"},
		{"openai empty user", "openai", `{"messages":[{"role":"user","content":""}],"max_tokens":3}`, Options{},
			"in:1: messages[0].content: must not be empty in a user message"},
		{"openai dup id", "openai", "{\"custom_id\":\"a\",\"method\":\"POST\",\"url\":\"/v1/completions\",\"body\":{\"prompt\":\"x\",\"max_tokens\":3}}\n{\"custom_id\":\"a\",\"method\":\"POST\",\"url\":\"/v1/completions\",\"body\":{\"prompt\":\"y\",\"max_tokens\":3}}", Options{},
			`in:2: body.id: "a" already used on line 1; ids must be unique`},
		{"openai mixed times", "openai", "{\"timestamp\":1,\"body\":{\"prompt\":\"x\",\"max_tokens\":3}}\n{\"prompt\":\"y\",\"max_tokens\":3}", Options{},
			"in:2: timestamp: required on every record once one has it (line 1 has one): the trace's arrival times would be incomplete"},
		{"openai bad json", "openai", `{"prompt":`, Options{},
			"in:1:11: invalid JSON: unexpected end of JSON input"},
		{"mooncake blocks", "mooncake", `{"timestamp":0,"input_length":2000,"output_length":5,"hash_ids":[1,2]}`, Options{},
			"in:1: hash_ids: 2 blocks of 512 tokens hold from 513 to 1024 tokens, got input_length 2000 (is --block-size right?)"},
		{"mooncake unknown", "mooncake", `{"timestamp":0,"input_lenght":5,"output_length":5,"hash_ids":[1]}`, Options{},
			"in:1: input_lenght: unknown key (did you mean \"input_length\"?); want one of timestamp, input_length, output_length, hash_ids\nin:1: input_length: required: the prompt's length in tokens"},
		{"mooncake no output", "mooncake", `{"input_length":5,"hash_ids":[1]}`, Options{},
			"in:1: output_length: required: the trace gives no output_length; give --max-tokens N to import such requests with max_tokens N"},
		{"sharegpt from", "sharegpt", "[\n{\"id\":\"a\",\n \"conversations\":[{\"from\":\"bot\",\"value\":\"x\"}]}]", Options{},
			`in:2: conversations[0].from: want human, gpt or system, got "bot"`},
		{"sharegpt second element line", "sharegpt", "[\n{\"id\":\"a\",\"conversations\":[{\"from\":\"human\",\"value\":\"x\"},{\"from\":\"gpt\",\"value\":\"y\"}]},\n{\"id\":\"b\",\n\"conversations\":{}}\n]", Options{},
			"in:3: conversations: want an array of turns, got an object"},
		{"sharegpt unclosed", "sharegpt", "[\n{\"id\":\"a\",\"conversations\":[]}", Options{},
			"in:2: invalid JSON: unexpected end of the file: the array is not closed"},
		{"aiperf mixed", "aiperf", "{\"text\":\"a\",\"output_length\":3}\n{\"session_id\":\"s\",\"turns\":[{\"text\":\"b\",\"output_length\":3}]}", Options{},
			"in:2: a multi-turn line in a single-turn file (line 1): AIPerf reads one kind a file"},
		{"aiperf media", "aiperf", `{"text":"a","image":"x.png","output_length":3}`, Options{},
			"in:1: image: perfgate sends text only (--skip-unsupported skips such lines, and counts them)"},
		{"aiperf role", "aiperf", `{"session_id":"s","turns":[{"text":"a","output_length":3},{"role":"assistant","text":"b","output_length":3}]}`, Options{},
			`in:1: turns[1].role: want user (or system on the first turn: the conversation's system prompt), got "assistant"`},
		{"aiperf no text", "aiperf", `{"output_length":3}`, Options{},
			"in:1: text: required: the turn's text (text, texts or text_input)"},
		{"nothing", "aiperf", "\n\n", Options{}, "in: no requests imported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := importString(t, tt.format, tt.src, tt.o)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// TestImportDuplicateKeys checks that a key repeated in any object of any
// format is reported, rather than the second value replacing the first.
func TestImportDuplicateKeys(t *testing.T) {
	const dup = "key appears more than once"
	tests := []struct{ name, format, src, want string }{
		{"openai body", "openai", `{"prompt":"x","max_tokens":3,"max_tokens":4}`, "in:1: max_tokens: " + dup},
		{"openai batch", "openai", `{"custom_id":"a","method":"POST","url":"/v1/completions","body":{"prompt":"x","max_tokens":3},"body":{"prompt":"y","max_tokens":3}}`, "in:1: body: " + dup},
		{"openai wrapper", "openai", `{"timestamp":1,"body":{"prompt":"x","max_tokens":3},"body":{"prompt":"y","max_tokens":3}}`, "in:1: body: " + dup},
		{"openai message", "openai", `{"messages":[{"role":"user","content":"a","content":"b"}],"max_tokens":3}`, "in:1: messages[0].content: " + dup},
		{"sharegpt conversation", "sharegpt", `[{"id":"a","conversations":[{"from":"human","value":"x"},{"from":"gpt","value":"y"}],"conversations":[]}]`, "in:1: conversations: " + dup},
		{"sharegpt turn", "sharegpt", `[{"id":"a","conversations":[{"from":"human","value":"x","value":"z"},{"from":"gpt","value":"y"}]}]`, "in:1: conversations[0].value: " + dup},
		{"mooncake", "mooncake", `{"timestamp":0,"input_length":5,"input_length":6,"output_length":5,"hash_ids":[1]}`, "in:1: input_length: " + dup},
		{"aiperf single", "aiperf", `{"text":"a","output_length":3,"output_length":3}`, "in:1: output_length: " + dup},
		{"aiperf extra", "aiperf", `{"text":"a","output_length":3,"extra":{"seed":1,"seed":2}}`, "in:1: extra.seed: " + dup},
		{"aiperf session", "aiperf", `{"session_id":"s","session_id":"t","turns":[{"text":"b","output_length":3}]}`, "in:1: session_id: " + dup},
		{"aiperf turn", "aiperf", `{"session_id":"s","turns":[{"text":"b","text":"c","output_length":3}]}`, "in:1: turns[0].text: " + dup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := importString(t, tt.format, tt.src, Options{})
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error(), "Import(%s)", tt.src)
		})
	}
}

func TestImportOptions(t *testing.T) {
	_, err := importString(t, "nope", "", Options{})
	assert.EqualError(t, err, `unknown format "nope"; want one of openai, sharegpt, mooncake, aiperf`)
	_, err = importString(t, "sharegpt", "[]", Options{MaxTokensFrom: "fixed:0"})
	assert.EqualError(t, err, `--max-tokens-from: want reply or fixed:N (N from 1 to 1048576), got "fixed:0"`)
}

func TestOpenAIKeepsAndCounts(t *testing.T) {
	src := `{"timestamp":"2025-03-01T09:00:01.250Z","body":{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],"max_completion_tokens":9,"stop":["x"],"seed":4,"tool_choice":"auto"}}
{"timestamp":"2025-03-01T09:00:00Z","body":{"prompt":["p"],"stop":"y","logprobs":1}}`
	res, err := importString(t, "openai", src, Options{MaxTokens: 7})
	require.NoError(t, err)
	require.Len(t, res.Requests, 2)
	r0, r1 := res.Requests[0], res.Requests[1]
	assert.Equal(t, "a\nb", r0.Messages[0].Content)
	assert.Equal(t, 9, r0.MaxTokens)
	assert.Equal(t, int64(4), *r0.Seed)
	assert.Equal(t, `"auto"`, string(r0.ToolChoice))
	assert.Equal(t, 1250.0, *r0.ArrivalMS, "arrival from the earliest timestamp")
	assert.Equal(t, 0.0, *r1.ArrivalMS)
	assert.Equal(t, "p", r1.Prompt)
	assert.Equal(t, 7, r1.MaxTokens, "--max-tokens fills a body without one")
	assert.Equal(t, Tally{"stop": 2, "logprobs": 1}, res.Summary.Dropped)
	assert.Equal(t, Tally{"model": 1, "stream": 1}, res.Summary.Ignored)
	assert.Equal(t, 1, res.Summary.Defaulted)
	assert.Contains(t, res.Summary.Lines(), "dropped (perfgate's request has no field for them): logprobs (1 request), stop (2 requests)")
	mustParse(t, res.Requests)

	res, err = importString(t, "openai", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}],"max_tokens":3}
{"prompt":"ok","max_tokens":3}`, Options{SkipUnsupported: true})
	require.NoError(t, err)
	assert.Len(t, res.Requests, 1)
	assert.Equal(t, "openai-2", res.Requests[0].ID, "ids number the source lines")
	assert.Equal(t, Tally{"input_audio content part": 1}, res.Summary.Skipped)
}

func TestShareGPT(t *testing.T) {
	src := `{"id":"c1","conversations":[{"from":"system","value":"sys"},{"from":"human","value":"q1"},{"from":"gpt","value":"one two three"},{"from":"human","value":"q2"},{"from":"gpt","value":"` + strings.Repeat("w ", 50) + `"},{"from":"human","value":"q3"}]}
{"id":"c2","conversations":[{"from":"gpt","value":"hi"}]}`
	res, err := importString(t, "sharegpt", src, Options{MaxOutput: 20})
	require.NoError(t, err)
	require.Len(t, res.Requests, 1)
	assert.Equal(t, []workload.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "q1"}}, res.Requests[0].Messages)
	assert.Equal(t, 3, res.Requests[0].MaxTokens, "the reply's words")
	assert.Equal(t, Tally{"conversation starting with gpt": 1}, res.Summary.Skipped)

	think := 250.0
	res, err = importString(t, "sharegpt", src, Options{MaxOutput: 20, Sessions: true, ThinkMS: &think})
	require.NoError(t, err)
	require.Len(t, res.Requests, 2, "q3 has no reply: left out")
	assert.Equal(t, 1, res.Summary.Sessions)
	r := res.Requests[1]
	assert.Equal(t, "c1", r.SessionID)
	assert.Equal(t, 2, r.Turn)
	assert.Equal(t, 20, r.MaxTokens, "clamped to --max-output")
	assert.Equal(t, []workload.Message{{Role: "user", Content: "q2"}}, r.Messages, "a later turn carries its human message only")
	assert.Equal(t, 250.0, *r.ThinkMS)
	mustParse(t, res.Requests)

	res, err = importString(t, "sharegpt", src, Options{MaxTokensFrom: "fixed:64", Sessions: true})
	require.NoError(t, err)
	assert.Len(t, res.Requests, 3, "fixed max_tokens keeps the unanswered turn")
}

func TestMooncakeSharesBlocks(t *testing.T) {
	src := `{"timestamp":100,"input_length":10,"output_length":5,"hash_ids":[7,8,9]}
{"timestamp":250,"input_length":9,"output_length":6,"hash_ids":[7,8,3]}
{"timestamp":300,"input_length":4,"output_length":6,"hash_ids":[1]}`
	res, err := importString(t, "mooncake", src, Options{BlockSize: 4, ForceOutput: true})
	require.NoError(t, err)
	w := func(i int) []string { return strings.Fields(res.Requests[i].Messages[0].Content) }
	a, b, c := w(0), w(1), w(2)
	assert.Len(t, a, 10)
	assert.Len(t, b, 9)
	assert.Equal(t, a[:8], b[:8], "hash ids 7, 8 are the same 8 words")
	assert.NotEqual(t, a[8:9], b[8:9], "hash ids 9 and 3 differ")
	assert.NotEqual(t, a[:4], c[:4], "hash id 1 is not hash id 7")
	assert.Equal(t, 150.0, *res.Requests[1].ArrivalMS)
	assert.Equal(t, 5, *res.Requests[0].MinTokens)
	assert.True(t, *res.Requests[0].IgnoreEOS)

	again, err := importString(t, "mooncake", src, Options{BlockSize: 4, ForceOutput: true})
	require.NoError(t, err)
	assert.Equal(t, res.Requests, again.Requests, "deterministic")
	other, err := importString(t, "mooncake", src, Options{BlockSize: 4, Seed: 2})
	require.NoError(t, err)
	assert.NotEqual(t, res.Requests[0].Messages, other.Requests[0].Messages, "the seed changes the text")
}

func TestAIPerfDelays(t *testing.T) {
	src := `{"text":"a","output_length":3,"delay":100}
{"text":"b","output_length":3,"delay":50}
{"text":"c","output_length":3}`
	res, err := importString(t, "aiperf", src, Options{})
	require.NoError(t, err)
	var at []float64
	for _, r := range res.Requests {
		at = append(at, *r.ArrivalMS)
	}
	assert.Equal(t, []float64{0, 50, 50}, at, "delays add up; from the earliest")

	// A missing delay is 0 (as AIPerf reads it), on the first lines too.
	for _, tt := range []struct {
		src  string
		want []float64
	}{
		{"{\"text\":\"a\",\"output_length\":3}\n{\"text\":\"b\",\"output_length\":3,\"delay\":100}\n{\"text\":\"c\",\"output_length\":3}", []float64{0, 100, 100}},
		{"{\"text\":\"a\",\"output_length\":3}\n{\"text\":\"b\",\"output_length\":3}\n{\"text\":\"c\",\"output_length\":3,\"delay\":30}", []float64{0, 0, 30}},
	} {
		res, err := importString(t, "aiperf", tt.src, Options{})
		require.NoError(t, err, tt.src)
		at = at[:0]
		for _, r := range res.Requests {
			require.NotNil(t, r.ArrivalMS, tt.src)
			at = append(at, *r.ArrivalMS)
		}
		assert.Equal(t, tt.want, at, "Import(%q) arrivals", tt.src)
	}

	// A trace too long names the key it is made of.
	_, err = importString(t, "aiperf", "{\"text\":\"a\",\"output_length\":3}\n{\"text\":\"b\",\"output_length\":3,\"delay\":9e8}\n{\"text\":\"c\",\"output_length\":3,\"delay\":9e8}", Options{})
	assert.EqualError(t, err, "in: delay: the trace spans 1800000000 ms, more than the 1e9 ms (about 11.6 days) perfgate replays")
}

// words lists the runs of letters and digits of s.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func TestRedact(t *testing.T) {
	rd, err := NewRedactor([]byte("0123456789abcdef"))
	require.NoError(t, err)
	in := "Hello, world! Call 555-0199 at 9am.\n\tThe Übung is a test."
	out := rd.Text(in)
	assert.Equal(t, rd.Text(in), out, "deterministic")
	assert.Equal(t, len(words(in)), len(words(out)))
	for i, w := range words(in) {
		o := words(out)[i]
		assert.NotEqual(t, w, o, "word %q kept", w)
		assert.Equal(t, len([]rune(w)), len([]rune(o)), "length of %q", w)
	}
	// Everything but the words is kept.
	strip := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return 'x'
			}
			return r
		}, s)
	}
	assert.Equal(t, strip(in), strip(out))
	// A word of letters whose length the vocabulary has becomes one of its
	// words (cased as the original), so it tokenizes like a word, not like
	// random letters.
	vocab := map[string]bool{}
	for _, v := range workload.Vocabulary() {
		require.Equal(t, strings.ToLower(v), v, "the filler's casing assumes a lower-case vocabulary")
		vocab[v] = true
	}
	long := "Please summarise the quarterly revenue figures for our northern offices"
	for i, w := range words(long) {
		o := words(rd.Text(long))[i]
		if n := len(w); n >= 2 && n <= 8 {
			assert.True(t, vocab[strings.ToLower(o)], "Text(%q) = %q, want a vocabulary word", w, o)
		}
	}
	// Shared prefixes stay shared.
	p := "You are a helpful assistant for Acme. "
	a, b := rd.Text(p+"Question one?"), rd.Text(p+"Another question?")
	assert.Equal(t, a[:len(p)], b[:len(p)])
	assert.NotContains(t, a, "Acme")
	other, err := NewRedactor([]byte("fedcba9876543210"))
	require.NoError(t, err)
	assert.NotEqual(t, out, other.Text(in), "another key redacts otherwise")
	_, err = NewRedactor([]byte("short"))
	assert.EqualError(t, err, "a redaction key needs at least 16 bytes, got 5")
}

func TestRedactImport(t *testing.T) {
	src := `{"custom_id":"secret-customer-42","method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"Weather in Lyon?"}],"max_tokens":9,"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],"tool_choice":{"type":"function","function":{"name":"get_weather"}}}}`
	rd, err := NewRedactor([]byte("0123456789abcdef"))
	require.NoError(t, err)
	res, err := importString(t, "openai", src, Options{Redact: rd})
	require.NoError(t, err)
	r := res.Requests[0]
	assert.Equal(t, "openai-1", r.ID, "the source id is replaced")
	for _, secret := range []string{"Lyon", "Weather", "get_weather", "weather", "city", "secret"} {
		assert.NotContains(t, string(r.Tools)+string(r.ToolChoice)+r.Messages[0].Content+r.ID, secret)
	}
	assert.Contains(t, string(r.Tools), `"type":"object"`, "schema structure is kept")
	name := rd.Text("get_weather")
	city := rd.Text("city")
	assert.Contains(t, string(r.Tools), `"required":["`+city+`"]`)
	assert.Contains(t, string(r.Tools), `"properties":{"`+city+`":`)
	assert.Contains(t, string(r.ToolChoice), `"name":"`+name+`"`, "tool_choice names the same redacted function")
	assert.True(t, res.Summary.Redacted)
	mustParse(t, res.Requests)
}

// TestRedactKeepsRegexes checks that the JSON Schema keywords whose values
// are regexes or formats are kept verbatim: a redacted regex can turn
// [a-z] into a reversed range, which a strict server refuses.
func TestRedactKeepsRegexes(t *testing.T) {
	rd, err := NewRedactor([]byte("0123456789abcdef"))
	require.NoError(t, err)
	in := `{"type":"json_schema","json_schema":{"name":"order","schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"sku":{"type":"string","pattern":"^[a-z]+-[0-9]{4}$","description":"Stock unit"},"pattern":{"type":"string","contentEncoding":"base64","contentMediaType":"image/png"},"contact":{"type":"string","format":"email"}},"patternProperties":{"^x-[a-z]+$":{"type":"string","pattern":"^[A-Z]{2}$"}},"required":["sku"]}}}`
	out := string(rd.JSON([]byte(in)))
	for _, kept := range []string{
		`"pattern":"^[a-z]+-[0-9]{4}$"`, `"patternProperties":{"^x-[a-z]+$":{"type":"string","pattern":"^[A-Z]{2}$"}}`,
		`"$schema":"https://json-schema.org/draft/2020-12/schema"`, `"contentEncoding":"base64"`,
		`"contentMediaType":"image/png"`, `"format":"email"`,
	} {
		assert.Contains(t, out, kept, "JSON(%s) = %s", in, out)
	}
	for _, secret := range []string{"Stock", "sku", "contact", "order", `"pattern":{`} {
		assert.NotContains(t, out, secret, "JSON(%s) = %s", in, out)
	}
	assert.Contains(t, out, `"`+rd.Text("pattern")+`":{`, "a property named pattern is a name, redacted")
}

// --models keeps each body's model as its request's (a multi-LoRA
// deployment's adapters, replayed as served); a name a workload line could
// not carry is an error at its line and field. Without it, model is
// ignored and counted.
func TestOpenAIKeepModels(t *testing.T) {
	src := `{"model":"sql-lora","messages":[{"role":"user","content":"a"}],"max_tokens":3}
{"model":null,"messages":[{"role":"user","content":"b"}],"max_tokens":3}
{"body":{"model":"base","prompt":"c","max_tokens":3}}`
	res, err := importString(t, "openai", src, Options{KeepModels: true})
	require.NoError(t, err)
	require.Len(t, res.Requests, 3)
	assert.Equal(t, "sql-lora", res.Requests[0].Model)
	assert.Empty(t, res.Requests[1].Model, "null: the target's")
	assert.Equal(t, "base", res.Requests[2].Model)
	assert.Empty(t, res.Summary.Ignored)
	mustParse(t, res.Requests)

	res, err = importString(t, "openai", src, Options{})
	require.NoError(t, err)
	assert.Empty(t, res.Requests[0].Model)
	assert.Equal(t, Tally{"model": 2}, res.Summary.Ignored)

	for _, c := range []struct{ src, want string }{
		{`{"model":"","prompt":"a","max_tokens":3}`, "in:1: model: must not be empty with --models"},
		{`{"model":7,"prompt":"a","max_tokens":3}`, "in:1: model: want a string"},
		{`{"body":{"model":"a\u0007b","prompt":"a","max_tokens":3}}`, "in:1: body.model: has a control character"},
	} {
		_, err := importString(t, "openai", c.src, Options{KeepModels: true})
		require.Error(t, err, c.src)
		assert.Contains(t, err.Error(), c.want)
	}
}

// An imported body's sampling keys are decoded by the workload format's
// own decoder: a value out of its range is an error at the source's
// field, not a workload that fails to load later.
func TestImportSamplingRules(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`{"body":{"prompt":"a","max_tokens":3,"temperature":7}}`, "in:1: body.temperature: want a number from 0 to 2, got 7"},
		{`{"prompt":"a","max_tokens":3,"top_p":0}`, "in:1: top_p: want a number greater than 0 and at most 1, got 0"},
		{`{"prompt":"a","max_tokens":3,"response_format":"json"}`, `in:1: response_format: want a JSON object, got a string`},
		{`{"prompt":"a","max_tokens":3,"tools":{}}`, "in:1: tools: want a JSON array of tools"},
	} {
		_, err := importString(t, "openai", c.src, Options{})
		require.Error(t, err, c.src)
		assert.Contains(t, err.Error(), c.want)
	}
}
