package workload

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDist(t *testing.T) {
	tests := []struct {
		in      string
		want    Dist
		wantErr string
	}{
		{in: "fixed:128", want: Dist{Type: "fixed", Value: 128}},
		{in: "fixed:value=64", want: Dist{Type: "fixed", Value: 64}},
		{in: " uniform: min=10 , max=100 ", want: Dist{Type: "uniform", Min: 10, Max: 100}},
		{in: "uniform:max=100", want: Dist{Type: "uniform", Max: 100}},
		{in: "normal:mean=200,stddev=50", want: Dist{Type: "normal", Mean: 200, Stddev: 50}},
		{in: "lognormal:mean=512,stddev=300,min=4,max=4096", want: Dist{Type: "lognormal", Mean: 512, Stddev: 300, Min: 4, Max: 4096}},
		{in: "empirical:file=lengths.txt", want: Dist{Type: "empirical", File: "lengths.txt"}},
		{in: "empirical:file=l.txt,max=2048", want: Dist{Type: "empirical", File: "l.txt", Max: 2048}},

		{in: "lognormal:mean=512,sd=300", wantErr: `lognormal: unknown parameter "sd"; want mean, stddev, min, max`},
		{in: "gauss:mean=1", wantErr: `unknown distribution "gauss"; want one of fixed, uniform, normal, lognormal, empirical`},
		{in: "", wantErr: `distribution "": want TYPE:PARAM=VALUE,... with TYPE one of fixed, uniform, normal, lognormal, empirical`},
		{in: "fixed", wantErr: `fixed: missing parameters; want value`},
		{in: "fixed:0", wantErr: `fixed: value: must be from 1 to 1048576, got 0`},
		{in: "fixed:12.5", wantErr: `fixed: value: want an integer, got "12.5"`},
		{in: "fixed:min=3", wantErr: `fixed: unknown parameter "min"; want value`},
		{in: "uniform:min=100,max=10", wantErr: `uniform: min: must be <= max (10), got 100`},
		{in: "uniform:min=10", wantErr: `uniform: missing parameter "max"; want min, max`},
		{in: "uniform:min=1,min=2,max=3", wantErr: `uniform: parameter "min" given twice`},
		{in: "uniform:min", wantErr: `uniform: parameter "min": want NAME=VALUE`},
		{in: "normal:mean=200", wantErr: `normal: missing parameter "stddev"; want mean, stddev, min, max`},
		{in: "normal:mean=200,stddev=-3", wantErr: `normal: stddev: must be from 0 to 1048576, got -3`},
		{in: "normal:mean=abc,stddev=3", wantErr: `normal: mean: want a number, got "abc"`},
		{in: "lognormal:mean=NaN,stddev=3", wantErr: `lognormal: mean: want a number, got "NaN"`},
		{in: "lognormal:mean=0,stddev=3", wantErr: `lognormal: mean: must be > 0 and at most 1048576, got 0`},
		{in: "empirical:file=", wantErr: `empirical: file: want a file name`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDist(tt.in)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			again, err := ParseDist(got.String())
			require.NoError(t, err, "ParseDist(%q)", got.String())
			assert.Equal(t, got, again, "String round trip")
		})
	}
}

