package client

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// usage is a chunk's usage object as read. Both decoders fill it from the
// same raw bytes of each count (see set), so they agree on it.
type usage struct {
	PromptTokens     int64
	CompletionTokens int64
	// ReasoningTokens is completion_tokens_details.reasoning_tokens, of the
	// completion tokens; HasReasoning says it was a readable count (one
	// that is not is ignored: the usage's own counts still hold).
	ReasoningTokens int64
	HasReasoning    bool
	// unreadable says why the object or one of its counts could not be read
	// as a whole number, as a phrase ("completion_tokens is 1.5, not a whole
	// number"); "" when it could.
	unreadable string
}

// set reads the raw JSON value of a count (keyPrompt or keyCompletion). When
// both counts are unreadable, prompt_tokens is named, in whichever order they
// came.
func (u *usage) set(key int, raw []byte) {
	name, dst := "prompt_tokens", &u.PromptTokens
	if key == keyCompletion {
		name, dst = "completion_tokens", &u.CompletionTokens
	}
	n, why := readCount(raw)
	*dst = n
	if why != "" && (key == keyPrompt || u.unreadable == "") {
		u.unreadable = name + " is " + shortJSON(raw) + ", " + why
	}
}

// readCount reads a token count the way perfgate believes one: a JSON
// integer within int64 (or null, which is 0: absent). Anything else gives 0
// and why it is not a count. It never allocates for a valid count and never
// overflows: encoding/json would refuse 9e18, 1.5 and "12" for an int field
// and wrap nothing, but it would fail the whole chunk; here only the usage is
// refused.
func readCount(raw []byte) (n int64, why string) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, ""
	}
	switch c := raw[0]; {
	case c == '"':
		return 0, "a string, not a number"
	case c != '-' && (c < '0' || c > '9'):
		return 0, "not a number"
	}
	neg := raw[0] == '-'
	digits := raw
	if neg {
		digits = raw[1:]
	}
	if len(digits) == 0 {
		return 0, "not a number"
	}
	var v uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, "not a whole number" // a fraction or an exponent
		}
		if v > (math.MaxInt64-uint64(c-'0'))/10 {
			return 0, "past the range of a count"
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		return -int64(v), ""
	}
	return int64(v), ""
}

// notAnObject is the unreadable phrase for a usage value that is not an object.
func notAnObject(raw []byte) string {
	return "usage is " + shortJSON(raw) + ", not an object"
}

// shortJSON quotes a raw JSON value for a message: at most 40 bytes of it, as
// valid UTF-8.
func shortJSON(raw []byte) string {
	const most = 40
	if len(raw) > most {
		return strings.ToValidUTF8(string(raw[:most]), "\uFFFD") + "..."
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD")
}

// readUsage reads a usage member for the slow path: raw is its value, known
// to be valid JSON.
func readUsage(raw json.RawMessage) (u usage, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return usage{}, false
	}
	if raw[0] != '{' {
		return usage{unreadable: notAnObject(raw)}, true
	}
	var v struct {
		PromptTokens     json.RawMessage `json:"prompt_tokens"`
		CompletionTokens json.RawMessage `json:"completion_tokens"`
		Details          json.RawMessage `json:"completion_tokens_details"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return usage{unreadable: "usage is not a valid object"}, true
	}
	u.set(keyPrompt, v.PromptTokens)
	u.set(keyCompletion, v.CompletionTokens)
	if len(v.Details) > 0 && v.Details[0] == '{' {
		var d struct {
			Reasoning json.RawMessage `json:"reasoning_tokens"`
		}
		if json.Unmarshal(v.Details, &d) == nil {
			u.setReasoning(d.Reasoning)
		}
	}
	return u, true
}

// setReasoning reads completion_tokens_details.reasoning_tokens: a count of
// 0 or more, else ignored.
func (u *usage) setReasoning(raw []byte) {
	if n, why := readCount(raw); why == "" && n >= 0 && len(raw) > 0 && string(raw) != "null" {
		u.ReasoningTokens, u.HasReasoning = n, true
	}
}

// checkUsage returns why u cannot be believed for a response whose stream
// carried chunks chunks of output and whose request asked for at most
// maxTokens (<= 0: no limit); "" if it can. The rules are those documented on
// Response.UsageRefused.
func checkUsage(u usage, chunks, maxTokens int) string {
	if u.unreadable != "" {
		return "the server's usage was refused: " + u.unreadable
	}
	counts := [2]struct {
		name string
		n    int64
	}{{"prompt_tokens", u.PromptTokens}, {"completion_tokens", u.CompletionTokens}}
	for _, c := range counts {
		if c.n < 0 {
			return fmt.Sprintf("the server's usage was refused: %s is %d, and a count cannot be negative", c.name, c.n)
		}
		if c.n > MaxUsageTokens {
			return fmt.Sprintf("the server's usage was refused: %s is %d, more than %d, the most perfgate believes", c.name, c.n, MaxUsageTokens)
		}
	}
	out := u.CompletionTokens
	switch {
	case maxTokens > 0 && out > int64(maxTokens):
		return fmt.Sprintf("the server's usage was refused: completion_tokens is %d, more than the request's max_tokens %d", out, maxTokens)
	case chunks > 0 && out == 0:
		return "the server's usage was refused: completion_tokens is 0, yet " + plural(chunks, "chunk") + " of output arrived"
	case 2*out < int64(chunks):
		return fmt.Sprintf("the server's usage was refused: completion_tokens is %d, less than half of the %d chunks of output that arrived", out, chunks)
	}
	return ""
}

// A token decodes to at least one byte of text, bar special tokens (an
// end-of-sequence token, the tokens of a stop string, a chat template's own
// markers and default system prompt): the slacks cover those.
const (
	outputTokenSlack       = 16
	promptTokensPerMessage = 64
	promptTemplateSlack    = 4096
)

// checkUsageSize returns why u claims more tokens than the text could hold:
// more completion tokens than the outBytes of output text (reasoning
// included) in chunks chunks, or more prompt tokens than the request's
// promptBytes of text in promptMessages messages and a chat template (not
// checked when promptBytes is 0, unknown); "" if neither.
func checkUsageSize(u usage, outBytes, chunks, promptBytes, promptMessages int) string {
	if most := int64(outBytes + chunks + outputTokenSlack); u.CompletionTokens > most {
		return fmt.Sprintf("the server's usage was refused: completion_tokens is %d, more than the %s of output text that arrived can hold (a token is at least a byte)",
			u.CompletionTokens, plural(outBytes, "byte"))
	}
	if promptBytes > 0 {
		if most := int64(promptBytes + promptTokensPerMessage*promptMessages + promptTemplateSlack); u.PromptTokens > most {
			return fmt.Sprintf("the server's usage was refused: prompt_tokens is %d, more than the request's %s of text and a chat template can hold",
				u.PromptTokens, plural(promptBytes, "byte"))
		}
	}
	return ""
}

// plural writes "1 chunk" or "n chunks".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
