package report

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/frontier"
	"github.com/perfgate/perfgate/internal/reportfile"
)

// A Reporter writes one rendering of what it was made for, as vegeta's
// reporters do: the object and the format are chosen when it is made, the
// writer when it runs. Every rendering perfgate prints or saves goes
// through one.
type Reporter func(w io.Writer) error

// errNoDocuments is returned by the renderers given nothing to render.
var errNoDocuments = errors.New("no report to render")

// Report writes r to w.
func (r Reporter) Report(w io.Writer) error { return r(w) }

// The formats of a rendering. Documents and the frontier have all four; a
// bare verdict (perfgate compare) all but HTML.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
	FormatHTML     = "html"
)

// TextFormats are the formats a command prints on stdout.
var TextFormats = []string{FormatText, FormatMarkdown, FormatJSON}

// badFormat is the error for a format a reporter does not have.
func badFormat(format string, want []string) error {
	return fmt.Errorf("format %q: want one of %s", format, strings.Join(want, ", "))
}

// DocumentsReporter renders docs (one report, or a merged one) in format;
// o bounds and marks the markdown (the PR comment's limit and marker).
func DocumentsReporter(docs []*reportfile.Document, format string, o MarkdownOptions) (Reporter, error) {
	switch format {
	case FormatText:
		return func(w io.Writer) error { return emitText(w, docs) }, nil
	case FormatMarkdown:
		return func(w io.Writer) error { return emitMarkdown(w, docs, o) }, nil
	case FormatJSON:
		return func(w io.Writer) error { return emitDocumentsJSON(w, docs) }, nil
	case FormatHTML:
		return func(w io.Writer) error { return emitHTML(w, docs) }, nil
	}
	return nil, badFormat(format, append(slices.Clone(TextFormats), FormatHTML))
}

// VerdictReporter renders a bare verdict (perfgate compare) in format.
func VerdictReporter(v *compare.Verdict, format string) (Reporter, error) {
	switch format {
	case FormatText:
		return func(w io.Writer) error { return emitVerdictText(w, v) }, nil
	case FormatMarkdown:
		return func(w io.Writer) error { return emitVerdictMarkdown(w, v) }, nil
	case FormatJSON:
		return func(w io.Writer) error { return emitVerdictJSON(w, v) }, nil
	}
	return nil, badFormat(format, TextFormats)
}

// FrontierReporter renders the quality-cost frontier in format.
func FrontierReporter(f *frontier.Frontier, format string) (Reporter, error) {
	switch format {
	case FormatText:
		return func(w io.Writer) error { return emitFrontierText(w, f) }, nil
	case FormatMarkdown:
		return func(w io.Writer) error { return emitFrontierMarkdown(w, f) }, nil
	case FormatJSON:
		return func(w io.Writer) error { return emitFrontierJSON(w, f) }, nil
	case FormatHTML:
		return func(w io.Writer) error { return emitFrontierHTML(w, f) }, nil
	}
	return nil, badFormat(format, append(slices.Clone(TextFormats), FormatHTML))
}
