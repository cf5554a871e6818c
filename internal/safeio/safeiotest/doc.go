// Package safeiotest checks, for the tests of every package that reads a
// file it is handed, that the reader refuses what is not a regular file: a
// named pipe with no writer (which would block a plain open forever), a
// device that never ends (/dev/zero, which would exhaust memory) and a
// directory; and, for every package that writes a file, that a write which
// fails midway (a full disk) leaves the old file whole (WithFileSizeLimit).
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package safeiotest
