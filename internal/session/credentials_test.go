package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/perfgate/perfgate/internal/sim"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
)

// testKey is the secret the tests' environment holds.
const testKey = "sk-perfgate-test-5f3c9a1e77"

// keyed is an OpenAI-compatible server that wants a key: a proxy on
// loopback in front of the simulator that answers what does not carry
// "Authorization: Bearer <key>" with status and a message that echoes the
// header it got, as some servers do. It counts what it saw.
type keyed struct {
	*httptest.Server
	key    string
	status int // 401 or 403
	// refuseRun, if set, refuses every completion but the readiness
	// probe's, whatever the key: a key that stops working once the run
	// starts.
	refuseRun bool
	mu        sync.Mutex
	// route, if set (setRoute), answers a request with the right key
	// instead of the simulator when it returns true.
	route func(w http.ResponseWriter, r *http.Request) bool
	seen  map[string]int // "METHOD path auth" → count
}

func newKeyed(t *testing.T, key string, status int) *keyed {
	t.Helper()
	target, err := url.Parse(startSim(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	// A connection of its own per request: the readiness probe hangs up
	// after its first token, and a shared keep-alive pool let that late
	// cancel close the connection under the next request (under -race,
	// about one run in 40 broke a measured stream after one event).
	proxy.Transport = &http.Transport{DisableKeepAlives: true}
	proxy.FlushInterval = -1 // stream the events as they come
	k := &keyed{key: key, status: status, seen: map[string]int{}}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		k.mu.Lock()
		k.seen[r.Method+" "+r.URL.Path+" "+auth]++
		route := k.route
		k.mu.Unlock()
		probe := strings.HasSuffix(r.Header.Get("X-Request-Id"), "-ready")
		completion := r.Method == http.MethodPost
		if auth != "Bearer "+k.key || k.refuseRun && completion && !probe {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(k.status)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{
				"message": "invalid credentials: Authorization: " + auth}})
			return
		}
		if route != nil && route(w, r) {
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(k.Close)
	return k
}

// setRoute sets k.route.
func (k *keyed) setRoute(f func(w http.ResponseWriter, r *http.Request) bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.route = f
}

// saw returns what the server saw, "METHOD path auth" → count.
func (k *keyed) saw() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[string]int, len(k.seen))
	for key, n := range k.seen {
		out[key] = n
	}
	return out
}

// env is an environment of vars, for Options.LookupEnv.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// externalKeyed is externalConfig for the server at url, with an
// Authorization header from ${PERFGATE_TEST_KEY}, and extra.
func externalKeyed(t *testing.T, url, extra string) (*config.Config, []run.Scenario) {
	t.Helper()
	cfg, scenarios := externalConfig(t, url, extra)
	cfg.Target.Headers = map[string]string{"Authorization": "Bearer ${PERFGATE_TEST_KEY}"}
	return cfg, scenarios
}

// A ${VAR} in a header value is read from the environment as the run
// starts and sent on every request (health checks, /v1/models, the probe,
// the load), while the config keeps the template and the result never
// holds the value.
func TestRunExpandsHeaderFromEnv(t *testing.T) {
	k := newKeyed(t, testKey, http.StatusUnauthorized)
	cfg, scenarios := externalKeyed(t, k.URL, "")
	var log bytes.Buffer
	var records []*result.Record
	res, err := Run(context.Background(), cfg, scenarios, Options{
		LookupEnv: env(map[string]string{"PERFGATE_TEST_KEY": testKey}),
		Phases:    run.NewPhases(&log, false), Log: &log,
		OnRecord: func(r *result.Record) { records = append(records, r) },
	})
	if err != nil {
		t.Fatalf("Run = %v\n%s", err, log.String())
	}
	saw := k.saw()
	auth := "Bearer " + testKey
	for _, want := range []string{"GET /health " + auth, "GET /v1/models " + auth, "GET /version " + auth, "POST /v1/chat/completions " + auth} {
		if saw[want] == 0 {
			t.Errorf("the server never saw %q; it saw %v", want, saw)
		}
	}
	for req, n := range saw {
		if !strings.HasSuffix(req, " "+auth) {
			t.Errorf("the server saw %d× %q, without the key", n, req)
		}
	}
	if got := cfg.Target.Headers["Authorization"]; got != "Bearer ${PERFGATE_TEST_KEY}" {
		t.Errorf("cfg's header = %q after the run, want the template kept", got)
	}
	out, _ := json.Marshal(res)
	recs, _ := json.Marshal(records)
	for what, text := range map[string]string{"result": string(out), "records": string(recs), "log": log.String()} {
		if strings.Contains(text, testKey) {
			t.Errorf("the %s holds the key", what)
		}
	}
}

