package stack

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/config"
)

// FuzzIdentify feeds one answer to every identity probe of every engine:
// the parsing must never panic or hang, and what it believes must be
// believable (a short printable engine and version, the answer kept as
// sent, and only when it is a JSON object). The corpus under
// testdata/fuzz/FuzzIdentify holds the real llama.cpp /props capture.
func FuzzIdentify(f *testing.F) {
	props, err := os.ReadFile(llamaCppProps)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		string(props),
		`{"version":"0.6.3.post1"}`,
		`{"version":"dev","engine":"perfgate-sim"}`,
		`{"model_id":"meta-llama/Llama-3.1-8B-Instruct","version":"2.4.0","sha":"0a655a0"}`,
		`{"model_path":"m","tp_size":1,"version":"0.4.0"}`,
		`{"build_info":"b4567-abcdef0","total_slots":4}`,
		`{"version":5,"engine":{"a":[1,2]},"total_slots":null}`,
		"{\"version\":\"\xff\"}",
		strings.Repeat("[", 4096),
		`{"a":` + strings.Repeat(`{"a":`, 2000) + `1` + strings.Repeat(`}`, 2001),
		`null`, `"0.6.3"`, `[{"version":"1"}]`, ``, `{`,
	} {
		f.Add([]byte(seed))
	}
	engines := []string{config.EngineAuto, config.EngineVLLM, config.EngineTGI, config.EngineSGLang, config.EngineLlamaCpp, config.EngineSim}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, engine := range engines {
			asked := map[string]int{}
			got := identifyWith(engine, func(path string) []byte {
				asked[path]++
				return body
			})
			for path, n := range asked {
				if n > 1 {
					t.Fatalf("identifyWith(%s) asked %s %d times", engine, path, n)
				}
			}
			if got.Engine == "" {
				if got.Version != "" || got.Endpoint != "" || got.Raw != nil {
					t.Fatalf("identifyWith(%s) = %+v: no engine, yet something else", engine, got)
				}
				continue
			}
			if cleanIdent(got.Engine) != got.Engine || cleanIdent(got.Version) != got.Version {
				t.Fatalf("identifyWith(%s) = engine %q version %q: not clean", engine, got.Engine, got.Version)
			}
			if got.Endpoint == "" || asked[got.Endpoint] != 1 {
				t.Fatalf("identifyWith(%s) endpoint %q was not asked", engine, got.Endpoint)
			}
			if got.Raw != nil && (!bytes.Equal(got.Raw, body) || !json.Valid(got.Raw) || !utf8.Valid(got.Raw)) {
				t.Fatalf("identifyWith(%s) kept a raw answer that is not the valid JSON text sent", engine)
			}
			if jsonObject(body) == nil {
				t.Fatalf("identifyWith(%s) recognised %q in something that is not a JSON object", engine, got.Engine)
			}
		}
	})
}
