package quality

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scoreCase is one output and the score it should get.
type scoreCase struct {
	output string
	pass   bool
	detail string // compared when not empty
}

// checkScores scores each case with the item of line.
func checkScores(t *testing.T, line string, cases []scoreCase) {
	t.Helper()
	it := item(t, line)
	for _, c := range cases {
		got := it.Score(c.output)
		assert.Equal(t, c.pass, got.Pass, "Score(%q) = %+v, want pass %v (item %s)", c.output, got, c.pass, line)
		if c.detail != "" {
			assert.Equal(t, c.detail, got.Detail, "Score(%q).Detail (item %s)", c.output, line)
		}
		if c.pass {
			assert.Equal(t, 1.0, got.Value, "Score(%q).Value", c.output)
		} else {
			assert.Equal(t, 0.0, got.Value, "Score(%q).Value", c.output)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want            string
		keepCase, keepPunct bool
	}{
		{in: "The  U.S.A.!", want: "usa"},
		{in: "  An apple, a day\n", want: "apple day"},
		{in: "Theory of the Atom", want: "theory of atom"},
		{in: "L'Hôpital's rule", want: "lhôpitals rule"},
		{in: "«Paris»", want: "paris"},
		{in: "New-York", want: "newyork"},
		{in: "The Hague", want: "Hague", keepCase: true},
		{in: "Hello, World!", want: "hello, world!", keepPunct: true},
		{in: "", want: ""},
	}
	for _, tt := range tests {
		got := normalize(tt.in, tt.keepCase, tt.keepPunct)
		assert.Equal(t, tt.want, got, "normalize(%q, %v, %v)", tt.in, tt.keepCase, tt.keepPunct)
	}
}

func TestExact(t *testing.T) {
	checkScores(t, `{"id":"q","prompt":"p","scorer":"exact","expected":["Leo Tolstoy","Tolstoy"]}`, []scoreCase{
		{"Tolstoy", true, "exact match"},
		{"  leo TOLSTOY.\n", true, ""},
		{"The Tolstoy", true, ""},
		{"**Tolstoy**", true, ""},
		{"Leo Tolstoy wrote it.", false, `got "leo tolstoy wrote it"`},
		{"Dostoevsky", false, ""},
		{"", false, `got ""`},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"exact","expected":"Paris","options":{"case_sensitive":true}}`, []scoreCase{
		{"Paris.", true, ""},
		{"paris", false, ""},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"exact","expected":"3.14","options":{"keep_punctuation":true}}`, []scoreCase{
		{"3.14", true, ""},
		{"314", false, ""},
		{"3.14.", false, ""},
	})
}

func TestContains(t *testing.T) {
	checkScores(t, `{"id":"q","prompt":"p","scorer":"contains","expected":"Canberra"}`, []scoreCase{
		{"The capital of Australia is Canberra.", true, `contains "canberra"`},
		{"CANBERRA", true, ""},
		{"Canberra's the capital", false, ""}, // "canberras" is another word
		{"Sydney, not Canberraville", false, "expected answer not found"},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"contains","expected":["García Márquez","Garcia Marquez"]}`, []scoreCase{
		{"It was Gabriel García Márquez.", true, ""},
		{"gabriel garcia marquez", true, ""},
		{"García", false, ""},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"contains","expected":"K"}`, []scoreCase{
		{"The symbol for potassium is K.", true, ""},
		{"The symbol is Kr.", false, ""},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"contains","expected":"Mars","options":{"case_sensitive":true}}`, []scoreCase{
		{"It is Mars.", true, ""},
		{"It is mars.", false, ""},
	})
}

func TestRegex(t *testing.T) {
	checkScores(t, `{"id":"q","prompt":"p","scorer":"regex","expected":"\\bH2O\\b"}`, []scoreCase{
		{"Water is H2O.", true, "pattern matched"},
		{"water is h2o", false, "no pattern matched"},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"regex","expected":["^yes\\b","\\bcorrect\\b"],"options":{"case_insensitive":true}}`, []scoreCase{
		{"YES, it is.", true, "pattern 1 matched"},
		{"That is Correct", true, "pattern 2 matched"},
		{"Well, yes.", false, ""},
	})
}

func TestChoice(t *testing.T) {
	checkScores(t, `{"id":"q","prompt":"p","scorer":"choice","expected":"C"}`, []scoreCase{
		{"C", true, "chose C"},
		{"c", true, "chose C"},
		{"(C)", true, ""},
		{"**C**", true, ""},
		{"C.", true, ""},
		{"C)", true, ""},
		{"The answer is C.", true, ""},
		{"The answer is (C) Paris.", true, ""},
		{"The answer is **C**", true, ""},
		{"answer: c", true, ""},
		{"Answer:C", true, ""},
		{"**Answer:** C", true, ""},
		{"The correct answer is option C.", true, ""},
		{"A good answer is C", true, "chose C"},
		{"A is tempting, but the answer is C.", true, "chose C"},
		{"Answer: A. Wait, no. The final answer: C", true, "chose C"},
		{"Looking at the options, (C) Paris is the capital.", true, "chose C"},
		{"I think (A) is wrong; the right one is (C).", true, "chose C"},
		{"C) Paris\nBecause it is the capital.", true, ""},
		{"C\n\nParis is the capital of France.", true, ""},
		{"C: Paris", true, ""},
		{"The answer is a city in Europe. I pick (C).", true, "chose C"},
		{"The answer is A.", false, "chose A"},
		{"answer: b", false, "chose B"},
		{"A. Paris", false, "chose A"},
		{"A city in France.", false, "no choice found"},
		{"A good choice would be the first one.", false, "no choice found"},
		{"The answer is E.", false, "no choice found"},
		{"Paris", false, "no choice found"},
		{"", false, "no choice found"},
		{"I am not sure.", false, "no choice found"},
		{"ABC", false, "no choice found"},
		{"A.M. radio", false, "no choice found"},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"choice","expected":["a","E"],"options":{"choices":"ABCDE"}}`, []scoreCase{
		{"The answer is E", true, "chose E"},
		{"The answer is a.", true, "chose A"},
		{"(e)", true, ""},
		{"The answer is D", false, ""},
	})
}

func TestExtractNumber(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"42", 42, true},
		{"The answer is 42.", 42, true},
		{"The total is $1,234.50 in all.", 1234.5, true},
		{"It is 42 km away.", 42, true},
		{"Growth was 12%.", 12, true},
		{"-7", -7, true},
		{"The temperature is −3 °C.", -3, true},
		{"It falls to -$5 overnight", -5, true},
		{"$-5", -5, true},
		{"1.5e3", 1500, true},
		{"2.5E-3 mol", 0.0025, true},
		{".5", 0.5, true},
		{"**1,234**", 1234, true},
		{"The answer is **-12**.", -12, true},
		{"pages 3-5", 5, true},
		{"5 + 3 = 8, then 8 × 2 = 16.", 16, true},
		{"The answer is 7, since 3 + 4 = 7 and 7 is prime; 12 other facts.", 7, true},
		{"First 10, then 20. The answer is: 15\nCheck: 15 = 15 and 99 more", 15, true},
		{"Answer: 380", 380, true},
		{"#### 72", 72, true},
		{"So the result is \\boxed{144}.", 144, true},
		{"I counted 3 apples and 4 pears, 7 in total.", 7, true},
		{"x = -4", -4, true},
		{"10 - 5 = 5", 5, true},
		{"1,234,567", 1234567, true},
		{"1,23", 23, true},
		{"In 2024 there were 5,958 runners.", 5958, true},
		{"The answer is 1e999 or 3", 3, true},
		{"no digits here", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := extractNumber(tt.in)
		assert.Equal(t, tt.ok, ok, "extractNumber(%q) ok", tt.in)
		assert.InDelta(t, tt.want, got, 1e-12, "extractNumber(%q)", tt.in)
	}
}

func TestNumeric(t *testing.T) {
	checkScores(t, `{"id":"q","prompt":"p","scorer":"numeric","expected":1234}`, []scoreCase{
		{"The answer is 1,234.", true, "number 1234"},
		{"$1,234.00", true, ""},
		{"1234.0000000001", true, ""}, // within 1e-9 relative
		{"1234567", false, "number 1234567"},
		{"1235", false, "number 1235"},
		{"about a thousand", false, "no number found"},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"numeric","expected":-21}`, []scoreCase{
		{"3 × 4 = 12 and 12 - 33 = -21.\nAnswer: -21", true, "number -21"},
		{"Answer: 21", false, "number 21"},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"numeric","expected":"3.14","options":{"abs_tol":0.01}}`, []scoreCase{
		{"pi is about 3.1416", true, ""},
		{"3.13", true, ""},
		{"3.12", false, ""},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"numeric","expected":1000,"options":{"rel_tol":0.05}}`, []scoreCase{
		{"1,049 m", true, ""},
		{"951", true, ""},
		{"1051", false, ""},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"numeric","expected":["0.5","50"]}`, []scoreCase{
		{"50%", true, ""},
		{"0.5", true, ""},
		{"5", false, ""},
	})
}

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		in   string
		want string // canonical JSON of the value; "" for an error
		err  string
	}{
		{`{"a": 1}`, `{"a":1}`, ""},
		{"  [1, 2]\n", `[1,2]`, ""},
		{`"just a string"`, `"just a string"`, ""},
		{"```json\n{\"a\": 1}\n```", `{"a":1}`, ""},
		{"Here it is:\n```\n{\"a\": 1}\n```\nDone.", `{"a":1}`, ""},
		{"```python\nprint(1)\n```\n```JSON\n{\"b\": 2}\n```", `{"b":2}`, ""},
		{"```json\n{\"a\": [1, {\"c\": null}]}", `{"a":[1,{"c":null}]}`, ""}, // cut off before the closing fence
		{`Sure! The result is {"name": "Ann", "age": 3} as requested.`, `{"age":3,"name":"Ann"}`, ""},
		{`[note] then {"a": true}`, `{"a":true}`, ""},
		{`{"a": }`, "", "not JSON: invalid character '}' looking for beginning of value"},
		{"I cannot produce that.", "", "not JSON: no JSON object or array found"},
		{"", "", "not JSON: no JSON object or array found"},
	}
	for _, tt := range tests {
		v, err := extractJSON(tt.in)
		if tt.err != "" {
			require.Error(t, err, "extractJSON(%q)", tt.in)
			assert.Equal(t, tt.err, "not JSON: "+err.Error(), "extractJSON(%q)", tt.in)
			continue
		}
		require.NoError(t, err, "extractJSON(%q)", tt.in)
		assert.Equal(t, tt.want, string(canonical(v)), "extractJSON(%q)", tt.in)
	}
}

func TestJSONValid(t *testing.T) {
	checkScores(t, `{"id":"q","prompt":"p","scorer":"json_valid"}`, []scoreCase{
		{`{}`, true, "valid JSON"},
		{"```json\n[1, 2, 3]\n```", true, ""},
		{`The answer: {"ok": true}.`, true, ""},
		{`{"ok": true,}`, false, "not JSON: invalid character '}' looking for beginning of object key string"},
		{"I cannot produce that.", false, "not JSON: no JSON object or array found"},
	})
}

func TestJSONSchema(t *testing.T) {
	person := `{"id":"q","prompt":"p","scorer":"json_schema","options":{"schema":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}},"required":["name","age"],"additionalProperties":false}}`
	checkScores(t, person+`}`, []scoreCase{
		{`{"name": "Ann", "age": 30}`, true, "matches schema"},
		{"```json\n{\"age\": 30, \"name\": \"Bo\"}\n```", true, ""},
		{`{"name": "Ann", "age": "30"}`, false, "schema: at /age: got string, want integer"},
		{`{"name": "Ann", "age": -1}`, false, "schema: at /age: minimum: got -1, want 0"},
		{`{"name": "Ann"}`, false, "schema: missing property 'age'"},
		{`{"name": "Ann", "age": 3, "city": "Rome"}`, false, "schema: additional properties 'city' not allowed"},
		{`[1]`, false, "schema: got array, want object"},
		{`not json`, false, "not JSON: no JSON object or array found"},
	})
	checkScores(t, person+`,"expected":{"name":"Ann","age":30}}`, []scoreCase{
		{`{"age": 30.0, "name": "Ann"}`, true, "matches expected"},
		{`Here you go: {"name":"Ann","age":30} — hope it helps`, true, ""},
		{"```json\n{\n  \"name\": \"Ann\",\n  \"age\": 30\n}\n```", true, ""},
		{`{"name": "ann", "age": 30}`, false, "differs from expected at /name"},
		{`{"name": "Ann", "age": 31}`, false, "differs from expected at /age"},
	})
	checkScores(t, `{"id":"q","prompt":"p","scorer":"json_schema","options":{"schema":{"type":"array"}},"expected":[1,[2,3]]}`, []scoreCase{
		{`[1, [2, 3]]`, true, ""},
		{`[1, [2]]`, false, "differs from expected at /1"},
		{`[1, [2, 4]]`, false, "differs from expected at /1/1"},
	})
}

func TestJSONDiff(t *testing.T) {
	dec := func(s string) any {
		v, err := extractJSON(s)
		require.NoError(t, err)
		return v
	}
	tests := []struct {
		got, want, at string
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2.0],"a":1e0}`, ""},
		{`{"a":1}`, `{"a":1,"b":2}`, "/b"},
		{`{"a":1,"c":2}`, `{"a":1}`, "/c"},
		{`{"a/b":{"x":"y"}}`, `{"a/b":{"x":"z"}}`, "/a~1b/x"},
		{`[1]`, `{"a":1}`, "/"},
		{`"1"`, `1`, "/"},
		{`null`, `false`, "/"},
	}
	for _, tt := range tests {
		at, ok := jsonDiff(dec(tt.got), dec(tt.want), "")
		assert.Equal(t, tt.at == "", ok, "jsonDiff(%s, %s)", tt.got, tt.want)
		assert.Equal(t, tt.at, at, "jsonDiff(%s, %s)", tt.got, tt.want)
	}
}

func TestRougeL(t *testing.T) {
	tests := []struct {
		out, ref string
		want     float64
	}{
		// LCS "the cat on the mat" = 5 of 6 words each: P = R = F = 5/6.
		{"the cat sat on the mat", "the cat is on the mat", 5.0 / 6},
		// Case and punctuation do not matter.
		{"The Cat, sat.", "the cat sat", 1},
		// LCS "a b" = 2: P = 2/3, R = 2/2, F = 2PR/(P+R) = 0.8.
		{"a x b", "a b", 0.8},
		// LCS 1 ("b", order matters): P = R = 1/2.
		{"b a", "a b", 0.5},
		{"", "a b", 0},
		{"x y z", "a b", 0},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, rougeL(tt.out, tt.ref), 1e-12, "rougeL(%q, %q)", tt.out, tt.ref)
	}
}

func TestChrF(t *testing.T) {
	tests := []struct {
		out, ref string
		want     float64
	}{
		// Worked by hand as sacrebleu's CHRF (char_order 6, word_order 0,
		// beta 2, white space removed) defines it:
		// hyp "ab", ref "abc".
		//   n=1: hyp {a,b} 2, ref {a,b,c} 3, match 2: P = 1, R = 2/3
		//   n=2: hyp {ab} 1, ref {ab,bc} 2, match 1: P = 1, R = 1/2
		//   n=3..6: hyp has no n-grams, so those orders do not count.
		//   avg P = 1, avg R = (2/3 + 1/2)/2 = 7/12
		//   chrF = (1+4)·P·R / (4·P + R) = (35/12) / (55/12) = 7/11
		{"ab", "abc", 7.0 / 11},
		// "the cat" vs "the hat" become "thecat" and "thehat":
		//   n=1: match t2 h1 e1 a1 = 5 of 6 and 6: P = R = 5/6
		//   n=2: th he at match, 3 of 5: 3/5
		//   n=3: the, 1 of 4: 1/4
		//   n=4..6: no match: 0 (all six orders count)
		//   avg P = avg R = (5/6 + 3/5 + 1/4)/6 = 101/360, and F = P when P = R.
		{"the cat", "the hat", 101.0 / 360},
		{"the  cat", "thecat", 1},                        // white space is removed
		{"The cat", "the cat", chrF("Xhecat", "thecat")}, // case is kept
		{"", "abc", 0},
		{"xyz", "abc", 0},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, chrF(tt.out, tt.ref), 1e-12, "chrF(%q, %q)", tt.out, tt.ref)
	}
}

func TestReference(t *testing.T) {
	it := item(t, `{"id":"q","prompt":"p","scorer":"reference","expected":["the cat is on the mat","a dog is in the garden"]}`)
	assert.True(t, it.Continuous())
	got := it.Score("The cat sat on the mat.")
	assert.InDelta(t, 5.0/6, got.Value, 1e-12)
	assert.True(t, got.Pass)
	assert.Equal(t, "rouge_l 0.833", got.Detail)
	// The best reference counts.
	got = it.Score("a dog is in the garden")
	assert.Equal(t, 1.0, got.Value)
	got = it.Score("no idea")
	assert.Equal(t, 0.0, got.Value)
	assert.False(t, got.Pass)

	// Threshold: 0.8 passes at 0.8 and fails just below.
	it = item(t, `{"id":"q","prompt":"p","scorer":"reference","expected":"a b","options":{"threshold":0.8}}`)
	assert.True(t, it.Score("a x b").Pass)    // 0.8
	assert.False(t, it.Score("a x y b").Pass) // 2/3
	assert.InDelta(t, 2.0/3, it.Score("a x y b").Value, 1e-12)

	it = item(t, `{"id":"q","prompt":"p","scorer":"reference","expected":"abc","options":{"metric":"chrf","threshold":0.6}}`)
	got = it.Score("ab")
	assert.InDelta(t, 7.0/11, got.Value, 1e-12)
	assert.True(t, got.Pass)
	assert.Equal(t, "chrf 0.636", got.Detail)
}

func TestContinuous(t *testing.T) {
	s := parseOne(t, `{"id":"a","prompt":"p","scorer":"exact","expected":"x"}`)
	assert.False(t, s.Continuous())
	s = parseOne(t, `{"id":"a","prompt":"p","scorer":"exact","expected":"x"}`, `{"id":"b","prompt":"p","scorer":"reference","expected":"x"}`)
	assert.True(t, s.Continuous())
	assert.False(t, s.Items[0].Continuous())
	assert.True(t, s.Items[1].Continuous())
}

// TestScoreItemInCode checks items built in code rather than loaded: their
// scorer is built from Scorer and Expected with default options.
func TestScoreItemInCode(t *testing.T) {
	it := &Item{ID: "x", Scorer: "numeric", Expected: []string{"42"}}
	assert.True(t, it.Score("It is 42.").Pass)
	assert.False(t, it.Continuous())
	it = &Item{ID: "x", Scorer: "bogus"}
	got := it.Score("anything")
	assert.False(t, got.Pass)
	assert.Contains(t, got.Detail, "no scorer")
	it = &Item{ID: "x", Scorer: "reference"}
	assert.True(t, it.Continuous())
}

func TestDetailShort(t *testing.T) {
	long := strings.Repeat("\x00é", 500)
	lines := []string{
		`{"id":"q","prompt":"p","scorer":"exact","expected":"x"}`,
		`{"id":"q","prompt":"p","scorer":"json_valid"}`,
		`{"id":"q","prompt":"p","scorer":"json_schema","options":{"schema":{"type":"object","properties":{"` + strings.Repeat("k", 300) + `":{"type":"string"}}}}}`,
	}
	for _, line := range lines {
		it := item(t, line)
		for _, out := range []string{long, `{"` + strings.Repeat("k", 300) + `": 1}`, `{"a": "` + long + `"`} {
			got := it.Score(out)
			assert.LessOrEqual(t, len(got.Detail), maxDetail, "Score(%.20q).Detail = %q", out, got.Detail)
		}
	}
}

func TestWithinTolerance(t *testing.T) {
	assert.True(t, withinTolerance(0.1+0.2, 0.3, 0, 0))
	assert.False(t, withinTolerance(0.31, 0.3, 0, 0))
	assert.True(t, withinTolerance(0, 0, 0, 0))
	assert.False(t, withinTolerance(math.SmallestNonzeroFloat64, 1e-300, 0, 0))
	assert.True(t, withinTolerance(-5, -5.5, 0.5, 0))
	assert.True(t, withinTolerance(110, 100, 0, 0.1))
	assert.False(t, withinTolerance(111, 100, 0, 0.1))
}

func ExampleItem_Score() {
	s, err := Parse(strings.NewReader(`{"id":"q1","messages":[{"role":"user","content":"What is 6 × 7?"}],"scorer":"numeric","expected":42}`), "evals/math.jsonl")
	if err != nil {
		panic(err)
	}
	it := &s.Items[0]
	for _, out := range []string{"6 × 7 = **42**", "The answer is 43."} {
		sc := it.Score(out)
		fmt.Println(sc.Pass, sc.Detail)
	}
	// Output:
	// true number 42
	// false number 43
}