// A variable the environment lacks stops the run before the stack starts:
// exit 2, naming the header and the variable, empty or unset.
func TestRunHeaderVarUnset(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"unset", nil, "target.headers.Authorization: ${PERFGATE_TEST_KEY} is not set in the environment"},
		{"empty", map[string]string{"PERFGATE_TEST_KEY": ""}, "target.headers.Authorization: ${PERFGATE_TEST_KEY} is empty in the environment"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, scenarios := prepare(t, "http://127.0.0.1:1", "1", scenario("chat", 2, ""))
			cfg.Target.Headers = map[string]string{"Authorization": "Bearer ${PERFGATE_TEST_KEY}"}
			st := &starter{}
			_, err := Run(context.Background(), cfg, scenarios, Options{StartStack: st.start, LookupEnv: env(tt.env)})
			if got := exit.Code(err); got != exit.Usage {
				t.Errorf("exit.Code(%v) = %d, want %d", err, got, exit.Usage)
			}
			var he *config.HeaderVarError
			if !errors.As(err, &he) || err.Error() != tt.want {
				t.Errorf("Run = %v, want a *config.HeaderVarError %q", err, tt.want)
			}
			if len(st.stacks) != 0 {
				t.Errorf("%d stacks started, want none", len(st.stacks))
			}
			// perfgate ab checks both arms' this way before either starts.
			if err := CheckHeaders(cfg, Options{LookupEnv: env(tt.env)}); err == nil || err.Error() != tt.want {
				t.Errorf("CheckHeaders = %v, want %q", err, tt.want)
			}
		})
	}
}

// A server that refuses the credentials ends the readiness wait at once,
// wherever it refuses them (the health check, /v1/models, the probe), and
// says so instead of asking whether the server is up; what it echoes of
// the key is redacted.
func TestRunCredentialsRefused(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		extra  string
	}{
		{"health check", http.StatusUnauthorized, ""},
		{"models lookup", http.StatusForbidden, "stack: {health_path: none}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := newKeyed(t, "the-right-key-0000", tt.status)
			cfg, scenarios := externalKeyed(t, k.URL, tt.extra)
			var log bytes.Buffer
			_, err := Run(context.Background(), cfg, scenarios, Options{
				LookupEnv: env(map[string]string{"PERFGATE_TEST_KEY": testKey}),
				Clock:     &jumpClock{now: time.Unix(1_000_000, 0)}, Phases: run.NewPhases(&log, false), Log: &log,
			})
			if got := exit.Code(err); got != exit.RunFailed {
				t.Errorf("exit.Code(%v) = %d, want %d", err, got, exit.RunFailed)
			}
			var ce *CredentialsError
			if !errors.As(err, &ce) || ce.Status != tt.status {
				t.Fatalf("Run = %v, want a *CredentialsError of %d", err, tt.status)
			}
			msg := err.Error()
			for _, want := range []string{
				"check target.headers or --header (it sends Authorization)",
				"waiting will not change its answer (1 attempt after 0s)",
				"invalid credentials: Authorization: Bearer [redacted]",
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if !strings.HasPrefix(msg, "the server refused the credentials (HTTP "+strconv.Itoa(tt.status)+"): ") {
				t.Errorf("error %q does not begin with the refusal", msg)
			}
			if strings.Count(msg, "refused the credentials") != 1 {
				t.Errorf("error %q names the refusal more than once", msg)
			}
			for _, bad := range []string{"is the server up", testKey} {
				if strings.Contains(msg, bad) || strings.Contains(log.String(), bad) {
					t.Errorf("error or log holds %q: %s\n%s", bad, msg, log.String())
				}
			}
		})
	}
}

