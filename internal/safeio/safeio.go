package safeio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is wrapped by the error of OpenRegular for a path that is not
// a regular file.
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError says a read passed its limit.
type TooLargeError struct {
	// What names what was read: a file's path, "the response body", ...
	What string
	// Limit is the most that may be read, in bytes.
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most perfgate reads", e.What, FormatBytes(e.Limit))
}

// FormatBytes writes n in the largest binary unit that divides it evenly:
// "32 MiB", "64 KiB", "1000 bytes".
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// OpenRegular opens path for reading and refuses anything that is not a
// regular file. It opens without blocking (a FIFO with no writer would block
// a plain open forever) and checks the opened file itself, so the check and
// the read are of the same file.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (it is %s)", ErrNotRegular, describeMode(st.Mode()))}
	}
	// O_NONBLOCK means nothing to a regular file's reads; clear it anyway so
	// the descriptor behaves like any other.
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = syscall.SetNonblock(int(fd), false) })
	}
	return f, nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}

// ReadFile reads the regular file at path, refusing one larger than limit
// bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, limit, path)
}

// ReadAll reads r to its end, or fails with a *TooLargeError naming what once
// more than limit bytes arrive. It never holds more than limit+1 bytes.
func ReadAll(r io.Reader, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return data, err
	}
	if int64(len(data)) > limit {
		return data[:limit], &TooLargeError{What: what, Limit: limit}
	}
	return data, nil
}

// LimitReader returns a reader of r that fails with a *TooLargeError naming
// what once more than limit bytes have been read from it, rather than ending
// quietly the way io.LimitReader does: a reader of JSON lines then reports a
// file that is too large instead of a truncated last line.
func LimitReader(r io.Reader, limit int64, what string) io.Reader {
	return &limitReader{r: r, left: limit, limit: limit, what: what}
}

type limitReader struct {
	r           io.Reader
	left, limit int64
	what        string
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &TooLargeError{What: l.what, Limit: l.limit}
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), &TooLargeError{What: l.what, Limit: l.limit}
	}
	return n, err
}

// Buffer collects bytes and never holds more than Limit of them. A Write
// past the limit keeps what fits and fails with a *TooLargeError naming
// What, so that a copy into it (io.Copy, Docker's stdcopy, a command's
// output) stops there; with Discard set, it drops the rest and succeeds
// instead, so that the writer goes on (a command's standard error, of which
// only the first line matters). Truncated says whether anything was dropped.
// It has no ReadFrom, on purpose: io.Copy would take that way round Write,
// and its limit.
type Buffer struct {
	Limit   int64
	What    string
	Discard bool

	buf       bytes.Buffer
	truncated bool
}

// Write appends p, or as much of it as fits under Limit.
func (b *Buffer) Write(p []byte) (int, error) {
	room := b.Limit - int64(b.buf.Len())
	if int64(len(p)) <= room {
		return b.buf.Write(p)
	}
	n, _ := b.buf.Write(p[:max(room, 0)])
	b.truncated = true
	if b.Discard {
		return len(p), nil
	}
	return n, &TooLargeError{What: b.What, Limit: b.Limit}
}

// Truncated reports whether a Write went past Limit.
func (b *Buffer) Truncated() bool { return b.truncated }

// Bytes returns what was written; it aliases the buffer.
func (b *Buffer) Bytes() []byte { return b.buf.Bytes() }

// String returns what was written.
func (b *Buffer) String() string { return b.buf.String() }

// Len is how many bytes the buffer holds.
func (b *Buffer) Len() int { return b.buf.Len() }

// ErrLineTooLong is ReadLine's error for a line past its limit.
var ErrLineTooLong = errors.New("line too long")

// ReadLine reads one line from br, its ending ("\n" or "\r\n") included,
// holding at most limit bytes of it and the ending: past that it fails with
// ErrLineTooLong, having read no more than limit + 2 bytes beyond the
// reader's buffer. At the end of the input it returns the last line (maybe
// empty) and io.EOF.
func ReadLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > limit+len("\r\n") {
			return nil, ErrLineTooLong
		}
		line = append(line, frag...)
		if err != bufio.ErrBufferFull {
			if len(bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))) > limit {
				return nil, ErrLineTooLong
			}
			return line, err
		}
	}
}
