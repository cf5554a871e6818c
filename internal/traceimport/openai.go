package traceimport

// The openai format: JSONL of OpenAI request bodies, as a gateway logs
// them or as the Batch API reads them. Shapes relied on:
//   - Chat Completions and Completions request bodies (OpenAI API
//     reference, "Create chat completion" and "Create completion"):
//     messages (role; content a string or an array of content parts,
//     {"type": "text", "text": ...}, {"type": "image_url", ...},
//     {"type": "input_audio", ...}), prompt, max_tokens and its newer name
//     max_completion_tokens, temperature, top_p, seed, response_format,
//     tools, tool_choice, n; assistant messages' tool_calls and tool
//     messages' tool_call_id. min_tokens and ignore_eos are vLLM's
//     extensions of the same bodies.
//   - Batch API input lines (OpenAI's Batch guide, and the providers that
//     follow it, e.g. Together's and Novita's batch docs): {"custom_id",
//     "method": "POST", "url": "/v1/chat/completions", "body": {...}}.
//   - a logging wrapper, perfgate's own small shape (there is no standard
//     one): {"timestamp": RFC 3339 text or Unix seconds, "body" or
//     "request": {...}, "id"?: text}.
// Text content parts are joined with "\n", as vLLM joins them.

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/workload"
)

// openaiIgnored are body keys perfgate sets itself when it sends.
var openaiIgnored = []string{"model", "stream", "stream_options", "n"}

// openaiURLs are the Batch API urls whose bodies perfgate can replay, and
// the API each is.
var openaiURLs = map[string]string{"/v1/chat/completions": "chat", "/v1/completions": "completions"}

// openai reads the openai format.
func (im *importer) openai(r io.Reader) error {
	err := workload.ReadLines(safeio.LimitReader(r, workload.MaxFileBytes, im.File), im.File, im.openaiLine)
	if err := im.readErr(err); err != nil {
		return err
	}
	im.checkTimes("timestamp")
	return nil
}

// openaiLine reads one line: a Batch API line, a logging wrapper or a body.
func (im *importer) openaiLine(n int, line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	members, ok := im.members(n, "", line)
	if !ok {
		return
	}
	has := func(k string) bool {
		return slices.ContainsFunc(members, func(m workload.Member) bool { return m.Key == k })
	}
	switch {
	case has("custom_id") || has("url") || has("method"):
		im.openaiBatch(n, members)
	case has("timestamp") || has("request") || (has("body") && !has("messages") && !has("prompt")):
		im.openaiWrapper(n, members)
	default:
		im.openaiBody(n, "", members, "", "", nil)
	}
}

// openaiBatch reads a Batch API input line.
func (im *importer) openaiBatch(n int, members []workload.Member) {
	before := im.Count()
	var id, method, url string
	var body []workload.Member
	seen := map[string]bool{}
	for _, m := range members {
		if null(m) {
			continue
		}
		seen[m.Key] = true
		switch m.Key {
		case "custom_id":
			if im.Decode(n, m, &id, "string") && id == "" {
				im.Errorf(n, "custom_id", "must not be empty")
			}
		case "method":
			if im.Decode(n, m, &method, "string") && method != "POST" {
				im.Errorf(n, "method", "want POST, got %q", method)
			}
		case "url":
			if im.Decode(n, m, &url, "string") && openaiURLs[url] == "" {
				im.Errorf(n, "url", "want /v1/chat/completions or /v1/completions (the APIs perfgate replays), got %q", url)
			}
		case "body":
			body, _ = im.members(n, "body", m.Raw)
		default:
			im.unknownKey(n, "", m.Key, []string{"custom_id", "method", "url", "body"})
		}
	}
	for _, k := range []string{"custom_id", "method", "url", "body"} {
		if !seen[k] {
			im.Errorf(n, k, "required in a Batch API line (custom_id, method, url, body)")
		}
	}
	if im.Count() > before {
		return
	}
	im.openaiBody(n, "body.", body, id, openaiURLs[url], nil)
}

