package stack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// llamaCppProps is the path, from this package, of a real llama.cpp /props
// capture.
const llamaCppProps = "../../testdata/captures/llamacpp/props.json"

// engineServer answers GET on each of paths with its body (200), and 404 on
// anything else, recording the paths asked.
type engineServer struct {
	*httptest.Server
	mu    sync.Mutex
	asked []string
}

func newEngineServer(t *testing.T, paths map[string]string) *engineServer {
	t.Helper()
	es := &engineServer{}
	es.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		es.mu.Lock()
		es.asked = append(es.asked, r.Method+" "+r.URL.Path)
		es.mu.Unlock()
		body, ok := paths[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(es.Close)
	return es
}

func (es *engineServer) requests() []string {
	es.mu.Lock()
	defer es.mu.Unlock()
	return slices.Clone(es.asked)
}

func TestIdentify(t *testing.T) {
	props, err := os.ReadFile(llamaCppProps)
	require.NoError(t, err, "the llama.cpp /props capture")

	const (
		vllmBody   = `{"version":"0.6.3.post1"}`
		tgiBody    = `{"model_id":"meta-llama/Llama-3.1-8B-Instruct","model_sha":null,"model_pipeline_tag":"text-generation","max_concurrent_requests":128,"version":"2.4.0","sha":"0a655a0ab5db15f08e45d8c535e263044b944190","router":"text-generation-router"}`
		sglangBody = `{"model_path":"meta-llama/Llama-3.1-8B-Instruct","tp_size":1,"dp_size":1,"mem_fraction_static":0.88,"version":"0.4.0"}`
		simBody    = `{"version":"dev","engine":"perfgate-sim"}`
	)
	vllm := map[string]string{"/version": vllmBody}
	tgi := map[string]string{"/info": tgiBody}
	sglang := map[string]string{"/get_server_info": sglangBody}
	llamacpp := map[string]string{"/props": string(props)}
	sim := map[string]string{"/version": simBody}

	tests := []struct {
		name   string
		paths  map[string]string
		engine string
		want   result.Server // Raw: the body at want.Endpoint
		asked  []string      // the requests Identify sends, in order; nil: not checked
	}{
		{"vllm auto", vllm, config.EngineAuto,
			result.Server{Engine: "vllm", Version: "0.6.3.post1", Endpoint: "/version"},
			[]string{"GET /info", "GET /get_server_info", "GET /props", "GET /version"}},
		{"vllm named", vllm, config.EngineVLLM,
			result.Server{Engine: "vllm", Version: "0.6.3.post1", Endpoint: "/version"},
			[]string{"GET /version"}},
		{"tgi auto", tgi, config.EngineAuto,
			result.Server{Engine: "tgi", Version: "2.4.0", Endpoint: "/info"},
			[]string{"GET /info"}},
		{"tgi named", tgi, config.EngineTGI,
			result.Server{Engine: "tgi", Version: "2.4.0", Endpoint: "/info"},
			[]string{"GET /info"}},
		{"sglang auto", sglang, config.EngineAuto,
			result.Server{Engine: "sglang", Version: "0.4.0", Endpoint: "/get_server_info"},
			[]string{"GET /info", "GET /get_server_info"}},
		{"sglang named", sglang, config.EngineSGLang,
			result.Server{Engine: "sglang", Version: "0.4.0", Endpoint: "/get_server_info"},
			[]string{"GET /get_server_info"}},
		{"sglang without model_path", map[string]string{"/get_server_info": `{"tp_size":2}`}, config.EngineAuto,
			result.Server{Engine: "sglang", Endpoint: "/get_server_info"}, nil},
		{"llamacpp auto, real capture", llamacpp, config.EngineAuto,
			result.Server{Engine: "llamacpp", Version: "b0-unknown", Endpoint: "/props"},
			[]string{"GET /info", "GET /get_server_info", "GET /props"}},
		{"llamacpp named, real capture", llamacpp, config.EngineLlamaCpp,
			result.Server{Engine: "llamacpp", Version: "b0-unknown", Endpoint: "/props"},
			[]string{"GET /props"}},
		{"llamacpp with build_info only", map[string]string{"/props": `{"build_info":"b4567-abcdef0"}`}, config.EngineAuto,
			result.Server{Engine: "llamacpp", Version: "b4567-abcdef0", Endpoint: "/props"}, nil},
		{"simulator auto, /version asked once", sim, config.EngineAuto,
			result.Server{Engine: "perfgate-sim", Version: "dev", Endpoint: "/version"},
			[]string{"GET /info", "GET /get_server_info", "GET /props", "GET /version"}},
		{"simulator named", sim, config.EngineSim,
			result.Server{Engine: "perfgate-sim", Version: "dev", Endpoint: "/version"},
			[]string{"GET /version"}},

		// Engines that do not match.
		{"tgi named, vllm server", vllm, config.EngineTGI, result.Server{}, []string{"GET /info"}},
		{"vllm named, simulator", sim, config.EngineVLLM, result.Server{}, []string{"GET /version"}},
		{"simulator named, vllm server", vllm, config.EngineSim, result.Server{}, []string{"GET /version"}},
		{"sglang named, llamacpp server", llamacpp, config.EngineSGLang, result.Server{}, []string{"GET /get_server_info"}},
		{"llamacpp named, tgi server", tgi, config.EngineLlamaCpp, result.Server{}, []string{"GET /props"}},

		// Answers that say nothing.
		{"nothing answers", map[string]string{}, config.EngineAuto, result.Server{},
			[]string{"GET /info", "GET /get_server_info", "GET /props", "GET /version"}},
		{"non-JSON answers", map[string]string{
			"/info": "OK", "/get_server_info": "<html>hi</html>", "/props": "", "/version": "0.6.3",
		}, config.EngineAuto, result.Server{}, nil},
		{"JSON arrays", map[string]string{
			"/info": `[{"model_id":"m","version":"1"}]`, "/version": `[{"version":"0.6.3"}]`,
		}, config.EngineAuto, result.Server{}, nil},
		{"JSON scalars", map[string]string{"/version": `"0.6.3"`, "/info": `null`}, config.EngineAuto, result.Server{}, nil},
		{"objects without identity fields", map[string]string{
			"/info": `{"status":"ok"}`, "/get_server_info": `{}`, "/props": `{"model_path":""}`, "/version": `{"version":""}`,
		}, config.EngineAuto, result.Server{}, nil},
		{"an object that is not this engine's is skipped", map[string]string{
			"/info": `{"status":"ok"}`, "/version": vllmBody,
		}, config.EngineAuto, result.Server{Engine: "vllm", Version: "0.6.3.post1", Endpoint: "/version"}, nil},
		{"leading whitespace is still an object", map[string]string{"/version": " \n" + vllmBody}, config.EngineVLLM,
			result.Server{Engine: "vllm", Version: "0.6.3.post1", Endpoint: "/version"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := newEngineServer(t, tt.paths)
			got, problems := Identify(context.Background(), es.Client(), es.URL+"/", tt.engine)
			assert.Empty(t, problems, "nothing to warn about")

			want := tt.want
			if want.Endpoint != "" {
				want.Raw = []byte(tt.paths[want.Endpoint])
			}
			assert.Equal(t, want.Engine, got.Engine)
			assert.Equal(t, want.Version, got.Version)
			assert.Equal(t, want.Endpoint, got.Endpoint)
			assert.Equal(t, string(want.Raw), string(got.Raw), "Raw is the body as sent")
			assert.Equal(t, want, got)
			if tt.asked != nil {
				assert.Equal(t, tt.asked, es.requests())
			}
		})
	}
}

func TestIdentifyServerDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	for _, engine := range []string{config.EngineAuto, config.EngineVLLM} {
		got, problems := Identify(context.Background(), nil, srv.URL, engine)
		assert.Equal(t, result.Server{}, got, engine)
		assert.Empty(t, problems, "a server that is down is no problem to warn about")
	}
}

