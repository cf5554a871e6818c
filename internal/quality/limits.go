package quality

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/perfgate/perfgate/internal/safeio"
)

// Bounds on what an eval suite may hold. A suite may come from a pull
// request; these keep one that is wrong (or hostile) from exhausting
// perfgate when it is validated, loaded or scored.
const (
	// MaxSuiteBytes is the largest eval suite perfgate reads: 64 MiB.
	// MMLU's 14,000 questions are about 10 MB as JSONL; items are held in
	// memory with their compiled scorers. Its lines are bounded by
	// workload.MaxLineBytes.
	MaxSuiteBytes = 64 << 20
	// MaxSchemaFileBytes is the largest options.schema_file (or file one
	// refers to) perfgate reads: 4 MiB, a thousand times a large
	// structured-output schema.
	MaxSchemaFileBytes = 4 << 20
	// MaxSchemaDepth is the deepest a JSON Schema may nest, in JSON levels
	// (objects and arrays): 64. A schema of objects nested five deep is
	// about fifteen; compiling takes time that grows with the cube of the
	// depth (a schema nested 5,000 levels takes minutes).
	MaxSchemaDepth = 64
	// MaxSchemaNodes is the most subschemas a JSON Schema may expand to
	// when each $ref is replaced by what it refers to: 20,000. A Pydantic
	// model of fifty fields expands to a few hundred; a chain of $refs
	// that each refer twice to the next doubles at every link, and
	// validating against it takes time exponential in its length (40
	// $refs: seconds; 60: days).
	MaxSchemaNodes = 20_000
	// MaxSuiteSchemaNodes is the most subschemas all the schemas of one
	// suite may expand to together: a million. Each item's may be under
	// MaxSchemaNodes and still take tens of milliseconds to check its
	// expected value; ten thousand such items would take minutes. A suite
	// of ten thousand items with schemas of fifty subschemas each is half
	// of it.
	MaxSuiteSchemaNodes = 1_000_000
	// MaxAnswerDepth is the deepest a model's JSON answer may nest to be
	// validated against a schema: 512 levels. No right answer nests that
	// deep, and validation recurses once a level.
	MaxAnswerDepth = 512
)

// jsonDepth is the deepest nesting of objects and arrays in a JSON text,
// counted without decoding it (strings are skipped), so that a document
// nested too deep is refused before anything recurses into it.
func jsonDepth(data []byte) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString && c == '\\':
			i++
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// checkSchemaText refuses a schema's text that nests deeper than
// MaxSchemaDepth, before it is decoded or compiled.
func checkSchemaText(data []byte) error {
	if d := jsonDepth(data); d > MaxSchemaDepth {
		return fmt.Errorf("the schema nests %d levels deep, more than the %d perfgate compiles", d, MaxSchemaDepth)
	}
	return nil
}

// checkSchemaSize returns how many subschemas a decoded schema expands to
// through its local $refs ("#/$defs/a", "#anchor"), and refuses one past
// MaxSchemaNodes. A $ref back to a schema it is inside (a recursive schema,
// for trees) counts once: validation follows it only as deep as the answer
// nests.
func checkSchemaSize(doc any) (int, error) {
	e := &expander{root: doc, anchors: map[string]any{}, memo: map[string]int{}, open: map[string]bool{}}
	e.collectAnchors(doc)
	n := e.size(doc, "#")
	if n > MaxSchemaNodes {
		return n, fmt.Errorf("the schema expands, through its $refs, to more than %d subschemas (a chain of $refs that each refer to the next more than once grows exponentially)", MaxSchemaNodes)
	}
	return n, nil
}

// expander counts the subschemas a schema expands to, memoised by JSON
// pointer so that a shared definition is counted in linear time.
type expander struct {
	root    any
	anchors map[string]any
	memo    map[string]int
	open    map[string]bool // pointers being counted: a $ref to one is a cycle
}

func (e *expander) collectAnchors(v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, key := range []string{"$anchor", "$dynamicAnchor"} {
			if name, ok := x[key].(string); ok {
				e.anchors[name] = x
			}
		}
		for _, c := range x {
			e.collectAnchors(c)
		}
	case []any:
		for _, c := range x {
			e.collectAnchors(c)
		}
	}
}

// size is the number of objects in v with each local $ref expanded,
// saturating past MaxSchemaNodes.
func (e *expander) size(v any, ptr string) int {
	if n, ok := e.memo[ptr]; ok {
		return n
	}
	if e.open[ptr] {
		return 1 // a cycle: counted once
	}
	e.open[ptr] = true
	defer delete(e.open, ptr)
	n := 0
	switch x := v.(type) {
	case map[string]any:
		n = 1
		for k, c := range x {
			if (k == "$ref" || k == "$dynamicRef") && isString(c) {
				if target, tptr, ok := e.resolve(c.(string)); ok {
					n += e.size(target, tptr)
				}
				continue
			}
			n += e.size(c, ptr+"/"+escapePointer(k))
			if n > MaxSchemaNodes {
				break
			}
		}
	case []any:
		for i, c := range x {
			n += e.size(c, ptr+"/"+strconv.Itoa(i))
			if n > MaxSchemaNodes {
				break
			}
		}
	}
	n = min(n, MaxSchemaNodes+1)
	e.memo[ptr] = n
	return n
}

// resolve finds what a local reference refers to: "#/a/b" (a JSON pointer)
// or "#name" (an anchor). Other references (to other files) are not
// followed here: the loader bounds each file it reads.
func (e *expander) resolve(ref string) (any, string, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, "", false
	}
	if frag, err := url.PathUnescape(frag); err == nil && !strings.HasPrefix(frag, "/") && frag != "" {
		v, ok := e.anchors[frag]
		return v, "anchor:" + frag, ok
	}
	v := e.root
	ptr := "#"
	if frag == "" {
		return v, ptr, true
	}
	for _, tok := range strings.Split(frag, "/")[1:] {
		tok, err := url.PathUnescape(tok)
		if err != nil {
			return nil, "", false
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			if v, ok = x[tok]; !ok {
				return nil, "", false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, "", false
			}
			v = x[i]
		default:
			return nil, "", false
		}
		ptr += "/" + escapePointer(tok)
	}
	return v, ptr, true
}

func isString(v any) bool { _, ok := v.(string); return ok }

// boundedLoader loads the files a schema refers to ($ref to another file)
// as the default loader does, local files only, but reads only regular
// files of at most MaxSchemaFileBytes and checks each as a schema file is
// checked.
type boundedLoader struct{}

func (boundedLoader) Load(u string) (any, error) {
	path, err := jsonschema.FileLoader{}.ToFile(u)
	if err != nil {
		return nil, err
	}
	return readSchemaFile(path)
}

// readSchemaFile reads and decodes a schema file within the bounds.
func readSchemaFile(path string) (any, error) {
	data, err := safeio.ReadFile(path, MaxSchemaFileBytes)
	if err != nil {
		return nil, fmt.Errorf("cannot read schema: %w", err)
	}
	if err := checkSchemaText(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %s", path, strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := checkSchemaSize(doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// valueDepth is the deepest nesting of objects and arrays in a decoded JSON
// value (encoding/json decodes at most 10,000 levels).
func valueDepth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			d = max(d, valueDepth(c))
		}
		return d + 1
	case []any:
		for _, c := range x {
			d = max(d, valueDepth(c))
		}
		return d + 1
	}
	return 0
}
