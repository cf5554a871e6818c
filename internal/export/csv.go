package export

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/perfgate/perfgate/internal/result"
)

// The csv format is a table for a spreadsheet (or pandas, R, DuckDB): RFC
// 4180 comma-separated values as encoding/csv writes them (fields quoted
// where they need it, CRLF-free: lines end in "\n", which every reader
// takes), with a header row naming the columns. Its columns are the
// contract, checked by parsing the output back in this package's tests.
//
// By scenario (the default, Per PerScenario), one row per scenario and
// metric, the statistics over its repetitions in columns:
//
//	scenario,metric,title,unit,better,n,median,mean,min,max,stddev
//	chat,ttft.p99,TTFT p99,ms,lower,6,31.2,31.5,29.8,34.1,1.52
//
// n is how many repetitions measured the metric (stack starts for
// cold_start, repetition indices for a capacity search); stddev is the
// sample standard deviation, empty with one.
//
// By repetition (Per PerRepetition), one row per scenario, repetition and
// metric, with the repetition's value: the long form a pivot table or a
// chart of every sample wants.
//
//	scenario,repetition,metric,title,unit,better,value
//	chat,1,ttft.p99,TTFT p99,ms,lower,31.2
//
// Only per-repetition metrics have rows there: cold start (once per stack
// start) and a capacity search's estimates are in the by-scenario table.
//
// Values are plain decimals (no exponent, no thousands separator, '.' as the
// decimal point) in the unit column's unit; a metric not measured has no
// row, never a zero.
//
// Text a result file controls (the scenario's name) is cleaned of control
// characters, and a cell that would begin with '=', '+', '-', '@', a tab or
// a carriage return is prefixed with an apostrophe, which spreadsheets show
// as text: a hand-edited or hostile file cannot make a cell a formula
// ("CSV injection"). perfgate's own scenario names are letters, digits, '.',
// '_' and '-' and cannot begin with one of those but '-', which the
// apostrophe then keeps as text.

// csvSummaryHeader and csvRepetitionHeader are the header rows.
var (
	csvSummaryHeader    = []string{"scenario", "metric", "title", "unit", "better", "n", "median", "mean", "min", "max", "stddev"}
	csvRepetitionHeader = []string{"scenario", "repetition", "metric", "title", "unit", "better", "value"}
)

func csvTable(r *result.Result, per Per) ([]byte, error) {
	var rows [][]string
	switch per {
	case PerScenario, "":
		rows = append(rows, csvSummaryHeader)
		for i := range r.Scenarios {
			s := &r.Scenarios[i]
			name := textCell(s.Name)
			err := scenarioSummaries(r, s, func(m measure, sum summary) {
				stddev := ""
				if sum.hasSpread {
					stddev = number(sum.stddev)
				}
				rows = append(rows, []string{name, m.Name, textCell(m.Title), textCell(m.unit), m.Better(),
					strconv.Itoa(sum.n), number(sum.median), number(sum.mean), number(sum.min), number(sum.max), stddev})
			})
			if err != nil {
				return nil, err
			}
		}
	case PerRepetition:
		rows = append(rows, csvRepetitionHeader)
		for i := range r.Scenarios {
			s := &r.Scenarios[i]
			name := textCell(s.Name)
			for j := range s.Repetitions {
				rep := &s.Repetitions[j]
				for _, m := range measures(r) {
					if !m.perRepetition() {
						continue
					}
					v, ok, err := repValue(rep, m)
					if err != nil {
						return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
					}
					if ok {
						rows = append(rows, []string{name, strconv.Itoa(rep.Index), m.Name, textCell(m.Title), textCell(m.unit), m.Better(), number(v)})
					}
				}
			}
		}
	default:
		return nil, fmt.Errorf("unknown row kind %q (allowed: %s, %s)", per, PerScenario, PerRepetition)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// textCell makes text a result file controls a safe csv cell: one line
// (control characters made spaces), and prefixed with an apostrophe when it
// would begin with a character that makes a spreadsheet read the cell as a
// formula (OWASP's list: = + - @ tab CR; tab and CR are already spaces).
// The character is the first after any leading whitespace: many importers
// trim a cell, and " =HYPERLINK(…)" (once "\t=HYPERLINK(…)") would then be
// a formula.
func textCell(s string) string {
	s = cleanName(s)
	if t := strings.TrimLeftFunc(s, unicode.IsSpace); t != "" && strings.ContainsRune("=+-@", rune(t[0])) {
		return "'" + s
	}
	return s
}
