package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/safeio/safeiotest"
)

// deepBrackets is the document that took goccy/go-yaml 47 s and 15 GB:
// 200 KB of nested flow brackets.
func deepBrackets() []byte {
	const n = 100_000
	return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
}

// problemsOf returns the problems of a Parse or LoadFile error, failing the
// test when err is not *Errors.
func problemsOf(t *testing.T, err error) []Problem {
	t.Helper()
	var errs *Errors
	require.ErrorAs(t, err, &errs)
	require.NotEmpty(t, errs.Problems)
	return errs.Problems
}

// Hostile documents are refused before the YAML library (or the shape
// pass) spends time or memory on them. Each would take seconds to minutes
// (and gigabytes) without the limits; the test asserts the refusal, and
// BenchmarkParseHostile times it.
func TestParseHostileDocuments(t *testing.T) {
	laughs := func(levels, fanout int) []byte {
		var b strings.Builder
		b.WriteString("x-0: &l0 {name: a}\n")
		for i := 1; i < levels; i++ {
			refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), fanout), ", ")
			fmt.Fprintf(&b, "x-%d: &l%d {<<: [%s]}\n", i, i, refs)
		}
		fmt.Fprintf(&b, "scenarios: [*l%d]\n", levels-1)
		return []byte(b.String())
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"200 KB of nested brackets", deepBrackets(), "p.yaml:1:65: nested more than 64 levels deep"},
		{"nested flow mappings", []byte("a: " + strings.Repeat("{a: ", 10_000)), "nested more than 64 levels deep"},
		{"nested block lists on one line", []byte("scenarios:\n  " + strings.Repeat("- ", 20_000) + "x\n"), "nested more than 64 levels deep"},
		{"nested block mappings", func() []byte {
			var b strings.Builder
			for i := range 200 {
				fmt.Fprintf(&b, "%sk:\n", strings.Repeat(" ", i))
			}
			return []byte(b.String())
		}(), "p.yaml:65:65: nested more than 64 levels deep"},
		{"a billion laughs in merge keys (9 aliases a level)", laughs(11, 9), "to more than 20000 values"},
		{"a billion laughs in lists", []byte("x-a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + strings.Repeat("x-b: *a\n", 200)), "more than 100 aliases"},
		{"a file over 256 KiB", []byte("# " + strings.Repeat("x", MaxFileBytes) + "\n"), "the file is larger than 256 KiB, the most perfgate reads for a config"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.data, "p.yaml")
			assert.Nil(t, c)
			probs := problemsOf(t, err)
			require.Len(t, probs, 1, "Parse(%s) = %v, want one problem", tc.name, err)
			assert.Contains(t, probs[0].Error(), tc.want, "Parse(%s)", tc.name)
		})
	}
}

// The bounds leave room for what real configs do: lists of scenarios,
// shared anchors, a few levels of nesting, long comments.
func TestParseBoundsLeaveRoomForRealConfigs(t *testing.T) {
	wl := writeWorkload(t)
	var b strings.Builder
	b.WriteString("x-load: &load {type: poisson, rate: 2}\nx-slo: &slo {ttft: 1s}\n")
	b.WriteString("# " + strings.Repeat("a long comment with [brackets] and *stars ", 100) + "\n")
	b.WriteString("scenarios:\n")
	for i := range 48 { // 96 aliases: under the limit of 100
		fmt.Fprintf(&b, "  - name: s%d\n    workload: %s\n    load: *load\n    slo: *slo\n    gates: {ttft.p99: \"+20%%\"}\n", i, wl)
	}
	c, err := Parse([]byte(b.String()), "p.yaml")
	require.NoError(t, err)
	assert.Len(t, c.Scenarios, 48)
	assert.Equal(t, 2.0, c.Scenarios[47].Load.Rate)

	// Brackets and asterisks inside quotes and block scalars are text.
	text := "x-note: |\n  " + strings.Repeat("[", 200) + " *a *b\n" +
		"x-quoted: '" + strings.Repeat("{", 200) + "'\n" +
		"scenarios: [{name: s, workload: " + wl + ", load: {concurrency: 1}}]\n"
	_, err = Parse([]byte(text), "p.yaml")
	require.NoError(t, err)
}

// A byte-order mark is read as one; a UTF-16 file is named as such.
func TestParseByteOrderMark(t *testing.T) {
	wl := writeWorkload(t)
	body := "scenarios:\n  - {name: s, workload: " + wl + ", load: {concurrency: 2}}\n"
	c, err := Parse([]byte("\xef\xbb\xbf"+body), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, 2, c.Scenarios[0].Load.Concurrency)

	_, err = Parse([]byte("\xff\xfe"+body), "p.yaml")
	assert.EqualError(t, err, "p.yaml:1:1: the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8")
}

