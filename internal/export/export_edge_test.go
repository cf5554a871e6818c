package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// csvCellIsSafe fails t when cell, once an importer trims its leading
// whitespace, would begin a formula: = + @ always, - unless the cell is a
// number.
func csvCellIsSafe(t *testing.T, cell string) {
	t.Helper()
	trimmed := strings.TrimLeftFunc(cell, unicode.IsSpace)
	if trimmed == "" {
		return
	}
	if strings.ContainsRune("=+@\t\r", rune(trimmed[0])) {
		t.Errorf("cell %q would be a formula once trimmed", cell)
	}
	if trimmed[0] == '-' {
		if _, err := strconv.ParseFloat(cell, 64); err != nil {
			t.Errorf("cell %q begins with '-' and is no number", cell)
		}
	}
}

// A name whose formula follows whitespace is defused too: textsafe makes
// "\t=HYPERLINK(…)" " =HYPERLINK(…)", which an importer that trims cells
// (as many do) read as a formula.
func TestCSVInjectionAfterWhitespace(t *testing.T) {
	for _, name := range []string{"\t=HYPERLINK(\"http://x\",\"y\")", " +1+1", "\r\n-2+3", "\u00a0@SUM(A1)", "  \t =1", " \u2003=1"} {
		got := textCell(name)
		csvCellIsSafe(t, got)
		assert.True(t, strings.HasPrefix(got, "'"), "textCell(%q) = %q: no apostrophe", name, got)
	}
	for _, name := range []string{"chat-c4", " chat", "a=b", "-"} {
		if name == "-" {
			continue
		}
		assert.False(t, strings.HasPrefix(textCell(name), "'"), "textCell(%q) = %q", name, textCell(name))
	}

	r := fixture(t)
	base := r.Scenarios[0]
	r.Scenarios = nil
	for _, n := range []string{"\t=HYPERLINK(\"http://x\",\"y\")", " @SUM(A1)"} {
		s := base
		s.Name = n
		r.Scenarios = append(r.Scenarios, s)
	}
	for _, per := range []Per{PerScenario, PerRepetition} {
		rows, err := csv.NewReader(bytes.NewReader(write(t, r, CSV, Options{Per: per}))).ReadAll()
		require.NoError(t, err)
		for _, row := range rows[1:] {
			for _, cell := range row {
				csvCellIsSafe(t, cell)
			}
		}
	}
}

// Values each finite but near the largest float make a mean, a median of
// two, a spread that overflow to ±Inf: no format writes one (nor fails
// to write for one); the metric whose figures overflow is left out.
func TestSummaryOverflow(t *testing.T) {
	r := fixture(t)
	s := &r.Scenarios[0]
	for i := range s.Repetitions {
		s.Repetitions[i].OutputThroughput = math.MaxFloat64
	}
	// Two repetitions: the median is their mean, (max + max) / 2.
	s.Repetitions = s.Repetitions[:2]
	r.Scenarios = r.Scenarios[:1]
	for _, f := range Formats() {
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, r, f, Options{}), f)
		checkNoOddNumbers(t, f, buf.Bytes())
	}
	rows, err := csv.NewReader(bytes.NewReader(write(t, r, CSV, Options{}))).ReadAll()
	require.NoError(t, err)
	for _, row := range rows[1:] {
		assert.NotEqual(t, "output_throughput", row[1], "a median past the largest float is left out: %v", row)
	}

	// The spread alone overflowing (max − min past the largest float).
	for i := range s.Repetitions {
		s.Repetitions[i].OutputThroughput = math.MaxFloat64 * float64(1-2*(i%2))
	}
	for _, f := range Formats() {
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, r, f, Options{}), f)
		checkNoOddNumbers(t, f, buf.Bytes())
	}
}

// checkNoOddNumbers fails t when out, written in format f, holds NaN or an
// infinity (vLLM's request_rate "inf", its word for no rate limit, aside),
// or is not valid JSON where f is JSON.
func checkNoOddNumbers(t *testing.T, f Format, out []byte) {
	t.Helper()
	lower := strings.ToLower(strings.ReplaceAll(string(out), `"request_rate":"inf"`, ""))
	assert.NotContains(t, lower, "nan", f)
	assert.NotContains(t, lower, "inf", f)
	switch f {
	case CSV:
	case VLLM:
		for line := range bytes.Lines(out) {
			assert.True(t, json.Valid(line), "%s: %s", f, line)
		}
	default:
		assert.True(t, json.Valid(out), "%s: %s", f, out)
	}
}
