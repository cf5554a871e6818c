package workload

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

// completion is a completions request of the prompt text.
func completion(text string) Request { return Request{Prompt: text, MaxTokens: 16} }

// completions makes a completions request of each prompt, in order.
func completions(texts ...string) []Request {
	reqs := make([]Request, len(texts))
	for i, t := range texts {
		reqs[i] = completion(t)
	}
	return reqs
}

func f64(x float64) *float64 { return &x }

// wordList is n words "<stem>1 <stem>2 ...".
func wordList(stem string, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = fmt.Sprintf("%s%d", stem, i+1)
	}
	return strings.Join(ws, " ")
}

func TestStatsOneRequestOneWord(t *testing.T) {
	got := Stats([]Request{completion("hello")})
	want := result.WorkloadShape{
		Requests: 1, Completions: 1,
		PromptWords:   result.Lengths{P50: 1, P90: 1, P99: 1, Max: 1},
		MaxTokens:     result.Lengths{P50: 16, P90: 16, P99: 16, Max: 16},
		PrefixSharing: result.PrefixSharing{Words: 1},
	}
	assert.Equal(t, want, got, "Stats(one request of one word)")
}

func TestStatsEmpty(t *testing.T) {
	got := Stats(nil)
	assert.Equal(t, result.WorkloadShape{}, got, "Stats(nil)")
	// A whitespace-only prompt (valid: it is not empty) has no words.
	got = Stats([]Request{completion("  \t ")})
	assert.Equal(t, 0, got.PromptWords.Max, "Stats(whitespace prompt).PromptWords.Max")
	assert.Equal(t, 0.0, got.PrefixSharing.Ratio, "Stats(whitespace prompt).PrefixSharing.Ratio")
}

func TestStatsLengths(t *testing.T) {
	cases := []struct {
		name string
		xs   []int
		want result.Lengths
	}{
		{"1..10", []int{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, result.Lengths{P50: 5, P90: 9, P99: 10, Max: 10}},
		{"two", []int{3, 1}, result.Lengths{P50: 1, P90: 3, P99: 3, Max: 3}},
		{"one", []int{7}, result.Lengths{P50: 7, P90: 7, P99: 7, Max: 7}},
		{"empty", nil, result.Lengths{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, lengths(c.xs), "lengths(%v)", c.xs)
		})
	}
	// 1..100: the nearest rank of p is p itself.
	var xs []int
	for i := 100; i >= 1; i-- {
		xs = append(xs, i)
	}
	assert.Equal(t, result.Lengths{P50: 50, P90: 90, P99: 99, Max: 100}, lengths(xs), "lengths(1..100)")
}

func TestStatsPromptWordsAndMix(t *testing.T) {
	reqs := []Request{
		{Messages: []Message{{Role: "system", Content: "you are  terse"}, {Role: "user", Content: "hi\nthere"}}, MaxTokens: 10},
		{Prompt: "one two", MaxTokens: 30},
		{Messages: []Message{{Role: "user", Content: "x"}, {Role: "assistant", Content: ""}, {Role: "user", Content: "y z"}}, MaxTokens: 20},
	}
	got := Stats(reqs)
	assert.Equal(t, 2, got.Chat, "Chat")
	assert.Equal(t, 1, got.Completions, "Completions")
	// Words: 5 (3 + 2), 2, 3 (1 + 0 + 2).
	assert.Equal(t, result.Lengths{P50: 3, P90: 5, P99: 5, Max: 5}, got.PromptWords, "PromptWords")
	assert.Equal(t, result.Lengths{P50: 20, P90: 30, P99: 30, Max: 30}, got.MaxTokens, "MaxTokens")
	assert.Equal(t, 10, got.PrefixSharing.Words, "PrefixSharing.Words")
}