// LoadFile reads only regular files, at once: a FIFO with no writer, a
// device that never ends and a directory are each refused with the path.
func TestLoadFileRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	safeiotest.RefusesWhatIsNotAFile(t, "perfgate.yaml", func(p string) error { _, err := LoadFile(p); return err })

	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, make([]byte, MaxFileBytes+1), 0o644))
	_, err := LoadFile(big)
	assert.EqualError(t, err, big+": the file is larger than 256 KiB, the most perfgate reads for a config")
}

// Numbers in every form YAML has for them are read as numbers; what is not a
// usable number is refused with a sentence, never read as 0.
func TestParseNumberForms(t *testing.T) {
	wl := writeWorkload(t)
	parse := func(load string) (*Config, error) {
		return Parse([]byte("scenarios:\n  - {name: s, workload: "+wl+", load: "+load+"}\n"), "p.yaml")
	}
	floats := map[string]float64{
		"1e3": 1000, "1E3": 1000, "1e+3": 1000, "1.5e2": 150, ".5": 0.5, "1_000": 1000,
		"1_000.5": 1000.5, "0x10": 16, "+4": 4, "4.": 4, "2.5e-1": 0.25,
	}
	for text, want := range floats {
		c, err := parse("{type: poisson, rate: " + text + "}")
		require.NoError(t, err, "rate: %s", text)
		assert.Equal(t, want, c.Scenarios[0].Load.Rate, "rate: %s", text)
	}
	ints := map[string]int{"1e3": 1000, "1.5e2": 150, "1_000": 1000, "0x10": 16, "2.0": 2, "0o17": 15}
	for text, want := range ints {
		c, err := parse("{concurrency: " + text + "}")
		require.NoError(t, err, "concurrency: %s", text)
		assert.Equal(t, want, c.Scenarios[0].Load.Concurrency, "concurrency: %s", text)
	}
	refused := map[string]string{
		"{type: poisson, rate: .nan}":         "want a finite number, got .nan",
		"{type: poisson, rate: .inf}":         "want a finite number, got .inf",
		"{type: poisson, rate: 1e999}":        "number 1e999 is out of range",
		"{type: poisson, rate: '4'}":          `want a number, got "4"`,
		"{type: poisson, rate: 1e3x}":         `want a number, got "1e3x"`,
		"{type: poisson, rate: 1:30}":         `want a number, got "1:30"`,
		"{concurrency: 2.5}":                  "want an integer, got 2.5",
		"{concurrency: 1e30}":                 "integer 1e30 is out of range",
		"{concurrency: 012}":                  "012 has a leading 0, which YAML reads as octal (10)",
		"{concurrency: 99999999999999999999}": "integer 99999999999999999999 is out of range",
	}
	for load, want := range refused {
		_, err := parse(load)
		require.Error(t, err, "load: %s", load)
		assert.Contains(t, err.Error(), want, "load: %s", load)
		for _, goism := range []string{"%!", "Go struct", "Go value", "of type", "<nil>", "float64"} {
			assert.NotContains(t, err.Error(), goism, "load: %s", load)
		}
	}
}

// The bounds of issue 14: a rate a run could never use is refused when the
// config is read, not after the run.
func TestParseRefusesUnusableRates(t *testing.T) {
	wl := writeWorkload(t)
	for _, rate := range []string{"1.0e300", "1e-300", "0.0001", "100001"} {
		_, err := Parse([]byte("scenarios:\n  - {name: s, workload: "+wl+", load: {type: poisson, rate: "+rate+"}}\n"), "p.yaml")
		require.Error(t, err, "rate: %s", rate)
		assert.Contains(t, err.Error(), "scenarios[0].load.rate: must be from 0.001 to 100000 requests per second", "rate: %s", rate)
	}
	for _, rate := range []string{"0.001", "100000"} {
		_, err := Parse([]byte("scenarios:\n  - {name: s, workload: "+wl+", load: {type: poisson, rate: "+rate+"}}\n"), "p.yaml")
		assert.NoError(t, err, "rate: %s", rate)
	}
}