func TestIdentifyCancelled(t *testing.T) {
	es := newEngineServer(t, map[string]string{"/version": `{"version":"0.6.3.post1"}`})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, _ := Identify(ctx, nil, es.URL, config.EngineAuto)
	assert.Equal(t, result.Server{}, got)
	assert.Empty(t, es.requests(), "nothing asked once cancelled")
}

func TestModelFlags(t *testing.T) {
	tests := []struct {
		argv            []string
		revision, quant string
	}{
		{[]string{"vllm", "serve", "m", "--quantization", "fp8", "--revision", "abc123"}, "abc123", "fp8"},
		{[]string{"vllm", "serve", "m", "-q=awq"}, "", "awq"},
		{[]string{"text-generation-launcher", "--model-id", "m", "--quantize", "bitsandbytes-nf4", "--revision=v2"}, "v2", "bitsandbytes-nf4"},
		{[]string{"python", "-m", "sglang.launch_server", "--quantization", "gptq"}, "", "gptq"},
		{[]string{"perfgate", "sim", "--quantization"}, "", ""}, // a flag with no value says nothing
		{nil, "", ""},
	}
	for _, tt := range tests {
		rev, q := ModelFlags(tt.argv)
		assert.Equal(t, tt.revision, rev, "%v", tt.argv)
		assert.Equal(t, tt.quant, q, "%v", tt.argv)
	}
}
