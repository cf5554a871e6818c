package traceimport

// The aiperf format: AIPerf's custom datasets and genai-perf's input
// files, as AIPerf's "Custom Dataset Guide" (docs/tutorials/custom-dataset.md,
// ai-dynamo/aiperf) describes them:
//   - single_turn (and random_pool, the same lines): JSONL of {"text": ...}
//     or {"texts": [...]}, optional "output_length" (max tokens),
//     "timestamp" (ms) or "delay" (ms after the previous request), "role",
//     "extra" (keys merged into the request body: temperature, seed, ...),
//     and media keys (image, images, audio, audios, video, videos);
//     genai-perf's input files write the text as "text_input".
//   - multi_turn: JSONL of {"session_id", "turns": [turn, ...]}, each turn
//     the keys above, "delay" being the wait before the turn; a leading
//     turn with "role": "system" is the conversation's system prompt,
//     sent with every turn, not a turn of its own.
// A random_pool is sampled with replacement by AIPerf; perfgate imports
// each entry once (the load shape decides how often requests are sent).
// AIPerf's mooncake_trace is --from mooncake.

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/workload"
)

var (
	aiperfTurnKeys  = []string{"text", "texts", "text_input", "role", "output_length", "max_tokens", "timestamp", "delay", "extra", "type", "image", "images", "audio", "audios", "video", "videos"}
	aiperfMedia     = []string{"image", "images", "audio", "audios", "video", "videos"}
	aiperfTypes     = []string{"single_turn", "multi_turn", "random_pool"}
	aiperfMultiKeys = []string{"session_id", "turns", "type"}
)

// aiperfTurn is one turn (or single-turn line) as read.
type aiperfTurn struct {
	text, role       string
	hasText          bool
	timestamp, delay *float64
	req              workload.Request // max_tokens and the extra keys
	hasMax           bool
	unsupported      string
	dropped          []string
}

// aiperf reads the aiperf format: single-turn or multi-turn lines, one
// kind a file.
func (im *importer) aiperf(r io.Reader) error {
	seq := 0
	firstKind, firstLine := "", 0
	var clock float64 // single-turn: the time the delays add up to
	usedDelay, usedStamp := 0, 0
	// untimed holds, for each single-turn request with neither key, its
	// index in im.at and the clock when it was read: once a line uses
	// delays, a missing delay is 0 (as AIPerf reads it), on the lines
	// before the first delay too.
	type untimed struct {
		i     int
		clock float64
	}
	var pending []untimed
	err := workload.ReadLines(safeio.LimitReader(r, workload.MaxFileBytes, im.File), im.File, func(n int, line []byte) {
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		seq++
		members, ok := im.members(n, "", line)
		if !ok {
			return
		}
		kind := "single-turn"
		for _, m := range members {
			if m.Key == "turns" {
				kind = "multi-turn"
			}
		}
		if firstKind == "" {
			firstKind, firstLine = kind, n
		} else if kind != firstKind {
			im.Errorf(n, "", "a %s line in a %s file (line %d): AIPerf reads one kind a file", kind, firstKind, firstLine)
			return
		}
		if kind == "multi-turn" {
			im.aiperfSession(n, seq, members)
			return
		}
		t, ok := im.aiperfTurnOf(n, "", members, aiperfTurnKeys)
		if !ok {
			return
		}
		var at *float64
		switch {
		case t.timestamp != nil && t.delay != nil:
			im.Errorf(n, "delay", "not allowed together with timestamp: give one")
			return
		case t.timestamp != nil:
			usedStamp, at = n, t.timestamp
		case t.delay != nil:
			usedDelay = n
			clock += *t.delay
			v := clock
			at = &v
		}
		if usedDelay > 0 && usedStamp > 0 {
			im.Errorf(n, "", "timestamps (line %d) and delays (line %d) in one file: give one kind", usedStamp, usedDelay)
			return
		}
		added := len(im.at)
		im.aiperfAdd(n, "", seq, t, []workload.Message{{Role: roleOr(t.role), Content: t.text}}, at, "", 0, nil)
		if at == nil && len(im.at) > added {
			pending = append(pending, untimed{added, clock})
		}
	})
	if err := im.readErr(err); err != nil {
		return err
	}
	key := "timestamp"
	if usedDelay > 0 && usedStamp == 0 {
		key = "delay"
		for _, p := range pending {
			v := p.clock // no delay: sent with the previous one
			im.at[p.i] = &v
		}
	}
	im.checkTimes(key)
	return nil
}