func TestStatsPrefixSharing(t *testing.T) {
	p40, q40 := wordList("p", 40), wordList("q", 40)
	cases := []struct {
		name       string
		reqs       []Request
		shared     []int
		ratio      float64
		prefixes32 int
	}{
		{"two of three share a prefix", completions("a b c d", "a b x", "q r"), []int{0, 2, 0}, 2.0 / 9, 0},
		{"an earlier request only", completions("a b c d", "a b"), []int{0, 2}, 2.0 / 6, 0},
		{"a later request does not count", completions("a b", "a b c d"), []int{0, 2}, 2.0 / 6, 0},
		{"identical prompts", completions("x y z", "x y z", "x y z"), []int{0, 3, 3}, 6.0 / 9, 0},
		{"nothing shared", completions("a", "b", "c"), []int{0, 0, 0}, 0, 0},
		{"the longest of several", completions("a b c", "a x", "a b c d", "a b y"), []int{0, 1, 3, 2}, 6.0 / 12, 0},
		{"words, not characters", completions("ab c", "a bc", "ab  c\td"), []int{0, 0, 2}, 2.0 / 7, 0},
		{"chat: all messages' words, boundaries as spaces",
			[]Request{
				{Messages: []Message{{Role: "system", Content: "you are"}, {Role: "user", Content: "hi there"}}, MaxTokens: 1},
				{Messages: []Message{{Role: "user", Content: "you are hi"}}, MaxTokens: 1},
				completion("you are hi there now"),
			}, []int{0, 3, 4}, 7.0 / 12, 0},
		{"shared prefixes of 32 words or more",
			completions(p40+" a", p40+" b", q40+" c", q40+" d", p40+" a e", wordList("p", 31)+" z", wordList("p", 31)+" z"),
			[]int{0, 40, 0, 40, 41, 31, 32},
			float64(40+40+41+31+32) / float64(41+41+41+41+42+32+32), 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.shared, sharedPrefixes(c.reqs), "sharedPrefixes")
			got := Stats(c.reqs).PrefixSharing
			assert.InDelta(t, c.ratio, got.Ratio, 1e-12, "Stats().PrefixSharing.Ratio")
			assert.Equal(t, c.prefixes32, got.Prefixes32, "Stats().PrefixSharing.Prefixes32")
			sum := 0
			for _, s := range c.shared {
				sum += s
			}
			assert.Equal(t, sum, got.SharedWords, "Stats().PrefixSharing.SharedWords")
		})
	}
}

// TestSharedPrefixesMatchesBruteForce checks the sorted-neighbour method
// against comparing every request with every earlier one, on random prompts
// from a vocabulary of three words (so that prefixes are shared often).
func TestSharedPrefixesMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"a", "b", "c"}
	for trial := range 200 {
		n := 1 + rng.IntN(30)
		reqs := make([]Request, n)
		for i := range reqs {
			ws := make([]string, 1+rng.IntN(8))
			for k := range ws {
				ws[k] = vocab[rng.IntN(len(vocab))]
			}
			if rng.IntN(2) == 0 {
				reqs[i] = completion(strings.Join(ws, " "))
			} else {
				cut := rng.IntN(len(ws) + 1)
				reqs[i] = Request{Messages: []Message{
					{Role: "system", Content: strings.Join(ws[:cut], " ")},
					{Role: "user", Content: strings.Join(ws[cut:], "  ")},
				}, MaxTokens: 1}
			}
		}
		want := make([]int, n)
		for i := range reqs {
			for j := range i {
				want[i] = max(want[i], commonPrefix(promptOf(&reqs[i]), promptOf(&reqs[j])))
			}
		}
		require.Equal(t, want, sharedPrefixes(reqs), "trial %d: sharedPrefixes = got, want the brute force's", trial)
	}
}

