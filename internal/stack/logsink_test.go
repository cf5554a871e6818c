package stack

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newTestSink creates a logSink on a fresh file, closed when the test ends.
func newTestSink(t *testing.T) (*logSink, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stack.log")
	s, err := newLogSink(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

// writeSink feeds every chunk to s, each as one Write, checking each is taken whole.
func writeSink(t *testing.T, s *logSink, chunks ...string) {
	t.Helper()
	for _, c := range chunks {
		n, err := s.Write([]byte(c))
		require.NoError(t, err)
		require.Equal(t, len(c), n, "Write must report the whole chunk taken")
	}
}

func TestLogSinkSplitsLines(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []string
	}{
		{"one write, one line", []string{"hello\n"}, []string{"hello"}},
		{"one write, many lines", []string{"a\nb\nc\n"}, []string{"a", "b", "c"}},
		{"line split across writes", []string{"hel", "lo\nwor", "ld\n"}, []string{"hello", "world"}},
		{"byte by byte", strings.Split("ab\ncd\n", ""), []string{"ab", "cd"}},
		{"CRLF trimmed", []string{"one\r\ntwo\r\n"}, []string{"one", "two"}},
		{"CR split from its LF", []string{"one\r", "\ntwo\r", "\n"}, []string{"one", "two"}},
		{"only trailing CRs trimmed", []string{"a\rb\r\r\n"}, []string{"a\rb"}},
		{"empty lines kept", []string{"a\n\n\nb\n"}, []string{"a", "", "", "b"}},
		{"unfinished last line included", []string{"a\nb\nunfini", "shed"}, []string{"a", "b", "unfinished"}},
		{"nothing written", nil, []string{}},
		{"empty write", []string{""}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, path := newTestSink(t)
			writeSink(t, s, tt.chunks...)
			assert.Equal(t, tt.want, s.Tail(100))

			// The file gets every byte as written, CRs included.
			require.NoError(t, s.Close())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, strings.Join(tt.chunks, ""), string(got))
		})
	}
}

func TestLogSinkTail(t *testing.T) {
	lines := func(from, to int) []string { // "line from" .. "line to-1"
		var out []string
		for i := from; i < to; i++ {
			out = append(out, "line "+strconv.Itoa(i))
		}
		return out
	}
	tests := []struct {
		name    string
		written int  // complete lines "line 0".."line written-1"
		partial bool // then an unfinished "tail end"
		n       int
		want    []string
	}{
		{"fewer held than asked", 5, false, 20, lines(0, 5)},
		{"more held than asked", 5, false, 2, lines(3, 5)},
		{"exactly as many as asked", 5, false, 5, lines(0, 5)},
		{"zero asked", 5, false, 0, []string{}},
		{"negative asked", 5, false, -1, []string{}},
		{"ring exactly full", keepLines, false, 1000, lines(0, keepLines)},
		{"ring wrapped once, latest kept in order", keepLines + 37, false, 1000, lines(37, keepLines+37)},
		{"ring wrapped many times", 5*keepLines + 3, false, 1000, lines(4*keepLines+3, 5*keepLines+3)},
		{"wrapped ring, few asked", 3*keepLines + 11, false, 4, lines(3*keepLines+7, 3*keepLines+11)},
		{"unfinished line comes last", 3, true, 10, append(lines(0, 3), "tail end")},
		{"unfinished line counts towards n", 3, true, 2, []string{"line 2", "tail end"}},
		{"unfinished line beyond a full ring", keepLines + 5, true, 1000, append(lines(5, keepLines+5), "tail end")},
		{"only an unfinished line", 0, true, 10, []string{"tail end"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTestSink(t)
			for _, l := range lines(0, tt.written) {
				writeSink(t, s, l+"\n")
			}
			if tt.partial {
				writeSink(t, s, "tail ", "end")
			}
			assert.Equal(t, tt.want, s.Tail(tt.n))
		})
	}
}