// Validate (a config changed in code) checks the same bounds, NaN included.
func TestValidateRefusesNaN(t *testing.T) {
	c, err := LoadFile("testdata/good.yaml")
	require.NoError(t, err)
	c.Scenarios[1].Load.Rate = nan()
	c.Warmup.Tolerance = nan()
	err = c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scenarios[1].load.rate: must be from 0.001 to 100000 requests per second, got NaN")
	assert.Contains(t, err.Error(), "warmup.tolerance: must be in (0,1]")
}

func nan() float64 { var zero float64; return zero / zero }

// At most maxProblems problems are listed, then a count of the rest.
func TestParseCapsProblems(t *testing.T) {
	var b strings.Builder
	b.WriteString("scenarios:\n")
	for i := range 150 {
		fmt.Fprintf(&b, "  - {name: s%d, bogus: 1}\n", i)
	}
	probs := problemsOf(t, func() error { _, err := Parse([]byte(b.String()), "p.yaml"); return err }())
	require.Len(t, probs, maxProblems+1)
	assert.Equal(t, "p.yaml: ... and 50 more problems", probs[maxProblems].Error())
}

// Salting is on unless the config turns it off, at the top or per scenario.
func TestSaltOf(t *testing.T) {
	wl := writeWorkload(t)
	scenarios := "scenarios:\n  - {name: a, workload: " + wl + ", load: {concurrency: 1}}\n" +
		"  - {name: b, workload: " + wl + ", load: {concurrency: 1}, salt: false}\n" +
		"  - {name: c, workload: " + wl + ", load: {concurrency: 1}, salt: true}\n"
	for _, tc := range []struct {
		top  string
		want []bool
	}{
		{"", []bool{true, false, true}},
		{"salt: true\n", []bool{true, false, true}},
		{"salt: false\n", []bool{false, false, true}},
	} {
		c, err := Parse([]byte(tc.top+scenarios), "p.yaml")
		require.NoError(t, err)
		var got []bool
		for _, s := range c.Scenarios {
			got = append(got, c.SaltOf(s))
		}
		assert.Equal(t, tc.want, got, "SaltOf with %q", tc.top)
	}
	var code Config // a config built in code salts too
	assert.True(t, code.SaltOf(Scenario{}))
}

// goodHash is the hash testdata/good.yaml had before the salt key existed:
// adding a defaulted key must not change the hash of every committed
// baseline's config.
const goodHash = "sha256:2e30e5fb72c27cf861e5b8d7ffe5ae45822c75de1b84ce246b904e97bc68237d"

func TestHashOfSalt(t *testing.T) {
	data, err := os.ReadFile("testdata/good.yaml")
	require.NoError(t, err)
	c, err := Parse(data, "testdata/good.yaml")
	require.NoError(t, err)
	assert.Equal(t, goodHash, c.Hash(), "the hash of a config that does not mention salt")

	stated, err := Parse(append([]byte("salt: true\n"), data...), "testdata/good.yaml")
	require.NoError(t, err)
	assert.Equal(t, goodHash, stated.Hash(), "stating the default salt: true")

	off, err := Parse(append([]byte("salt: false\n"), data...), "testdata/good.yaml")
	require.NoError(t, err)
	assert.NotEqual(t, goodHash, off.Hash(), "salt: false measures something else")

	// The same salting said another way hashes alike.
	for i := range stated.Scenarios {
		f := false
		stated.Scenarios[i].Salt = &f
	}
	assert.Equal(t, off.Hash(), stated.Hash(), "salt: false at the top, or in every scenario")
}

// The errors of hostile documents name the file and a line, never Go.
func TestHostileErrorsAreSentences(t *testing.T) {
	for _, data := range []string{"seed: !!int 3\n", "seed: !!binary aGk=\n", "target: !custom {a: 1}\n", "seed: [1]\n", "scenarios: {a: 1}\n"} {
		_, err := Parse([]byte(data), "p.yaml")
		require.Error(t, err, "Parse(%q)", data)
		assert.True(t, strings.HasPrefix(err.Error(), "p.yaml:1:"), "Parse(%q) = %v, want file:line", data, err)
		assert.False(t, goSyntax.MatchString(err.Error()), "Parse(%q) = %v", data, err)
		var errs *Errors
		assert.True(t, errors.As(err, &errs))
	}
}

// BenchmarkParseHostile times the refusal of the document that took the
// YAML library 47 s: it takes milliseconds.
func BenchmarkParseHostile(b *testing.B) {
	data := deepBrackets()
	for b.Loop() {
		if _, err := Parse(data, "p.yaml"); err == nil {
			b.Fatal("Parse accepted 200 KB of nested brackets")
		}
	}
}
