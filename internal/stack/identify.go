package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/httpguard"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
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

// Bounds on what Identify reads and how long it waits: the server under test
// chooses its answers, and nothing it sends may hang or exhaust perfgate.
var (
	// identifyBodyLimit caps one identity answer (llama.cpp's /props, with
	// its chat template, is the largest: tens of KiB).
	identifyBodyLimit int64 = 1 << 20
	// identifyRequestTimeout bounds one identity request, body included.
	identifyRequestTimeout = 10 * time.Second
	// identifyTimeout bounds all of Identify.
	identifyTimeout = 20 * time.Second
)

// maxIdentLen is the longest engine name or version believed: a version is a
// short token ("0.6.3.post1", "b4567-abcdef0"), not a page of text.
const maxIdentLen = 128

// Identify asks the server at baseURL what it is: engine and version from
// the engine's identity endpoint (vLLM /version, TGI /info, SGLang
// /get_server_info, llama.cpp /props, the simulator /version), trying each in
// turn when engine is auto. The raw answer is kept. An engine that answers
// none of them gives a Server with no engine: identity is recorded as far as
// it is known, never guessed. /v1/models is the caller's (it needs the API
// client). hc nil means a client of perfgate's own; whatever hc is, a
// redirect is never followed.
//
// Identify never fails: an endpoint that does not answer 200 with a JSON
// object is one the server does not have. problems lists the answers that
// were refused and that the user should hear of: a redirect (naming where
// it pointed), an answer larger than 1 MiB, a request that timed out.
func Identify(ctx context.Context, hc *http.Client, baseURL, engine string) (srv result.Server, problems []error) {
	hc = noRedirects(hc)
	ctx, cancel := context.WithTimeout(ctx, identifyTimeout)
	defer cancel()
	fetch := func(path string) []byte {
		raw, err := getIdentity(ctx, hc, strings.TrimRight(baseURL, "/")+path)
		if err != nil {
			problems = append(problems, err)
		}
		return raw
	}
	return identifyWith(engine, fetch), problems
}

// identifyWith runs the identity probes of engine (all of them, in order,
// for auto) over the answers fetch returns for their paths (nil: none),
// asking each path once. It is the parsing half of Identify, apart so that
// it can be fuzzed: it must never panic or hang, whatever the answers are.
func identifyWith(engine string, fetch func(path string) []byte) result.Server {
	type answer struct {
		raw  []byte
		body map[string]any // nil: not a JSON object
	}
	tried := map[string]answer{}
	for _, p := range identityProbes {
		if engine != config.EngineAuto && engine != p.engine {
			continue
		}
		a, seen := tried[p.path]
		if !seen {
			a.raw = fetch(p.path)
			a.body = jsonObject(a.raw)
			tried[p.path] = a
		}
		if a.body == nil {
			continue
		}
		if e, v, ok := p.recognise(a.body); ok {
			if e = cleanIdent(e); e == "" {
				continue
			}
			srv := result.Server{Engine: e, Version: cleanIdent(v), Endpoint: p.path}
			if utf8.Valid(a.raw) { // kept as sent, but only as text
				srv.Raw = a.raw
			}
			return srv
		}
	}
	return result.Server{}
}

// jsonObject decodes raw when it is one JSON object, else returns nil.
// encoding/json bounds nesting depth itself, so a body of deep brackets is
// an error, not a stack overflow.
func jsonObject(raw []byte) map[string]any {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || !json.Valid(raw) {
		return nil
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil
	}
	return body
}

// cleanIdent returns s when it can be an engine name or version (short,
// valid UTF-8, no control characters, no replacement character, which is
// what encoding/json makes of invalid UTF-8), else "": a server's answer is
// not believed blindly, and it ends up in results, logs and PR comments.
func cleanIdent(s string) string {
	s = strings.TrimSpace(s)
	bad := func(r rune) bool { return unicode.IsControl(r) || r == utf8.RuneError }
	if len(s) > maxIdentLen || !utf8.ValidString(s) || strings.ContainsFunc(s, bad) {
		return ""
	}
	return s
}

// getIdentity GETs url and returns its body when it answers 200; nil
// otherwise. err is set for what the user should hear of: a redirect, which
// is not followed, an answer too large, a request that timed out.
func getIdentity(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, identifyRequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil
	}
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("GET %s: no answer within %s", url, identifyRequestTimeout)
		}
		return nil, nil
	}
	defer resp.Body.Close()
	if re := httpguard.Redirected(resp); re != nil {
		return nil, re
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil
	}
	body, err := safeio.ReadAll(resp.Body, identifyBodyLimit, "the answer to GET "+url)
	var tooLarge *safeio.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return nil, err
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("GET %s: the answer did not end within %s", url, identifyRequestTimeout)
	case err != nil:
		return nil, nil
	}
	return body, nil
}

// noRedirects returns hc (nil: perfgate's own client) set never to follow a
// redirect: a 3xx comes back as it is, to be refused with
// httpguard.Redirected.
func noRedirects(hc *http.Client) *http.Client {
	if hc == nil {
		return defaultHTTPClient
	}
	c := *hc
	c.CheckRedirect = httpguard.NoRedirects
	return &c
}

// defaultHTTPClient sends the health checks and identity requests when the
// caller gives no client: no redirects, bounded response headers, no proxy.
var defaultHTTPClient = httpguard.Client(nil)

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
