package traceimport

// The sharegpt format: the ShareGPT conversations vLLM's serving benchmark
// reads (vllm benchmarks' ShareGPTDataset; the dataset card of
// anon8231489123/ShareGPT_Vicuna_unfiltered; AIPerf's "Profile with
// ShareGPT Dataset"): a JSON array (or JSONL) of {"id", "conversations":
// [{"from": "human" | "gpt" | "system", "value": text}, ...]}. Like vLLM's
// benchmark, the default takes each conversation's first human turn as one
// request, with max_tokens the length of the recorded answer (here in
// words, as perfgate's simulator counts tokens). --sessions imports the
// whole conversation as a session: each turn carries only its human
// message, since perfgate carries the conversation (with the server's own
// answers) at run time.
//
// The file is usually one large array: it is read with a bounded reader
// and decoded one conversation at a time, so memory grows with the
// requests written, not with the file.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/workload"
)

// sharegptRoles maps a turn's "from" to a chat role.
var sharegptRoles = map[string]string{"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "system": "system"}

// sharegpt reads the sharegpt format: a JSON array or JSONL.
func (im *importer) sharegpt(r io.Reader) error {
	lt := &lineTracker{r: safeio.LimitReader(r, workload.MaxFileBytes, im.File)}
	br := bufio.NewReaderSize(lt, 64<<10)
	for {
		b, err := br.Peek(1)
		if err != nil {
			break // empty: Import says "no requests"
		}
		if b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n' {
			_, _ = br.ReadByte()
			continue
		}
		if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
			_, _ = br.Discard(3)
			continue
		}
		if b[0] != '[' {
			break
		}
		return im.sharegptArray(br, lt)
	}
	seq := 0
	err := workload.ReadLines(br, im.File, func(n int, line []byte) {
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		seq++
		im.sharegptConversation(n, seq, line)
	})
	return im.readErr(err)
}

// sharegptArray decodes a JSON array one element at a time.
func (im *importer) sharegptArray(br *bufio.Reader, lt *lineTracker) error {
	base := lt.n - int64(br.Buffered()) // the offset br's next byte has in the file
	dec := json.NewDecoder(br)
	if _, err := dec.Token(); err != nil { // '['
		return im.jsonErr(lt, base, dec, err)
	}
	for seq := 1; dec.More(); seq++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return im.jsonErr(lt, base, dec, err)
		}
		// raw is the element's bytes exactly: it started len(raw) back.
		im.sharegptConversation(lt.lineAt(base+dec.InputOffset()-int64(len(raw))), seq, raw)
	}
	if _, err := dec.Token(); err != nil { // ']'
		return im.jsonErr(lt, base, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		im.Errorf(lt.lineAt(base+dec.InputOffset()), "", "want nothing after the array")
	}
	return nil
}

// jsonErr says a syntax error of the array, or a read error.
func (im *importer) jsonErr(lt *lineTracker, base int64, dec *json.Decoder, err error) error {
	var tooLarge *safeio.TooLargeError
	if errors.As(err, &tooLarge) {
		im.Errorf(0, "", "the file is larger than %s, the most perfgate reads in such a file", safeio.FormatBytes(tooLarge.Limit))
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			msg = "unexpected end of the file: the array is not closed"
		}
		im.Errorf(lt.lineAt(base+dec.InputOffset()), "", "invalid JSON: %s", msg)
		return nil
	}
	if _, ok := err.(*json.UnmarshalTypeError); ok {
		im.Errorf(lt.lineAt(base+dec.InputOffset()), "", "invalid JSON: %v", err)
		return nil
	}
	return err
}

// sharegptTurn is one message of a conversation.
type sharegptTurn struct{ role, text string }

