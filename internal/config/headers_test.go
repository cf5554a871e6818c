package config

import (
	"errors"
	"strings"
	"testing"
)

func lookupOf(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestExpandHeaders(t *testing.T) {
	env := lookupOf(map[string]string{
		"KEY":   "sk-0123456789",
		"ORG":   "org",
		"_X1":   "x",
		"EMPTY": "",
		"NL":    "abc\n",
	})
	tests := []struct {
		value string
		want  string
		err   string // a substring of the error; "" for none
	}{
		{"Bearer ${KEY}", "Bearer sk-0123456789", ""},
		{"${ORG}/${KEY}/${ORG}", "org/sk-0123456789/org", ""},
		{"${_X1}", "x", ""},
		{"plain text", "plain text", ""},
		{"cost $$5 and $${KEY}", "cost $5 and ${KEY}", ""},
		{"", "", ""},
		{"$KEY", "", "the $ at byte 0 does not begin ${NAME}"},
		{"Bearer $", "", "the $ at byte 7 does not begin ${NAME}"},
		{"Bearer ${KEY", "", "the $ at byte 7 opens ${ without a closing }"},
		{"${}", "", "does not name a variable"},
		{"${1KEY}", "", "does not name a variable"},
		{"${KEY:-default}", "", "does not name a variable"},
		{"${KEY-X}", "", "does not name a variable"},
		{"${ KEY }", "", "does not name a variable"},
		{"Bearer ${MISSING}", "", "target.headers.H: ${MISSING} is not set in the environment"},
		{"Bearer ${EMPTY}", "", "target.headers.H: ${EMPTY} is empty in the environment"},
		{"Bearer ${NL}", "", "target.headers.H: the value of ${NL} holds a line break or a NUL byte"},
		{"token ${GITHUB_TOKEN}", "", "target.headers.H: ${GITHUB_TOKEN} is never sent"},
		{"${INPUT_GITHUB_TOKEN}", "", "${INPUT_GITHUB_TOKEN} is never sent"},
		{"${actions_runtime_token}", "", "${actions_runtime_token} is never sent"},
	}
	for _, tt := range tests {
		got, err := Target{Headers: map[string]string{"H": tt.value}}.ExpandHeaders(env)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q: error %v", tt.value, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: error %v, want one with %q", tt.value, err, tt.err)
		case tt.err == "" && got.Values["H"] != tt.want:
			t.Errorf("%q expands to %q, want %q", tt.value, got.Values["H"], tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "sk-0123456789") {
			t.Errorf("%q: error %q holds a value", tt.value, err)
		}
	}
}

// The errors are typed, and a syntax error locates the $ without quoting
// the value, which may be a literal key.
func TestExpandHeadersErrorTypes(t *testing.T) {
	_, err := Target{Headers: map[string]string{"Authorization": "Bearer ${OPENAI_API_KEY}"}}.ExpandHeaders(lookupOf(nil))
	var ve *HeaderVarError
	if !errors.As(err, &ve) || ve.Var != "OPENAI_API_KEY" || ve.Header != "Authorization" || ve.Empty {
		t.Errorf("err = %#v, want a *HeaderVarError for OPENAI_API_KEY in Authorization", err)
	}
	if want := "target.headers.Authorization: ${OPENAI_API_KEY} is not set in the environment"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	_, err = Target{Headers: map[string]string{"X-Key": "literal-secret-$abc"}}.ExpandHeaders(lookupOf(nil))
	var se *HeaderSyntaxError
	if !errors.As(err, &se) || se.Offset != 15 {
		t.Fatalf("err = %#v, want a *HeaderSyntaxError at 15", err)
	}
	if strings.Contains(err.Error(), "literal-secret") {
		t.Errorf("err %q quotes the value", err)
	}
}

// Expansion leaves the config as written, and no headers give nil values.
func TestExpandHeadersKeepsTemplate(t *testing.T) {
	tg := Target{Headers: map[string]string{"Authorization": "Bearer ${KEY}"}}
	got, err := tg.ExpandHeaders(lookupOf(map[string]string{"KEY": "sk-0123456789"}))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Headers["Authorization"] != "Bearer ${KEY}" || got.Values["Authorization"] != "Bearer sk-0123456789" {
		t.Errorf("config %q, sent %q", tg.Headers["Authorization"], got.Values["Authorization"])
	}
	none, err := Target{}.ExpandHeaders(lookupOf(nil))
	if err != nil || none.Values != nil || none.HasSecrets() {
		t.Errorf("no headers: %+v, %v", none, err)
	}
}

