package config

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Header values may name environment variables, so that a key stays out of
// the config file:
//
//	target:
//	  headers:
//	    Authorization: "Bearer ${OPENAI_API_KEY}"
//
// The syntax is small and strict, the same in every header value and
// nowhere else in the config:
//
//   - ${NAME} is the variable NAME, a letter or _ then letters, digits and _;
//   - $$ is one literal $;
//   - any other $ is an error: a bare $NAME, an unclosed ${, a name that is
//     not one (${}, ${1X}, shell's ${X:-default}). A template that does not
//     expand is refused rather than sent as it is written, which is how a
//     key used to reach servers as the literal text "${OPENAI_API_KEY}".
//     (A stack's env keeps a bare $NAME as it is, for the program to
//     expand; a header has no one downstream to expand it.)
//   - the variables perfgate never gives a stack (NeverPassedToStack: the
//     GitHub tokens, INPUT_*, ACTIONS_*, the runner's command files) are
//     never sent to a server either: a pull request's config names the
//     target, and could otherwise send it the workflow's token.
//
// The config, its hash, the result and everything perfgate writes keep the
// template; the values are read from the environment once, when a run
// starts (Target.ExpandHeaders), and only the requests carry them. A
// variable that is unset or empty is an error naming it and the header.

// MinRedacted is the shortest variable value that is redacted from what
// perfgate writes (ExpandedHeaders.Redact): a credential is longer, and
// replacing every "1" or "us" in a message would garble it.
const MinRedacted = 8

// Redacted replaces a variable's value in text perfgate writes.
const Redacted = "[redacted]"

// HeaderVarError is a header value naming an environment variable that is
// unset or empty. It names the variable and the header, never a value.
type HeaderVarError struct {
	// Header is the header's name as configured.
	Header string
	// Var is the variable's name.
	Var string
	// Empty is set when the variable is set to "".
	Empty bool
}

func (e *HeaderVarError) Error() string {
	what := "is not set in the environment"
	if e.Empty {
		what = "is empty in the environment"
	}
	return fmt.Sprintf("target.headers.%s: ${%s} %s", e.Header, e.Var, what)
}

// HeaderSyntaxError is a header value whose $ is neither ${NAME} nor $$.
// It locates the $ by byte offset rather than quoting the value, which may
// hold a literal credential.
type HeaderSyntaxError struct {
	// Header is the header's name as configured.
	Header string
	// Offset is the byte offset of the $ in the value.
	Offset int
	// Msg says what is wrong.
	Msg string
}

func (e *HeaderSyntaxError) Error() string {
	return "target.headers." + e.Header + ": " + e.reason()
}

// reason is the message without the field path.
func (e *HeaderSyntaxError) reason() string {
	return fmt.Sprintf("the $ at byte %d %s; write ${NAME} for an environment variable or $$ for a literal $", e.Offset, e.Msg)
}

// HeaderRefusedError is a header value naming a variable perfgate never
// sends (NeverPassedToStack).
type HeaderRefusedError struct {
	// Header is the header's name as configured.
	Header string
	// Var is the variable's name.
	Var string
}

func (e *HeaderRefusedError) Error() string {
	return "target.headers." + e.Header + ": " + e.reason()
}

// reason is the message without the field path.
func (e *HeaderRefusedError) reason() string {
	return fmt.Sprintf("${%s} is never sent: perfgate keeps the GitHub token, the action's inputs and the runner's variables from the server under test", e.Var)
}

// headerPart is one piece of a parsed header value: literal text, or a
// variable's name.
type headerPart struct {
	text string
	name string // "": text is literal
}

// parseHeaderValue splits a header value into literal text and ${NAME}
// references. header names the header for errors.
func parseHeaderValue(header, value string) ([]headerPart, error) {
	var parts []headerPart
	var lit strings.Builder
	for i := 0; i < len(value); {
		c := value[i]
		if c != '$' {
			lit.WriteByte(c)
			i++
			continue
		}
		switch {
		case i+1 < len(value) && value[i+1] == '$':
			lit.WriteByte('$')
			i += 2
			continue
		case i+1 >= len(value) || value[i+1] != '{':
			return nil, &HeaderSyntaxError{Header: header, Offset: i, Msg: "does not begin ${NAME}"}
		}
		end := strings.IndexByte(value[i+2:], '}')
		if end < 0 {
			return nil, &HeaderSyntaxError{Header: header, Offset: i, Msg: "opens ${ without a closing }"}
		}
		name := value[i+2 : i+2+end]
		if !validVarName(name) {
			return nil, &HeaderSyntaxError{Header: header, Offset: i,
				Msg: "does not name a variable (letters, digits and _, not starting with a digit)"}
		}
		if NeverPassedToStack(name) {
			return nil, &HeaderRefusedError{Header: header, Var: name}
		}
		if lit.Len() > 0 {
			parts = append(parts, headerPart{text: lit.String()})
			lit.Reset()
		}
		parts = append(parts, headerPart{name: name})
		i += 2 + end + 1
	}
	if lit.Len() > 0 {
		parts = append(parts, headerPart{text: lit.String()})
	}
	return parts, nil
}

