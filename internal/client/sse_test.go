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
	big := strings.Repeat("x", 1<<20)
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
		{"1 MB line", "data: " + big + "\n\ndata: b\n\n", []Event{ev("", big), ev("", "b")}, false},
		{"1 MB line crlf at eof", "data: " + big + "\r\n", []Event{ev("", big)}, false},
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

func TestEventReaderLineTooLong(t *testing.T) {
	// A reader that never sends a newline.
	r := NewEventReader(io.LimitReader(infinite('x'), maxLineSize+readBufSize*2))
	_, err := r.Next()
	assert.ErrorIs(t, err, ErrLineTooLong)
}

type infinite byte

func (b infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
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

// FuzzEventReader checks that how the input is split into reads does not
// change the events: go test -run x -fuzz FuzzEventReader ./internal/client/
func FuzzEventReader(f *testing.F) {
	for _, s := range []string{
		"data: a\r\n\r\ndata: b\rdata: c\r\r: x\nevent: e\ndata\n\n",
		"data: a\n\ndata: [DONE]\n\ngarbage",
		"\xef\xbb\xbfid: 1\nretry: 10\ndata:x\r",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		whole, r1, err1 := readAll(t, bytes.NewReader(in))
		split, r2, err2 := readAll(t, iotest.OneByteReader(bytes.NewReader(in)))
		require.NoError(t, err1)
		require.NoError(t, err2)
		require.Equal(t, len(whole), len(split), "events")
		for i := range whole {
			require.Equal(t, whole[i].Name, split[i].Name)
			require.True(t, bytes.Equal(whole[i].Data, split[i].Data), "event %d: %q vs %q", i, whole[i].Data, split[i].Data)
		}
		require.Equal(t, r1.Done(), r2.Done())
		require.Equal(t, r1.LastEventID(), r2.LastEventID())
	})
}
