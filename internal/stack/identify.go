package stack

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// identityProbe is one engine's way of saying what it is: the endpoint to
// ask, and how to read engine and version from its JSON answer. recognise
// returns ok false when the body is not this engine's.
type identityProbe struct {
	engine    string
	path      string
	recognise func(body map[string]any) (engine, version string, ok bool)
}

// str reads a string field of a decoded JSON object.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// identityProbes lists the engines in the order auto tries them. Engines with
// an endpoint of their own come first; /version, which vLLM and the simulator
// share, comes last and is told apart by the simulator's "engine" field.
var identityProbes = []identityProbe{
	{config.EngineTGI, "/info", func(b map[string]any) (string, string, bool) {
		// TGI's /info: model_id, version, sha, router...
		if str(b, "model_id") == "" {
			return "", "", false
		}
		return "tgi", str(b, "version"), true
	}},
	{config.EngineSGLang, "/get_server_info", func(b map[string]any) (string, string, bool) {
		// SGLang's server args (model_path, tp_size, ...) and its version.
		if str(b, "model_path") == "" && b["tp_size"] == nil {
			return "", "", false
		}
		return "sglang", str(b, "version"), true
	}},
	{config.EngineLlamaCpp, "/props", func(b map[string]any) (string, string, bool) {
		// llama.cpp's /props: build_info ("b4567-abcdef0"), total_slots, model_path.
		if b["total_slots"] == nil && str(b, "build_info") == "" {
			return "", "", false
		}
		return "llamacpp", str(b, "build_info"), true
	}},
	{config.EngineVLLM, "/version", func(b map[string]any) (string, string, bool) {
		if v := str(b, "version"); v != "" && str(b, "engine") == "" {
			return "vllm", v, true
		}
		return "", "", false
	}},
	{config.EngineSim, "/version", func(b map[string]any) (string, string, bool) {
		if e := str(b, "engine"); e != "" {
			return e, str(b, "version"), true
		}
		return "", "", false
	}},
}

// Identify asks the server at baseURL what it is: engine and version from
// the engine's identity endpoint (vLLM /version, TGI /info, SGLang
// /get_server_info, llama.cpp /props, the simulator /version), trying each in
// turn when engine is auto. The raw answer is kept. An engine that answers
// none of them gives a Server with no engine: identity is recorded as far as
// it is known, never guessed. /v1/models is the caller's (it needs the API
// client). hc nil means http.DefaultClient.
func Identify(ctx context.Context, hc *http.Client, baseURL, engine string) result.Server {
	if hc == nil {
		hc = http.DefaultClient
	}
	tried := map[string]map[string]any{} // path → decoded body (nil: no JSON answer)
	raws := map[string][]byte{}
	for _, p := range identityProbes {
		if engine != config.EngineAuto && engine != p.engine {
			continue
		}
		body, seen := tried[p.path]
		if !seen {
			raw := getJSON(ctx, hc, strings.TrimRight(baseURL, "/")+p.path)
			raws[p.path] = raw
			if raw != nil {
				_ = json.Unmarshal(raw, &body)
			}
			tried[p.path] = body
		}
		if body == nil {
			continue
		}
		if e, v, ok := p.recognise(body); ok {
			return result.Server{Engine: e, Version: v, Endpoint: p.path, Raw: raws[p.path]}
		}
	}
	return result.Server{}
}

// getJSON GETs url and returns its body when it answers 200 with a JSON
// object of at most 1 MiB; nil otherwise.
func getJSON(ctx context.Context, hc *http.Client, url string) []byte {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK || !json.Valid(body) || !strings.HasPrefix(strings.TrimSpace(string(body)), "{") {
		return nil
	}
	return body
}

// ModelFlags reads the model's revision and quantisation from a stack's
// command line, as the engines spell them: --revision (vLLM, TGI, SGLang),
// --quantization or -q (vLLM, SGLang) and --quantize (TGI), each as
// "--flag value" or "--flag=value". Empty when the command line does not say.
func ModelFlags(argv []string) (revision, quantization string) {
	for i := 0; i < len(argv); i++ {
		name, value, hasValue := strings.Cut(argv[i], "=")
		if !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			value = argv[i+1]
		}
		switch name {
		case "--revision":
			revision = value
		case "--quantization", "-q", "--quantize":
			quantization = value
		}
	}
	return revision, quantization
}
