package workload

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
)

// Write writes reqs in the workload format: one compact JSON object a line, keys
// in the order of Request's fields, no HTML escaping (so code in prompts stays
// readable). It is the canonical form of a workload: Hash is the SHA-256 of
// exactly these bytes.
func Write(w io.Writer, reqs []Request) error {
	bw := bufio.NewWriter(w)
	if err := encode(bw, reqs, false); err != nil {
		return err
	}
	return bw.Flush()
}

// Hash identifies a workload by its content: "sha256:<hex>" over the canonical
// encoding that Write produces (each request encoded with encoding/json in
// field order, one line each, newline-terminated). Whitespace and key order in
// the file do not change it; anything sent to the server, the ids and the tags
// do. Two notes:
//   - a request without an id is hashed with its assigned id "line-N", so
//     inserting a line above it changes the hash (its id changed);
//   - response_format is hashed as written (compacted): key order inside it is
//     kept, because engines generate a schema's properties in that order.
func Hash(reqs []Request) string {
	h := sha256.New()
	_ = encode(h, reqs, true) // a hash never returns a write error
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// encode writes the canonical lines. The only request that cannot be encoded is
// one built in code with a ResponseFormat that is not valid JSON (Parse never
// makes one): Write reports it; for Hash (lenient) it is hashed as a JSON string
// instead, so that Hash never fails.
func encode(w io.Writer, reqs []Request, lenient bool) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range reqs {
		buf.Reset()
		if err := enc.Encode(&reqs[i]); err != nil { // Encode appends the newline
			if !lenient {
				return fmt.Errorf("encode request %q: %w", reqs[i].ID, err)
			}
			r := reqs[i]
			r.ResponseFormat, _ = json.Marshal(string(r.ResponseFormat))
			buf.Reset()
			_ = enc.Encode(&r)
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