// openaiWrapper reads a logged request: {"timestamp", "body"|"request", "id"}.
func (im *importer) openaiWrapper(n int, members []workload.Member) {
	before := im.Count()
	var id, bodyKey string
	var body []workload.Member
	var at *float64
	for _, m := range members {
		if null(m) {
			continue
		}
		switch m.Key {
		case "id":
			if im.Decode(n, m, &id, "string") && id == "" {
				im.Errorf(n, "id", "must not be empty")
			}
		case "timestamp":
			at = im.timestamp(n, m)
		case "body", "request":
			if bodyKey != "" {
				im.Errorf(n, m.Key, "not allowed together with %s: a logged line holds one request", bodyKey)
				continue
			}
			bodyKey = m.Key
			body, _ = im.members(n, m.Key, m.Raw)
		default:
			im.unknownKey(n, "", m.Key, []string{"timestamp", "body", "request", "id"})
		}
	}
	if bodyKey == "" {
		im.Errorf(n, "body", "required in a logged line: the request body, as body or request")
	}
	if im.Count() > before {
		return
	}
	im.openaiBody(n, bodyKey+".", body, id, "", at)
}

// timestamp reads a logged time, RFC 3339 text or Unix seconds, in ms.
func (im *importer) timestamp(n int, m workload.Member) *float64 {
	if m.Raw[0] == '"' {
		var s string
		_ = json.Unmarshal(m.Raw, &s)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			im.Errorf(n, m.Key, "want RFC 3339 time (2025-01-02T15:04:05.5Z) or Unix seconds, got %q", s)
			return nil
		}
		// Whole ms and the fraction apart, so that differences stay exact.
		v := float64(t.UnixMilli()) + float64(t.Nanosecond()%1e6)/1e6
		return &v
	}
	var sec float64
	if !im.Decode(n, m, &sec, "number") {
		return nil
	}
	if sec < 0 || sec > 1e11 {
		im.Errorf(n, m.Key, "want Unix seconds from 0 to 1e11, got %s", workload.Describe(m.Raw))
		return nil
	}
	v := sec * 1000
	return &v
}

// openaiBody reads a request body (its members); prefix starts its key
// paths ("body."), srcID is the source's id, api the API its url names
// ("" when none does), at its time in ms.
func (im *importer) openaiBody(n int, prefix string, members []workload.Member, srcID, api string, at *float64) {
	before := im.Count()
	var (
		req             workload.Request
		hasMsgs, hasPr  bool
		maxKey          string
		unsupported     string
		dropped, ignore []string
	)
	for _, m := range members {
		field := prefix + m.Key
		if null(m) {
			continue
		}
		switch m.Key {
		case "messages":
			hasMsgs = true
			var drop []string
			req.Messages, unsupported, drop = im.openaiMessages(n, field, m.Raw)
			dropped = append(dropped, drop...)
		case "prompt":
			hasPr = true
			req.Prompt = im.prompt(n, field, m.Raw)
		case "max_tokens", "max_completion_tokens":
			var v int
			if !im.Decode(n, workload.Member{Key: field, Raw: m.Raw}, &v, "integer") {
				continue
			}
			if maxKey != "" && v != req.MaxTokens {
				im.Errorf(n, field, "%d differs from %s%s %d: give one", v, prefix, maxKey, req.MaxTokens)
				continue
			}
			maxKey, req.MaxTokens = m.Key, v
		case "model":
			if !im.o.KeepModels {
				ignore = append(ignore, m.Key)
				continue
			}
			if im.Decode(n, workload.Member{Key: field, Raw: m.Raw}, &req.Model, "string") {
				switch {
				case req.Model == "":
					im.Errorf(n, field, "must not be empty with --models (leave it out, or null, for the target's model)")
				case len(req.Model) > workload.MaxModelName:
					im.Errorf(n, field, "%d bytes, more than the %d a model or adapter name may have", len(req.Model), workload.MaxModelName)
				case strings.IndexFunc(req.Model, unicode.IsControl) >= 0:
					im.Errorf(n, field, "has a control character")
				}
			}
		case "n":
			var v int
			if im.Decode(n, workload.Member{Key: field, Raw: m.Raw}, &v, "integer") && v != 1 {
				im.Errorf(n, field, "want 1 (perfgate asks for one completion a request), got %d", v)
			}
			ignore = append(ignore, m.Key)
		default:
			switch {
			case im.sampling(n, prefix, m, &req):
			case slices.Contains(openaiIgnored, m.Key):
				ignore = append(ignore, m.Key)
			default:
				dropped = append(dropped, m.Key)
			}
		}
	}
	switch {
	case hasMsgs && hasPr:
		im.Errorf(n, prefix+"prompt", "not allowed together with messages: a chat body has messages, a completions body prompt")
	case !hasMsgs && !hasPr:
		im.Errorf(n, prefix+"messages", "required: a chat body has messages, a completions body prompt")
	case api == "chat" && hasPr:
		im.Errorf(n, prefix+"prompt", "the url is /v1/chat/completions, whose body has messages, not prompt")
	case api == "completions" && hasMsgs:
		im.Errorf(n, prefix+"messages", "the url is /v1/completions, whose body has prompt, not messages")
	}
	if unsupported != "" && im.Count() == before {
		im.sum.Skipped.add(unsupported)
		return
	}
	defaulted := im.maxTokens(n, prefix+"max_tokens", maxKey != "", &req, "the body has neither max_tokens nor max_completion_tokens")
	if im.Count() > before {
		return
	}
	req.ID = im.id(srcID, n)
	if !im.add(n, prefix, req, at) {
		return
	}
	for _, k := range dropped {
		im.sum.Dropped.add(k)
	}
	for _, k := range ignore {
		im.sum.Ignored.add(k)
	}
	if defaulted {
		im.sum.Defaulted++
	}
}

