package config

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/perfgate/perfgate/internal/suggest"
)

// The shape pass walks the parsed YAML beside the Config type, reporting every
// key the type does not have and every value of the wrong kind, with its path
// and position. goccy/go-yaml's own strict decoding stops at the first such
// error, names the Go struct rather than the YAML path for a wrong type, and
// reports a bad duration string ("fast") with no position at all; walking the
// AST ourselves gives all of them at once, in the user's terms.

var (
	configType      = reflect.TypeFor[Config]()
	durationType    = reflect.TypeFor[time.Duration]()
	repetitionsType = reflect.TypeFor[Repetitions]()
	stepTimesType   = reflect.TypeFor[StepTimes]()
)

// extensionPrefix starts the top-level keys that perfgate ignores, as Docker
// Compose does: they give anchors a place to be defined
// (x-common: &common {...}, then <<: *common in each scenario).
const extensionPrefix = "x-"

type shape struct {
	src   *source
	probs []Problem
	// anchors maps an anchor's name to its value, so that an alias is
	// checked (and its keys marked as set) like the value it stands for.
	anchors map[string]ast.Node
	// depth guards against an alias that contains itself.
	depth int
	// values counts the values walked, aliases and merge keys expanded;
	// past maxValues the walk stops (expanded is then true).
	values   int
	expanded bool
}

// maxDepth is far deeper than Config nests; only a self-referring alias
// reaches it.
const maxDepth = 32

func newShape(src *source, body ast.Node) *shape {
	sh := &shape{src: src, anchors: map[string]ast.Node{}}
	ast.Walk(anchorCollector(sh.anchors), body)
	return sh
}

// anchorCollector records every anchor of a document; a name defined twice
// keeps its last value (rare enough not to track per position).
type anchorCollector map[string]ast.Node

func (c anchorCollector) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil {
		c[tokenText(a.Name)] = a.Value
	}
	return c
}

// resolve looks through anchors, tags and aliases to the value node. An alias
// to an unknown anchor resolves to nil (the parser rejects most of those).
func (sh *shape) resolve(n ast.Node) ast.Node {
	for hops := 0; hops < 100; hops++ {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			if v.Value == nil {
				return nil
			}
			n = sh.anchors[tokenText(v.Value)]
		default:
			return n
		}
	}
	return nil
}

// add records a problem; past maxProblems it is counted, not kept
// (source.errors reports the count).
func (sh *shape) add(path string, at pos, format string, args ...any) {
	sh.probs = append(sh.probs, Problem{File: sh.src.file, Line: at.line, Column: at.col,
		Path: path, Msg: fmt.Sprintf(format, args...)})
}