// A stack perfgate starts that refuses the credentials is not waited for
// either: the wait ends at the first check.
func TestRunManagedStackRefusesCredentials(t *testing.T) {
	k := newKeyed(t, "the-right-key-0000", http.StatusUnauthorized)
	cfg, scenarios := prepare(t, k.URL, "1", scenario("chat", 2, ""))
	cfg.Target.Headers = map[string]string{"Authorization": "Bearer ${PERFGATE_TEST_KEY}"}
	st := &starter{}
	_, err := Run(context.Background(), cfg, scenarios, Options{
		StartStack: st.start, LookupEnv: env(map[string]string{"PERFGATE_TEST_KEY": testKey}),
		Clock: &jumpClock{now: time.Unix(1_000_000, 0)},
	})
	var ce *CredentialsError
	if !errors.As(err, &ce) || ce.Status != http.StatusUnauthorized {
		t.Fatalf("Run = %v, want a *CredentialsError of 401", err)
	}
	var nre *stack.NotReadyError
	if !errors.As(err, &nre) || nre.Attempts != 1 || !nre.Final {
		t.Errorf("Run = %v, want a final *stack.NotReadyError after 1 attempt", err)
	}
}

// A run whose every request is refused after the readiness probe passed
// fails naming the refused credentials, not only "all requests failed".
func TestRunEveryRequestRefused(t *testing.T) {
	k := newKeyed(t, testKey, http.StatusUnauthorized)
	k.refuseRun = true
	cfg, scenarios := externalKeyed(t, k.URL, "")
	_, err := Run(context.Background(), cfg, scenarios, Options{
		LookupEnv: env(map[string]string{"PERFGATE_TEST_KEY": testKey}),
	})
	var ce *CredentialsError
	var broken *run.BrokenError
	if !errors.As(err, &ce) || !errors.As(err, &broken) {
		t.Fatalf("Run = %v, want a *CredentialsError over a *run.BrokenError", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"the server refused the credentials (HTTP 401): check target.headers or --header (it sends Authorization): ",
		"scenario chat repetition 1: all 2 requests failed: http ×2",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, testKey) {
		t.Errorf("error %q holds the key", msg)
	}
	if got := exit.Code(err); got != exit.RunFailed {
		t.Errorf("exit.Code = %d, want %d", got, exit.RunFailed)
	}
}

// A server without /health is ready once /v1/models answers 200 to the
// key. The simulator itself plays that server (--no-health --api-key): a
// reverse proxy in front of it broke about one stream in 15 under -race,
// the proxy's own connection closed under it, which is no server's doing.
func TestRunWithoutHealthEndpoint(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	scfg := sim.DefaultConfig()
	scfg.StepBase = time.Millisecond
	scfg.Jitter = 0
	scfg.APIKey = testKey
	scfg.NoHealth = true
	srv, err := sim.Start(ctx, "127.0.0.1:0", scfg)
	if err != nil {
		t.Fatalf("start sim: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	cfg, scenarios := externalKeyed(t, srv.URL(), "")
	var log bytes.Buffer
	res, err := Run(ctx, cfg, scenarios, Options{
		LookupEnv: env(map[string]string{"PERFGATE_TEST_KEY": testKey}),
		Phases:    run.NewPhases(&log, false), Log: &log,
	})
	if err != nil {
		t.Fatalf("Run = %v, want ready through /v1/models\n%s", err, log.String())
	}
	if got := res.Scenarios[0].Repetitions[0].Failed; got != 0 {
		t.Errorf("%d requests failed, want none", got)
	}
}

// refusedStatus finds a 401 or 403 through wrapping, from a request or a
// health check, and nothing else.
func TestRefusedStatus(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{errors.New("http 401"), 0},
		{fmt.Errorf("probe: %w", &client.Error{Kind: client.ErrHTTP, Status: 401}), 401},
		{&client.Error{Kind: client.ErrHTTP, Status: 403}, 403},
		{&client.Error{Kind: client.ErrHTTP, Status: 429}, 0},
		{&client.Error{Kind: client.ErrStream, Status: 401}, 0},
		{&stack.HealthStatusError{Status: 401}, 401},
		{&stack.HealthStatusError{Status: 404}, 0},
	} {
		if got := refusedStatus(tt.err); got != tt.want {
			t.Errorf("refusedStatus(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// The server's account of itself, which the result keeps, has an echoed
// key redacted; a body that redacting leaves no longer JSON is dropped.
func TestRedactServer(t *testing.T) {
	h, err := config.Target{Headers: map[string]string{"Authorization": "Bearer ${K}"}}.ExpandHeaders(env(map[string]string{"K": "123456789012"}))
	if err != nil {
		t.Fatal(err)
	}
	s := &session{headers: h, server: result.Server{Engine: "e", Version: "v123456789012", Raw: []byte(`{"auth":"Bearer 123456789012"}`)}}
	s.redactServer()
	if s.server.Version != "v[redacted]" || string(s.server.Raw) != `{"auth":"Bearer [redacted]"}` {
		t.Errorf("server = %+v (raw %s)", s.server, s.server.Raw)
	}
	s.server.Raw = []byte(`{"n":123456789012}`)
	s.redactServer()
	if s.server.Raw != nil {
		t.Errorf("raw = %s, want dropped", s.server.Raw)
	}
}

// tolerant makes scenarios ride out a stream the proxy in front of the
// simulator breaks (see newKeyed's Transport): the key is these tests'
// subject, not the proxy.
func tolerant(scenarios []run.Scenario) []run.Scenario {
	for i := range scenarios {
		scenarios[i].Config.MaxErrorRate = 0.5
	}
	return scenarios
}

// A server that lists the key as a model id (echoing the header it got)
// has that id dropped with a warning that does not quote it: model: auto
// takes the next one, and neither the result, its server.models nor the
// log holds the key.
func TestRunModelIDEchoesKey(t *testing.T) {
	k := newKeyed(t, testKey, http.StatusUnauthorized)
	k.setRoute(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/v1/models" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		id := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": []map[string]string{{"id": id}, {"id": "key-" + id}, {"id": "served-model"}}})
		return true
	})
	cfg, scenarios := externalKeyed(t, k.URL, "")
	var log bytes.Buffer
	res, err := Run(context.Background(), cfg, tolerant(scenarios), Options{
		LookupEnv: env(map[string]string{"PERFGATE_TEST_KEY": testKey}),
		Phases:    run.NewPhases(&log, false), Log: &log,
	})
	if err != nil {
		t.Fatalf("Run = %v\n%s", err, log.String())
	}
	if res.Identity.Target.Model != "served-model" || !slices.Equal(res.Identity.Server.Models, []string{"served-model"}) {
		t.Errorf("target.model %q, server.models %q; want served-model alone", res.Identity.Target.Model, res.Identity.Server.Models)
	}
	if !strings.Contains(log.String(), "warning: the server lists 2 model id(s) holding a value of target.headers' environment variables") {
		t.Errorf("log lacks the warning:\n%s", log.String())
	}
	out, _ := json.Marshal(res)
	for what, text := range map[string]string{"result": string(out), "log": log.String(), "model": cfg.Target.Model} {
		if strings.Contains(text, testKey) {
			t.Errorf("the %s holds the key: %s", what, text)
		}
	}
}

// A server whose only model id is the key leaves model: auto nothing to
// take: the run fails saying so, without the key.
func TestRunOnlyModelIDEchoesKey(t *testing.T) {
	k := newKeyed(t, testKey, http.StatusUnauthorized)
	k.setRoute(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/v1/models" {
			return false
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": []map[string]string{{"id": testKey}}})
		return true
	})
	cfg, scenarios := externalKeyed(t, k.URL, "")
	_, err := Run(context.Background(), cfg, tolerant(scenarios), Options{
		LookupEnv: env(map[string]string{"PERFGATE_TEST_KEY": testKey}),
		Clock:     &jumpClock{now: time.Unix(1_000_000, 0)},
	})
	if err == nil || !strings.Contains(err.Error(), "lists no models but 1 that hold a value of target.headers' environment variables") ||
		strings.Contains(err.Error(), testKey) {
		t.Errorf("Run = %v, want no model to take, without the key", err)
	}
}

// redirectRun runs against a server whose path answers with a redirect to
// /elsewhere<pad>?k=<the key it was sent>, and returns the run's log,
// the server's URL and the run's error. A health check that redirects fails the
// run; an identity endpoint that does is a warning.
func redirectRun(t *testing.T, path, pad string) (log, url string, err error) {
	t.Helper()
	k := newKeyed(t, testKey, http.StatusUnauthorized)
	k.setRoute(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != path {
			return false
		}
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		http.Redirect(w, r, "/elsewhere"+pad+"?k="+key, http.StatusFound)
		return true
	})
	cfg, scenarios := externalKeyed(t, k.URL, "")
	var buf bytes.Buffer
	o := Options{
		LookupEnv: env(map[string]string{"PERFGATE_TEST_KEY": testKey}),
		Phases:    run.NewPhases(&buf, false), Log: &buf,
	}
	if path == "/health" {
		o.Clock = &jumpClock{now: time.Unix(1_000_000, 0)}
	}
	_, err = Run(context.Background(), cfg, tolerant(scenarios), o)
	return buf.String(), k.URL, err
}

// A redirect to a URL that carries the key (?k=<key>), from an identity
// endpoint or the health check, is reported with the key redacted.
func TestRunRedirectEchoesKey(t *testing.T) {
	t.Run("identity", func(t *testing.T) {
		log, url, err := redirectRun(t, "/version", "")
		if err != nil {
			t.Fatalf("Run = %v\n%s", err, log)
		}
		if !strings.Contains(log, "warning: identity: GET "+url+"/version answered 302, a redirect to "+url+"/elsewhere?k=[redacted]") {
			t.Errorf("log lacks the redacted redirect:\n%s", log)
		}
		if strings.Contains(log, testKey) {
			t.Errorf("the log holds the key:\n%s", log)
		}
	})
	t.Run("health", func(t *testing.T) {
		log, _, err := redirectRun(t, "/health", "")
		if err == nil || !strings.Contains(err.Error(), "/elsewhere?k=[redacted]") {
			t.Errorf("Run = %v, want the redirect with the key redacted", err)
		}
		if strings.Contains(fmt.Sprint(err), testKey) || strings.Contains(log, testKey) {
			t.Errorf("the error or log holds the key: %v\n%s", err, log)
		}
	})
}

// A redirect whose Location carries the key just where a message cuts the
// Location short (about 200 bytes in) has the key redacted whole: none of
// it reaches the log or the error. (The Location used to be cut first, and
// the key's first bytes escaped the redaction.)
func TestRunRedirectKeyAcrossTheCut(t *testing.T) {
	pad := strings.Repeat("a", 160) // the key starts a few bytes before the cut
	leaked := func(s string) bool { return strings.Contains(s, "?k=sk") || strings.Contains(s, testKey) }
	t.Run("identity", func(t *testing.T) {
		log, url, err := redirectRun(t, "/version", pad)
		if err != nil {
			t.Fatalf("Run = %v\n%s", err, log)
		}
		if !strings.Contains(log, "warning: identity: GET "+url+"/version answered 302") || leaked(log) {
			t.Errorf("log lacks the redirect, or holds part of the key:\n%s", log)
		}
	})
	t.Run("health", func(t *testing.T) {
		log, _, err := redirectRun(t, "/health", pad)
		if err == nil || !strings.Contains(err.Error(), "/elsewhere"+pad) || leaked(err.Error()+log) {
			t.Errorf("Run = %v, want the redirect without any of the key\n%s", err, log)
		}
	})
}
