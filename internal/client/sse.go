package client

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// Event is one server-sent event.
type Event struct {
	// Name is the event type from an "event:" field; empty means the default
	// type, "message".
	Name string
	// Data is the event's data: its "data:" lines joined with "\n". It aliases
	// the reader's buffer and is valid only until the next call to Next.
	Data []byte
}

const (
	// readBufSize is the EventReader's read buffer: several typical chunks
	// (~250 bytes each); longer lines spill into a separate growing buffer.
	readBufSize = 16 << 10
	// MaxEventSize bounds one event: every line read for it (its data and
	// other fields, the comments and blank lines before it), each counted
	// with one byte for its line ending. A real chunk, even of a large
	// completion with logprobs, is a few KB. The bound keeps a server that
	// never ends a line, or never ends an event, from exhausting memory (at
	// 1 MiB, 64 such streams cost perfgate about 100 MiB), and one that sends
	// nothing but comments or blank lines from keeping Next busy for ever.
	MaxEventSize = 1 << 20
)

// ErrEventTooLarge is returned by EventReader.Next when one event passes
// MaxEventSize.
var ErrEventTooLarge = errors.New("event larger than 1 MiB: perfgate reads at most 1 MiB of lines (data, other fields, comments and blank lines together) for one server-sent event")

var utf8BOM = []byte("\xef\xbb\xbf")

// EventReader reads server-sent events (the WHATWG "text/event-stream"
// format) from an io.Reader, with the OpenAI convention that a "data: [DONE]"
// event ends the stream.
//
// Lines may end in "\n", "\r\n" or "\r"; a field's value may follow the colon
// with or without one space; several data lines join with "\n"; lines that
// start with ":" are comments; "event", "data", "id" and "retry" are the known
// fields and other fields are ignored. An event is dispatched at a blank line,
// and a last event that the stream ends without a blank line is dispatched too.
// One event may take at most MaxEventSize bytes of lines. Lines are read
// without a per-line allocation in the common case. An EventReader is not safe
// for concurrent use.
type EventReader struct {
	r          io.Reader
	buf        []byte // read buffer: buf[rpos:wpos] is unread
	rpos, wpos int
	rerr       error  // sticky error from r (io.EOF at the end)
	long       []byte // a line longer than buf, while it is assembled
	skipLF     bool   // the last line ended in "\r": a following "\n" belongs to it
	started    bool   // the first line was read (for the BOM)
	data       []byte // the event's data buffer, each line followed by "\n"
	hasData    bool
	name       []byte // the event type buffer
	lastName   string // last Name returned, to reuse its string
	lastID     string
	retry      time.Duration
	done       bool
	maxEvent   int // MaxEventSize; smaller in tests
}

// NewEventReader returns an EventReader that reads from r.
func NewEventReader(r io.Reader) *EventReader {
	er := &EventReader{}
	er.reset(r)
	return er
}

// reset makes the reader read a new stream from r, keeping its buffers.
func (r *EventReader) reset(src io.Reader) {
	buf, data := r.buf, r.data
	long := r.long
	if buf == nil {
		buf = make([]byte, readBufSize)
	}
	if cap(long) > 1<<20 {
		long = nil // do not keep a huge line's buffer alive in a pool
	}
	if cap(data) > 1<<20 {
		data = nil
	}
	*r = EventReader{r: src, buf: buf, long: long[:0], data: data[:0], maxEvent: MaxEventSize}
}

// Done reports whether the stream ended with "data: [DONE]" (rather than at
// the end of the input).
func (r *EventReader) Done() bool { return r.done }

// LastEventID is the value of the last "id:" field read.
func (r *EventReader) LastEventID() string { return r.lastID }

// Retry is the reconnection time of the last valid "retry:" field; 0 if none.
func (r *EventReader) Retry() time.Duration { return r.retry }

