package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Problem is one thing wrong with a config file, located by its field path
// (scenarios[1].load.rate) and, where the file says, by line and column.
type Problem struct {
	// File is the config file as it was named to Load or Parse.
	File string
	// Line and Column are 1-based; 0 when unknown (e.g. a required key missing
	// from an empty file).
	Line, Column int
	// Path is the field path, e.g. scenarios[1].load.rate; empty for the file
	// as a whole.
	Path string
	// Msg says what is wrong and, for a bad value, includes the value.
	Msg string
}

// Error formats the problem as file:line:col: path: message, leaving out the
// parts that are unknown.
func (p Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
			if p.Column > 0 {
				fmt.Fprintf(&b, ":%d", p.Column)
			}
		}
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Errors is every problem found in one config file. Load and Parse return it
// (as error) on bad input; callers that want the list use errors.As.
type Errors struct {
	Problems []Problem
}

// Error lists the problems, one a line, in the order they appear in the file.
func (e *Errors) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// sortProblems orders problems by position; problems without a line (the file
// as a whole) come first, and ties keep the order they were found in.
func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}
