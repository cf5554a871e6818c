package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	gating "github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/textsafe"
)

var updateInit = flag.Bool("update-init", false, "rewrite testdata/init/*.yaml, the golden files of perfgate init")

// modelsServer serves body at GET /v1/models on 127.0.0.1, recording the
// Authorization header it was sent.
func modelsServer(t *testing.T, status int, body string) (*httptest.Server, *string) {
	t.Helper()
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		auth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &auth
}

// runInit runs perfgate init with args and the environment env, in dir.
func runInit(t *testing.T, env map[string]string, args ...string) (stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&system{stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] },
		lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	root.SetArgs(append([]string{"init"}, args...))
	err = root.ExecuteContext(context.Background())
	return errb.String(), err
}

// checkGolden compares the file at path, with the server's address made
// fixed, to testdata/init/name.
func checkGolden(t *testing.T, path, srvURL, name string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got = bytes.ReplaceAll(got, []byte(srvURL), []byte("http://127.0.0.1:PORT"))
	golden := filepath.Join("testdata", "init", name)
	if *updateInit {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestInit ./cmd/perfgate -update-init)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("perfgate init wrote\n%s\nwant (%s)\n%s", got, golden, want)
	}
}

// init asks the server for its models and writes the commented config for
// the first, the others named, the hostile id left out, the engine guessed;
// the config validates (perfgate validate too) and the credential stays a
// ${VAR} reference, sent expanded.
func TestInitGolden(t *testing.T) {
	srv, auth := modelsServer(t, http.StatusOK, `{"object":"list","data":[
		{"id":"org/model-a","owned_by":"vllm"},
		{"id":"evil\u001b[31m\nname","owned_by":"vllm"},
		{"id":"org/model-b","owned_by":"vllm"}]}`)
	dir := t.TempDir()
	out := filepath.Join(dir, "perfgate.yaml")
	stderr, err := runInit(t, map[string]string{"MY_KEY": "sk-test"}, "--target", srv.URL+"/", "-o", out,
		"--header", "Authorization: Bearer ${MY_KEY}", "--header", "X-Team: perf")
	if err != nil {
		t.Fatalf("perfgate init: %v\n%s", err, stderr)
	}
	if *auth != "Bearer sk-test" {
		t.Errorf("the server was sent Authorization %q, want the variable expanded", *auth)
	}
	checkGolden(t, out, srv.URL, "vllm.yaml")
	if strings.Contains(stderr, "\x1b") || !strings.Contains(stderr, "1 model id(s)") {
		t.Errorf("stderr does not say, safely, that a model id was skipped:\n%q", stderr)
	}
	cfg, err := config.LoadFile(out)
	if err != nil {
		t.Fatalf("the written config does not load: %v", err)
	}
	if cfg.Target.Model != "org/model-a" || cfg.Stack.Engine != config.EngineVLLM || len(cfg.Scenarios) != 2 {
		t.Errorf("config: model %s, engine %s, %d scenarios; want org/model-a, vllm, 2", cfg.Target.Model, cfg.Stack.Engine, len(cfg.Scenarios))
	}
	if cfg.Target.Headers["Authorization"] != "Bearer ${MY_KEY}" {
		t.Errorf("Authorization = %q in the config, want the ${MY_KEY} reference", cfg.Target.Headers["Authorization"])
	}
	if undecided := gating.Check(cfg, gating.TwoSamples); len(undecided) > 0 {
		t.Errorf("the written config's gates cannot decide: %v", undecided)
	}
	var vout, verr bytes.Buffer
	if err := Main(context.Background(), []string{"validate", "-c", out}, &vout, &verr); err != nil {
		t.Errorf("perfgate validate: %v\n%s", err, verr.String())
	}

	// An existing file is kept, unless --force.
	if _, err := runInit(t, nil, "--target", srv.URL, "-o", out); exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), "--force") {
		t.Errorf("init over an existing file: %v, want a usage error naming --force", err)
	}
	if _, err := runInit(t, map[string]string{"MY_KEY": "k"}, "--target", srv.URL, "-o", out, "--force"); err != nil {
		t.Errorf("init --force: %v", err)
	}
}

