// Package safeiotest checks, for the tests of every package that reads a
// file it is handed, that the reader refuses what is not a regular file: a
// named pipe with no writer (which would block a plain open forever), a
// device that never ends (/dev/zero, which would exhaust memory) and a
// directory.
package safeiotest

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RefusesWhatIsNotAFile calls read on a named pipe called name (in a
// temporary directory, with no writer), on /dev/zero and on a directory,
// and fails t unless each returns at once (within 10 s) an error that names
// the path and says it is not a regular file.
func RefusesWhatIsNotAFile(t *testing.T, name string, read func(path string) error) {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, name)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, path := range []string{fifo, "/dev/zero", dir} {
		done := make(chan error, 1)
		go func() { done <- read(path) }()
		select {
		case err := <-done:
			switch {
			case err == nil:
				t.Errorf("reading %s succeeded, want a refusal", path)
			case !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a regular file"):
				t.Errorf("reading %s = %q, want an error that names it and says it is not a regular file", path, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %s still blocked after 10 s", path)
		}
	}
}