func roleOr(r string) string {
	if r == "" {
		return "user"
	}
	return r
}

// aiperfAdd adds one request built from turn t.
func (im *importer) aiperfAdd(n int, prefix string, seq int, t aiperfTurn, msgs []workload.Message, at *float64, session string, turn int, think *float64) {
	if t.unsupported != "" {
		im.sum.Skipped.add(t.unsupported)
		return
	}
	before := im.Count()
	req := t.req
	defaulted := im.maxTokens(n, prefix+"output_length", t.hasMax, &req, "the line gives neither output_length nor max_tokens")
	if im.Count() > before {
		return
	}
	req.Messages = msgs
	if session != "" {
		req.SessionID, req.Turn, req.ThinkMS = session, turn, think
		req.ID = session + "-t" + itoa(turn)
	} else {
		req.ID = im.id("", seq)
	}
	if !im.add(n, prefix, req, at) {
		return
	}
	for _, k := range t.dropped {
		im.sum.Dropped.add(k)
	}
	if defaulted {
		im.sum.Defaulted++
	}
}

// aiperfTurnOf reads a turn's members (keys from allowed); prefix starts
// its key paths.
func (im *importer) aiperfTurnOf(n int, prefix string, members []workload.Member, allowed []string) (aiperfTurn, bool) {
	before := im.Count()
	var t aiperfTurn
	for _, m := range members {
		field := prefix + m.Key
		if null(m) {
			continue
		}
		f := workload.Member{Key: field, Raw: m.Raw}
		switch m.Key {
		case "text", "text_input":
			if t.hasText {
				im.Errorf(n, field, "not allowed together with another text key (text, texts, text_input)")
				continue
			}
			t.hasText = im.Decode(n, f, &t.text, "string")
		case "texts":
			if t.hasText {
				im.Errorf(n, field, "not allowed together with another text key (text, texts, text_input)")
				continue
			}
			var ss []string
			if m.Raw[0] != '[' || json.Unmarshal(m.Raw, &ss) != nil {
				im.Errorf(n, field, "want an array of strings, got %s", workload.Describe(m.Raw))
				continue
			}
			t.text, t.hasText = strings.Join(ss, "\n"), true
		case "role":
			im.Decode(n, f, &t.role, "string")
		case "output_length", "max_tokens":
			var v int
			if im.Decode(n, f, &v, "integer") {
				if t.hasMax && v != t.req.MaxTokens {
					im.Errorf(n, field, "%d differs from the other max tokens key's %d: give one", v, t.req.MaxTokens)
				}
				t.req.MaxTokens, t.hasMax = v, true
			}
		case "timestamp", "delay":
			var v float64
			if im.Decode(n, f, &v, "number") {
				if v < 0 || v > workload.MaxArrivalMS {
					im.Errorf(n, field, "want milliseconds from 0 to 1e9, got %s", workload.Describe(m.Raw))
				} else if m.Key == "timestamp" {
					t.timestamp = &v
				} else {
					t.delay = &v
				}
			}
		case "extra":
			extra, ok := im.members(n, field, m.Raw)
			if !ok {
				continue
			}
			for _, e := range extra {
				if null(e) || im.sampling(n, field+".", e, &t.req) {
					continue
				}
				t.dropped = append(t.dropped, "extra."+e.Key)
			}
		case "type":
			var typ string
			if im.Decode(n, f, &typ, "string") && !slices.Contains(aiperfTypes, typ) {
				im.Errorf(n, field, "want one of %s, got %q", strings.Join(aiperfTypes, ", "), typ)
			}
		default:
			switch {
			case !slices.Contains(allowed, m.Key):
				im.unknownKey(n, prefix, m.Key, allowed)
			case slices.Contains(aiperfMedia, m.Key) && im.o.SkipUnsupported:
				t.unsupported = m.Key + " (media)"
			case slices.Contains(aiperfMedia, m.Key):
				im.Errorf(n, field, "perfgate sends text only (--skip-unsupported skips such lines, and counts them)")
			}
		}
	}
	if !t.hasText && t.unsupported == "" && im.Count() == before {
		im.Errorf(n, prefix+"text", "required: the turn's text (text, texts or text_input)")
	}
	return t, im.Count() == before
}

