package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is perfgate's module path.
const module = "github.com/perfgate/perfgate"

// layer is each package's layer, by its path in the module: a package may
// import only packages of lower layers. docs/architecture.md says what
// each layer is for; keep the two alike.
var layer = map[string]int{
	// 0: leaves, which import nothing of perfgate's.
	"internal/stat": 0, "internal/problem": 0, "internal/clock": 0, "internal/textsafe": 0, "internal/safeio": 0,
	"internal/suggest": 0, "internal/exit": 0, "internal/version": 0,
	"internal/proctest": 0, "internal/hostile": 0, "internal/safeio/safeiotest": 0, "internal/github/githubtest": 0,
	"internal/layers": 0,
	// 1: vocabulary and guards over the leaves; the simulator, a double
	// that must share no code with what it checks; model files' headers.
	"internal/metric": 1, "internal/httpguard": 1, "internal/sim": 1, "internal/modelfile": 1,
	// 2: the result file, what every stage reads and writes.
	"internal/result": 2,
	// 3 (see also below): result fixtures for tests.
	"internal/result/resulttest": 3,
	// 3: the workload format, the capacity search's arithmetic, MBU and
	// MFU's.
	"internal/workload": 3, "internal/capacity": 3, "internal/frontier": 3, "internal/utilization": 3,
	// 4: the config, the HTTP client, the importers.
	"internal/config": 4, "internal/client": 4, "internal/kube": 4, "internal/traceimport": 4, "internal/github": 4,
	// 5: what runs beside the load: eval suites, the stack, telemetry,
	// baselines.
	"internal/quality": 5, "internal/stack": 5, "internal/route": 5, "internal/kube/kubetest": 5, "internal/telemetry": 5, "internal/baseline": 5,
	// 6: the structured-output check, the comparison, the simulator as a
	// stack.
	"internal/structured": 6, "internal/compare": 6, "internal/simstack": 6,
	// 7: sending the load; exporting results; the report file.
	"internal/run": 7, "internal/export": 7, "internal/reportfile": 7,
	// 8: a measuring session; rendering reports.
	"internal/session": 8, "internal/report": 8,
	// 9: the gate's policy and verdict; 10: the A/B pipeline.
	"internal/gate": 9, "internal/ab": 10,
	// 11: commands, benchmarks and generators, which wire the rest.
	"cmd/perfgate": 11, "bench/decide": 11, "examples/gen": 11,
}

// forbiddenHTTP are the net/http names that make a request: cmd/perfgate
// wires and prints, and asks servers through internal/client and
// internal/github only.
var forbiddenHTTP = []string{"NewRequest", "NewRequestWithContext", "Get", "Head", "Post", "PostForm", "DefaultClient", "DefaultTransport"}

// pkg is one package's non-test files' imports of the module.
type pkg struct {
	imports map[string]token.Position // module path → where first imported
	http    []token.Position          // uses of forbiddenHTTP
}

// root is the module's root, two levels up from this package.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", r, err)
	}
	return r
}

// scan parses every non-test Go file of the module (not tools/, testdata,
// scratch directories, which hold local experiments a clone does not have,
// or hidden directories) for its imports of the module and its uses of
// forbiddenHTTP.
func scan(t *testing.T) map[string]*pkg {
	t.Helper()
	base := root(t)
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != base && (strings.HasPrefix(name, ".") || name == "testdata" || name == "tools" || name == "scratch" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &pkg{imports: map[string]token.Position{}}
			pkgs[rel] = p
		}
		httpName := ""
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if ip == "net/http" {
				httpName = "http"
				if im.Name != nil {
					httpName = im.Name.Name
				}
			}
			if rest, ok := strings.CutPrefix(ip, module+"/"); ok {
				if _, seen := p.imports[rest]; !seen {
					p.imports[rest] = fset.Position(im.Pos())
				}
			}
		}
		if httpName != "" {
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == httpName && slices.Contains(forbiddenHTTP, sel.Sel.Name) {
						p.http = append(p.http, fset.Position(sel.Pos()))
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// Every package has a layer, and imports only packages of lower layers:
// statistics import nothing of perfgate's, the simulator none of the code
// it checks (quality, compare, report), nothing imports upward.
func TestImportRules(t *testing.T) {
	pkgs := scan(t)
	for _, path := range slices.Sorted(maps.Keys(pkgs)) {
		l, ok := layer[path]
		if !ok {
			t.Errorf("package %s has no layer: add it to layers_test.go and docs/architecture.md", path)
			continue
		}
		p := pkgs[path]
		for _, imp := range slices.Sorted(maps.Keys(p.imports)) {
			il, ok := layer[imp]
			switch {
			case !ok:
				t.Errorf("%s: %s imports %s, which has no layer", p.imports[imp], path, imp)
			case il >= l:
				t.Errorf("%s: %s (layer %d) imports %s (layer %d): a package imports only lower layers", p.imports[imp], path, l, imp, il)
			}
		}
	}
	for path := range layer {
		if _, ok := pkgs[path]; !ok {
			t.Errorf("layer lists %s, which has no Go files: remove it", path)
		}
	}
}

// cmd/perfgate makes no HTTP request of its own: it asks servers through
// internal/client and internal/github, which bound and redact what they
// read.
func TestCommandsMakeNoHTTPRequest(t *testing.T) {
	for _, pos := range scan(t)["cmd/perfgate"].http {
		t.Errorf("%s: cmd/perfgate makes an HTTP request; ask through internal/client", pos)
	}
}

// The rules themselves: a leaf that imported perfgate, or the simulator
// importing a package it checks, would be refused.
func TestImportRulesRefuse(t *testing.T) {
	for _, c := range []struct{ from, to string }{
		{"internal/stat", "internal/result"},
		{"internal/sim", "internal/quality"},
		{"internal/sim", "internal/compare"},
		{"internal/sim", "internal/report"},
		{"internal/config", "internal/compare"},
	} {
		if layer[c.to] < layer[c.from] {
			t.Errorf("%s (layer %d) may import %s (layer %d), which the rules forbid", c.from, layer[c.from], c.to, layer[c.to])
		}
	}
}
