package textsafe

import (
	"io"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Writer is an io.Writer that cleans everything written through it before
// it reaches the stream under it (a terminal, a runner's log):
//
//   - every control and format character but newline and tab becomes a
//     space (escape sequences lose their ESC, a carriage return can no
//     longer overwrite a line), U+2060 excepted (see wordJoiner);
//   - a line whose first characters after blanks are "::" gets a space
//     between the colons (": :"), so the runner does not read it as a
//     workflow command;
//   - "##[" anywhere in a line, the runner's older command syntax, becomes
//     "## [".
//
// It cleans as it goes, keeping back at most an incomplete UTF-8 sequence
// and a ':' that begins a line until the next Write or Flush; call Flush
// when done. A Writer is safe for concurrent use: each Write is cleaned and
// written whole. Perfgate's own workflow commands go through Commands.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte // what the current Write sends on
	partial []byte // an incomplete UTF-8 sequence the last Write ended with
	atStart bool   // only blanks written since the last newline
	colon   bool   // a ':' that began the line, held back
	hashes  int    // '#' written in a row just before
}

// NewWriter returns a Writer cleaning what it writes to w. A w that is
// already a *Writer is returned as is, so wrapping twice cleans once.
func NewWriter(w io.Writer) *Writer {
	if tw, ok := w.(*Writer); ok {
		return tw
	}
	return &Writer{w: w, atStart: true}
}

// Write cleans p and writes it to the stream under w. It returns len(p) when
// the stream took everything (the cleaned text may be longer than p).
func (w *Writer) Write(p []byte) (int, error) {
	return w.write(p, false)
}

// Flush writes what w holds back: a ':' alone at the start of the last line,
// and an incomplete UTF-8 sequence (as U+FFFD).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = w.buf[:0]
	if len(w.partial) > 0 {
		w.rune(utf8.RuneError)
		w.partial = nil
	}
	if w.colon {
		w.buf = append(w.buf, ':')
		w.colon, w.atStart = false, false
	}
	return w.send()
}

// Unwrap returns the stream under w, for what must see it as it is: whether
// it is a terminal, and perfgate's own in-place redraw of a progress line,
// whose text is cleaned with Line before it is written.
func (w *Writer) Unwrap() io.Writer { return w.w }

// Commands returns a writer for perfgate's own workflow commands on the
// stream of w: each Write is one command line ("::group::title\n"), whose
// values the caller has made single-line (go-githubactions escapes newlines
// as %0A; titles go through Line). The Write's first line may begin with
// "::"; everything else is cleaned as by w, so a value that slipped a
// newline in still cannot start a command of its own. The command starts a
// line of its own: if w is within a line, a newline is written first. For a
// w that is not a *Writer (a test's buffer), Commands returns w.
func Commands(w io.Writer) io.Writer {
	if tw, ok := w.(*Writer); ok {
		return commandWriter{tw}
	}
	return w
}

// Unwrap returns the stream under w when w is a *Writer, and w otherwise.
func Unwrap(w io.Writer) io.Writer {
	if tw, ok := w.(*Writer); ok {
		return tw.w
	}
	return w
}

// commandWriter writes perfgate's own workflow commands through a Writer.
type commandWriter struct{ w *Writer }

func (c commandWriter) Write(p []byte) (int, error) { return c.w.write(p, true) }

// write cleans p into w.buf and sends it; command lets p's first line begin
// with "::".
func (w *Writer) write(p []byte, command bool) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = w.buf[:0]
	data := p
	switch {
	case len(w.partial) > 0 && command:
		// The last Write ended within a UTF-8 sequence, which a command
		// cannot complete: it ends as U+FFFD on its own line, before the
		// command's, so that it cannot spoil the command's "::".
		w.rune(utf8.RuneError)
		w.partial = nil
	case len(w.partial) > 0:
		// The last Write ended within a UTF-8 sequence: decode on from it.
		data = append(w.partial, p...)
		w.partial = nil
	}
	if command {
		if w.colon {
			w.buf = append(w.buf, ':')
			w.colon, w.atStart = false, false
		}
		if !w.atStart {
			w.buf = append(w.buf, '\n')
		}
		w.atStart, w.hashes = false, 0
	}
	for len(data) > 0 {
		if data[0] < utf8.RuneSelf {
			w.rune(rune(data[0]))
			data = data[1:]
			continue
		}
		if !utf8.FullRune(data) {
			w.partial = append([]byte(nil), data...)
			break
		}
		r, size := utf8.DecodeRune(data)
		w.rune(r)
		data = data[size:]
	}
	if err := w.send(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// send writes w.buf to the stream under w.
func (w *Writer) send() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	return err
}

// rune appends r, cleaned, to w.buf.
func (w *Writer) rune(r rune) {
	if r != '\n' && r != '\t' && r != wordJoiner && unsafe(r) {
		r = ' '
	}
	if r == '\n' {
		if w.colon {
			w.buf = append(w.buf, ':')
			w.colon = false
		}
		w.buf = append(w.buf, '\n')
		w.atStart, w.hashes = true, 0
		return
	}
	if w.atStart {
		switch {
		case w.colon && r == ':':
			// "::" begins the line: a workflow command, but not ours.
			w.buf = append(w.buf, ": :"...)
			w.colon, w.atStart = false, false
			return
		case w.colon:
			w.buf = append(w.buf, ':')
			w.colon, w.atStart = false, false
		case r == ':':
			w.colon = true
			return
		case unicode.IsSpace(r) || r == wordJoiner:
			w.buf = utf8.AppendRune(w.buf, r)
			return
		default:
			w.atStart = false
		}
	}
	if r == '[' && w.hashes >= 2 {
		w.buf = append(w.buf, ' ')
	}
	if r == '#' {
		w.hashes++
	} else {
		w.hashes = 0
	}
	w.buf = utf8.AppendRune(w.buf, r)
}