// openaiMessages reads a messages array: each message's role and text;
// unsupported names a content part perfgate cannot send (with
// SkipUnsupported; else it is an error), dropped the message keys left out.
func (im *importer) openaiMessages(n int, field string, raw json.RawMessage) (msgs []workload.Message, unsupported string, dropped []string) {
	if raw[0] != '[' {
		im.Errorf(n, field, "want an array of messages, got %s", workload.Describe(raw))
		return nil, "", nil
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems) // cannot fail: raw is a valid array
	dropSeen := map[string]bool{}
	for i, e := range elems {
		path := field + "[" + itoa(i) + "]"
		members, ok := im.members(n, path, e)
		if !ok {
			continue
		}
		var msg workload.Message
		for _, m := range members {
			if null(m) {
				continue
			}
			switch m.Key {
			case "role":
				if im.Decode(n, workload.Member{Key: path + ".role", Raw: m.Raw}, &msg.Role, "string") && msg.Role == "developer" {
					msg.Role = "system"
					im.sum.note("the developer role is sent as system (perfgate's roles: system, user, assistant, tool)")
				}
			case "content":
				var u string
				msg.Content, u = im.content(n, path+".content", m.Raw)
				if u != "" && unsupported == "" {
					unsupported = u
				}
			default:
				k := "messages[]." + m.Key
				if !dropSeen[k] {
					dropSeen[k] = true
					dropped = append(dropped, k)
				}
			}
		}
		msgs = append(msgs, msg)
	}
	return msgs, unsupported, dropped
}

// content reads a message's content: a string, or an array of content
// parts whose text parts are joined with "\n". A part of another type is
// an error, or with SkipUnsupported its reason is returned.
func (im *importer) content(n int, field string, raw json.RawMessage) (text, unsupported string) {
	if raw[0] == '"' {
		_ = json.Unmarshal(raw, &text)
		return text, ""
	}
	if raw[0] != '[' {
		im.Errorf(n, field, "want a string or an array of content parts, got %s", workload.Describe(raw))
		return "", ""
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems)
	var texts []string
	for i, e := range elems {
		path := field + "[" + itoa(i) + "]"
		members, ok := im.members(n, path, e)
		if !ok {
			continue
		}
		var typ, txt string
		hasText := false
		for _, m := range members {
			switch m.Key {
			case "type":
				im.Decode(n, workload.Member{Key: path + ".type", Raw: m.Raw}, &typ, "string")
			case "text":
				hasText = im.Decode(n, workload.Member{Key: path + ".text", Raw: m.Raw}, &txt, "string")
			}
		}
		switch {
		case typ == "text" && hasText:
			texts = append(texts, txt)
		case typ == "text":
			im.Errorf(n, path+".text", "required in a text part")
		case typ == "":
			im.Errorf(n, path+".type", "required: the part's type (text; perfgate sends text only)")
		case im.o.SkipUnsupported:
			if unsupported == "" {
				unsupported = typ + " content part"
			}
		default:
			im.Errorf(n, path, "a %s part: perfgate sends text only (--skip-unsupported skips such requests, and counts them)", typ)
		}
	}
	return strings.Join(texts, "\n"), unsupported
}

// prompt reads a completions prompt: a string, or an array of one string.
func (im *importer) prompt(n int, field string, raw json.RawMessage) string {
	var s string
	if raw[0] == '[' {
		var ss []string
		if json.Unmarshal(raw, &ss) == nil && len(ss) == 1 {
			return ss[0]
		}
		im.Errorf(n, field, "want a string (or an array of one string: perfgate sends one prompt a request), got %s", workload.Describe(raw))
		return ""
	}
	im.Decode(n, workload.Member{Key: field, Raw: raw}, &s, "string")
	return s
}