func TestStatsArrivals(t *testing.T) {
	at := func(ms ...float64) []Request {
		reqs := make([]Request, len(ms))
		for i, m := range ms {
			reqs[i] = completion("w")
			reqs[i].ArrivalMS = f64(m)
		}
		return reqs
	}
	cases := []struct {
		name string
		reqs []Request
		want *result.ArrivalShape
	}{
		{"none", completions("a", "b"), nil},
		{"evenly spaced", at(0, 500, 1000, 1500),
			&result.ArrivalShape{Requests: 4, Span: 1.5, MeanRate: 2, Burstiness: 0, PeakPerSecond: 2}},
		{"out of file order", at(1500, 0, 1000, 500),
			&result.ArrivalShape{Requests: 4, Span: 1.5, MeanRate: 2, Burstiness: 0, PeakPerSecond: 2}},
		// Gaps 0, 0, 3000: mean 1000, standard deviation √((1000²·2 + 2000²)/3) = 1000·√2.
		{"a burst then a pause", at(0, 0, 0, 3000),
			&result.ArrivalShape{Requests: 4, Span: 3, MeanRate: 1, Burstiness: math.Sqrt2, PeakPerSecond: 3}},
		{"all at once", at(200, 200, 200),
			&result.ArrivalShape{Requests: 3, Span: 0, MeanRate: 0, Burstiness: 0, PeakPerSecond: 3}},
		{"one gap", at(0, 250),
			&result.ArrivalShape{Requests: 2, Span: 0.25, MeanRate: 4, Burstiness: 0, PeakPerSecond: 2}},
		{"one arrival", at(5), &result.ArrivalShape{Requests: 1, PeakPerSecond: 1}},
		{"the window is half-open", at(0, 1000, 2000),
			&result.ArrivalShape{Requests: 3, Span: 2, MeanRate: 1, Burstiness: 0, PeakPerSecond: 1}},
		{"just inside the window", at(0, 999, 1998),
			&result.ArrivalShape{Requests: 3, Span: 1.998, MeanRate: 2 / 1.998, Burstiness: 0, PeakPerSecond: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Stats(c.reqs).Arrivals
			if c.want == nil {
				assert.Nil(t, got, "Stats().Arrivals")
				return
			}
			require.NotNil(t, got, "Stats().Arrivals")
			assert.Equal(t, c.want.Requests, got.Requests, "Requests")
			assert.InDelta(t, float64(c.want.Span), float64(got.Span), 1e-9, "Span")
			assert.InDelta(t, c.want.MeanRate, got.MeanRate, 1e-9, "MeanRate")
			assert.InDelta(t, c.want.Burstiness, got.Burstiness, 1e-9, "Burstiness")
			assert.Equal(t, c.want.PeakPerSecond, got.PeakPerSecond, "PeakPerSecond")
		})
	}
}

func TestStatsSessions(t *testing.T) {
	turn := func(session string, n int, text string, think *float64) Request {
		r := completion(text)
		r.SessionID, r.Turn, r.ThinkMS = session, n, think
		return r
	}
	reqs := []Request{
		turn("s1", 1, "a b", nil),
		turn("s1", 2, "c", f64(100)),
		turn("s2", 1, "a b z", nil),
		turn("s1", 3, "d e f", f64(300)),
		completion("q"),
	}
	got := Stats(reqs)
	require.NotNil(t, got.Sessions, "Stats().Sessions")
	s := got.Sessions
	assert.Equal(t, 2, s.Count, "Sessions.Count")
	assert.Equal(t, 4, s.Requests, "Sessions.Requests")
	// Turn counts sorted: 1, 3.
	assert.Equal(t, []int{1, 1, 3}, []int{s.TurnsMin, s.TurnsP50, s.TurnsMax}, "Sessions turns min, p50, max")
	assert.Equal(t, &result.ThinkShape{Count: 2, P50: 100, P90: 300}, s.ThinkMS, "Sessions.ThinkMS")
	// As written: only "a b z" shares (2 words of "a b"), of 2+1+3+3+1 = 10.
	assert.InDelta(t, 2.0/10, got.PrefixSharing.Ratio, 1e-12, "PrefixSharing.Ratio")
	// With history: s1 turn 2 carries 2 words, turn 3 carries 3, all shared:
	// words 2 + (2+1) + 3 + (3+3) + 1 = 15, shared 0 + 2 + 2 + 3 + 0 = 7.
	assert.InDelta(t, 7.0/15, s.PrefixSharingWithHistory, 1e-12, "Sessions.PrefixSharingWithHistory")

	noThink := Stats([]Request{turn("x", 1, "a", nil), turn("x", 2, "b", nil)})
	require.NotNil(t, noThink.Sessions)
	assert.Nil(t, noThink.Sessions.ThinkMS, "Sessions.ThinkMS with no think_ms")
	assert.Nil(t, Stats(completions("a")).Sessions, "Stats(no session_id).Sessions")
}