func TestSynthSpecProblems(t *testing.T) {
	good := SynthSpec{
		Requests: 10,
		Input:    Dist{Type: "lognormal", Mean: 512, Stddev: 300, Min: 4, Max: 4096},
		Output:   Dist{Type: "fixed", Value: 128},
	}
	assert.Empty(t, good.Problems())

	tests := []struct {
		name string
		edit func(*SynthSpec)
		want []string
	}{
		{"no requests", func(s *SynthSpec) { s.Requests = 0 }, []string{"requests: must be from 1 to 1000000, got 0"}},
		{"no type", func(s *SynthSpec) { s.Input = Dist{} }, []string{"input.type: required; want one of fixed, uniform, normal, lognormal, empirical"}},
		{"bad type", func(s *SynthSpec) { s.Output.Type = "zipf" }, []string{`output.type: unknown distribution "zipf"; want one of fixed, uniform, normal, lognormal, empirical`}},
		{"fixed zero", func(s *SynthSpec) { s.Output.Value = 0 }, []string{"output.value: must be from 1 to 1048576, got 0"}},
		{"fixed with max", func(s *SynthSpec) { s.Output.Max = 9 }, []string{"output.max: not used by fixed (it takes value)"}},
		{"uniform min > max", func(s *SynthSpec) { s.Input = Dist{Type: "uniform", Min: 50, Max: 10} }, []string{"input.min: must be <= max (10), got 50"}},
		{"uniform no max", func(s *SynthSpec) { s.Input = Dist{Type: "uniform", Min: 5} }, []string{"input.max: must be > 0, got 0"}},
		{"negative stddev", func(s *SynthSpec) { s.Input.Stddev = -3 }, []string{"input.stddev: must be from 0 to 1048576, got -3"}},
		{"zero mean", func(s *SynthSpec) { s.Input = Dist{Type: "normal", Stddev: 3} }, []string{"input.mean: must be > 0 and at most 1048576, got 0"}},
		{"negative min", func(s *SynthSpec) { s.Input.Min = -1 }, []string{"input.min: must be from 0 to 1048576, got -1"}},
		{"normal with file", func(s *SynthSpec) { s.Input.File = "x.txt" }, []string{"input.file: not used by lognormal (it takes mean, stddev, min, max)"}},
		{"empirical no file", func(s *SynthSpec) { s.Input = Dist{Type: "empirical"} }, []string{"input.file: required for empirical (a file of one length a line)"}},
		{"bad prefix", func(s *SynthSpec) { s.Prefix = &PrefixSpec{Count: 0, Length: -1, Rate: 1.5} }, []string{
			"prefix.count: must be from 1 to 10000, got 0", "prefix.length: must be from 1 to 1048576, got -1", "prefix.rate: must be in (0, 1], got 1.5",
		}},
		{"zero rate", func(s *SynthSpec) { s.Prefix = &PrefixSpec{Count: 1, Length: 1} }, []string{"prefix.rate: must be in (0, 1], got 0"}},
		{"bad api", func(s *SynthSpec) { s.API = "responses" }, []string{`api: must be chat or completions, got "responses"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good
			tt.edit(&s)
			var got []string
			for _, p := range s.Problems() {
				got = append(got, p.String())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func writeBytes(t *testing.T, reqs []Request) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, reqs))
	return buf.Bytes()
}

func TestSynthesizeDeterministic(t *testing.T) {
	spec := SynthSpec{
		Requests: 200,
		Input:    Dist{Type: "lognormal", Mean: 300, Stddev: 200, Max: 2000},
		Output:   Dist{Type: "uniform", Min: 16, Max: 256},
		Prefix:   &PrefixSpec{Count: 3, Length: 50, Rate: 0.5},
	}
	a, err := Synthesize(spec, "", 42)
	require.NoError(t, err)
	b, err := Synthesize(spec, "", 42)
	require.NoError(t, err)
	assert.Equal(t, writeBytes(t, a), writeBytes(t, b), "same seed, same bytes")

	c, err := Synthesize(spec, "", 43)
	require.NoError(t, err)
	assert.NotEqual(t, writeBytes(t, a), writeBytes(t, c), "another seed, other requests")

	spec.Seed = 42
	d, err := Synthesize(spec, "", 7)
	require.NoError(t, err)
	assert.Equal(t, writeBytes(t, a), writeBytes(t, d), "spec.Seed overrides the run seed")

	// Streams are independent: another output distribution keeps the prompts.
	spec.Output = Dist{Type: "fixed", Value: 9}
	e, err := Synthesize(spec, "", 0)
	require.NoError(t, err)
	for i := range a {
		assert.Equal(t, a[i].Messages, e[i].Messages)
		assert.Equal(t, 9, e[i].MaxTokens)
	}

	// What Synthesize makes is a valid workload.
	w, err := Parse(bytes.NewReader(writeBytes(t, a)), "synth.jsonl")
	require.NoError(t, err)
	assert.Equal(t, Hash(a), w.Hash)
}

func TestSynthesizeShape(t *testing.T) {
	reqs, err := Synthesize(SynthSpec{
		Requests: 3,
		Input:    Dist{Type: "fixed", Value: 7},
		Output:   Dist{Type: "fixed", Value: 5},
		API:      "completions",
	}, "", 1)
	require.NoError(t, err)
	require.Len(t, reqs, 3)
	for i, r := range reqs {
		assert.Equal(t, []string{"synth-000001", "synth-000002", "synth-000003"}[i], r.ID)
		assert.Nil(t, r.Messages)
		assert.Len(t, strings.Fields(r.Prompt), 7)
		assert.Equal(t, r.Prompt, strings.Join(strings.Fields(r.Prompt), " "), "single spaces")
		assert.Equal(t, 5, r.MaxTokens)
	}

	reqs, err = Synthesize(SynthSpec{Requests: 1, Input: Dist{Type: "fixed", Value: 3}, Output: Dist{Type: "fixed", Value: 5}}, "", 1)
	require.NoError(t, err)
	require.Len(t, reqs[0].Messages, 1)
	assert.Equal(t, "user", reqs[0].Messages[0].Role)
	assert.Empty(t, reqs[0].Prompt)
}

func TestSynthesizePrefix(t *testing.T) {
	const n, count, length, rate = 4000, 4, 20, 0.3
	reqs, err := Synthesize(SynthSpec{
		Requests: n,
		Input:    Dist{Type: "uniform", Min: 5, Max: 60},
		Output:   Dist{Type: "fixed", Value: 8},
		Prefix:   &PrefixSpec{Count: count, Length: length, Rate: rate},
	}, "", 3)
	require.NoError(t, err)

	prefixes := map[string]string{} // tag -> the full prefix, from a request at least as long
	perTag := map[string]int{}
	for _, r := range reqs {
		w := strings.Fields(r.Messages[0].Content)
		if len(r.Tags) == 0 {
			continue
		}
		require.Len(t, r.Tags, 1)
		perTag[r.Tags[0]]++
		if len(w) >= length {
			p := strings.Join(w[:length], " ")
			if prev, ok := prefixes[r.Tags[0]]; ok {
				assert.Equal(t, prev, p, "requests of %s share their first %d words", r.Tags[0], length)
			}
			prefixes[r.Tags[0]] = p
		}
	}
	require.Len(t, prefixes, count)
	tagged := 0
	for tag, c := range perTag {
		tagged += c
		assert.InDelta(t, rate*n/count, c, 0.25*rate*n/count, "%s", tag)
	}
	assert.InDelta(t, rate, float64(tagged)/n, 0.03)

	// A request shorter than the prefix is the prefix cut to its length.
	for _, r := range reqs {
		w := strings.Fields(r.Messages[0].Content)
		if len(r.Tags) == 1 && len(w) < length {
			assert.True(t, strings.HasPrefix(prefixes[r.Tags[0]], r.Messages[0].Content), "%q", r.Messages[0].Content)
		}
	}
}

// TestDistributions draws a few thousand lengths from each distribution and
// checks the sample mean and coefficient of variation.
func TestDistributions(t *testing.T) {
	tests := []struct {
		d                Dist
		wantMean, wantCV float64
	}{
		{Dist{Type: "fixed", Value: 128}, 128, 0},
		{Dist{Type: "uniform", Min: 10, Max: 100}, 55, math.Sqrt((91*91-1)/12.0) / 55},
		{Dist{Type: "normal", Mean: 200, Stddev: 50}, 200, 0.25},
		{Dist{Type: "lognormal", Mean: 512, Stddev: 300}, 512, 300.0 / 512},
		{Dist{Type: "lognormal", Mean: 100, Stddev: 100, Max: 1 << 20}, 100, 1},
		{Dist{Type: "empirical", File: "testdata/lengths/good.txt"}, (12 + 40 + 40 + 100 + 300) / 5.0, 0}, // CV filled below
	}
	// The empirical file's population CV.
	{
		v := []float64{12, 40, 40, 100, 300}
		m := tests[5].wantMean
		var ss float64
		for _, x := range v {
			ss += (x - m) * (x - m)
		}
		tests[5].wantCV = math.Sqrt(ss/float64(len(v))) / m
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			sample, err := tt.d.sampler("")
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(1, 2))
			const n = 5000
			var sum, sum2 float64
			for range n {
				x := float64(sample(r))
				require.GreaterOrEqual(t, x, 1.0)
				sum += x
				sum2 += x * x
			}
			mean := sum / n
			cv := math.Sqrt(sum2/n-mean*mean) / mean
			assert.InEpsilon(t, tt.wantMean, mean, 0.03, "mean")
			if tt.wantCV == 0 {
				assert.InDelta(t, 0, cv, 1e-6, "cv")
			} else {
				assert.InEpsilon(t, tt.wantCV, cv, 0.10, "cv")
			}
		})
	}
}

func TestSamplerClamp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, d := range []Dist{
		{Type: "normal", Mean: 10, Stddev: 100, Min: 4, Max: 20},
		{Type: "lognormal", Mean: 10, Stddev: 1000, Min: 4, Max: 20},
		{Type: "normal", Mean: 1, Stddev: 100},          // mostly below 1: raised to 1
		{Type: "lognormal", Mean: 1e300, Stddev: 1e300}, // capped, no overflow
		{Type: "uniform", Max: 3},
	} {
		sample, err := d.sampler("")
		require.NoError(t, err)
		for range 2000 {
			x := sample(r)
			require.GreaterOrEqual(t, x, 1, "%s", d)
			require.LessOrEqual(t, x, maxLength, "%s", d)
			if d.Min > 0 {
				require.GreaterOrEqual(t, x, d.Min, "%s", d)
			}
			if d.Max > 0 {
				require.LessOrEqual(t, x, d.Max, "%s", d)
			}
		}
	}
}

func TestEmpiricalFile(t *testing.T) {
	spec := SynthSpec{Requests: 50, Input: Dist{Type: "empirical", File: "lengths/good.txt"}, Output: Dist{Type: "empirical", File: "lengths/good.txt", Max: 64}}
	reqs, err := Synthesize(spec, "testdata", 1)
	require.NoError(t, err)
	for _, r := range reqs {
		assert.Contains(t, []int{12, 40, 100, 300}, len(strings.Fields(r.Messages[0].Content)))
		assert.Contains(t, []int{12, 40, 64}, r.MaxTokens)
	}

	spec.Input.File = "lengths/bad.txt"
	_, err = Synthesize(spec, "testdata", 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `testdata/lengths/bad.txt:3: want a length from 1 to 1048576, got "abc"`)
	assert.Contains(t, err.Error(), `testdata/lengths/bad.txt:4: want a length from 1 to 1048576, got "-4"`)
	assert.Contains(t, err.Error(), `testdata/lengths/bad.txt:5: want a length from 1 to 1048576, got "0"`)

	spec.Input.File = "lengths/empty.txt"
	_, err = Synthesize(spec, "testdata", 1)
	assert.ErrorContains(t, err, "testdata/lengths/empty.txt: no lengths")

	spec.Input.File = "lengths/missing.txt"
	_, err = Synthesize(spec, "testdata", 1)
	assert.ErrorContains(t, err, "testdata/lengths/missing.txt")
}

func TestSynthesizeInvalidSpec(t *testing.T) {
	_, err := Synthesize(SynthSpec{Input: Dist{Type: "normal", Mean: 5, Stddev: -3}, Output: Dist{Type: "fixed", Value: 1}}, "", 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "requests: must be from 1 to 1000000, got 0")
	assert.Contains(t, err.Error(), "input.stddev: must be from 0 to 1048576, got -3")
}

func TestVocabulary(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range vocabulary {
		assert.False(t, seen[w], "duplicate word %q", w)
		seen[w] = true
		assert.Equal(t, []string{w}, strings.Fields(w))
	}
}
