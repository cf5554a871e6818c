package client

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll reads every event of src, copying Data, and the error that ended it.
func readAll(t *testing.T, src io.Reader) ([]Event, *EventReader, error) {
	t.Helper()
	r := NewEventReader(src)
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return evs, r, err
		}
		evs = append(evs, Event{Name: ev.Name, Data: bytes.Clone(ev.Data)})
	}
}

func ev(name, data string) Event { return Event{Name: name, Data: []byte(data)} }

func TestEventReader(t *testing.T) {
	big := strings.Repeat("x", 1<<19) // a long line, well inside MaxEventSize
	tests := []struct {
		name string
		in   string
		want []Event
		done bool
	}{
		{"one event", "data: a\n\n", []Event{ev("", "a")}, false},
		{"no space after colon", "data:a\n\n", []Event{ev("", "a")}, false},
		{"only one leading space is dropped", "data:  a \n\n", []Event{ev("", " a ")}, false},
		{"multi-line data", "data: a\ndata: b\ndata:\ndata: c\n\n", []Event{ev("", "a\nb\n\nc")}, false},
		{"comments", ": keep-alive\ndata: a\n:x\n\n:\n\n", []Event{ev("", "a")}, false},
		{"crlf", "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n", []Event{ev("", "a\nb"), ev("", "c")}, false},
		{"bare cr", "data: a\rdata: b\r\rdata: c\r\r", []Event{ev("", "a\nb"), ev("", "c")}, false},
		{"mixed endings", "data: a\r\n\rdata: b\n\r\n", []Event{ev("", "a"), ev("", "b")}, false},
		{"event names", "event: ping\ndata: 1\n\ndata: 2\n\nevent: error\ndata: {}\n\n",
			[]Event{ev("ping", "1"), ev("", "2"), ev("error", "{}")}, false},
		{"event without data is dropped", "event: x\n\ndata: y\n\n", []Event{ev("", "y")}, false},
		{"id retry and unknown fields ignored", "id: 7\nretry: 1500\nfoo: bar\nfoo\ndata: a\n\n", []Event{ev("", "a")}, false},
		{"field without colon", "data\n\n", []Event{ev("", "")}, false},
		{"blank lines between events", "\n\n\ndata: a\n\n\n\ndata: b\n\n", []Event{ev("", "a"), ev("", "b")}, false},
		{"no trailing blank line", "data: a\n\ndata: b", []Event{ev("", "a"), ev("", "b")}, false},
		{"no trailing newline after data line", "data: a\ndata: b\n", []Event{ev("", "a\nb")}, false},
		{"done ends the stream", "data: a\n\ndata: [DONE]\n\n", []Event{ev("", "a")}, true},
		{"done then garbage ignored", "data: a\n\ndata: [DONE]\n\ndata: b\n\n{{{not sse\x00", []Event{ev("", "a")}, true},
		{"done without space or blank line", "data: a\n\ndata:[DONE]", []Event{ev("", "a")}, true},
		{"done inside multi-line data is data", "data: [DONE]\ndata: x\n\n", []Event{ev("", "[DONE]\nx")}, false},
		{"bom", "\xef\xbb\xbfdata: a\n\n", []Event{ev("", "a")}, false},
		{"empty input", "", nil, false},
		{"512 KiB line", "data: " + big + "\n\ndata: b\n\n", []Event{ev("", big), ev("", "b")}, false},
		{"512 KiB line crlf at eof", "data: " + big + "\r\n", []Event{ev("", big)}, false},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte", iotest.OneByteReader},
		{"half", iotest.HalfReader},
		{"data with eof", iotest.DataErrReader},
	}
	for _, tt := range tests {
		for _, rd := range readers {
			if rd.name == "one byte" && len(tt.in) > 1<<16 {
				continue // slow, and "half" covers the splits
			}
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				got, r, err := readAll(t, rd.wrap(strings.NewReader(tt.in)))
				require.NoError(t, err)
				require.Equal(t, len(tt.want), len(got), "events")
				for i := range tt.want {
					assert.Equal(t, tt.want[i].Name, got[i].Name, "event %d name", i)
					assert.True(t, bytes.Equal(tt.want[i].Data, got[i].Data), "event %d data = %.60q…, want %.60q…", i, got[i].Data, tt.want[i].Data)
				}
				assert.Equal(t, tt.done, r.Done(), "Done()")
			})
		}
	}
}

