package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/sim"
)

// e2eKey is the secret the environment of these tests holds.
const e2eKey = "sk-e2e-perfgate-9d41c7b2a0"

// keyServer is a proxy on loopback in front of the simulator that wants
// "Authorization: Bearer <key>" on every request: a wrong one gets 401 with
// a message that echoes the header it got. With the right key, every
// echoEvery-th completion of the load (not the readiness probe) is refused
// with a 400 whose message echoes the key, as a careless server's might.
type keyServer struct {
	*httptest.Server
	mu        sync.Mutex
	auths     map[string]int // Authorization values seen
	completed int
	// echoModels, if set before the run, makes /v1/models list the
	// Authorization it got, less "Bearer ", as its first model id.
	echoModels bool
}

func newKeyServer(t *testing.T, key string, echoEvery int) *keyServer {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.StepBase = time.Millisecond
	simURL, _ := startSim(t, cfg)
	target, err := url.Parse(simURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	// A connection of its own per request: the readiness probe hangs up
	// after its first token, and a shared keep-alive pool let that late
	// cancel close the connection under the next request (under -race,
	// about one run in 40 broke a measured stream after one event).
	proxy.Transport = &http.Transport{DisableKeepAlives: true}
	proxy.FlushInterval = -1
	k := &keyServer{auths: map[string]int{}}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		k.mu.Lock()
		k.auths[auth]++
		echoModels := k.echoModels
		echo := false
		if r.Method == http.MethodPost && !strings.HasSuffix(r.Header.Get("X-Request-Id"), "-ready") {
			k.completed++
			echo = echoEvery > 0 && k.completed%echoEvery == 0
		}
		k.mu.Unlock()
		status := 0
		switch {
		case auth != "Bearer "+key:
			status = http.StatusUnauthorized
		case echo:
			status = http.StatusBadRequest
		}
		if status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": "rejected; you sent Authorization: " + auth}})
			return
		}
		if echoModels && r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"data": []map[string]string{
				{"id": strings.TrimPrefix(auth, "Bearer ")}, {"id": "served-model"}}})
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(k.Close)
	return k
}

func (k *keyServer) seen() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int{}
	for a, n := range k.auths {
		out[a] = n
	}
	return out
}

// keyConfig is a config for the server at url whose Authorization header
// takes the key from ${PERFGATE_E2E_KEY}.
func keyConfig(t *testing.T, url string) string {
	return writeConfig(t, fmt.Sprintf(`
target:
  base_url: %q
  headers:
    Authorization: "Bearer ${PERFGATE_E2E_KEY}"
warmup: {method: none}
telemetry: {metrics: off, gpu: off}
repetitions: 1
scenarios:
  - name: s
    synth: {requests: 12, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: closed, concurrency: 1}
    max_error_rate: 0.5
`, url))
}

// The key in the environment reaches the server on every request, and
// nothing perfgate writes (the result, the records, the report, stdout,
// stderr) holds it, even where the server echoed it into its errors.
func TestRunKeyFromEnvNeverWritten(t *testing.T) {
	t.Setenv("PERFGATE_E2E_KEY", e2eKey)
	k := newKeyServer(t, e2eKey, 4)
	conf := keyConfig(t, k.URL)
	dir := filepath.Dir(conf)
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"run", "-c", conf, "-o", filepath.Join(dir, "r.json"),
		"--records", filepath.Join(dir, "rec.jsonl")}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("perfgate run: %v\n%s", err, stderr.String())
	}
	if err := Main(context.Background(), []string{"report", filepath.Join(dir, "r.json"), "-b", filepath.Join(dir, "r.json"),
		"--html", filepath.Join(dir, "report.html")}, &stdout, &stderr); err != nil {
		t.Fatalf("perfgate report: %v\n%s", err, stderr.String())
	}
	if err := Main(context.Background(), []string{"run", "-c", conf, "-o", filepath.Join(dir, "r2.json"), "--json"}, &stdout, &stderr); err != nil {
		t.Fatalf("perfgate run --json: %v\n%s", err, stderr.String())
	}

	seen := k.seen()
	if seen["Bearer "+e2eKey] == 0 || len(seen) != 1 {
		t.Errorf("the server saw Authorization %v, want only the expanded key", keys(seen))
	}
	recs := readRecords(t, filepath.Join(dir, "rec.jsonl"))
	echoed := 0
	for _, r := range recs {
		if strings.Contains(r.Error, "you sent Authorization: Bearer [redacted]") {
			echoed++
		}
	}
	if echoed != 3 {
		t.Errorf("%d records carry the redacted echo, want 3 (every 4th of 12)", echoed)
	}
	written := map[string]string{"stdout": stdout.String(), "stderr": stderr.String()}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		written[path] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) < 5 {
		t.Errorf("only %d outputs to search: %v", len(written), keys(written))
	}
	for what, text := range written {
		if strings.Contains(text, e2eKey) {
			t.Errorf("%s holds the key", what)
		}
	}
	if !strings.Contains(written[conf], "${PERFGATE_E2E_KEY}") {
		t.Errorf("the config lost its template")
	}
}

