package traceimport

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/workload"
)

// MinRedactKeyBytes is the shortest redaction key accepted: 16 bytes (128
// bits), so that guessing the key is out of reach.
const MinRedactKeyBytes = 16

// Redactor replaces every word (a maximal run of letters and digits) of a
// text with filler of the same length: each letter by an ASCII letter of
// the same case, each digit by a digit, the rest (spaces, punctuation,
// line breaks) kept. The filler is drawn from HMAC-SHA256(key, word), so
// one word always becomes the same filler under one key: a repeated system
// prompt, or two requests that share their leading words, stay repeated
// and shared. A word of 2 to 8 letters becomes a word of perfgate's
// synthetic vocabulary of that length, and a longer (or 1-letter) word
// vocabulary words run together and cut, so the filler tokenizes about as
// English words do, not as random letters; a non-Latin word (CJK, say)
// becomes ASCII filler, usually fewer tokens than it was. A filler never
// equals its word.
//
// Why the words cannot be read back: without the key, the filler of a
// word is the output of a keyed pseudo-random function, so an attacker who
// tries every word of a dictionary cannot compute what any of them would
// become; all the filler gives away is each word's length, case pattern
// and where it repeats. The key is random per import (and then forgotten)
// unless a key file is given to make redaction reproducible across
// imports; such a key must be kept as private as the traffic.
type Redactor struct {
	key []byte
}

// NewRedactor returns a Redactor with key, which must be at least
// MinRedactKeyBytes long.
func NewRedactor(key []byte) (*Redactor, error) {
	if len(key) < MinRedactKeyBytes {
		return nil, fmt.Errorf("a redaction key needs at least %d bytes, got %d", MinRedactKeyBytes, len(key))
	}
	return &Redactor{key: bytes.Clone(key)}, nil
}

// NewRandomRedactor returns a Redactor with a fresh random 32-byte key.
func NewRandomRedactor() *Redactor {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	return &Redactor{key: key}
}

// Text redacts every word of s.
func (rd *Redactor) Text(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	start := -1
	for i, r := range s {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			b.WriteString(rd.word(s[start:i]))
			start = -1
		}
		b.WriteRune(r)
	}
	if start >= 0 {
		b.WriteString(rd.word(s[start:]))
	}
	return b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// vocab is workload.Vocabulary() (lower-case ASCII words), and vocabByLen
// the same grouped by length: the words a filler is drawn from.
var (
	vocab      = workload.Vocabulary()
	vocabByLen = groupByLen(vocab)
)

func groupByLen(words []string) map[int][]string {
	m := map[int][]string{}
	for _, v := range words {
		m[len(v)] = append(m[len(v)], v)
	}
	return m
}

// word returns the filler of one word: as many characters as it has, each
// letter an ASCII letter cased as the original was, each digit a digit,
// drawn from a stream keyed by HMAC-SHA256(key, counter, word). The
// letters are those of a vocabulary word of the same length where the
// vocabulary has one (2 to 8 letters), else of vocabulary words run
// together and cut to the length: so the filler tokenizes about like
// words, not like random letters (which split into several times more
// tokens). The counter moves on in the (rare) case the filler came out
// equal to the word, so no word is left readable.
func (rd *Redactor) word(w string) string {
	n := utf8.RuneCountInString(w)
	out := make([]byte, 0, n)
	for counter := byte(0); ; counter++ {
		mac := hmac.New(sha256.New, rd.key)
		mac.Write([]byte{counter})
		mac.Write([]byte(w))
		var seed [32]byte
		copy(seed[:], mac.Sum(nil))
		rng := mrand.New(mrand.NewChaCha8(seed))
		letters := fillerLetters(rng, n)
		out = out[:0]
		i := 0
		for _, r := range w {
			switch {
			case unicode.IsDigit(r):
				out = append(out, byte('0'+rng.IntN(10)))
			case unicode.IsUpper(r):
				out = append(out, letters[i]-'a'+'A')
			default:
				out = append(out, letters[i])
			}
			i++
		}
		if string(out) != w {
			return string(out)
		}
	}
}

// fillerLetters draws n lower-case letters from rng: a vocabulary word of
// length n, or vocabulary words run together and cut to n.
func fillerLetters(rng *mrand.Rand, n int) []byte {
	if ws := vocabByLen[n]; len(ws) > 0 {
		return []byte(ws[rng.IntN(len(ws))])
	}
	b := make([]byte, 0, n+8)
	for len(b) < n {
		b = append(b, vocab[rng.IntN(len(vocab))]...)
	}
	return b[:n]
}

// Request redacts a request's text: every message's content, the prompt,
// and the string values inside tools, tool_choice and response_format
// (see JSON). Ids are the importer's business (replaced by
// "<format>-<n>").
func (rd *Redactor) Request(r *workload.Request) {
	for i := range r.Messages {
		r.Messages[i].Content = rd.Text(r.Messages[i].Content)
	}
	r.Prompt = rd.Text(r.Prompt)
	r.Tools = rd.JSON(r.Tools)
	r.ToolChoice = rd.JSON(r.ToolChoice)
	r.ResponseFormat = rd.JSON(r.ResponseFormat)
}

