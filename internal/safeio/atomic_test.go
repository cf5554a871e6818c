package safeio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/safeio/safeiotest"
)

// leftovers lists the temporary files left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newFileMode is the mode a new file created with perm gets here (perm less
// the umask), found by creating one.
func newFileMode(t *testing.T, perm fs.FileMode) fs.FileMode {
	t.Helper()
	path := filepath.Join(t.TempDir(), "probe")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	if err := WriteFile(path, []byte("first\n"), 0o644); err != nil {
		t.Fatalf("WriteFile(new) = %v, want nil", err)
	}
	if got := readString(t, path); got != "first\n" {
		t.Errorf("content = %q, want %q", got, "first\n")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Mode().Perm(), newFileMode(t, 0o644); got != want {
		t.Errorf("mode of a new file = %v, want %v (0644 less the umask)", got, want)
	}
	// An existing file keeps its mode, as with os.WriteFile.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("second\n"), 0o644); err != nil {
		t.Fatalf("WriteFile(existing) = %v, want nil", err)
	}
	if got := readString(t, path); got != "second\n" {
		t.Errorf("content = %q, want %q", got, "second\n")
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode of a replaced file = %v (%v), want 0600", st.Mode().Perm(), err)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestWriteFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{
		filepath.Join(dir, "missing", "result.json"), // no such directory
		dir, // a directory
		dir + "/",
	} {
		err := WriteFile(path, []byte("x"), 0o644)
		if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(path, "/")) {
			t.Errorf("WriteFile(%s) = %v, want an error naming it", path, err)
		}
	}
}

// A write that fails midway (here past a file size limit, as on a full
// disk) leaves the old file whole, or no file where there was none, and no
// temporary file.
func TestWriteFileFailingMidwayLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	old, fresh := filepath.Join(dir, "old.json"), filepath.Join(dir, "fresh.json")
	const before = "the old content\n"
	if err := os.WriteFile(old, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	big := []byte(strings.Repeat("new content\n", 2000)) // 24 KB
	got := safeiotest.WithFileSizeLimit(t, 8<<10, dir, func(dir string) error {
		return errors.Join(
			WriteFile(filepath.Join(dir, "old.json"), big, 0o644),
			WriteFile(filepath.Join(dir, "fresh.json"), big, 0o644))
	})
	if !strings.Contains(got, old) || !strings.Contains(got, fresh) || !strings.Contains(got, "file too large") {
		t.Errorf("WriteFile past the size limit = %q, want errors naming %s and %s, file too large", got, old, fresh)
	}
	if got := readString(t, old); got != before {
		t.Errorf("after a failed write %s holds %d bytes, want the old %q", old, len(got), before)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after a failed write %s: stat = %v, want no file", fresh, err)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestAtomicFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "records.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Abort: the old file stays.
	a, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("half a rec")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != "old\n" {
		t.Errorf("before Commit %s = %q, want %q", path, got, "old\n")
	}
	a.Abort()
	a.Abort() // twice is harmless
	if got := readString(t, path); got != "old\n" {
		t.Errorf("after Abort %s = %q, want %q", path, got, "old\n")
	}
	if err := a.Commit(); err == nil {
		t.Errorf("Commit after Abort = nil, want an error")
	}

	// A failed sync: the old file stays, the temporary file goes.
	syncFile = func(*os.File) error { return syscall.EIO }
	a, err = Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("new\n"))
	err = a.Commit()
	syncFile = (*os.File).Sync
	if err == nil || !strings.Contains(err.Error(), path) || !errors.Is(err, syscall.EIO) {
		t.Errorf("Commit with a failing sync = %v, want an error naming %s and wrapping EIO", err, path)
	}
	if got := readString(t, path); got != "old\n" {
		t.Errorf("after a failed Commit %s = %q, want %q", path, got, "old\n")
	}

	// Commit: the new content, in one step.
	a, err = Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Abort()
	a.Write([]byte("new\n"))
	if err := a.Commit(); err != nil {
		t.Fatalf("Commit = %v, want nil", err)
	}
	a.Abort() // after Commit, nothing
	if got := readString(t, path); got != "new\n" {
		t.Errorf("after Commit %s = %q, want %q", path, got, "new\n")
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// A link planted where perfgate writes is replaced, not written through.
func TestWriteFileReplacesALink(t *testing.T) {
	dir := t.TempDir()
	victim, link := filepath.Join(dir, "victim"), filepath.Join(dir, "result.json")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("result\n"), 0o644); err != nil {
		t.Fatalf("WriteFile(link) = %v, want nil", err)
	}
	if got := readString(t, victim); got != "precious\n" {
		t.Errorf("the link's target = %q, want it untouched", got)
	}
	if st, err := os.Lstat(link); err != nil || !st.Mode().IsRegular() {
		t.Errorf("%s after WriteFile: %v, %v; want a regular file", link, st.Mode(), err)
	}
}

func TestLockSerialises(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				l, err := Lock(context.Background(), path)
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				inside.Add(-1)
				if err := l.Unlock(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got := most.Load(); got != 1 {
		t.Errorf("most holders of the lock at once = %d, want 1", got)
	}
}

func TestLockWaitsForTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	held, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if l, err := Lock(ctx, path); err == nil {
		l.Unlock()
		t.Fatalf("Lock while another holds it = nil, want an error once ctx is done")
	} else if !strings.Contains(err.Error(), path) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock while another holds it = %v, want an error naming %s that wraps the deadline", err, path)
	}
	got := make(chan error, 1)
	go func() {
		l, err := Lock(context.Background(), path)
		if err == nil {
			err = l.Unlock()
		}
		got <- err
	}()
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("Lock after the holder let go = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Lock still waiting 10 s after the holder let go")
	}
}

