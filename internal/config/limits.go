package config

import (
	"bytes"
	"fmt"

	"github.com/goccy/go-yaml/token"

	"github.com/perfgate/perfgate/internal/safeio"
)

// Limits on the config file itself. A config is a few kilobytes written by
// hand; these bounds are far above anything a real one needs and far below
// what would make the YAML library (or the shape pass) slow or hungry: given
// 200 KB of nested brackets, goccy/go-yaml's parser takes most of a minute
// and gigabytes of memory (its time grows with the square of the depth), and
// a document whose aliases refer to aliases (a "billion laughs" document)
// expands exponentially. So the tokens are checked for depth and aliases
// before they are parsed (checkTokens), and the shape pass stops once the
// aliases have expanded past maxValues.
const (
	// MaxFileBytes is the largest config file perfgate reads: 256 KiB. The
	// complete example of docs/config.md is 2 KiB, so this is room for
	// hundreds of scenarios; goccy/go-yaml's tokens of a file take about
	// 300 bytes a byte at worst, so 256 KiB bounds them at about 75 MB.
	MaxFileBytes = 256 << 10
	// MaxNesting is the deepest a config may nest, block indentation and
	// flow brackets together: 64 levels. perfgate.yaml's own structure is 5
	// levels deep (scenarios[].synth.input.type), and 64 levels cost the
	// parser nothing.
	MaxNesting = 64
	// MaxAliases is the most aliases (*name) a config may use: 100. A
	// config uses one per scenario that shares a load or an SLO block; a
	// billion-laughs document needs many aliases of aliases.
	MaxAliases = 100
	// maxValues is the most values the shape pass walks, aliases and merge
	// keys expanded: 20,000. A config of a hundred scenarios of 40 keys is
	// 4,000; past the limit the document is refused rather than expanded.
	maxValues = 20_000
	// maxProblems is the most problems one config reports; the rest are
	// counted in a last problem. A hundred problems are more than anyone
	// reads, and a file that has more is probably not a perfgate config.
	maxProblems = 100
)

// utf8BOM is the byte-order mark an editor may write at the start of a
// UTF-8 file; it is read as what it is, not as part of the first key.
var utf8BOM = []byte("\xef\xbb\xbf")

// checkBytes checks the raw bytes of a config before they are tokenised:
// their size and encoding. It returns at most one problem.
func checkBytes(data []byte, file string) []Problem {
	if len(data) > MaxFileBytes {
		return []Problem{tooLargeProblem(file)}
	}
	if bytes.HasPrefix(data, []byte("\xff\xfe")) || bytes.HasPrefix(data, []byte("\xfe\xff")) {
		return []Problem{{File: file, Line: 1, Column: 1, Msg: "the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8"}}
	}
	return nil
}

// tooLargeProblem says a config file is larger than MaxFileBytes.
func tooLargeProblem(file string) Problem {
	return Problem{File: file, Msg: fmt.Sprintf("the file is larger than %s, the most perfgate reads for a config", safeio.FormatBytes(MaxFileBytes))}
}

// checkTokens walks a document's tokens once, before the parser sees them,
// and returns a problem (and false) at the first limit passed: nesting
// deeper than MaxNesting, counting block levels (by the column of each
// line's first token and of each "- " or "? " entry) and open flow brackets
// together, or more than MaxAliases aliases. The tokens are the lexer's own,
// so text inside quotes, comments and block scalars is never mistaken for
// structure.
func checkTokens(tokens token.Tokens) (Problem, bool) {
	var (
		columns  []int // the columns of the open block levels
		flow     int   // open flow brackets
		aliases  int
		lastLine = -1
	)
	for _, tk := range tokens {
		if tk == nil || tk.Position == nil || tk.Type == token.CommentType {
			continue
		}
		at := tk.Position
		first := at.Line != lastLine
		lastLine = at.Line
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			if flow > 0 {
				flow--
			}
		case token.AliasType:
			if aliases++; aliases > MaxAliases {
				return Problem{Line: at.Line, Column: at.Column, Msg: fmt.Sprintf(
					"more than %d aliases; refused before parsing (aliases that refer to aliases can expand without bound)", MaxAliases)}, false
			}
		case token.DocumentHeaderType:
			columns = columns[:0]
			continue
		}
		entry := tk.Type == token.SequenceEntryType || tk.Type == token.MappingKeyType
		opens := tk.Type == token.SequenceStartType || tk.Type == token.MappingStartType
		// A line's first token and each "- " or "? " entry open a block
		// level at their column, closing those at deeper columns; a flow
		// bracket is a level of its own (counted in flow).
		if (first || entry) && flow == 0 && !opens {
			for len(columns) > 0 && columns[len(columns)-1] > at.Column {
				columns = columns[:len(columns)-1]
			}
			if len(columns) == 0 || columns[len(columns)-1] < at.Column {
				columns = append(columns, at.Column)
			}
		}
		if len(columns)+flow > MaxNesting {
			return Problem{Line: at.Line, Column: at.Column, Msg: fmt.Sprintf(
				"nested more than %d levels deep (a perfgate config needs fewer than 10); refused before parsing", MaxNesting)}, false
		}
	}
	return Problem{}, true
}
