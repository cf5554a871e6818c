package safeio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The writing half of safeio: every file perfgate writes (a result, records,
// a report, an HTML page, baselines, an export, a synthesised workload, the
// simulator's truth) is written to a temporary file beside it and renamed
// over it only once it is whole and synced, so that a full disk, a crash or
// a killed perfgate leaves the old file or none, never half of one.

// AtomicFile is a file being written in place of another: writes go to a
// hidden temporary file in the same directory (".NAME.tmp-RANDOM"), Commit
// syncs it and renames it over the file, Abort removes it. Until Commit,
// the file at Path is untouched. Call Abort in a defer: after Commit it does
// nothing.
type AtomicFile struct {
	f      *os.File
	path   string
	direct bool // path is a device or a pipe, written as it is (see Create)
	synced bool // Sync succeeded and nothing was written since
	done   bool
}

// Create starts an AtomicFile that will replace path. The temporary file
// is created with perm less the umask, as os.Create would create path; when
// path already exists as a regular file, the new one keeps its mode, as
// os.WriteFile would. A symbolic link at path is replaced by the new file,
// not written through.
//
// A path that exists and is not a regular file or a directory (a device such
// as /dev/null or /dev/stdout, a named pipe) is written directly: a stream
// has no half of a file to leave behind, and renaming over it would replace
// the device itself (as root, /dev/null for every process of the machine).
func Create(path string, perm fs.FileMode) (*AtomicFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("the path names a directory, not a file")}
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("is a directory")}
	} else if err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: unwrapPath(err)}
		}
		return &AtomicFile{f: f, path: path, direct: true}, nil
	}
	a := &AtomicFile{path: path}
	var keep fs.FileMode // the mode of the file replaced; 0 for none
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		keep = st.Mode().Perm()
	}
	for range 100 {
		name := filepath.Join(dir, "."+base+".tmp-"+randomSuffix())
		// O_EXCL: never an existing file, nor a link someone planted. The
		// mode given here is filtered by the umask, as for any new file.
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "create", Path: path, Err: unwrapPath(err)}
		}
		if keep != 0 {
			if err := f.Chmod(keep); err != nil {
				f.Close()
				os.Remove(name)
				return nil, &fs.PathError{Op: "chmod", Path: path, Err: unwrapPath(err)}
			}
		}
		a.f = f
		return a, nil
	}
	return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("no free temporary name beside it")}
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// unwrapPath drops a *fs.PathError's own path (the temporary file's), so an
// error names the file the user asked for.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Path is the file the AtomicFile replaces.
func (a *AtomicFile) Path() string { return a.path }

// Write writes to the temporary file.
func (a *AtomicFile) Write(p []byte) (int, error) {
	a.synced = false
	n, err := a.f.Write(p)
	if err != nil {
		err = &fs.PathError{Op: "write", Path: a.path, Err: unwrapPath(err)}
	}
	return n, err
}

// syncFile syncs a file to disk; a variable so that tests can make it fail.
var syncFile = (*os.File).Sync

// Sync flushes what was written to disk now, so that a caller replacing
// several files learns of a failure (a full disk) before it renames any of
// them; Commit then does not sync again. Path is left as it was.
func (a *AtomicFile) Sync() error {
	if a.done {
		return &fs.PathError{Op: "sync", Path: a.path, Err: os.ErrClosed}
	}
	if a.direct { // a device or a pipe: nothing to make durable
		a.synced = true
		return nil
	}
	if err := syncFile(a.f); err != nil {
		return &fs.PathError{Op: "sync", Path: a.path, Err: unwrapPath(err)}
	}
	a.synced = true
	return nil
}

// Commit makes what was written the content of Path: it syncs the temporary
// file, renames it over Path and syncs the directory, so that the rename
// survives a crash. On an error the temporary file is removed and Path is
// as it was (unless the error is the directory's sync, after the rename).
func (a *AtomicFile) Commit() error {
	if err := a.rename(); err != nil {
		return err
	}
	if a.direct {
		return nil
	}
	if err := SyncDir(filepath.Dir(a.path)); err != nil {
		return fmt.Errorf("%s: %w", a.path, err)
	}
	return nil
}

// CommitAll commits files in order, as Commit does each, but syncs their
// directories once at the end. It stops at the first error and returns the
// number of files committed; those after it are left uncommitted (Abort
// them).
func CommitAll(files []*AtomicFile) (int, error) {
	dirs := map[string]bool{}
	for i, a := range files {
		if err := a.rename(); err != nil {
			return i, err
		}
		if !a.direct {
			dirs[filepath.Dir(a.path)] = true
		}
	}
	for _, a := range files {
		if dir := filepath.Dir(a.path); dirs[dir] {
			delete(dirs, dir)
			if err := SyncDir(dir); err != nil {
				return len(files), fmt.Errorf("%s: %w", a.path, err)
			}
		}
	}
	return len(files), nil
}

// rename syncs the temporary file unless Sync did, and renames it over Path.
func (a *AtomicFile) rename() error {
	if a.done {
		return &fs.PathError{Op: "commit", Path: a.path, Err: os.ErrClosed}
	}
	a.done = true
	if a.direct {
		if err := a.f.Close(); err != nil {
			return &fs.PathError{Op: "close", Path: a.path, Err: unwrapPath(err)}
		}
		return nil
	}
	fail := func(op string, err error) error {
		a.f.Close()
		os.Remove(a.f.Name())
		return &fs.PathError{Op: op, Path: a.path, Err: unwrapPath(err)}
	}
	if !a.synced {
		if err := syncFile(a.f); err != nil {
			return fail("sync", err)
		}
	}
	if err := a.f.Close(); err != nil {
		return fail("close", err)
	}
	if err := os.Rename(a.f.Name(), a.path); err != nil {
		os.Remove(a.f.Name())
		return &fs.PathError{Op: "rename", Path: a.path, Err: unwrapPath(err)}
	}
	return nil
}

// Abort removes the temporary file and leaves Path as it was. After Commit,
// or a second time, it does nothing.
func (a *AtomicFile) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.f.Close()
	if !a.direct {
		os.Remove(a.f.Name())
	}
}

// RemoveOld removes an earlier output at path, so that a run that fails
// leaves no file a later step could mistake for its own. Only a regular file
// (or a link to one) is removed: a device or a pipe named as the output
// (/dev/null, /dev/stdout) is left as it is, and no file is not an error.
func RemoveOld(path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// WriteFile writes data to path atomically: path holds either what it held
// before or all of data, whatever happens (a full disk, a crash, a kill).
// perm is as for os.WriteFile: the mode of a new file, less the umask; an
// existing file keeps its mode.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	a, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer a.Abort()
	if _, err := a.Write(data); err != nil {
		return err
	}
	return a.Commit()
}

// SyncDir makes a rename or a creation in dir durable. A system that cannot
// sync a directory is not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