func TestLogSinkRingInOneWrite(t *testing.T) {
	// A single write of many lines wraps the ring as many small ones do.
	s, _ := newTestSink(t)
	var b strings.Builder
	for i := range 3*keepLines + 50 {
		fmt.Fprintf(&b, "l%d\r\n", i)
	}
	writeSink(t, s, b.String())
	got := s.Tail(keepLines + 10)
	require.Len(t, got, keepLines)
	for i, l := range got {
		assert.Equal(t, fmt.Sprintf("l%d", 2*keepLines+50+i), l)
	}
}

func TestLogSinkRunawayLineBounded(t *testing.T) {
	const limit = 64 << 10 // the most of an unfinished line a sink holds
	tests := []struct {
		name   string
		chunks func() []string
	}{
		{"many small writes", func() []string {
			var c []string
			for range 100 {
				c = append(c, strings.Repeat("x", 4<<10))
			}
			return append(c, "THE-END")
		}},
		{"one huge write", func() []string {
			return []string{strings.Repeat("y", 1<<20) + "THE-END"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, path := newTestSink(t)
			chunks := tt.chunks()
			writeSink(t, s, "before\n")
			writeSink(t, s, chunks...)

			got := s.Tail(10)
			require.Len(t, got, 2)
			assert.Equal(t, "before", got[0])
			assert.LessOrEqual(t, len(got[1]), limit, "an unfinished line is bounded")
			assert.Greater(t, len(got[1]), 1<<10, "a bounded line keeps a good part of it")
			assert.True(t, strings.HasSuffix(got[1], "THE-END"), "a bounded line keeps its end")

			// Once ended, the bounded line is a line like any other.
			writeSink(t, s, "\nafter\n")
			got = s.Tail(10)
			require.Len(t, got, 3)
			assert.LessOrEqual(t, len(got[1]), limit)
			assert.True(t, strings.HasSuffix(got[1], "THE-END"))
			assert.Equal(t, "after", got[2])

			// The file is not bounded: it has every byte.
			require.NoError(t, s.Close())
			info, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, int64(len("before\n")+len(strings.Join(chunks, ""))+len("\nafter\n")), info.Size())
		})
	}
}

func TestLogSinkWriteAfterClose(t *testing.T) {
	s, path := newTestSink(t)
	writeSink(t, s, "before close\n")
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close twice is safe")

	writeSink(t, s, "after ", "close\n", "unfinished")
	assert.Equal(t, []string{"before close", "after close", "unfinished"}, s.Tail(10))

	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "before close\n", string(got), "nothing reaches the file once closed")
}

func TestLogSinkTruncatesExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stack.log")
	require.NoError(t, os.WriteFile(path, []byte("an older run's log\n"), 0o644))
	s, err := newLogSink(path)
	require.NoError(t, err)
	writeSink(t, s, "new\n")
	require.NoError(t, s.Close())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
	assert.Equal(t, []string{"new"}, s.Tail(10), "the tail starts empty too")
}

func TestLogSinkCreateError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "stack.log")
	_, err := newLogSink(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stack log")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestLogSinkConcurrentWriters(t *testing.T) {
	const writers, perWriter = 8, 100
	s, path := newTestSink(t)

	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				// A whole line per Write, as a pipe copy delivers short lines.
				if _, err := fmt.Fprintf(s, "w%d-%d\n", w, i); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				_ = s.Tail(3) // readers race with writers too
			}
		})
	}
	wg.Wait()

	lineRE := regexp.MustCompile(`^w(\d+)-(\d+)$`)
	check := func(lines []string) {
		t.Helper()
		last := map[string]int{}
		for _, l := range lines {
			m := lineRE.FindStringSubmatch(l)
			if !assert.NotNil(t, m, "line %q is mangled", l) {
				continue
			}
			i, _ := strconv.Atoi(m[2])
			if prev, ok := last[m[1]]; ok {
				assert.Greater(t, i, prev, "writer %s's lines out of order", m[1])
			}
			last[m[1]] = i
		}
	}
	tail := s.Tail(writers * perWriter)
	require.Len(t, tail, keepLines)
	check(tail)

	require.NoError(t, s.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	all := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, all, writers*perWriter)
	check(all)
	assert.Equal(t, all[len(all)-keepLines:], tail, "the tail is the file's last lines")
}