func TestStatsTagsSamplingTools(t *testing.T) {
	tagged := func(tags ...string) Request { r := completion("w"); r.Tags = tags; return r }
	reqs := []Request{
		tagged("b", "a", "b"), // "b" twice: one request
		tagged("b", "c"),
		tagged("d", "e", "f", "g"),
		tagged("a"),
		tagged(),
	}
	reqs[0].Temperature, reqs[1].Temperature = f64(0), f64(0.7)
	reqs[2].TopP = f64(0.9)
	seed := int64(3)
	reqs[3].Seed = &seed
	reqs[0].ResponseFormat = json.RawMessage(`{"type":"json_object"}`)
	reqs[1].Tools, reqs[2].Tools = json.RawMessage(`[]`), json.RawMessage(`[{"type":"function"}]`)
	got := Stats(reqs)
	assert.Equal(t, []result.TagCount{{Tag: "a", Requests: 2}, {Tag: "b", Requests: 2}, {Tag: "c", Requests: 1}, {Tag: "d", Requests: 1}, {Tag: "e", Requests: 1}}, got.Tags, "Tags")
	assert.Equal(t, 7, got.DistinctTags, "DistinctTags")
	assert.Equal(t, map[string]int{"temperature": 2, "top_p": 1, "seed": 1}, got.Sampling, "Sampling")
	assert.Equal(t, 1, got.ResponseFormat, "ResponseFormat")
	assert.Equal(t, 2, got.Tools, "Tools")

	plain := Stats(completions("a"))
	assert.Nil(t, plain.Tags, "Tags with none")
	assert.Nil(t, plain.Sampling, "Sampling with none")
}

// TestStatsExamples runs Stats on the example workloads: every shape they
// give passes the result's validation.
func TestStatsExamplesValidate(t *testing.T) {
	for _, path := range []string{"../../examples/workloads/chat.jsonl", "../../examples/workloads/trace.jsonl", "testdata/sessions_valid.jsonl"} {
		w, err := Load(path)
		require.NoError(t, err, "Load(%s)", path)
		shape := Stats(w.Requests)
		r := &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{{Name: "x", WorkloadShape: &shape}}}
		assert.NoError(t, r.Validate(), "Validate(Stats(%s))", path)
		assert.Equal(t, len(w.Requests), shape.Requests, "Stats(%s).Requests", path)
	}
}

// BenchmarkStats measures Stats on a synthetic workload of 100,000 chat
// requests of lognormal lengths (mean 512 words), half of them starting
// with one of 20 shared prefixes of 256 words.
func BenchmarkStats(b *testing.B) {
	input, err := ParseDist("lognormal:mean=512,stddev=384,min=8,max=8192")
	require.NoError(b, err)
	output, err := ParseDist("uniform:min=64,max=512")
	require.NoError(b, err)
	reqs, err := Synthesize(SynthSpec{Requests: 100_000, Input: input, Output: output,
		Prefix: &PrefixSpec{Count: 20, Length: 256, Rate: 0.5}}, "", 1)
	require.NoError(b, err)
	b.ResetTimer()
	for b.Loop() {
		Stats(reqs)
	}
}

// TestWordsAsFields checks that the word reader splits as strings.Fields
// does, Unicode white space and invalid UTF-8 included.
func TestWordsAsFields(t *testing.T) {
	for _, s := range []string{"", " ", "a", " a  b\tc\n", "a\u00a0b\u2003c", "x\u0085y", "\xff \xfe\xfd", "é è\u3000ü", "a\x00b c"} {
		want := strings.Fields(s)
		var got []string
		for w := promptOf(&Request{Prompt: s}).words(); ; {
			word, ok := w.next()
			if !ok {
				break
			}
			got = append(got, word)
		}
		assert.Equal(t, len(want), countWords(s), "countWords(%q)", s)
		if len(want) == 0 {
			assert.Empty(t, got, "words(%q)", s)
			continue
		}
		assert.Equal(t, want, got, "words(%q)", s)
	}
}

// commonPrefix is the number of leading words a and b have in common: the
// brute-force oracle sharedPrefixes is checked against.
func commonPrefix(a, b prompt) int {
	wa, wb := a.words(), b.words()
	n := 0
	for {
		x, okA := wa.next()
		y, okB := wb.next()
		if !okA || !okB || x != y {
			return n
		}
		n++
	}
}