// An unset variable is a usage error naming it and the header; a key the
// server refuses is a failed run that says so, at once, and echoes no key.
func TestRunKeyProblems(t *testing.T) {
	k := newKeyServer(t, "the-right-key-1234", 0)
	conf := keyConfig(t, k.URL)
	out := filepath.Join(filepath.Dir(conf), "r.json")

	t.Setenv("PERFGATE_E2E_KEY", "")
	os.Unsetenv("PERFGATE_E2E_KEY")
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"run", "-c", conf, "-o", out, "--quiet"}, &stdout, &stderr)
	if code := exit.Code(err); code != exit.Usage || !strings.Contains(err.Error(),
		"target.headers.Authorization: ${PERFGATE_E2E_KEY} is not set in the environment") {
		t.Errorf("unset key: exit %d, %v", code, err)
	}
	if len(k.seen()) != 0 {
		t.Errorf("the server was asked %v with the key unset", k.seen())
	}

	t.Setenv("PERFGATE_E2E_KEY", e2eKey)
	stderr.Reset()
	start := time.Now()
	err = Main(context.Background(), []string{"run", "-c", conf, "-o", out}, &stdout, &stderr)
	if code := exit.Code(err); code != exit.RunFailed {
		t.Errorf("refused key: exit %d (%v), want %d", code, err, exit.RunFailed)
	}
	if err == nil || !strings.Contains(err.Error(), "the server refused the credentials (HTTP 401): check target.headers or --header (it sends Authorization)") {
		t.Errorf("refused key: error %v does not say the credentials were refused", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a refused key took %s to fail; waiting cannot fix it", d)
	}
	for what, text := range map[string]string{"error": fmt.Sprint(err), "stderr": stderr.String(), "stdout": stdout.String()} {
		if strings.Contains(text, e2eKey) {
			t.Errorf("%s holds the key: %s", what, text)
		}
		if strings.Contains(text, "is the server up") {
			t.Errorf("%s asks whether the server is up: %s", what, text)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed run wrote %s", out)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A server that lists the key it was sent as a model id: model auto takes
// the next one, and the key reaches neither the result (target.model,
// server.models) nor stdout or stderr.
func TestRunModelIDEchoesKey(t *testing.T) {
	const key = "sk-secretsecret123"
	t.Setenv("PERFGATE_E2E_KEY", key)
	k := newKeyServer(t, key, 0)
	k.mu.Lock()
	k.echoModels = true
	k.mu.Unlock()
	// keyConfig's max_error_rate rides out a stream the proxy breaks (see
	// newKeyServer's Transport): the key is the test, not the proxy.
	conf := keyConfig(t, k.URL)
	out := filepath.Join(filepath.Dir(conf), "r.json")
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"run", "-c", conf, "-o", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("perfgate run: %v\n%s", err, stderr.String())
	}
	res := readResult(t, out)
	if res.Identity.Target.Model != "served-model" || len(res.Identity.Server.Models) != 1 {
		t.Errorf("target.model %q, server.models %q; want served-model alone", res.Identity.Target.Model, res.Identity.Server.Models)
	}
	data, _ := os.ReadFile(out)
	for what, text := range map[string]string{"result": string(data), "stdout": stdout.String(), "stderr": stderr.String()} {
		if strings.Contains(text, key) {
			t.Errorf("%s holds the key", what)
		}
	}
}