// With --model init asks nothing (the target may be down) and leaves the
// engine to auto; a literal credential is not written.
func TestInitOffline(t *testing.T) {
	const target = "http://127.0.0.1:1"
	out := filepath.Join(t.TempDir(), "hosted.yaml")
	stderr, err := runInit(t, nil, "--target", target, "--model", "gpt-test", "--api", "completions",
		"--header", "Authorization: Bearer sk-literal-secret", "-o", out)
	if err != nil {
		t.Fatalf("perfgate init --model: %v\n%s", err, stderr)
	}
	checkGolden(t, out, target, "offline.yaml")
	data, _ := os.ReadFile(out)
	if strings.Contains(string(data), "sk-literal") {
		t.Errorf("the literal credential was written to the config")
	}
	if !strings.Contains(stderr, "PERFGATE_API_KEY") {
		t.Errorf("stderr does not say where the credential is read from:\n%s", stderr)
	}
	if _, err := config.LoadFile(out); err != nil {
		t.Errorf("the written config does not load: %v", err)
	}
}

// A server that refuses, lists nothing or is not there is a clear error,
// and nothing is written.
func TestInitErrors(t *testing.T) {
	refused, _ := modelsServer(t, http.StatusUnauthorized, `{"error":"no"}`)
	empty, _ := modelsServer(t, http.StatusOK, `{"data":[]}`)
	garbage, _ := modelsServer(t, http.StatusOK, `<html>`)
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"refused", []string{"--target", refused.URL}, nil, exit.RunFailed, "refused the credentials (HTTP 401)"},
		{"no models", []string{"--target", empty.URL}, nil, exit.RunFailed, "lists no usable model"},
		{"not a list", []string{"--target", garbage.URL}, nil, exit.RunFailed, "not a list of models"},
		{"down", []string{"--target", "http://127.0.0.1:1"}, nil, exit.RunFailed, "give --model"},
		{"unset variable", []string{"--target", empty.URL, "--header", "Authorization: Bearer ${NOPE}"}, nil, exit.Usage, "${NOPE} is not set in the environment"},
		{"bad target", []string{"--target", "ftp://x", "--model", "m"}, nil, exit.Usage, "target.base_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "perfgate.yaml")
			_, err := runInit(t, tc.env, append(tc.args, "-o", out)...)
			if exit.Code(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("perfgate init: exit %d (%v), want %d and %q", exit.Code(err), err, tc.code, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a config was written")
			}
		})
	}
}

// A server that lists the key it was sent as a model id has that id
// skipped, with a warning that does not quote it; a redirect that carries
// the key has it redacted. Neither reaches the config or the terminal.
func TestInitKeyEchoed(t *testing.T) {
	const key = "sk-secretsecret123"
	env := map[string]string{"MYKEY": key}
	srv, _ := modelsServer(t, http.StatusOK, `{"data":[{"id":"`+key+`"},{"id":"Bearer `+key+`"},{"id":"org/served"}]}`)
	checkInitSkipsEchoes(t, key, env, srv.URL, "Authorization: Bearer ${MYKEY}", 2)
	checkInitRedirectRedacted(t, key, env, "Authorization: Bearer ${MYKEY}")
}

// A header name YAML would read otherwise (# starts a comment) is written
// quoted: the config loads with the header.
func TestInitHeaderNameQuoted(t *testing.T) {
	out := filepath.Join(t.TempDir(), "perfgate.yaml")
	stderr, err := runInit(t, nil, "--model", "m", "--header", "#x: v", "--header", "a'b|c: w", "--header", "true: t", "-o", out)
	if err != nil {
		t.Fatalf("perfgate init: %v\n%s", err, stderr)
	}
	cfg, err := config.LoadFile(out)
	if err != nil {
		t.Fatalf("the written config does not load: %v", err)
	}
	if cfg.Target.Headers["#x"] != "v" || cfg.Target.Headers["a'b|c"] != "w" || cfg.Target.Headers["true"] != "t" {
		t.Errorf("headers %v, want #x: v and a'b|c: w", cfg.Target.Headers)
	}
}

