package config

import (
	"cmp"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/problem"
)

// Problem is one thing wrong with a config file, located by its field path
// (scenarios[1].load.rate) and, where the file says, by line and column:
// perfgate's one problem (internal/problem).
type Problem = problem.Problem

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