// Next returns the next event. It returns io.EOF at the end of the stream:
// after a "data: [DONE]" event (which is not returned, and after which nothing
// more is read; see Done) or at the end of the input. Any other error is the
// underlying reader's, or ErrEventTooLarge; errors are sticky.
func (r *EventReader) Next() (Event, error) {
	if r.done {
		return Event{}, io.EOF
	}
	r.data = r.data[:0]
	r.hasData = false
	r.name = r.name[:0]
	budget := r.maxEvent // bytes of lines this event may still take
	for {
		// A line costs its length and one byte for its ending, so it may
		// have at most budget-1 bytes.
		line, err := r.readLine(budget - 1)
		if err != nil {
			if err == io.EOF && r.hasData {
				// The stream ended without the blank line: dispatch anyway.
				return r.dispatch()
			}
			return Event{}, err
		}
		budget -= len(line) + 1
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(line) == 0 {
			if !r.hasData {
				r.name = r.name[:0] // an event with no data is not dispatched
				continue
			}
			return r.dispatch()
		}
		if line[0] == ':' {
			continue // comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			r.data = append(r.data, value...)
			r.data = append(r.data, '\n')
			r.hasData = true
		case "event":
			r.name = append(r.name[:0], value...)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.lastID = string(value)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 63); err == nil && isDigits(value) {
				r.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// dispatch returns the assembled event, or io.EOF for "[DONE]".
func (r *EventReader) dispatch() (Event, error) {
	data := r.data[:len(r.data)-1] // drop the last "\n"
	if len(data) <= 16 && string(bytes.TrimSpace(data)) == "[DONE]" {
		r.done = true
		return Event{}, io.EOF
	}
	if string(r.name) != r.lastName {
		r.lastName = string(r.name)
	}
	return Event{Name: r.lastName, Data: data}, nil
}

// readLine returns the next line without its terminator. The line aliases an
// internal buffer and is valid until the next call. At the end of the input a
// last unterminated line is returned, then the read error. A line longer than
// limit bytes is ErrEventTooLarge, found as soon as the part of it read so far
// is longer, so that it never holds more than limit plus one read buffer; the
// answer does not depend on how the input is split into reads.
func (r *EventReader) readLine(limit int) ([]byte, error) {
	empty := 0
	for {
		if r.skipLF && r.rpos < r.wpos {
			if r.buf[r.rpos] == '\n' {
				r.rpos++
			}
			r.skipLF = false
		}
		seg := r.buf[r.rpos:r.wpos]
		if i := indexEOL(seg); i >= 0 {
			n := i + 1
			if seg[i] == '\r' {
				if i+1 < len(seg) {
					if seg[i+1] == '\n' {
						n++
					}
				} else {
					r.skipLF = true // the "\n" of a "\r\n" may be in the next read
				}
			}
			r.rpos += n
			line := seg[:i]
			if len(r.long)+len(line) > limit {
				return nil, r.tooLarge()
			}
			if len(r.long) > 0 {
				r.long = append(r.long, line...)
				line = r.long
				r.long = r.long[:0]
			}
			return line, nil
		}
		if r.rerr != nil {
			r.rpos = r.wpos
			if len(r.long) > 0 || len(seg) > 0 {
				if len(r.long)+len(seg) > limit {
					return nil, r.tooLarge()
				}
				line := seg
				if len(r.long) > 0 {
					r.long = append(r.long, seg...)
					line = r.long
					r.long = r.long[:0]
				}
				return line, nil
			}
			return nil, r.rerr
		}
		// No whole line is buffered: make room and read more. (An empty
		// partial line is not yet a line: the input may end here.)
		if n := len(r.long) + len(seg); n > max(limit, 0) {
			return nil, r.tooLarge()
		}
		if r.rpos > 0 {
			r.wpos = copy(r.buf, seg)
			r.rpos = 0
		}
		if r.wpos == len(r.buf) {
			r.long = append(r.long, r.buf[:r.wpos]...)
			r.wpos = 0
		}
		n, err := r.r.Read(r.buf[r.wpos:])
		r.wpos += n
		if err != nil {
			r.rerr = err
		} else if n == 0 {
			if empty++; empty > 100 {
				r.rerr = io.ErrNoProgress
			}
		}
	}
}

// tooLarge makes ErrEventTooLarge the reader's sticky error and drops what
// is buffered.
func (r *EventReader) tooLarge() error {
	r.rerr = ErrEventTooLarge
	r.rpos, r.wpos = 0, 0
	r.long = r.long[:0]
	r.skipLF = false
	return r.rerr
}

// indexEOL returns the index of the first "\r" or "\n" in b, or -1.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	var j int
	if i >= 0 {
		j = bytes.IndexByte(b[:i], '\r')
	} else {
		j = bytes.IndexByte(b, '\r')
	}
	if j >= 0 {
		return j
	}
	return i
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}
