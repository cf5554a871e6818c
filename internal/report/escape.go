package report

import (
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/textsafe"
)

// Untrusted text, made safe for each medium. Every renderer passes what
// came from a result or a report file (names, reasons, warnings, a model's
// outputs) through one of these as it writes it: clean (summary.go) for a
// terminal, verdictMD for markdown, mermaidText inside a mermaid chart, and
// clean or htmlOutput before html/template escapes it for its context.

// qualityMaxOutput is the most runes of a model's output that the terminal
// and markdown show: the outputs are untrusted, and long.
const qualityMaxOutput = 80

// htmlMaxOutput is the most runes of a model's output the HTML report shows.
const htmlMaxOutput = 300

// verdictClean makes result text safe for a terminal (and for html/template
// to escape): control and format characters stripped, cut to
// verdictMaxShown runes.
func verdictClean(s string) string { return clean(s, verdictMaxShown) }

// verdictMD makes result text safe for markdown (textsafe.Markdown): cut
// to verdictMaxShown runes, syntax escaped, @ and # unable to notify or
// reference.
func verdictMD(s string) string { return textsafe.Markdown(s, verdictMaxShown) }

// mermaidText keeps what a mermaid string can safely hold: letters, digits,
// spaces and a little punctuation, cut to 60 runes.
func mermaidText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(" .,:/()%+-_", r):
			return r
		}
		return ' '
	}, s)
	return clean(s, 60)
}

// qualityOutputMD is an output as escaped inline markdown, cut to
// qualityMaxOutput runes, its newlines shown as ⏎ so that it stays in its
// table cell.
func qualityOutputMD(s string) string {
	s = strings.NewReplacer("\r\n", "⏎", "\n", "⏎", "\r", "⏎").Replace(s)
	if s == "" {
		return "(empty)"
	}
	return verdictMD(clean(s, qualityMaxOutput))
}

// qualityOutputText is an output for a terminal: quoted, its control
// characters stripped, cut to qualityMaxOutput runes.
func qualityOutputText(s string) string { return strconv.Quote(clean(s, qualityMaxOutput)) }

// htmlOutput is a model's output as the HTML report shows it: control and
// format characters other than newlines and tabs made spaces, cut to
// htmlMaxOutput runes; "(empty)" for nothing. The template escapes it.
func htmlOutput(s string) string {
	s = textsafe.Lines(s)
	if r := []rune(s); len(r) > htmlMaxOutput {
		s = string(r[:htmlMaxOutput-1]) + "…"
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

// cut shortens s to at most n runes, ending with "…" when it was longer:
// a layout limit (a commit shown by its first characters), not a
// sanitiser.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// firstRunes is s's first n runes.
func firstRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