// aiperfSession reads a multi-turn line as a session.
func (im *importer) aiperfSession(n, seq int, members []workload.Member) {
	before := im.Count()
	var sid string
	var turnsRaw json.RawMessage
	for _, m := range members {
		if null(m) {
			continue
		}
		switch m.Key {
		case "session_id":
			if im.Decode(n, m, &sid, "string") && sid == "" {
				im.Errorf(n, "session_id", "must not be empty")
			}
		case "turns":
			turnsRaw = m.Raw
		case "type":
			var typ string
			if im.Decode(n, m, &typ, "string") && typ != "multi_turn" {
				im.Errorf(n, "type", "want multi_turn in a line with turns, got %q", typ)
			}
		default:
			im.unknownKey(n, "", m.Key, aiperfMultiKeys)
		}
	}
	var elems []json.RawMessage
	if len(turnsRaw) == 0 || turnsRaw[0] != '[' {
		im.Errorf(n, "turns", "want an array of turns, got %s", workload.Describe(turnsRaw))
	} else {
		_ = json.Unmarshal(turnsRaw, &elems)
	}
	if im.Count() > before {
		return
	}
	var turns []aiperfTurn
	for i, e := range elems {
		prefix := "turns[" + itoa(i) + "]."
		ms, ok := im.members(n, strings.TrimSuffix(prefix, "."), e)
		if !ok {
			continue
		}
		if t, ok := im.aiperfTurnOf(n, prefix, ms, aiperfTurnKeys); ok {
			turns = append(turns, t)
		}
	}
	if im.Count() > before {
		return
	}
	var system []workload.Message
	first := 0
	if len(turns) > 0 && turns[0].role == "system" && turns[0].timestamp == nil && turns[0].delay == nil && !turns[0].hasMax {
		system = []workload.Message{{Role: "system", Content: turns[0].text}}
		first = 1
	}
	if len(turns)-first == 0 {
		im.sum.Skipped.add("session without turns")
		return
	}
	if len(turns)-first > workload.MaxTurns {
		im.Errorf(n, "turns", "%d turns, more than the %d a session may have", len(turns)-first, workload.MaxTurns)
		return
	}
	for i, t := range turns[first:] {
		if t.role != "" && t.role != "user" {
			im.Errorf(n, "turns["+itoa(first+i)+"].role", "want user (or system on the first turn: the conversation's system prompt), got %q", t.role)
			return
		}
		if t.unsupported != "" {
			im.sum.Skipped.add("session with " + t.unsupported)
			return
		}
	}
	session := im.id(sid, seq)
	for i, t := range turns[first:] {
		k := i + 1
		prefix := "turns[" + itoa(first+i) + "]."
		var at, think *float64
		if k == 1 {
			at = t.timestamp
			if t.delay != nil {
				t.dropped = append(t.dropped, "turns[].delay (first turn)")
			}
		} else {
			think = t.delay
			if t.timestamp != nil {
				t.dropped = append(t.dropped, "turns[].timestamp (later turn: sent after the previous one's end plus its delay)")
			}
		}
		msgs := []workload.Message{{Role: "user", Content: t.text}}
		if k == 1 {
			msgs = append(system, msgs...)
		}
		im.aiperfAdd(n, prefix, seq, t, msgs, at, session, k, think)
	}
}
