package safeio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// FileLock is an exclusive lock on a file, held from Lock until Unlock: how
// two perfgate processes (or goroutines) that write one directory, such as
// two `baseline promote` at once, take turns. The lock is advisory (it stops
// only those who take it too) and the system drops it when its holder exits,
// however it exits, so a killed perfgate never leaves a stale lock.
type FileLock struct {
	f *os.File
}

// Lock opens path (creating it, empty, with mode 0644 less the umask, if it
// does not exist; it must be a regular file) and waits until it holds an
// exclusive lock on it, or ctx is done. The file's content is left alone:
// the file may be one that the holder then writes, such as a log it
// appends to.
func Lock(ctx context.Context, path string) (*FileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, syscall.EISDIR) {
		err = &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (it is a directory)", ErrNotRegular)}
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("lock: %w", &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (it is %s)", ErrNotRegular, describeMode(st.Mode()))})
	}
	wait := time.Millisecond
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			return &FileLock{f: f}, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("lock %s: another process holds it: %w", path, context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// Unlock releases the lock and closes the file.
func (l *FileLock) Unlock() error {
	unlock(l.f)
	return l.f.Close() // with flock, closing the descriptor drops the lock
}
