package reportfile

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/invopop/jsonschema"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/result"
)

// The JSON Schemas of the files perfgate writes and reads back, the result
// file (perfgate run) and the report file (perfgate gate --report), are
// generated from the Go types and their doc comments, and committed under
// docs/schema for tools and readers. This test regenerates them and fails
// when a committed one is stale: go test ./internal/reportfile -update rewrites
// them.
func TestJSONSchemasAreCurrent(t *testing.T) {
	for _, tc := range []struct {
		file, schema, title string
		root                any
	}{
		{"result.schema.json", result.Schema, "perfgate result file", result.Result{}},
		{"report.schema.json", Schema, "perfgate report file", Document{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := jsonSchema(t, tc.root, tc.schema, tc.title)
			file := filepath.Join("..", "..", "docs", "schema", tc.file)
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (go test ./internal/reportfile -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: the Go types or their doc comments changed; go test ./internal/reportfile -update rewrites it", file)
			}
		})
	}
}

// jsonSchema is the JSON Schema of root's type, a file whose "schema" field
// is version, described by the doc comments of perfgate's packages.
func jsonSchema(t *testing.T, root any, version, title string) []byte {
	t.Helper()
	rootPkg := reflect.TypeOf(root).PkgPath()
	r := &jsonschema.Reflector{
		// Readers ignore fields they do not know, and a version gains
		// optional fields: a schema must not refuse them.
		AllowAdditionalProperties: true,
		Anonymous:                 true,
		ExpandedStruct:            true,
		// Types from another package than the file's root are named with
		// their package (compare.Summary, baseline.Summary).
		Namer: func(t reflect.Type) string {
			if t.PkgPath() == rootPkg || t.PkgPath() == "" {
				return t.Name()
			}
			return path.Base(t.PkgPath()) + "." + t.Name()
		},
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t {
			case reflect.TypeFor[json.RawMessage]():
				return &jsonschema.Schema{Description: "Any JSON value, as the server sent it."}
			case reflect.TypeFor[compare.Num]():
				return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "number"}, {Type: "null"}},
					Description: "A number; null for no estimate or an unbounded interval."}
			}
			return nil
		},
	}
	// Descriptions come from the doc comments of every package under
	// internal/ (the root's, and those whose types it holds).
	if err := r.AddGoComments("github.com/perfgate/perfgate/internal/reportfile", ".."); err != nil {
		t.Fatal(err)
	}
	s := r.Reflect(root)
	s.Version = "https://json-schema.org/draft/2020-12/schema"
	s.Title = title + " (" + version + ")"
	if p, ok := s.Properties.Get("schema"); ok {
		p.Const = version
	} else {
		t.Fatalf("%T has no schema field", root)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

var update = flag.Bool("update", false, "rewrite the committed JSON Schemas")
