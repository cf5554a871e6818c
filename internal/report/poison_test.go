package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/perfgate/perfgate/internal/reportfile"
)

// poison is hostile markdown and HTML that a fork's report file could hold
// in any string: a script, a comment, a javascript: link, a table cell's
// end, code spans, a mention, an issue reference, a line break and a
// workflow command.
const poison = "<script>alert(1)</script><!--c--><img src=x onerror=alert(1)>[l](javascript:alert(1))|cell|`code`@mention #123\n::error::pwned\r\n## heading\u202e"

// fillStructure gives v (addressable) every part it can hold: a nil pointer
// a zero value, an empty slice one element, a nil map one entry, an empty
// string "x"; so that the poisoning below reaches every string field of a
// report, however deep.
func fillStructure(v reflect.Value, depth int) {
	if depth > 12 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillStructure(v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillStructure(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
		for i := range v.Len() {
			fillStructure(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.Len() == 0 {
			m := reflect.MakeMap(v.Type())
			k := reflect.New(v.Type().Key()).Elem()
			if k.Kind() == reflect.String {
				k.SetString("x")
			}
			m.SetMapIndex(k, reflect.New(v.Type().Elem()).Elem())
			v.Set(m)
		}
		iter := v.MapRange()
		for iter.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(iter.Value())
			fillStructure(e, depth+1)
			v.SetMapIndex(iter.Key(), e)
		}
	case reflect.String:
		if v.String() == "" {
			v.SetString("x")
		}
	}
}

// stringPaths lists every string of a JSON tree, map keys included (a
// path ending in a key marked keyMark), after cutting every array to one
// element: a history of many entries costs no more than one of one, and
// every field is still there to poison.
func stringPaths(v any, path []string, out *[][]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			*out = append(*out, append(slices.Clone(path), keyMark+k))
			x[k] = stringPaths(e, append(slices.Clone(path), k), out)
		}
	case []any:
		x = x[:min(len(x), 1)]
		for i, e := range x {
			x[i] = stringPaths(e, append(slices.Clone(path), strconv.Itoa(i)), out)
		}
		return x
	case string:
		*out = append(*out, path)
	}
	return v
}

// keyMark marks the last element of a path as a map key to poison.
const keyMark = "\x00key:"

// poisonAt sets the string at path in the JSON tree v to poison, or
// prefixes the map key the path ends in with it.
func poisonAt(v any, path []string) {
	for i, p := range path {
		last := i == len(path)-1
		switch x := v.(type) {
		case map[string]any:
			if k, ok := strings.CutPrefix(p, keyMark); ok && last {
				x[poison+k] = x[k]
				delete(x, k)
				return
			}
			if last {
				x[p] = poison
				return
			}
			v = x[p]
		case []any:
			n, _ := strconv.Atoi(p)
			if last {
				x[n] = poison
				return
			}
			v = x[n]
		}
	}
}

// TestEveryReportStringEscaped poisons each string of a report file in turn
// (every field of Document and what it holds, found by reflection, map keys
// and slices included), reads the file as perfgate report does, and checks
// that the markdown and the HTML rendered from it hold none of the poison
// unescaped. A fork's pull request produces the report that a
// workflow_run job renders: every string in it is untrusted. A report of a
// stored baseline and one of an A/B (whose configs' names, mode and orders
// are strings too) are rendered apart.
func TestEveryReportStringEscaped(t *testing.T) {
	for _, c := range []struct {
		name string
		ab   bool
	}{{"stored baseline", false}, {"A/B", true}} {
		t.Run(c.name, func(t *testing.T) {
			doc := htmlDocument()
			fillStructure(reflect.ValueOf(doc).Elem(), 0)
			if !c.ab {
				doc.Verdict.AB = nil
			}
			for i := range doc.Verdict.Scenarios {
				for j := range doc.Verdict.Scenarios[i].Gates {
					doc.Verdict.Scenarios[i].Gates[j].Drift = 0.1 // an A/B's drift line names the gate
				}
			}
			poisonEachString(t, doc)
		})
	}
}

// poisonEachString renders doc once for each of its strings poisoned, and
// checks the markdown and the HTML.
func poisonEachString(t *testing.T, doc *reportfile.Document) {
	t.Helper()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatal(err)
	}
	var paths [][]string
	tree = stringPaths(tree, nil, &paths)
	if raw, err = json.Marshal(tree); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rendered := 0
	for _, path := range paths {
		name := strings.ReplaceAll(strings.Join(path, "."), keyMark, "key ")
		if name == "schema" {
			continue // another schema is not read at all
		}
		var copy any
		_ = json.Unmarshal(raw, &copy)
		poisonAt(copy, path)
		b, err := json.Marshal(copy)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "report.json")
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := reportfile.Read(file)
		if err != nil {
			continue // refused: nothing of it is rendered
		}
		var md, page bytes.Buffer
		if err := emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{}); err != nil {
			continue
		}
		if err := emitHTML(&page, []*reportfile.Document{d}); err != nil {
			continue
		}
		rendered++
		checkMarkdownEscaped(t, name, md.String())
		checkHTMLEscaped(t, name, page.String())
	}
	t.Logf("rendered %d of %d poisoned reports", rendered, len(paths))
	if rendered < len(paths)/2 {
		t.Errorf("rendered %d of %d poisoned reports; want most of them rendered, or the test tests little", rendered, len(paths))
	}
}

// checkMarkdownEscaped fails t when md holds a piece of poison that
// markdown or GitHub would read as markup.
func checkMarkdownEscaped(t *testing.T, path, md string) {
	t.Helper()
	// GitHub links a mention and an issue even when escaped: they must be
	// broken (by U+2060).
	for _, raw := range []string{"@mention", "#123", "\u202e"} {
		if strings.Contains(md, raw) {
			t.Errorf("markdown of a report with %s poisoned holds %q unescaped", path, raw)
		}
	}
	// Backslash-escaped is literal: "\<", "\|", "\`".
	for _, raw := range []string{"<script", "<!--", "<img", "](javascript:", "|cell", "`code", "[l]"} {
		for i := strings.Index(md, raw); i >= 0; i = nextIndex(md, raw, i) {
			if i == 0 || md[i-1] != '\\' {
				t.Errorf("markdown of a report with %s poisoned holds %q unescaped", path, raw)
				break
			}
		}
	}
	for _, line := range strings.Split(md, "\n") {
		s := strings.TrimLeftFunc(line, unicode.IsSpace)
		if strings.HasPrefix(s, "::") || strings.HasPrefix(s, "## heading") {
			t.Errorf("markdown of a report with %s poisoned has a line %q of the poison's", path, line)
		}
	}
}

// nextIndex is the index of sub in s after i, or -1.
func nextIndex(s, sub string, i int) int {
	j := strings.Index(s[i+1:], sub)
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// checkHTMLEscaped fails t when page holds a piece of poison as markup.
func checkHTMLEscaped(t *testing.T, path, page string) {
	t.Helper()
	for _, raw := range []string{"<script>alert", "<!--c", "<img src=x", `href="javascript`, "\u202e"} {
		if strings.Contains(page, raw) {
			t.Errorf("HTML of a report with %s poisoned holds %q unescaped", path, raw)
		}
	}
}
