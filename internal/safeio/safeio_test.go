package safeio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpenRegularRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(plain, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(plain, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string // "" for success
	}{
		{plain, ""},
		{link, ""}, // a symlink to a regular file is that file
		{fifo, "a named pipe"},
		{dir, "a directory"},
		{"/dev/zero", "a character device"},
		{filepath.Join(dir, "missing"), "no such file"},
	}
	for _, tt := range tests {
		f, err := OpenRegular(tt.path) // a FIFO with no writer must not block here
		if tt.want == "" {
			if err != nil {
				t.Errorf("OpenRegular(%s) = %v, want success", tt.path, err)
				continue
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil || string(data) != "hello\n" {
				t.Errorf("read %s = %q, %v", tt.path, data, err)
			}
			continue
		}
		if err == nil {
			f.Close()
			t.Errorf("OpenRegular(%s) succeeded, want an error with %q", tt.path, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("OpenRegular(%s) = %q, want it to name the path and say %q", tt.path, err, tt.want)
		}
		if tt.want != "no such file" && !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenRegular(%s) = %v, want errors.Is ErrNotRegular", tt.path, err)
		}
	}
}

func TestReadFileLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(path, 100); err != nil || len(data) != 100 {
		t.Errorf("ReadFile(limit 100) = %d bytes, %v; want 100, nil", len(data), err)
	}
	_, err := ReadFile(path, 99)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 99 || tl.What != path {
		t.Fatalf("ReadFile(limit 99) = %v, want a *TooLargeError for %s at 99", err, path)
	}
	if got, want := err.Error(), path+" is larger than 99 bytes, the most perfgate reads"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

func TestReadAllStopsAtTheLimit(t *testing.T) {
	// An endless source: ReadAll must stop, not exhaust memory.
	data, err := ReadAll(zeros{}, 1<<20, "the body")
	var tl *TooLargeError
	if !errors.As(err, &tl) || len(data) != 1<<20 {
		t.Fatalf("ReadAll(endless) = %d bytes, %v; want 1 MiB and a *TooLargeError", len(data), err)
	}
	if !strings.Contains(err.Error(), "the body is larger than 1 MiB") {
		t.Errorf("error = %q", err)
	}
}

func TestLimitReader(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10} {
		r := LimitReader(strings.NewReader(strings.Repeat("a", n)), 10, "x")
		data, err := io.ReadAll(r)
		if err != nil || len(data) != n {
			t.Errorf("LimitReader(%d bytes, limit 10) = %d, %v; want all of it", n, len(data), err)
		}
	}
	r := LimitReader(zeros{}, 10, "the stream")
	data, err := io.ReadAll(r)
	var tl *TooLargeError
	if !errors.As(err, &tl) || len(data) != 10 {
		t.Errorf("LimitReader(endless, 10) = %d bytes, %v; want 10 and a *TooLargeError", len(data), err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{32 << 20: "32 MiB", 64 << 10: "64 KiB", 1 << 30: "1 GiB", 1000: "1000 bytes", 1536: "1536 bytes"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestBuffer(t *testing.T) {
	b := &Buffer{Limit: 10, What: "the output"}
	if n, err := b.Write([]byte("12345")); n != 5 || err != nil {
		t.Fatalf("Write(5) = %d, %v", n, err)
	}
	n, err := b.Write([]byte("6789012"))
	var tl *TooLargeError
	if n != 5 || !errors.As(err, &tl) || b.String() != "1234567890" {
		t.Fatalf("Write past the limit = %d, %v; holds %q", n, err, b.String())
	}
	if n, err := b.Write([]byte("x")); n != 0 || err == nil {
		t.Errorf("Write when full = %d, %v; want 0 and an error", n, err)
	}
	if !b.Truncated() {
		t.Error("Truncated() = false after a write past the limit")
	}
	d := &Buffer{Limit: 4, Discard: true}
	if n, err := d.Write([]byte("123456")); n != 6 || err != nil || d.String() != "1234" || !d.Truncated() {
		t.Errorf("Discard: Write = %d, %v; holds %q, truncated %v", n, err, d.String(), d.Truncated())
	}
	// A copy from an endless source stops at the limit.
	b = &Buffer{Limit: 1 << 20, What: "stdout"}
	if _, err := io.Copy(b, zeros{}); !errors.As(err, &tl) || b.Len() != 1<<20 {
		t.Errorf("io.Copy(endless) = %v with %d bytes held", err, b.Len())
	}
}

func TestReadLine(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 10) + "\r\n" + strings.Repeat("y", 11) + "\nlast"
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	for _, want := range []string{"short\n", strings.Repeat("x", 10) + "\r\n"} {
		if line, err := ReadLine(br, 10); string(line) != want || err != nil {
			t.Fatalf("ReadLine = %q, %v; want %q", line, err, want)
		}
	}
	if _, err := ReadLine(br, 10); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("ReadLine(11 bytes, limit 10) = %v, want ErrLineTooLong", err)
	}
	br = bufio.NewReaderSize(strings.NewReader("last"), 16)
	if line, err := ReadLine(br, 10); string(line) != "last" || err != io.EOF {
		t.Errorf("ReadLine(last line) = %q, %v", line, err)
	}
	// An endless line is refused once past the limit, not read whole.
	br = bufio.NewReaderSize(zeros{}, 16)
	if _, err := ReadLine(br, 1<<20); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("ReadLine(endless) = %v", err)
	}
}