// validVarName says whether name is an environment variable's name as
// ${NAME} takes it.
func validVarName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// HeaderVars returns the environment variables a header value names, in
// order (a name once), or an error when the value is malformed (a
// *HeaderSyntaxError) or names a variable perfgate never sends (a
// *HeaderRefusedError); see the syntax above.
func HeaderVars(header, value string) ([]string, error) {
	parts, err := parseHeaderValue(header, value)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range parts {
		if p.name != "" && !slices.Contains(names, p.name) {
			names = append(names, p.name)
		}
	}
	return names, nil
}

// ExpandedHeaders are target.headers as they are sent: every ${NAME}
// replaced by its value. Keep them out of anything written; Redact cleans
// text that may have caught a value (a server's error message echoing the
// key).
type ExpandedHeaders struct {
	// Values maps each header name to its value as sent. It is nil when
	// target.headers is empty.
	Values map[string]string
	// secrets are the variables' values of MinRedacted bytes or more and
	// their URL-escaped forms (addSecret), longest first, so that a value
	// holding another is redacted whole.
	secrets []string
}

// ExpandHeaders expands the ${NAME} references of t.Headers' values from
// lookup (os.LookupEnv for the process environment). The config is left as
// it is. An unset or empty variable is a *HeaderVarError, a malformed value
// a *HeaderSyntaxError, a variable perfgate never sends a
// *HeaderRefusedError, and a value whose expansion holds a line break or a
// NUL byte (which no HTTP request may carry) an error naming the variable;
// the headers are checked in name order and the first problem is returned.
// No error holds a variable's value.
func (t Target) ExpandHeaders(lookup func(name string) (string, bool)) (ExpandedHeaders, error) {
	var out ExpandedHeaders
	if len(t.Headers) == 0 {
		return out, nil
	}
	out.Values = make(map[string]string, len(t.Headers))
	for _, header := range slices.Sorted(maps.Keys(t.Headers)) {
		parts, err := parseHeaderValue(header, t.Headers[header])
		if err != nil {
			return ExpandedHeaders{}, err
		}
		var b strings.Builder
		for _, p := range parts {
			if p.name == "" {
				b.WriteString(p.text)
				continue
			}
			v, ok := lookup(p.name)
			if !ok || v == "" {
				return ExpandedHeaders{}, &HeaderVarError{Header: header, Var: p.name, Empty: ok}
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return ExpandedHeaders{}, fmt.Errorf("target.headers.%s: the value of ${%s} holds a line break or a NUL byte, which no HTTP header may carry (a key read from a file with its final newline?)", header, p.name)
			}
			out.addSecret(v)
			b.WriteString(v)
		}
		out.Values[header] = b.String()
	}
	out.sortSecrets()
	return out, nil
}

// WithSecrets returns h redacting also each of values (those of MinRedacted
// bytes or more, in the forms addSecret says): literal credentials a caller
// knows of, such as perfgate init's --header values that it keeps out of
// the config.
func (h ExpandedHeaders) WithSecrets(values ...string) ExpandedHeaders {
	out := h
	out.secrets = slices.Clone(h.secrets)
	for _, v := range values {
		out.addSecret(v)
	}
	out.sortSecrets()
	return out
}

// addSecret adds v to what Redact replaces when it is MinRedacted bytes or
// longer, with its URL-escaped forms (url.QueryEscape, url.PathEscape) where
// they differ: a server echoes a key as it was sent, or inside a URL (a
// redirect's ?k=abc%2Bdef), and either way it is the key.
func (h *ExpandedHeaders) addSecret(v string) {
	if len(v) < MinRedacted {
		return
	}
	for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
		if !slices.Contains(h.secrets, form) {
			h.secrets = append(h.secrets, form)
		}
	}
}

// sortSecrets puts the longest first, so that a value holding another is
// redacted whole.
func (h *ExpandedHeaders) sortSecrets() {
	slices.SortStableFunc(h.secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
}

// Redact replaces every value a variable gave a header (of MinRedacted
// bytes or more), as it is or URL-escaped (url.QueryEscape or
// url.PathEscape: a redirect's Location), in s with Redacted. Other
// encodings (base64, JSON's \u escapes) are not recognised. It is for text that came back from
// the server or the network, before it is written anywhere.
func (h ExpandedHeaders) Redact(s string) string {
	for _, v := range h.secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

// Redactor is Redact, or nil when there is nothing to redact: what
// client.Options.Redact and stack.Health.Redact take, so that a run with
// no secrets does no work per response.
func (h ExpandedHeaders) Redactor() func(string) string {
	if !h.HasSecrets() {
		return nil
	}
	return h.Redact
}

// HasSecrets says whether any header took a value from the environment
// that Redact replaces.
func (h ExpandedHeaders) HasSecrets() bool { return len(h.secrets) > 0 }

// Names are the headers' names, sorted: what a message may say about them.
func (h ExpandedHeaders) Names() []string { return slices.Sorted(maps.Keys(h.Values)) }
