package quality

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/safeio/safeiotest"
)

// Load reads only regular files, at once: a named pipe with no writer, a
// device that never ends and a directory are each refused, naming the path;
// so is such a file named as a schema_file.
func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	safeiotest.RefusesWhatIsNotAFile(t, "suite.jsonl", func(p string) error { _, err := Load(p); return err })

	_, err := Parse(strings.NewReader(`{"id":"z","prompt":"p","scorer":"json_schema","options":{"schema_file":"/dev/zero"}}`), "s.jsonl")
	assert.EqualError(t, err, "s.jsonl:1: options.schema_file: cannot read schema: open /dev/zero: not a regular file (it is a character device)")
}

// deepSchemaItem is an item whose schema nests n levels: today's compile
// takes minutes at 5,000.
func deepSchemaItem(n int) string {
	return `{"id":"deep","prompt":"p","scorer":"json_schema","options":{"schema":` +
		strings.Repeat(`{"properties":{"a":`, n) + `{}` + strings.Repeat(`}}`, n) + `}}`
}

// refChainItem is an item whose schema is a chain of n $refs, each to the
// next twice: validating its expected value takes time exponential in n.
func refChainItem(n int) string {
	var defs []string
	for i := range n {
		defs = append(defs, fmt.Sprintf(`"a%d":{"anyOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"a%d":{"type":"string"}`, n))
	return `{"id":"chain","prompt":"p","scorer":"json_schema","options":{"schema":{"$defs":{` + strings.Join(defs, ",") + `},"$ref":"#/$defs/a0"}},"expected":5}`
}

// Schemas that would take the compiler or the validator minutes are refused
// before either sees them; BenchmarkParseHostileSchema times the refusal.
func TestParseRefusesHostileSchemas(t *testing.T) {
	for _, tc := range []struct{ name, line, want string }{
		{"nested 5000 levels", deepSchemaItem(2500), "s.jsonl:1: options.schema: invalid JSON Schema: the schema nests 5001 levels deep, more than the 64 perfgate compiles"},
		{"a chain of 60 $refs", refChainItem(60), "s.jsonl:1: options.schema: invalid JSON Schema: the schema expands, through its $refs, to more than 20000 subschemas"},
	} {
		_, err := Parse(strings.NewReader(tc.line), "s.jsonl")
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
}

// The bounds leave room for real schemas: nesting a few levels, shared
// definitions, and recursive ones (a tree) whose $ref refers back.
func TestParseAcceptsRealSchemas(t *testing.T) {
	s := parseOne(t,
		deepSchemaItem(31), // 63 JSON levels
		strings.Replace(refChainItem(10), `"expected":5`, `"expected":"x"`, 1), // about 2^12 subschemas: allowed
		`{"id":"tree","prompt":"p","scorer":"json_schema","options":{"schema":{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v"]}},"$ref":"#/$defs/node"}}}`,
	)
	tree := &s.Items[2]
	assert.True(t, tree.Score(`{"v":1,"children":[{"v":2,"children":[{"v":3}]}]}`).Pass)
	assert.False(t, tree.Score(`{"v":1,"children":[{"children":[]}]}`).Pass)
}

// Each schema may be under MaxSchemaNodes and a suite of thousands of them
// still take minutes; the suite as a whole has a budget.
func TestParseSuiteSchemaBudget(t *testing.T) {
	item := strings.Replace(refChainItem(10), `"expected":5`, `"expected":"x"`, 1) // about 12,000 subschemas
	var lines []string
	for i := range 100 {
		lines = append(lines, strings.Replace(item, `"id":"chain"`, fmt.Sprintf(`"id":"c%d"`, i), 1))
	}
	_, err := Parse(strings.NewReader(strings.Join(lines, "\n")), "s.jsonl")
	require.Error(t, err)
	assert.Contains(t, err.Error(), ": options.schema: the suite's schemas expand to more than 1000000 subschemas in all")
	assert.NotContains(t, err.Error(), "s.jsonl:80:", "the first 80 fit")

	_, err = Parse(strings.NewReader(strings.Join(lines[:80], "\n")), "s.jsonl")
	assert.NoError(t, err)
}

// An answer nested deeper than MaxAnswerDepth fails its scorer with a
// reason, rather than being validated level by level.
func TestScoreRefusesDeepAnswer(t *testing.T) {
	it := item(t, `{"id":"j","prompt":"p","scorer":"json_valid"}`)
	sc := it.Score(strings.Repeat("[", 600) + strings.Repeat("]", 600))
	assert.False(t, sc.Pass)
	assert.Equal(t, "JSON nested 600 levels deep, more than the 512 perfgate checks", sc.Detail)
	assert.True(t, it.Score(strings.Repeat("[", 500)+strings.Repeat("]", 500)).Pass)
}

// A suite past MaxSuiteBytes, or a line past workload.MaxLineBytes, is
// refused at its line with the limit.
func TestParseLineTooLong(t *testing.T) {
	line := `{"id":"a","prompt":"` + strings.Repeat("x", 8<<20) + `","scorer":"exact","expected":"x"}`
	_, err := Parse(strings.NewReader(`{"id":"b","prompt":"p","scorer":"exact","expected":"x"}`+"\n"+line), "s.jsonl")
	assert.EqualError(t, err, "s.jsonl:2: the line is longer than 8 MiB, the most perfgate reads in one line")
}

func BenchmarkParseHostileSchema(b *testing.B) {
	deep, chain := deepSchemaItem(2500), refChainItem(60)
	for b.Loop() {
		for _, line := range []string{deep, chain} {
			if _, err := Parse(strings.NewReader(line), "s.jsonl"); err == nil {
				b.Fatal("Parse accepted a hostile schema")
			}
		}
	}
}