// init reads a header value by the rule a run does (config.HeaderVars): a
// value a run refuses is refused, not rewritten to ${PERFGATE_API_KEY}; a
// variable set but empty is said to be empty.
func TestInitHeaderValueRule(t *testing.T) {
	srv, _ := modelsServer(t, http.StatusOK, `{"data":[{"id":"m"}]}`)
	for _, tc := range []struct {
		name   string
		header string
		env    map[string]string
		want   string
	}{
		{"bare $NAME", "Authorization: Bearer $KEY", nil, "target.headers.Authorization: the $ at byte 7 does not begin ${NAME}"},
		{"shell default", "Authorization: Bearer ${KEY:-x}", nil, "target.headers.Authorization: the $ at byte 7 does not name a variable"},
		{"empty variable", "Authorization: Bearer ${KEY}", map[string]string{"KEY": ""}, "${KEY} is empty in the environment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "perfgate.yaml")
			stderr, err := runInit(t, tc.env, "--target", srv.URL, "--header", tc.header, "-o", out)
			if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("perfgate init: exit %d (%v), want %d and %q", exit.Code(err), err, exit.Usage, tc.want)
			}
			if strings.Contains(stderr, "PERFGATE_API_KEY") {
				t.Errorf("init offered to rewrite the value:\n%s", stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a config was written")
			}
		})
	}
}

// A literal credential given with --header (kept out of the config) that
// the server echoes, as a model id or in a redirect's Location, is
// redacted as a ${VAR}'s value is: the id is skipped, the Location says
// [redacted]. (Only ${VAR} values were checked: the literal became
// `model:` in the config and "wrote … for model <key>" on stderr.)
func TestInitLiteralKeyEchoed(t *testing.T) {
	const key = "sk-literal-secret-123"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		tok := strings.TrimPrefix(auth, "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"data":[{"id":%q},{"id":%q},{"id":%q},{"id":"org/served"}]}`, tok, auth, url.PathEscape(tok+"/x"))
	}))
	t.Cleanup(echo.Close)
	checkInitSkipsEchoes(t, key, nil, echo.URL, "Authorization: Bearer "+key, 3)
	checkInitRedirectRedacted(t, key, nil, "Authorization: Bearer "+key)
}

// checkInitSkipsEchoes runs perfgate init against target, whose model list
// echoes key in skipped ids beside org/served, with header: the config is
// written for org/served, the warning counts the ids skipped, and the key
// is in neither the config nor stderr.
func checkInitSkipsEchoes(t *testing.T, key string, env map[string]string, target, header string, skipped int) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "perfgate.yaml")
	stderr, err := runInit(t, env, "--target", target, "--header", header, "-o", out)
	if err != nil {
		t.Fatalf("perfgate init: %v\n%s", err, stderr)
	}
	data, _ := os.ReadFile(out)
	cfg, err := config.LoadFile(out)
	if err != nil {
		t.Fatalf("the written config does not load: %v", err)
	}
	if cfg.Target.Model != "org/served" {
		t.Errorf("model %q, want org/served", textsafe.Line(cfg.Target.Model))
	}
	if want := fmt.Sprintf("lists %d model id(s) holding a --header value; skipped", skipped); !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks the warning:\n%s", stderr)
	}
	if strings.Contains(string(data), key) || strings.Contains(stderr, key) {
		t.Errorf("the key reached the config or stderr:\n%s\n%s", data, stderr)
	}
}

// checkInitRedirectRedacted runs perfgate init, with header, against a
// server that redirects to /x?k=<the bearer token it was sent>: init fails
// naming the redirect with the key redacted, and nowhere else holds it.
func checkInitRedirectRedacted(t *testing.T, key string, env map[string]string, header string) {
	t.Helper()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/x?k="+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	out := filepath.Join(t.TempDir(), "perfgate.yaml")
	stderr, err := runInit(t, env, "--target", redirect.URL, "--header", header, "-o", out)
	if err == nil || !strings.Contains(err.Error(), "/x?k=[redacted]") || strings.Contains(err.Error()+stderr, key) {
		t.Errorf("perfgate init against a redirect: %v\n%s; want it with the key redacted", err, stderr)
	}
}