// sharegptConversation reads one conversation (element seq, from line n).
func (im *importer) sharegptConversation(n, seq int, raw []byte) {
	members, ok := im.members(n, "", raw)
	if !ok {
		return
	}
	before := im.Count()
	var id string
	var convRaw json.RawMessage
	var dropped []string
	for _, m := range members {
		if null(m) {
			continue
		}
		switch m.Key {
		case "id":
			if m.Raw[0] == '"' {
				im.Decode(n, m, &id, "string")
			} else {
				id = string(m.Raw) // some copies number their conversations
				if m.Raw[0] == '{' || m.Raw[0] == '[' {
					im.Errorf(n, "id", "want a string, got %s", workload.Describe(m.Raw))
				}
			}
		case "conversations":
			convRaw = m.Raw
		default:
			dropped = append(dropped, m.Key)
		}
	}
	if convRaw == nil {
		im.Errorf(n, "conversations", "required: the conversation's turns")
		return
	}
	if convRaw[0] != '[' {
		im.Errorf(n, "conversations", "want an array of turns, got %s", workload.Describe(convRaw))
		return
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(convRaw, &elems)
	var turns []sharegptTurn
	for i, e := range elems {
		path := "conversations[" + itoa(i) + "]"
		ms, ok := im.members(n, path, e)
		if !ok {
			continue
		}
		var from, value string
		hasFrom, hasValue := false, false
		for _, m := range ms {
			if null(m) {
				continue
			}
			switch m.Key {
			case "from":
				hasFrom = im.Decode(n, workload.Member{Key: path + ".from", Raw: m.Raw}, &from, "string")
			case "value":
				hasValue = im.Decode(n, workload.Member{Key: path + ".value", Raw: m.Raw}, &value, "string")
			default:
				dropped = append(dropped, "conversations[]."+m.Key)
			}
		}
		role := sharegptRoles[from]
		switch {
		case !hasFrom && im.Count() == before:
			im.Errorf(n, path+".from", "required: human, gpt or system")
		case hasFrom && role == "":
			im.Errorf(n, path+".from", "want human, gpt or system, got %q", from)
		case !hasValue && im.Count() == before:
			im.Errorf(n, path+".value", "required: the turn's text")
		}
		turns = append(turns, sharegptTurn{role, value})
	}
	if im.Count() > before {
		return
	}
	// Merge neighbours of one role (two human messages in a row are one turn).
	var merged []sharegptTurn
	for _, t := range turns {
		if k := len(merged) - 1; k >= 0 && merged[k].role == t.role {
			merged[k].text += "\n" + t.text
			im.sum.note("consecutive messages from one side were joined with a newline into one turn")
			continue
		}
		merged = append(merged, t)
	}
	var system []workload.Message
	if len(merged) > 0 && merged[0].role == "system" {
		system = []workload.Message{{Role: "system", Content: merged[0].text}}
		merged = merged[1:]
	}
	switch {
	case len(merged) == 0:
		im.sum.Skipped.add("empty conversation")
		return
	case merged[0].role != "user":
		im.sum.Skipped.add("conversation starting with gpt")
		return
	case strings.TrimSpace(merged[0].text) == "":
		im.sum.Skipped.add("conversation whose first human turn is empty")
		return
	}
	// Turns: each human message with the recorded answer after it.
	type turn struct {
		text  string
		reply *string
	}
	var ts []turn
	for i, t := range merged {
		if t.role != "user" {
			if t.role == "system" {
				im.Errorf(n, "conversations", "a system turn after the start: perfgate sends the system prompt first")
				return
			}
			continue
		}
		var reply *string
		if i+1 < len(merged) && merged[i+1].role == "assistant" {
			reply = &merged[i+1].text
		}
		ts = append(ts, turn{t.text, reply})
	}
	fixed, _ := parseMaxTokensFrom(im.o.MaxTokensFrom)
	maxOut := im.o.MaxOutput
	if maxOut == 0 {
		maxOut = DefaultMaxOutput
	}
	maxFor := func(t turn) (int, bool) {
		if fixed > 0 {
			return fixed, true
		}
		if t.reply == nil {
			return 0, false
		}
		return min(max(len(strings.Fields(*t.reply)), 1), maxOut), true
	}
	if !im.o.Sessions {
		mt, ok := maxFor(ts[0])
		if !ok {
			im.sum.Skipped.add("conversation without a reply to size max_tokens")
			return
		}
		req := workload.Request{ID: im.id(id, seq), MaxTokens: mt, Messages: append(system, workload.Message{Role: "user", Content: ts[0].text})}
		if im.add(n, "", req, nil) {
			for _, k := range dropped {
				im.sum.Dropped.add(k)
			}
		}
		return
	}
	// A last human turn without an answer has no recorded length.
	if _, ok := maxFor(ts[len(ts)-1]); !ok && len(ts) > 1 {
		ts = ts[:len(ts)-1]
		im.sum.note("a conversation's last human turn without a reply is left out of its session (no length to give max_tokens)")
	}
	if _, ok := maxFor(ts[0]); !ok {
		im.sum.Skipped.add("conversation without a reply to size max_tokens")
		return
	}
	if len(ts) > workload.MaxTurns {
		ts = ts[:workload.MaxTurns]
		im.sum.note("a conversation longer than %d turns is cut to its first %d", workload.MaxTurns, workload.MaxTurns)
	}
	session := im.id(id, seq)
	for k, t := range ts {
		mt, _ := maxFor(t)
		req := workload.Request{ID: session + "-t" + itoa(k+1), MaxTokens: mt, SessionID: session, Turn: k + 1}
		req.Messages = []workload.Message{{Role: "user", Content: t.text}}
		if k == 0 {
			req.Messages = append(system, req.Messages...)
		} else {
			req.ThinkMS = im.o.ThinkMS
		}
		if !im.add(n, "", req, nil) {
			return
		}
	}
	for _, k := range dropped {
		im.sum.Dropped.add(k)
	}
}

// lineTracker counts the lines of what is read through it, so that an
// offset in the stream can be said as a line; it keeps only the newlines
// not yet passed, so memory stays bounded by the reader's read-ahead.
type lineTracker struct {
	r     io.Reader
	n     int64   // bytes read
	nl    []int64 // offsets of newlines not yet passed
	lines int     // newlines passed
}

func (t *lineTracker) Read(p []byte) (int, error) {
	k, err := t.r.Read(p)
	for i, b := range p[:k] {
		if b == '\n' {
			t.nl = append(t.nl, t.n+int64(i))
		}
	}
	t.n += int64(k)
	return k, err
}

// lineAt returns the 1-based line of offset off; offsets asked for must
// not go down.
func (t *lineTracker) lineAt(off int64) int {
	i := 0
	for i < len(t.nl) && t.nl[i] < off {
		i++
	}
	t.lines += i
	t.nl = t.nl[i:]
	return t.lines + 1
}
