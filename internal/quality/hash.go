package quality

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/perfgate/perfgate/internal/workload"
)

// hashedItem is the content of an item that its Hash covers: what is sent
// (the request without its id and tags), how the output is scored (scorer and
// effective options, a schema file by its content) and the expected answers.
type hashedItem struct {
	Request  workload.Request `json:"request"`
	Scorer   string           `json:"scorer"`
	Options  map[string]any   `json:"options,omitempty"`
	Expected []string         `json:"expected"`
}

// suiteEntry is what the suite's Hash covers for each item: its content and
// everything else the line says.
type suiteEntry struct {
	ID      string          `json:"id"`
	Tags    []string        `json:"tags,omitempty"`
	Ideal   string          `json:"ideal,omitempty"`
	Content json.RawMessage `json:"content"`
}

// itemHash returns the item's Hash (the first 16 hex digits of the SHA-256
// of its canonical content) and its canonical entry for the suite's hash.
func itemHash(it *Item, o options, schemaContent json.RawMessage) (string, []byte) {
	req := it.Request
	req.ID, req.Tags = "", nil
	content := canonical(hashedItem{Request: req, Scorer: it.Scorer, Options: effectiveOptions(it.Scorer, o, schemaContent), Expected: it.Expected})
	sum := sha256.Sum256(content)
	entry := canonical(suiteEntry{ID: it.ID, Tags: it.Request.Tags, Ideal: it.Ideal, Content: content})
	return hex.EncodeToString(sum[:])[:16], entry
}

// suiteHash is "sha256:<hex>" over the items' canonical entries, one line
// each: whitespace, key order and spelled-out defaults in the file do not
// change it.
func suiteHash(entries [][]byte) string {
	h := sha256.New()
	for _, e := range entries {
		h.Write(e)
		h.Write([]byte("\n"))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// effectiveOptions are the options a scorer uses, defaults included, so that
// spelling a default out does not change an item's hash.
func effectiveOptions(scorer string, o options, schemaContent json.RawMessage) map[string]any {
	switch scorer {
	case "exact", "contains":
		return map[string]any{"case_sensitive": o.caseSensitive, "keep_punctuation": o.keepPunctuation}
	case "regex":
		return map[string]any{"case_insensitive": o.caseInsensitive}
	case "choice":
		return map[string]any{"choices": o.choices}
	case "numeric":
		return map[string]any{"abs_tol": o.absTol, "rel_tol": o.relTol}
	case "json_schema":
		if schemaContent != nil {
			return map[string]any{"schema": schemaContent}
		}
		return map[string]any{"schema": canonicalJSON(o.schema)}
	case "reference":
		return map[string]any{"metric": o.metric, "threshold": o.threshold}
	}
	return nil
}

// canonicalJSON re-encodes a JSON value with object keys sorted and no
// white space; numbers keep their written form.
func canonicalJSON(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	return canonical(v)
}

// canonical encodes v compactly, without HTML escaping.
func canonical(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // only values that encode reach here
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
