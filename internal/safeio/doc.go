// Package safeio reads what perfgate is handed — files named in a config or
// on the command line, and bodies of HTTP answers — with bounds, so that
// nothing it reads can exhaust its memory or hang it: a file must be a
// regular file (not a FIFO, a device such as /dev/zero, or a directory), and
// every read stops at a stated limit with a *TooLargeError that names what
// was read and the limit.
//
// It also writes what perfgate leaves behind, whole or not at all:
// WriteFile, and Create for a file written as a stream (an AtomicFile,
// committed or aborted), replace a file by renaming a synced temporary file
// over it; Lock takes an exclusive lock (flock) that writers of one
// directory share, such as two promotions of baselines.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package safeio