func TestEventReaderIDAndRetry(t *testing.T) {
	r := NewEventReader(strings.NewReader("id: 42\nretry: 250\ndata: a\n\nretry: 5x\nid: a\x00b\ndata: b\n\n"))
	_, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, "42", r.LastEventID())
	assert.Equal(t, 250*time.Millisecond, r.Retry())
	_, err = r.Next()
	require.NoError(t, err)
	assert.Equal(t, "42", r.LastEventID(), "an id with NUL is ignored")
	assert.Equal(t, 250*time.Millisecond, r.Retry(), "a non-numeric retry is ignored")
}

func TestEventReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := NewEventReader(io.MultiReader(strings.NewReader("data: a\n\ndata: partial"), iotest.ErrReader(boom)))
	e, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, "a", string(e.Data))
	_, err = r.Next()
	assert.ErrorIs(t, err, boom, "a read error is not a clean end, even with data pending")
	_, err = r.Next()
	assert.ErrorIs(t, err, boom, "the error is sticky")
	assert.False(t, r.Done())
}

// TestEventReaderEventTooLarge: one event, all its lines together, is capped
// at MaxEventSize. On the unfixed reader only a single line was capped (at 32
// MiB), so data lines that never end in a blank line, and endless comments or
// blank lines, were read for ever (the first two growing memory without bound).
func TestEventReaderEventTooLarge(t *testing.T) {
	line := func(s string) io.Reader { return infinite(s) }
	tests := []struct {
		name string
		src  io.Reader
	}{
		{"a line that never ends", infinite("x")},
		{"data lines that never end the event", line("data: " + strings.Repeat("y", 1000) + "\n")},
		{"endless comments", line(": keep-alive\n")},
		{"endless blank lines", line("\n")},
		{"endless unknown fields", line("foo: bar\r\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counted := &countingReader{r: tt.src}
			r := NewEventReader(counted)
			_, err := r.Next()
			require.ErrorIs(t, err, ErrEventTooLarge, "Next() error")
			// A "\r\n" counts as one byte: at most twice the cap is read.
			assert.LessOrEqual(t, counted.n, int64(2*MaxEventSize+2*readBufSize), "bytes read before giving up")
			assert.LessOrEqual(t, cap(r.data), 2*MaxEventSize, "data buffer")
			assert.LessOrEqual(t, cap(r.long), 2*(MaxEventSize+readBufSize), "line buffer")
			_, err = r.Next()
			assert.ErrorIs(t, err, ErrEventTooLarge, "the error is sticky")
		})
	}
}

// TestEventReaderEventSizeEdge: an event of exactly the cap is read, one byte
// more is not, whatever the reads' sizes; each line counts its length plus
// one, comments and blank lines before it included.
func TestEventReaderEventSizeEdge(t *testing.T) {
	const limit = 40
	// ": c\n" (4) + "data: " + 25 bytes + "\n" (32) + "\n" (1) = 37, +3 with "abc".
	exact := ": c\n" + "data: " + strings.Repeat("d", 28) + "\n\n"
	require.Len(t, exact, limit)
	tests := []struct {
		name   string
		in     string
		events int
		tooBig bool
	}{
		{"exactly the cap", exact + "data: next\n\n", 2, false},
		{"exactly the cap, crlf counts one", strings.ReplaceAll(exact, "\n", "\r\n") + "data: next\n\n", 2, false},
		{"one byte over", ": cc\n" + exact[4:], 0, true},
		{"over at the end of the input", "data: " + strings.Repeat("d", limit), 0, true},
		{"exactly the cap at the end of the input", "data: " + strings.Repeat("d", limit-7), 1, false},
		{"blank lines count", strings.Repeat("\n", limit-8) + "data: x\n", 1, false},
		{"blank lines count, one over", strings.Repeat("\n", limit-7) + "data: x\n", 0, true},
	}
	for _, tt := range tests {
		for _, rd := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{{"whole", func(r io.Reader) io.Reader { return r }}, {"one byte", iotest.OneByteReader}, {"half", iotest.HalfReader}} {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				r := NewEventReader(rd.wrap(strings.NewReader(tt.in)))
				r.maxEvent = limit
				n := 0
				var err error
				for {
					var e Event
					if e, err = r.Next(); err != nil {
						break
					}
					assert.Less(t, len(e.Data), limit, "event %d data", n)
					n++
				}
				assert.Equal(t, tt.events, n, "events read")
				if tt.tooBig {
					assert.ErrorIs(t, err, ErrEventTooLarge)
				} else {
					assert.Equal(t, io.EOF, err)
				}
			})
		}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// infinite repeats its text for ever.