// walk checks node n against type t. path is n's field path and at the
// position of its key (or list item).
func (sh *shape) walk(n ast.Node, t reflect.Type, path string, at pos) {
	if !sh.count() {
		return
	}
	if tag := sh.tag(n); tag != nil {
		sh.add(path, valuePos(tag, at), "YAML tags such as %s are not supported: write the value alone (quote it for a string)", tokenText(tag))
		return
	}
	if name, ok := sh.danglingAlias(n); ok {
		sh.add(path, valuePos(n, at), "alias *%s refers to no anchor: define &%s before it", name, name)
		return
	}
	n = sh.resolve(n)
	sh.src.record(path, at)
	if n == nil || n.Type() == ast.NullType {
		// A key with no value leaves the field unset (defaulted).
		return
	}
	sh.src.set[path] = true
	if isScalar(n) {
		sh.src.val[path] = nodePos(n)
	}

	if t == durationType {
		sh.duration(n, path, at)
		return
	}
	if t == stepTimesType {
		// One duration, or a list of them.
		if seq, ok := n.(*ast.SequenceNode); ok {
			sh.items(seq, durationType, path, at)
		} else {
			sh.duration(n, path, at)
		}
		return
	}
	if t == repetitionsType {
		// A number, or {min, max}.
		if isNumber(n) {
			sh.integer(n, reflect.TypeFor[int](), path, at)
		} else if _, ok := mappingPairs(n); ok {
			sh.structure(n, t, path)
		} else {
			sh.add(path, valuePos(n, at), "want an integer or {min: N, max: M}, got %s", describe(n))
		}
		return
	}
	if hasUnmarshaler(t) {
		return // decodes itself; the decoder reports its errors
	}
	switch t.Kind() {
	case reflect.Pointer:
		sh.walk(n, t.Elem(), path, at)
	case reflect.Struct:
		sh.structure(n, t, path)
	case reflect.Map:
		sh.mapping(n, t, path)
	case reflect.Slice:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			sh.add(path, valuePos(n, at), "want a list, got %s", describe(n))
			return
		}
		sh.items(seq, t.Elem(), path, at)
	case reflect.String:
		if !isScalar(n) {
			sh.add(path, valuePos(n, at), "want a string, got %s", describe(n))
		}
	case reflect.Bool:
		if _, ok := n.(*ast.BoolNode); !ok {
			sh.add(path, valuePos(n, at), "want true or false, got %s", describe(n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		sh.integer(n, t, path, at)
	case reflect.Float32, reflect.Float64:
		sh.float(n, path, at)
	}
}

// count counts one more value walked and reports whether the walk may go
// on: past maxValues the document has expanded (through aliases and merge
// keys) far beyond any config, and it is refused once, at its start.
func (sh *shape) count() bool {
	if sh.expanded {
		return false
	}
	if sh.values++; sh.values > maxValues {
		sh.expanded = true
		sh.add("", sh.src.root, "the document expands, through its aliases and merge keys, to more than %d values; refused (a perfgate config has a few hundred)", maxValues)
		return false
	}
	return true
}

// danglingAlias reports an alias (n itself, not one inside it) whose
// anchor the document does not define, and its name.
func (sh *shape) danglingAlias(n ast.Node) (string, bool) {
	a, ok := n.(*ast.AliasNode)
	if !ok || a.Value == nil {
		return "", false
	}
	name := tokenText(a.Value)
	_, defined := sh.anchors[name]
	return name, !defined
}

// tag returns the tag node n carries (looking through an anchor), or nil.
func (sh *shape) tag(n ast.Node) *ast.TagNode {
	for hops := 0; hops < 100; hops++ {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			return v
		default:
			return nil
		}
	}
	return nil
}

// structure checks a mapping against a struct's yaml keys.
func (sh *shape) structure(n ast.Node, t reflect.Type, path string) {
	if !sh.count() {
		return
	}
	sh.depth++
	defer func() { sh.depth-- }()
	if sh.depth > maxDepth {
		sh.add(path, sh.src.at[path], "nested too deep (an alias that refers to itself?)")
		return
	}
	pairs, ok := mappingPairs(n)
	if !ok {
		sh.add(path, valuePos(n, sh.src.at[path]), "want a mapping of keys, got %s", describe(n))
		return
	}
	fields := yamlFields(t)
	for _, kv := range pairs {
		key, kp := keyString(kv.Key), tokenPos(kv.Key)
		if sh.expanded {
			return
		}
		if key == "<<" {
			// A merge key (<<: *defaults, or <<: [*a, *b]) adds the keys
			// of other mappings.
			merged := sh.resolve(kv.Value)
			refs := []ast.Node{kv.Value}
			if seq, ok := merged.(*ast.SequenceNode); ok {
				refs = seq.Values
			}
			for _, m := range refs {
				if name, ok := sh.danglingAlias(m); ok {
					sh.add(path, valuePos(m, kp), "alias *%s refers to no anchor: define &%s before it", name, name)
				} else if m := sh.resolve(m); m != nil {
					sh.structure(m, t, path)
				}
			}
			continue
		}
		if path == "" && strings.HasPrefix(key, extensionPrefix) {
			continue // an extension key: a place to define anchors
		}
		child := joinPath(path, key)
		f, ok := fields[key]
		if !ok {
			sh.add(child, kp, "%s", unknownKey(key, fields))
			continue
		}
		if f.Tag.Get("perfgate") == "sweepable" && sh.sweep(kv.Value, f.Type, child, kp) {
			continue
		}
		sh.walk(kv.Value, f.Type, child, kp)
	}
}

// sweep checks a list given to a field tagged perfgate:"sweepable" (load.rate
// and load.concurrency, which a list turns into a sweep): each item is walked
// as the field's own type, at path[i]. It reports false, walking nothing,
// when the value is not a list.
func (sh *shape) sweep(n ast.Node, t reflect.Type, path string, at pos) bool {
	if sh.tag(n) != nil {
		return false // walk reports the tag
	}
	seq, ok := sh.resolve(n).(*ast.SequenceNode)
	if !ok {
		return false
	}
	sh.src.record(path, at)
	sh.src.set[path] = true
	sh.items(seq, t, path, at)
	return true
}

// items walks each item of a list as type t, at path[i] and the item's
// position.
func (sh *shape) items(seq *ast.SequenceNode, t reflect.Type, path string, at pos) {
	for i, item := range seq.Values {
		ip := at
		if i < len(seq.Entries) && seq.Entries[i] != nil {
			ip = tokenPos(seq.Entries[i])
		} else if p := nodePos(item); p.line > 0 {
			ip = p
		}
		sh.walk(item, t, fmt.Sprintf("%s[%d]", path, i), ip)
	}
}

// mapping checks a mapping of free keys (target.headers).
func (sh *shape) mapping(n ast.Node, t reflect.Type, path string) {
	pairs, ok := mappingPairs(n)
	if !ok {
		sh.add(path, valuePos(n, sh.src.at[path]), "want a mapping of keys, got %s", describe(n))
		return
	}
	for _, kv := range pairs {
		kp := tokenPos(kv.Key)
		if !isScalar(kv.Key) {
			sh.add(path, kp, "want a plain key, got %s", describe(kv.Key))
			continue
		}
		sh.walk(kv.Value, t.Elem(), joinPath(path, keyString(kv.Key)), kp)
	}
}

// integer checks a value for an integer field: a YAML integer (1000, 1_000,
// 0x3e8), or a number in any other form whose value is a whole number
// (1e3, 1.5e2), that fits the field.
func (sh *shape) integer(n ast.Node, t reflect.Type, path string, at pos) {
	v := reflect.New(t).Elem()
	text := tokenText(n)
	if in, ok := n.(*ast.IntegerNode); ok {
		if leadingZero.MatchString(text) {
			sh.add(path, valuePos(n, at), "%s has a leading 0, which YAML reads as octal (%v); write it without the 0, or as 0o%s for octal",
				text, in.Value, strings.TrimLeft(strings.TrimLeft(text, "+-"), "0"))
			return
		}
		fits := false
		switch x := in.Value.(type) {
		case int64:
			if v.CanInt() {
				fits = !v.OverflowInt(x)
			} else {
				fits = x >= 0 && !v.OverflowUint(uint64(x))
			}
		case uint64:
			if v.CanInt() {
				fits = x <= math.MaxInt64 && !v.OverflowInt(int64(x))
			} else {
				fits = !v.OverflowUint(x)
			}
		}
		if !fits {
			sh.add(path, valuePos(n, at), "integer %s is out of range", text)
		}
		return
	}
	f, ok, err := number(n)
	switch {
	case !ok:
		sh.add(path, valuePos(n, at), "want an integer, got %s", describe(n))
	case err != "":
		sh.add(path, valuePos(n, at), "%s", err)
	case f != math.Trunc(f):
		sh.add(path, valuePos(n, at), "want an integer, got %s", text)
	case math.Abs(f) > 1<<53 || (v.CanInt() && v.OverflowInt(int64(f))) || (!v.CanInt() && (f < 0 || v.OverflowUint(uint64(f)))):
		sh.add(path, valuePos(n, at), "integer %s is out of range", text)
	}
}

// float checks a value for a number field: a YAML number in any form (4,
// 4.5, .5, 1e3, 1_000, 0x10), finite.
func (sh *shape) float(n ast.Node, path string, at pos) {
	_, ok, err := number(n)
	switch {
	case !ok:
		sh.add(path, valuePos(n, at), "want a number, got %s", describe(n))
	case err != "":
		sh.add(path, valuePos(n, at), "%s", err)
	}
}

// yamlFloat matches a plain scalar that YAML 1.2 reads as a number but
// goccy/go-yaml leaves a string: an exponent without a decimal point (1e3,
// 1E-3, 1e+3), or an integer too long for 64 bits.
var yamlFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$`)

// leadingZero matches an integer with a leading 0 (012), which YAML 1.1 and
// goccy/go-yaml read as octal but YAML 1.2 and most people as decimal.
var leadingZero = regexp.MustCompile(`^[-+]?0[0-9_]+$`)

// number reads n as a number. ok is false when n is not a number at all (a
// quoted string, a mapping, true); a number perfgate cannot use (infinite,
// not a number, too large for 64 bits) has ok true and err saying why.
func number(n ast.Node) (v float64, ok bool, err string) {
	switch x := n.(type) {
	case *ast.IntegerNode:
		switch i := x.Value.(type) {
		case int64:
			return float64(i), true, ""
		case uint64:
			return float64(i), true, ""
		}
	case *ast.FloatNode:
		if math.IsInf(x.Value, 0) || math.IsNaN(x.Value) {
			return 0, true, fmt.Sprintf("number %s is out of range", tokenText(n))
		}
		return x.Value, true, ""
	case *ast.InfinityNode, *ast.NanNode:
		return 0, true, fmt.Sprintf("want a finite number, got %s", tokenText(n))
	case *ast.StringNode:
		tk := x.GetToken()
		if tk == nil || tk.Type != token.StringType || !yamlFloat.MatchString(x.Value) {
			return 0, false, "" // quoted, or not a number
		}
		f, perr := strconv.ParseFloat(strings.ReplaceAll(x.Value, "_", ""), 64)
		if perr != nil || math.IsInf(f, 0) {
			return 0, true, fmt.Sprintf("number %s is out of range", x.Value)
		}
		return f, true, ""
	}
	return 0, false, ""
}

// isNumber reports whether n is a YAML number of any form.
func isNumber(n ast.Node) bool {
	_, ok, _ := number(n)
	return ok
}

// duration accepts a Go duration string (500ms, 2m, 1h30m) or a bare 0. A bare
// number is an error rather than nanoseconds (or seconds): the unit must be
// said.
func (sh *shape) duration(n ast.Node, path string, at pos) {
	const want = "want a duration like 500ms or 2m"
	switch v := n.(type) {
	case *ast.StringNode:
		if _, err := time.ParseDuration(v.Value); err != nil {
			sh.add(path, valuePos(n, at), "%s, got %q", want, v.Value)
		}
	case *ast.IntegerNode:
		if tokenText(n) != "0" {
			sh.add(path, valuePos(n, at), "%s, got %s (a bare number has no unit)", want, tokenText(n))
		}
	default:
		sh.add(path, valuePos(n, at), "%s, got %s", want, describe(n))
	}
}

// mappingPairs returns the key/value pairs of a mapping node.
func mappingPairs(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, true
	}
	return nil, false
}

// yamlFields maps a struct's yaml keys to its fields, the way the decoder
// names them: the yaml tag's name, or the lower-cased field name.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	fields := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f
	}
	return fields
}

// unknownKey says a key is unknown, suggesting the nearest known key when it
// looks like a typo and otherwise listing the known keys.
func unknownKey(key string, fields map[string]reflect.StructField) string {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	slices.Sort(known)
	if best, ok := suggest.Closest(key, known); ok {
		return fmt.Sprintf("unknown key %q (did you mean %q?)", key, best)
	}
	return fmt.Sprintf("unknown key %q (known keys: %s)", key, strings.Join(known, ", "))
}

func keyString(k ast.MapKeyNode) string {
	switch v := k.(type) {
	case *ast.StringNode:
		return v.Value
	case *ast.MergeKeyNode:
		return "<<"
	case nil:
		return ""
	}
	if tk := k.GetToken(); tk != nil {
		return tk.Value
	}
	return k.String()
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.StringNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode,
		*ast.InfinityNode, *ast.NanNode, *ast.LiteralNode:
		return true
	}
	return false
}

// describe names a value for a message: a scalar as written, otherwise its kind.
func describe(n ast.Node) string {
	switch v := n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode:
		return fmt.Sprintf("%q", v.Value)
	case *ast.LiteralNode:
		return "a block of text"
	}
	return tokenText(n)
}

func tokenText(n ast.Node) string {
	if n == nil {
		return "nothing"
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return n.String()
}

// valuePos is where a value starts, or at when the node has no position.
func valuePos(n ast.Node, at pos) pos {
	if p := nodePos(n); p.line > 0 {
		return p
	}
	return at
}

var (
	bytesUnmarshaler     = reflect.TypeFor[yaml.BytesUnmarshaler]()
	bytesUnmarshalerCtx  = reflect.TypeFor[yaml.BytesUnmarshalerContext]()
	ifaceUnmarshaler     = reflect.TypeFor[yaml.InterfaceUnmarshaler]()
	ifaceUnmarshalerCtx  = reflect.TypeFor[yaml.InterfaceUnmarshalerContext]()
	nodeUnmarshaler      = reflect.TypeFor[yaml.NodeUnmarshaler]()
	nodeUnmarshalerCtx   = reflect.TypeFor[yaml.NodeUnmarshalerContext]()
	textUnmarshalerIface = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// hasUnmarshaler says whether t decodes itself, in which case the shape pass
// leaves it to the decoder (a workload type may grow a short form, say).
func hasUnmarshaler(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	for _, u := range []reflect.Type{bytesUnmarshaler, bytesUnmarshalerCtx, ifaceUnmarshaler,
		ifaceUnmarshalerCtx, nodeUnmarshaler, nodeUnmarshalerCtx, textUnmarshalerIface} {
		if p.Implements(u) {
			return true
		}
	}
	return false
}
