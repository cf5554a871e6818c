package traceimport

import (
	"errors"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/workload"
)

// The helpers every format shares: reading an object's members, the
// sampling keys perfgate carries, and max_tokens.

// readErr folds a reading error into the problems when it is about a line
// (a line too long, a file too large), so that it is said with the rest;
// another error (the reader failed) is returned.
func (im *importer) readErr(err error) error {
	var le *workload.LineError
	if errors.As(err, &le) {
		im.Add(le)
		return nil
	}
	return err
}

// members splits raw, the value at field (the whole line when ""), into an
// object's members, reporting a value that is not an object. raw is valid
// JSON unless it is a whole line. Every object of every format is split
// here, so here a key given twice is reported (a second "body" must not
// silently replace the first); the repeats are left out of what is
// returned, so the rest of the object is still checked.
func (im *importer) members(n int, field string, raw []byte) ([]workload.Member, bool) {
	members, msg, col := workload.ObjectMembers(raw)
	if msg == "" {
		return im.unique(n, field, members), true
	}
	if field != "" {
		col = 0
		msg = strings.Replace(msg, "a JSON object", "an object", 1)
	}
	im.Add(&workload.LineError{File: im.File, Line: n, Column: col, Field: field, Msg: msg})
	return nil, false
}

// unique reports each key of members (the object at field) given more
// than once, and returns members with only its first occurrence.
func (im *importer) unique(n int, field string, members []workload.Member) []workload.Member {
	prefix := ""
	if field != "" {
		prefix = field + "."
	}
	seen := make(map[string]bool, len(members))
	out := members[:0:0]
	for _, m := range members {
		if seen[m.Key] {
			im.Errorf(n, prefix+m.Key, "key appears more than once")
			continue
		}
		seen[m.Key] = true
		out = append(out, m)
	}
	return out
}

// null reports whether a member's value is null, which every format reads
// as the key left out.
func null(m workload.Member) bool { return string(m.Raw) == "null" }

// unknownKey reports a key the format does not have.
func (im *importer) unknownKey(n int, prefix, key string, keys []string) {
	im.Errorf(n, prefix+key, "unknown key%s; want one of %s", workload.DidYouMean(key, keys), strings.Join(keys, ", "))
}

// sampling reads one of the request keys perfgate carries as they are
// (temperature, top_p, seed, min_tokens, ignore_eos, response_format,
// tools, tool_choice) into req, and reports whether m was one. Types are
// checked here; ranges by workload.Parse when the request is added.
func (im *importer) sampling(n int, prefix string, m workload.Member, req *workload.Request) bool {
	return im.DecodeSampling(n, m.Key, workload.Member{Key: prefix + m.Key, Raw: m.Raw}, req)
}

// maxTokens fills req.MaxTokens from Options.MaxTokens when the source had
// none (has false), and reports whether it did; with no --max-tokens that
// is an error at field, why saying what the source lacked.
func (im *importer) maxTokens(n int, field string, has bool, req *workload.Request, why string) bool {
	if has {
		return false
	}
	if im.o.MaxTokens > 0 {
		req.MaxTokens = im.o.MaxTokens
		return true
	}
	im.Errorf(n, field, "required: %s; give --max-tokens N to import such requests with max_tokens N", why)
	return false
}

func itoa(i int) string { return strconv.Itoa(i) }