type infinite string

func (s infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = s[i%len(s)]
	}
	return len(p), nil
}

// TestEventReaderDataAliasing checks that an event's Data survives until the
// next call only, and that it does survive a refill of the read buffer.
func TestEventReaderDataAliasing(t *testing.T) {
	var in strings.Builder
	for i := range 2000 {
		in.WriteString("data: {\"n\":")
		in.WriteString(strings.Repeat("7", i%50))
		in.WriteString("}\r\n\r\n")
	}
	got, _, err := readAll(t, iotest.HalfReader(strings.NewReader(in.String())))
	require.NoError(t, err)
	require.Len(t, got, 2000)
	for i, e := range got {
		want := "{\"n\":" + strings.Repeat("7", i%50) + "}"
		if string(e.Data) != want {
			t.Fatalf("event %d = %q, want %q", i, e.Data, want)
		}
	}
}

// chunkedReader returns src in reads whose sizes cycle through sizes (each
// 1 to 64 bytes).
type chunkedReader struct {
	src   []byte
	sizes []byte
	i     int
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if len(c.src) == 0 {
		return 0, io.EOF
	}
	n := 1 + len(c.src)%7
	if len(c.sizes) > 0 {
		n = 1 + int(c.sizes[c.i%len(c.sizes)])%64
		c.i++
	}
	n = min(n, len(p), len(c.src))
	copy(p, c.src[:n])
	c.src = c.src[n:]
	return n, nil
}

// readCapped reads every event of src with the event cap set to limit,
// checking as it goes that no event's data and no buffer passes the cap.
func readCapped(t *testing.T, src io.Reader, limit int) ([]Event, *EventReader, error) {
	t.Helper()
	r := NewEventReader(src)
	r.maxEvent = limit
	var evs []Event
	for {
		ev, err := r.Next()
		if len(r.data) > limit || len(r.long) > limit+readBufSize {
			t.Fatalf("buffers past the cap %d: data %d, line %d", limit, len(r.data), len(r.long))
		}
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return evs, r, err
		}
		if len(ev.Data) >= limit {
			t.Fatalf("event %d has %d bytes of data, cap %d", len(evs), len(ev.Data), limit)
		}
		evs = append(evs, Event{Name: ev.Name, Data: bytes.Clone(ev.Data)})
	}
}

// FuzzEventReader reads arbitrary bytes as a stream, whole and split into
// reads at fuzz-chosen boundaries, with a fuzz-chosen event cap: it never
// panics, no event or buffer passes the cap, the only error is
// ErrEventTooLarge, and how the input is split does not change the events or
// the error. go test -run '^$' -fuzz '^FuzzEventReader$' ./internal/client
func FuzzEventReader(f *testing.F) {
	for _, s := range []string{
		"data: a\r\n\r\ndata: b\rdata: c\r\r: x\nevent: e\ndata\n\n",
		"data: a\n\ndata: [DONE]\n\ngarbage",
		"\xef\xbb\xbfid: 1\nretry: 10\ndata:x\r",
		": ping\n: ping\n: ping\n\n\n\ndata: late\n\n",
		"data: " + strings.Repeat("z", 300) + "\n\n",
	} {
		f.Add([]byte(s), []byte{0, 5, 63}, uint16(0))
		f.Add([]byte(s), []byte{}, uint16(16))
	}
	f.Fuzz(func(t *testing.T, in, sizes []byte, cap16 uint16) {
		limit := MaxEventSize
		if cap16 > 0 {
			limit = int(cap16)
		}
		whole, r1, err1 := readCapped(t, bytes.NewReader(in), limit)
		split, r2, err2 := readCapped(t, &chunkedReader{src: in, sizes: sizes}, limit)
		for _, err := range []error{err1, err2} {
			if err != nil && !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("Next() error %v, want nil or ErrEventTooLarge", err)
			}
		}
		require.Equal(t, err1, err2, "error, whole and split")
		require.Equal(t, len(whole), len(split), "events")
		for i := range whole {
			require.Equal(t, whole[i].Name, split[i].Name)
			require.True(t, bytes.Equal(whole[i].Data, split[i].Data), "event %d: %q vs %q", i, whole[i].Data, split[i].Data)
		}
		require.Equal(t, r1.Done(), r2.Done())
		require.Equal(t, r1.LastEventID(), r2.LastEventID())
	})
}