func TestLockRefusesWhatIsNotAFile(t *testing.T) {
	safeiotest.RefusesWhatIsNotAFile(t, "history.jsonl", func(path string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := Lock(ctx, path)
		if err == nil {
			l.Unlock()
		}
		return err
	})
}

func TestCommitAll(t *testing.T) {
	dir := t.TempDir()
	var files []*AtomicFile
	for _, name := range []string{"a.json", "b.json", "c.json"} {
		f, err := Create(filepath.Join(dir, name), 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Abort()
		f.Write([]byte(name))
		files = append(files, f)
	}
	files[2].Abort() // a file that cannot be committed stops CommitAll there
	n, err := CommitAll(files)
	if n != 2 || err == nil || !strings.Contains(err.Error(), "c.json") {
		t.Errorf("CommitAll(a, b, aborted c) = %d, %v; want 2 and an error naming c.json", n, err)
	}
	for _, name := range []string{"a.json", "b.json"} {
		if got := readString(t, filepath.Join(dir, name)); got != name {
			t.Errorf("%s = %q, want %q", name, got, name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "c.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("c.json: stat = %v, want no file", err)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// The lock holds between processes, as two `perfgate baseline promote` are:
// a child process (this test binary) cannot take it while this one holds it,
// and can once it is let go.
func TestLockHoldsAcrossProcesses(t *testing.T) {
	if path := os.Getenv("SAFEIO_TEST_LOCK_PATH"); path != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		l, err := Lock(ctx, path)
		if err != nil {
			fmt.Println("lock-result: refused")
			return
		}
		l.Unlock()
		fmt.Println("lock-result: taken")
		return
	}
	path := filepath.Join(t.TempDir(), "history.jsonl")
	child := func() string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockHoldsAcrossProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SAFEIO_TEST_LOCK_PATH="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if r, ok := strings.CutPrefix(line, "lock-result: "); ok {
				return r
			}
		}
		t.Fatalf("the child did not say whether it took the lock:\n%s", out)
		return ""
	}
	l, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if got := child(); got != "refused" {
		t.Errorf("another process's Lock while this one holds it: %s, want refused", got)
	}
	l.Unlock()
	if got := child(); got != "taken" {
		t.Errorf("another process's Lock once this one let go: %s, want taken", got)
	}
}

// A path that is a device or a pipe (--html /dev/stdout, --records
// /dev/null) is written to as it is, never renamed over: as root, replacing
// /dev/null would replace it for the whole machine. A named pipe stands for
// every such path here, so that the test never touches /dev.
func TestWriteFileToAPipeWritesThrough(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A reader that does not block on open, so that the test cannot hang
	// whatever WriteFile does; the writer's open then finds it.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	if err := WriteFile(fifo, []byte("through the pipe\n"), 0o644); err != nil {
		t.Fatalf("WriteFile(fifo) = %v, want nil", err)
	}
	st, err := os.Lstat(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("after WriteFile the path is %v, want the named pipe it was", st.Mode())
	}
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if got := string(buf[:n]); got != "through the pipe\n" {
		t.Errorf("the pipe carried %q, want %q", got, "through the pipe\n")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".out.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// Abort of a pipe closes it and removes nothing.
	a, err := Create(fifo, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	a.Abort()
	if _, err := os.Lstat(fifo); err != nil {
		t.Errorf("after Abort: %v, want the pipe still there", err)
	}
}

// RemoveOld removes an earlier output only when it is a regular file (or a
// link to one): a pipe or a device named as the output stays.
func TestRemoveOld(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "result.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "stdout")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, fifo, link, filepath.Join(dir, "missing")} {
		if err := RemoveOld(p); err != nil {
			t.Errorf("RemoveOld(%s) = %v, want nil", filepath.Base(p), err)
		}
	}
	if _, err := os.Lstat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("RemoveOld left the regular file: %v", err)
	}
	for _, p := range []string{fifo, link} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("RemoveOld(%s) removed it: %v, want it left", filepath.Base(p), err)
		}
	}
}