// schemaWords are the keys of tool definitions and JSON Schema that are
// structure, not content: kept as they are, with the string values of the
// verbatimValues keywords and the keys of a "patternProperties" object
// (regexes). Every other key
// (a property's name, say) and every other string value (a description, a
// function's name, an enum value) is redacted, each with Text, so that a
// property's name redacts alike in "properties" and in "required", and a
// function's name alike in tools and in tool_choice: the schema stays
// valid and the same shape, and says nothing readable.
var schemaWords = map[string]bool{
	"type": true, "function": true, "name": true, "description": true, "parameters": true, "strict": true,
	"json_schema": true, "schema": true, "properties": true, "required": true, "items": true, "enum": true,
	"const": true, "default": true, "title": true, "format": true, "pattern": true, "additionalProperties": true,
	"anyOf": true, "oneOf": true, "allOf": true, "not": true, "$ref": true, "$defs": true, "definitions": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true, "prefixItems": true, "examples": true, "nullable": true,
	"patternProperties": true, "propertyNames": true, "$schema": true, "contentEncoding": true,
	"contentMediaType": true, "if": true, "then": true, "else": true, "contains": true,
	"minContains": true, "maxContains": true, "dependentRequired": true, "dependentSchemas": true,
	"unevaluatedProperties": true, "unevaluatedItems": true,
}

// verbatimValues are the keywords whose string value is kept as it is: a
// JSON type, a format, an encoding or media type, the schema's dialect,
// or a regex ("pattern"). Redacting a regex like prose would change what
// it matches, and can make it invalid: "^[a-z]+$" could become "^[q-b]+$",
// a reversed range a strict server refuses with a 400.
var verbatimValues = map[string]bool{
	"type": true, "format": true, "pattern": true, "contentEncoding": true, "contentMediaType": true, "$schema": true,
}

// JSON redacts a tools, tool_choice or response_format value (see
// schemaWords for what is kept), keeping its key order (engines generate a
// schema's properties in that order); nil stays nil. The keys of a
// "properties", "$defs", "definitions", "dependentRequired" or
// "dependentSchemas" object are names, always redacted; the keys of a
// "patternProperties" object are regexes, always kept. A "$ref" keeps its keyword segments ("#/$defs/") and redacts
// the names after them.
func (rd *Redactor) JSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	if err := rd.copyValue(dec, &out, "", ""); err != nil {
		return raw // not JSON: Parse reports it
	}
	return json.RawMessage(out.Bytes())
}

// namesObjects are the keys whose object's keys are names.
var namesObjects = map[string]bool{"properties": true, "$defs": true, "definitions": true, "dependentRequired": true, "dependentSchemas": true}

// copyValue copies the next JSON value of dec to out, redacted; key is the
// member it is the value of ("" in an array or at the top), parent the key
// of the object it is in.
func (rd *Redactor) copyValue(dec *json.Decoder, out *bytes.Buffer, key, parent string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if err := rd.copyValue(dec, out, "", key); err != nil {
					return err
				}
			}
			out.WriteByte(']')
		} else {
			out.WriteByte('{')
			for i := 0; dec.More(); i++ {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if i > 0 {
					out.WriteByte(',')
				}
				nk := k
				switch {
				case key == "patternProperties": // a regex: kept
				case namesObjects[key] || !schemaWords[k]:
					nk = rd.Text(k)
				}
				writeJSONString(out, nk)
				out.WriteByte(':')
				if namesObjects[key] || key == "patternProperties" {
					k = "" // a property named "type" is a name, not the keyword
				}
				if err := rd.copyValue(dec, out, k, key); err != nil {
					return err
				}
			}
			out.WriteByte('}')
		}
		_, err := dec.Token() // the closing delimiter
		return err
	case string:
		writeJSONString(out, rd.schemaString(t, key))
	case json.Number:
		out.WriteString(t.String())
	case bool:
		out.WriteString(fmt.Sprint(t))
	case nil:
		out.WriteString("null")
	}
	return nil
}

// schemaString redacts a string value of key.
func (rd *Redactor) schemaString(s, key string) string {
	switch {
	case verbatimValues[key]:
		return s
	case key == "$ref":
		segs := strings.Split(s, "/")
		for i, seg := range segs {
			if !schemaWords[seg] && seg != "#" {
				segs[i] = rd.Text(seg)
			}
		}
		return strings.Join(segs, "/")
	}
	return rd.Text(s)
}

// writeJSONString writes s as a JSON string, without HTML escaping.
func writeJSONString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	out.Truncate(out.Len() - 1) // Encode's newline
}
