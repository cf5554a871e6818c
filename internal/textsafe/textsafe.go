package textsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// wordJoiner is U+2060, which perfgate's markdown writes after '@' and '#'
// so that GitHub links neither a user nor an issue. It is invisible and
// changes neither the order nor the meaning of text, so a Writer keeps it:
// markdown printed on stdout stays the markdown written to a file.
const wordJoiner = '\u2060'

// unsafe reports whether r must not reach a terminal or a log: a control
// character (C0, DEL, C1), a format character (Cf: bidi overrides and
// isolates, zero-width spaces and joiners, the byte order mark, the soft
// hyphen) or a line or paragraph separator (U+2028, U+2029), which some
// viewers break lines on.
func unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// Line returns s with every unsafe character, newlines and tabs included,
// made a space: one line's worth of untrusted text, safe to print within a
// line. Invalid UTF-8 becomes U+FFFD.
func Line(s string) string {
	return strings.Map(func(r rune) rune {
		if unsafe(r) {
			return ' '
		}
		return r
	}, s)
}

// Lines returns s with every unsafe character but newline and tab made a
// space ("\r\n" becomes "\n"): multi-line untrusted text, such as a model's
// output shown as a block.
func Lines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unsafe(r) {
			return ' '
		}
		return r
	}, s)
}

// Cut returns Line(s) cut to at most n runes, ending with "…" when it was
// longer: a value from a file or a server shown in a table or a sentence,
// where its length is the layout's to bound. n < 1 is taken as 1.
func Cut(s string, n int) string {
	s = Line(s)
	if n < 1 {
		n = 1
	}
	if utf8.RuneCountInString(s) > n {
		return string([]rune(s)[:n-1]) + "…"
	}
	return s
}

// Markdown returns Cut(s, n) with every character that markdown or HTML
// could read as syntax escaped with a backslash (which GitHub's markdown
// reads as the literal character, in tables too; a '$' would open inline
// math). GitHub links @name and #123 in text even when escaped, so a word
// joiner (U+2060, invisible) follows each @ and #: untrusted text can
// neither notify a user nor reference an issue. A word joiner also
// breaks "://" and "www." so that no address becomes a link.
func Markdown(s string, n int) string {
	s = Cut(s, n)
	s = strings.NewReplacer("://", ":\u2060//", "www.", "www\u2060.").Replace(s)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\|*_`<>[]~&#!@$", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
		if r == '@' || r == '#' {
			b.WriteRune('\u2060')
		}
	}
	return b.String()
}

// JSON returns encoded JSON (as encoding/json writes it: valid UTF-8, control
// characters inside strings already escaped) with every other character a
// Writer would change written as a \u escape instead, and "##[" as
// "#\u0023[": the same JSON value, byte for byte what a Writer passes on. A
// Writer would turn those characters into spaces, changing the values a
// program reads from perfgate's JSON on stdout (an emoji's zero-width
// joiner, a soft hyphen); escaped, they survive and still never reach the
// terminal or the log as themselves. Outside strings JSON holds only
// ASCII, so every such character is within a string, where an escape means
// the character itself.
func JSON(data []byte) []byte {
	var out []byte // nil until something changes
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		var esc string
		switch {
		case r == '\n' || r == '\t' || r == '\r' || r == ' ':
		case r == utf8.RuneError && size == 1:
			esc = `\ufffd`
		case unsafe(r):
			esc = jsonEscape(r)
		case r == '#' && i >= 1 && data[i-1] == '#' && i+1 < len(data) && data[i+1] == '[':
			esc = `\u0023`
		}
		if esc != "" && out == nil {
			out = append(make([]byte, 0, len(data)+16), data[:i]...)
		}
		switch {
		case esc != "":
			out = append(out, esc...)
		case out != nil:
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return data
	}
	return out
}

// jsonEscape is r as JSON's \u escape: a UTF-16 surrogate pair beyond the
// Basic Multilingual Plane.
func jsonEscape(r rune) string {
	if r > 0xFFFF {
		r1, r2 := utf16.EncodeRune(r)
		return fmt.Sprintf(`\u%04x\u%04x`, r1, r2)
	}
	return fmt.Sprintf(`\u%04x`, r)
}
