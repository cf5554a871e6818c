package safeiotest

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
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

// Environment of a child started by WithFileSizeLimit: the test it is to run
// the write of, and the parent's directory.
const (
	childEnv = "PERFGATE_SAFEIOTEST_CHILD"
	dirEnv   = "PERFGATE_SAFEIOTEST_DIR"
	marker   = "safeiotest-write-returned: "
)

// WithFileSizeLimit runs write(dir) in a child process (this test binary,
// running this test again) in which no file may grow past limit bytes
// (RLIMIT_FSIZE): a write past it fails midway with EFBIG, "file too
// large", as a write to a full disk fails with ENOSPC. It returns write's
// error as text, "" for none. The child runs the test from its start, so
// what the test does before calling WithFileSizeLimit must be harmless to do
// twice; dir is the parent's, where the parent left the files to check.
// In the child the test ends, skipped, once write returns.
func WithFileSizeLimit(t *testing.T, limit uint64, dir string, write func(dir string) error) string {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		signal.Ignore(syscall.SIGXFSZ) // else the write's signal kills the child
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatalf("getrlimit: %v", err)
		}
		lim.Cur = limit
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatalf("setrlimit: %v", err)
		}
		text := ""
		if err := write(os.Getenv(dirEnv)); err != nil {
			text = err.Error()
		}
		fmt.Printf("\n%s%s\n", marker, strconv.Quote(text))
		t.SkipNow()
	}
	var pattern []string
	for _, part := range strings.Split(t.Name(), "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(pattern, "/"), "-test.count=1", "-test.v=true")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name(), dirEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child running %s under a file size limit failed: %v\n%s", t.Name(), err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if q, ok := strings.CutPrefix(line, marker); ok {
			text, err := strconv.Unquote(q)
			if err != nil {
				t.Fatalf("the child's answer %q: %v", q, err)
			}
			return text
		}
	}
	t.Fatalf("the child running %s under a file size limit did not say what its write returned:\n%s", t.Name(), out)
	return ""
}
