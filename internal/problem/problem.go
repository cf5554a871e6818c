package problem

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a file.
type Problem struct {
	// File is the file as it was named to its reader; empty when the
	// problem is not of a file.
	File string
	// Line and Column are 1-based; 0 when unknown (a required key missing
	// from an empty file, a value checked after decoding).
	Line, Column int
	// Path is the field path, e.g. scenarios[1].load.rate; empty for the
	// file as a whole.
	Path string
	// Msg says what is wrong and, for a bad value, includes the value.
	Msg string
	// Kind, when set, is what errors.Is finds through the problem (the
	// reader's sentinel, as result.ErrInvalid).
	Kind error
}

// Error formats the problem as file:line:col: path: message, leaving out
// the parts that are unknown.
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

// Unwrap is the problem's Kind.
func (p Problem) Unwrap() error { return p.Kind }
