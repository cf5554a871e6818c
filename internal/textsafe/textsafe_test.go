package textsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// hostile is what a model id, an engine version or a server's error text
// could hold to take over a terminal or a runner's log.
const hostile = "m\n::error title=x::pwned\n::set-output name=verdict::pass\r\x1b[2J\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\ \u202egnp.exe\u200b\u2028\u2029\x7f\u0085\u009b31m ##[set-env name=X;]y"

func TestLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a\nb\tc\rd", "a b c d"},
		{"\x1b[2Jx", " [2Jx"},
		{"\u202eabc\u2066", " abc "},
		{"zero\u200bwidth\u2060joiner\ufeff", "zero width joiner "},
		{"sep\u2028ara\u2029tors", "sep ara tors"},
		{"del\x7f c1\u0085\u009b", "del  c1  "},
		{":\u200b:error", ": :error"},
		{"bad \xff utf8", "bad \ufffd utf8"},
	}
	for _, tt := range tests {
		if got := Line(tt.in); got != tt.want {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLines(t *testing.T) {
	in := "one\r\ntwo\tcols\x1b[31m\rthree\u202e"
	want := "one\ntwo\tcols [31m three "
	if got := Lines(in); got != want {
		t.Errorf("Lines(%q) = %q, want %q", in, got, want)
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven runes", 10, "eleven ru…"},
		{"é\né\né", 3, "é …"},
		{"x", 0, "x"},
		{"xy", 0, "…"},
	}
	for _, tt := range tests {
		if got := Cut(tt.in, tt.n); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestWriter(t *testing.T) {
	tests := []struct {
		name string
		in   []string // successive writes
		want string
	}{
		{"plain", []string{"hello\nworld\n"}, "hello\nworld\n"},
		{"tabs and newlines kept", []string{"a\tb\n"}, "a\tb\n"},
		{"controls", []string{"a\rb\x1b[2J\x00\x7f\u009b\n"}, "a b [2J   \n"},
		{"format characters", []string{"\u202eevil\u200b\u2028\n"}, " evil  \n"},
		{"word joiner kept", []string{"@\u2060user\n"}, "@\u2060user\n"},
		{"command at start", []string{"::error::x\n"}, ": :error::x\n"},
		{"command after blanks", []string{"  \t::warning::x\n"}, "  \t: :warning::x\n"},
		{"command after a stripped control", []string{"\r::error::x\n"}, " : :error::x\n"},
		{"command after newline", []string{"model m\n::set-output name=v::pass\n"}, "model m\n: :set-output name=v::pass\n"},
		{"colons within a line", []string{"a::b :: c\n"}, "a::b :: c\n"},
		{"one colon", []string{":x\n:\n"}, ":x\n:\n"},
		{"command split across writes", []string{"ok\n:", ":error::x\n"}, "ok\n: :error::x\n"},
		{"blanks then command across writes", []string{"  ", ":", ":", "x"}, "  : :x"},
		{"old syntax", []string{"text ##[set-env name=X;]y\n"}, "text ## [set-env name=X;]y\n"},
		{"old syntax across writes", []string{"#", "#", "[x]\n"}, "## [x]\n"},
		{"one hash", []string{"#[x] #1 [y]\n"}, "#[x] #1 [y]\n"},
		{"rune split across writes", []string{"caf\xc3", "\xa9\n"}, "café\n"},
		{"C1 split across writes", []string{"a\xc2", "\x9b31m\n"}, "a 31m\n"},
		{"invalid UTF-8", []string{"a\xffb\n"}, "a\ufffdb\n"},
		{"held colon flushed", []string{"x\n:"}, "x\n:"},
		{"incomplete rune flushed", []string{"x\xe2\x80"}, "x\ufffd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewWriter(&b)
			for _, s := range tt.in {
				n, err := w.Write([]byte(s))
				if err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v, want %d, nil", s, n, err, len(s))
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatalf("Flush() = %v", err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("writing %q = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCommands(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	c := Commands(w)
	write := func(w interface{ Write([]byte) (int, error) }, s string) {
		t.Helper()
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	write(c, "::group::starting the stack\n")
	write(w, "    serving m\n::error::pwned\n")
	write(w, "no newline")
	write(c, "::error::perfgate: bad\x1b[2J\n::set-output name=v::pass\n")
	write(c, "::endgroup::\n")
	want := "::group::starting the stack\n" +
		"    serving m\n: :error::pwned\n" +
		"no newline\n" +
		"::error::perfgate: bad [2J\n: :set-output name=v::pass\n" +
		"::endgroup::\n"
	if got := b.String(); got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
	if got := Commands(&b); got != &b {
		t.Errorf("Commands(buffer) = %T, want the buffer itself", got)
	}
	if got := NewWriter(w); got != w {
		t.Errorf("NewWriter(*Writer) wrapped it again")
	}
	if got := Unwrap(w); got != &b {
		t.Errorf("Unwrap(w) = %T, want the buffer", got)
	}
}

// checkSafe fails t when out holds a character or a line that must not
// reach a terminal or a runner's log.
func checkSafe(t *testing.T, in, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") {
			t.Errorf("writing %q: line %q begins a workflow command", in, line)
		}
		if strings.Contains(line, "##[") {
			t.Errorf("writing %q: line %q holds ##[", in, line)
		}
		for _, r := range line {
			if r != '\t' && r != wordJoiner && unsafe(r) {
				t.Errorf("writing %q: line %q holds %U", in, line, r)
			}
		}
	}
	if !utf8.ValidString(out) {
		t.Errorf("writing %q: output %q is not UTF-8", in, out)
	}
}

func TestWriterHostile(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	// Every split of the hostile text into two writes.
	for i := 0; i <= len(hostile); i++ {
		b.Reset()
		w.Write([]byte(hostile[:i]))
		w.Write([]byte(hostile[i:]))
		w.Flush()
		checkSafe(t, hostile, b.String())
	}
}

func FuzzWriter(f *testing.F) {
	f.Add([]byte(hostile), 3)
	f.Add([]byte("::error::x"), 1)
	f.Add([]byte(" \xc2\x85::x"), 2)
	f.Add([]byte("#\n#[x"), 1)
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		var b bytes.Buffer
		w := NewWriter(&b)
		if split < 0 || split > len(in) {
			split = len(in) / 2
		}
		w.Write(in[:split])
		w.Write(in[split:])
		w.Flush()
		checkSafe(t, string(in), b.String())
		if l := Line(string(in)); strings.ContainsFunc(l, unsafe) || strings.Contains(l, "\n") {
			t.Errorf("Line(%q) = %q, holds an unsafe character", in, l)
		}
	})
}

// A Write that ended within a UTF-8 sequence cannot spoil the next command:
// the sequence ends as U+FFFD on its line, and the command starts its own.
func TestCommandsAfterAPartialRune(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	if _, err := w.Write([]byte("model \xe2\x82")); err != nil {
		t.Fatal(err)
	}
	if _, err := Commands(w).Write([]byte("::notice::perfgate: hi\n")); err != nil {
		t.Fatal(err)
	}
	want := "model \uFFFD\n::notice::perfgate: hi\n"
	if got := b.String(); got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
}

// JSON escapes what a Writer would change, losslessly: the JSON decodes to
// the same value, and a Writer passes it on byte for byte.
func TestJSON(t *testing.T) {
	values := []string{
		"plain",
		"family \U0001F468\u200d\U0001F469 with a joiner",
		"soft\u00adhyphen, bidi \u202eevil\u202c, nel \u0085, del \x7f",
		"##[set-env name=x]##[ and ###[",
		"tag \U000E0041 character",
		"line\nbreak\r::error::x\t",
		"a word\u2060joiner",
	}
	for _, v := range values {
		for _, indent := range []bool{false, true} {
			var raw []byte
			var err error
			if indent {
				raw, err = json.MarshalIndent(map[string]string{v: v}, "", "  ")
			} else {
				raw, err = json.Marshal(map[string]string{v: v})
			}
			if err != nil {
				t.Fatal(err)
			}
			got := JSON(raw)
			var back map[string]string
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("JSON(%q) = %q, not JSON: %v", raw, got, err)
			}
			if back[v] != v {
				t.Errorf("JSON(%q) decodes to %q, want %q", raw, back[v], v)
			}
			var b bytes.Buffer
			w := NewWriter(&b)
			if _, err := w.Write(got); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != string(got) {
				t.Errorf("a Writer changed JSON(%q):\n got %q\nwant %q", raw, b.String(), got)
			}
		}
	}
	if in := []byte(`{"a":1}`); &JSON(in)[0] != &in[0] {
		t.Error("JSON copied JSON that needed no change")
	}
}

// Markdown escapes syntax, and no mention, issue reference or address
// stays live.
func TestMarkdown(t *testing.T) {
	got := Markdown("v1 @org/team #12 see https://evil.example/x or www.evil.example [x](y) `c`", 200)
	for _, live := range []string{"@org", "#12", "https://", "www.evil", "[x](y)", "`c`"} {
		if strings.Contains(got, live) {
			t.Errorf("Markdown left %q live: %q", live, got)
		}
	}
	if want := "v1 \\@\u2060org/team \\#\u20601"; !strings.HasPrefix(got, want) {
		t.Errorf("Markdown = %q, want it to start %q", got, want)
	}
}
