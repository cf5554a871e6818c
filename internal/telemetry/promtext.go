package telemetry

import (
	"bytes"
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// maxPageSamples bounds the sample lines of a page (engine or DCGM). An
// engine's page has hundreds, a DCGM exporter's on a large node a few
// thousand; each parsed sample costs a few hundred bytes, so a page of
// millions of tiny lines would cost perfgate gigabytes.
const maxPageSamples = 100_000

// parseExposition parses a page in the Prometheus text exposition format
// into its metric families. It never panics: the shapes that crash
// Prometheus's text parser are refused first (see checkExposition), and a
// panic the parser meets all the same is recovered and returned as an
// error.
func parseExposition(text []byte) (families map[string]*dto.MetricFamily, err error) {
	if err := checkExposition(text); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			families, err = nil, fmt.Errorf("the Prometheus text parser failed on the page (%v): it is not a page perfgate can read", r)
		}
	}()
	// UTF-8 validation: names with a colon (vllm:..., sglang:...) are
	// valid under either scheme; the zero TextParser rejects every name.
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(text))
}

// checkExposition refuses what Prometheus's text parser cannot be trusted
// with, line by line, before it sees the page:
//
//   - A line whose first character is "{" must be a sample whose metric
//     name is inside the braces ({"name"} 1 or {"name",label="v"} 1, the
//     UTF-8 form). Any other line beginning with "{" (a JSON page's "{}",
//     or labels with no name: {a="b"} 1) drives the parser into a nil
//     pointer (prometheus/common v0.66 text_parse.go, startLabelName) on
//     the page's first sample, and writes into the previous line's metric
//     after one.
//   - A page has at most maxPageSamples samples.
func checkExposition(text []byte) error {
	samples := 0
	for n := 1; len(text) > 0; n++ {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		rest := bytes.TrimLeft(line, " \t")
		if len(rest) == 0 || rest[0] == '#' {
			continue
		}
		samples++
		if samples > maxPageSamples {
			return fmt.Errorf("the page has more than %d samples, the most perfgate reads", maxPageSamples)
		}
		if rest[0] == '{' && !namedInBraces(rest[1:]) {
			return fmt.Errorf("line %d begins with \"{\" but names no metric (a sample is name{labels} value; is the page JSON?): %q",
				n, shorten(line))
		}
	}
	return nil
}

// namedInBraces reports whether s (what follows a line's opening "{")
// begins with a metric name followed by "," or "}": blanks, a quoted string
// with backslash escapes (or a plain name), blanks, then "," or "}".
func namedInBraces(s []byte) bool {
	s = bytes.TrimLeft(s, " \t")
	i := 0
	switch {
	case len(s) > 0 && s[0] == '"':
		for i = 1; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' {
				i++
			}
		}
		if i >= len(s) {
			return false
		}
		i++
	default:
		for i < len(s) && isNameByte(s[i]) {
			i++
		}
		if i == 0 {
			return false
		}
	}
	s = bytes.TrimLeft(s[i:], " \t")
	return len(s) > 0 && (s[0] == ',' || s[0] == '}')
}

func isNameByte(b byte) bool {
	return b == '_' || b == ':' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

// shorten cuts a line to be quoted in an error.
func shorten(line []byte) string {
	const most = 160
	s := string(bytes.TrimRight(line, "\r"))
	if len(s) > most {
		s = strings.ToValidUTF8(s[:most], "") + "..." // a cut rune is dropped
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
