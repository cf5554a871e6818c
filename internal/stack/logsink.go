package stack

import (
	"bytes"
	"fmt"
	"os"
	"sync"
)

// keepLines is how many of the latest lines a logSink keeps in memory.
const keepLines = 200

// logSink receives a stack's output: it appends everything to a file and keeps
// the last lines in memory, so an error can quote them without reading the
// file back. It is safe for concurrent writers (stdout and stderr).
type logSink struct {
	mu      sync.Mutex
	f       *os.File
	lines   []string // a ring of the last keepLines complete lines
	next    int
	partial []byte // the current line, not yet ended by '\n'
}

// newLogSink creates (or truncates) the log file at path.
func newLogSink(path string) (*logSink, error) { return openLogSink(path, false) }

// openLogSink is newLogSink, appending to the file when appending (a
// replica started again keeps its killed life's lines above its new ones).
func openLogSink(path string, appending bool) (*logSink, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appending {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o666)
	if err != nil {
		return nil, fmt.Errorf("stack log: %w", err)
	}
	return &logSink{f: f}, nil
}

// Write appends p to the file and to the in-memory tail.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		if _, err := s.f.Write(p); err != nil {
			return 0, err
		}
	}
	rest := p
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			s.partial = append(s.partial, rest...)
			if len(s.partial) > 64<<10 { // a runaway line: keep its end
				s.partial = s.partial[len(s.partial)-(32<<10):]
			}
			return len(p), nil
		}
		line := append(s.partial, rest[:i]...)
		s.partial = nil
		s.push(string(bytes.TrimRight(line, "\r")))
		rest = rest[i+1:]
	}
}

func (s *logSink) push(line string) {
	if len(s.lines) < keepLines {
		s.lines = append(s.lines, line)
		return
	}
	s.lines[s.next] = line
	s.next = (s.next + 1) % keepLines
}

// Tail returns up to the last n lines, oldest first, including an unfinished
// last line.
func (s *logSink) Tail(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]string, 0, len(s.lines)+1)
	all = append(all, s.lines[s.next:]...)
	all = append(all, s.lines[:s.next]...)
	if len(s.partial) > 0 {
		all = append(all, string(s.partial))
	}
	if n < len(all) {
		all = all[len(all)-max(n, 0):] // n < 0: none, not a panic
	}
	return all
}

// Close closes the file; the tail stays readable.
func (s *logSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