// Redact replaces the variables' values, longest first, and leaves values
// too short to be credentials (and literal text) alone.
func TestExpandedHeadersRedact(t *testing.T) {
	tg := Target{Headers: map[string]string{
		"Authorization": "Bearer ${KEY}",
		"X-Long":        "${LONG}",
		"X-Org":         "${ORG}",
		"X-Literal":     "literal-value-123",
	}}
	h, err := tg.ExpandHeaders(lookupOf(map[string]string{"KEY": "sk-01234567", "LONG": "sk-01234567-and-more", "ORG": "42"}))
	if err != nil {
		t.Fatal(err)
	}
	in := "bad key sk-01234567-and-more, sk-01234567; org 42; literal-value-123"
	want := "bad key [redacted], [redacted]; org 42; literal-value-123"
	if got := h.Redact(in); got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	if got := h.Names(); strings.Join(got, ",") != "Authorization,X-Literal,X-Long,X-Org" {
		t.Errorf("Names = %v", got)
	}
	var zero ExpandedHeaders
	if zero.Redact(in) != in || zero.Redactor() != nil {
		t.Error("the zero ExpandedHeaders redacts")
	}
	if h.Redactor() == nil || h.Redactor()(in) != want {
		t.Error("Redactor is not Redact")
	}
}

// A key a server echoes URL-escaped (a redirect's ?k=abc%2Bdef%2F…, a
// path segment) is redacted as the key is; WithSecrets adds values to
// redact, in the same forms, and leaves h as it was.
func TestExpandedHeadersRedactEscaped(t *testing.T) {
	const key = "abc+def/ghi==xyz"
	tg := Target{Headers: map[string]string{"Authorization": "Bearer ${KEY}"}}
	h, err := tg.ExpandHeaders(lookupOf(map[string]string{"KEY": key}))
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"/x?k=abc%2Bdef%2Fghi%3D%3Dxyz":  "/x?k=" + Redacted, // url.QueryEscape
		"/x/abc+def%2Fghi==xyz/y":        "/x/" + Redacted + "/y",
		"raw abc+def/ghi==xyz":           "raw " + Redacted,
		"/x?k=abc%2Bdef%2Fghi%3D%3Dxy-z": "/x?k=abc%2Bdef%2Fghi%3D%3Dxy-z",
	} {
		if got := h.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}

	const literal = "sk literal/42"
	w := h.WithSecrets(literal, "short")
	if got := w.Redact("a sk+literal%2F42 b sk%20literal%2F42 c short"); got != "a "+Redacted+" b "+Redacted+" c short" {
		t.Errorf("WithSecrets: Redact = %q", got)
	}
	if h.Redact(literal) != literal {
		t.Error("WithSecrets changed the ExpandedHeaders it was called on")
	}
	if !(ExpandedHeaders{}).WithSecrets(literal).HasSecrets() {
		t.Error("WithSecrets on no headers redacts nothing")
	}
}

func TestHeaderVars(t *testing.T) {
	got, err := HeaderVars("H", "${A} ${B} $$ ${A}")
	if err != nil || strings.Join(got, ",") != "A,B" {
		t.Errorf("HeaderVars = %v, %v; want [A B]", got, err)
	}
}

// validate refuses a malformed template at its header's path, and warns of
// a variable this environment lacks without reading its value into output.
func TestValidateHeaderTemplates(t *testing.T) {
	t.Setenv("PERFGATE_TEST_SET_KEY", "sk-never-printed-0000")
	yaml := `
target:
  headers:
    Authorization: "Bearer ${PERFGATE_TEST_SET_KEY}"
    X-Bad: "Bearer $PERFGATE_TEST_SET_KEY"
    X-Unset: "${PERFGATE_TEST_SURELY_UNSET_VAR}"
    X-Gh: "${GH_TOKEN}"
scenarios:
  - name: s
    synth: {requests: 1, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: closed, concurrency: 1}
`
	_, err := Parse([]byte(yaml), "perfgate.yaml")
	var errs *Errors
	if !errors.As(err, &errs) || len(errs.Problems) != 2 {
		t.Fatalf("Parse = %v, want two problems", err)
	}
	for i, want := range []struct{ path, msg string }{
		{"target.headers.X-Bad", "the $ at byte 7 does not begin ${NAME}"},
		{"target.headers.X-Gh", "${GH_TOKEN} is never sent"},
	} {
		if p := errs.Problems[i]; p.Path != want.path || !strings.Contains(p.Msg, want.msg) {
			t.Errorf("problem %d = %v, want %s: ...%s...", i, p, want.path, want.msg)
		}
	}

	good := strings.Replace(yaml, `X-Bad: "Bearer $PERFGATE_TEST_SET_KEY"`, `X-Cost: "$$5"`, 1)
	good = strings.Replace(good, `X-Gh: "${GH_TOKEN}"`, "", 1)
	cfg, err := Parse([]byte(good), "perfgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, w := range cfg.Warnings {
		if strings.HasPrefix(w.Path, "target.headers") {
			warned = append(warned, w.Path+": "+w.Msg)
		}
		if strings.Contains(w.Error(), "sk-never-printed") {
			t.Errorf("warning %q holds a value", w)
		}
	}
	want := "target.headers.X-Unset: ${PERFGATE_TEST_SURELY_UNSET_VAR} is not set in this environment (or is empty); a run refuses to start without it"
	if len(warned) != 1 || warned[0] != want {
		t.Errorf("header warnings = %q, want [%q]", warned, want)
	}
}
