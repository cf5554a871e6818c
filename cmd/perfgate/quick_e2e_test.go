package main

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
)

// quickSim starts a fast simulator on loopback for the quick-run tests.
func quickSim(t *testing.T) (url, model string) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerPrefillToken = time.Millisecond, time.Microsecond
	url, _ = startSim(t, cfg)
	return url, cfg.Model
}

// A run with flags alone, no config file anywhere, measures the flags'
// scenario and writes a valid result.
func TestQuickRunWithoutConfig(t *testing.T) {
	url, model := quickSim(t)
	dir := t.TempDir()
	t.Chdir(dir) // no perfgate.yaml here
	out := filepath.Join(dir, "r.json")
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"run", "--target", url, "--model", model,
		"--concurrency", "4", "--requests", "20", "--repetitions", "2", "--slo", "ttft=1s", "-o", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("perfgate run: %v\n%s", err, stderr.String())
	}
	res, err := result.Read(out) // validates it
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenarios) != 1 {
		t.Fatalf("%d scenarios, want 1", len(res.Scenarios))
	}
	s := res.Scenarios[0]
	if s.Name != "closed-c4" || s.Load.Type != "closed" || s.Load.Concurrency != 4 || s.Workload != "synth" {
		t.Errorf("scenario = %s, %+v over %s; want closed-c4, closed at 4 over synth", s.Name, s.Load, s.Workload)
	}
	if s.SLO.TTFT != 1000 {
		t.Errorf("slo = %+v, want ttft 1000 ms", s.SLO)
	}
	if len(s.Repetitions) != 2 {
		t.Fatalf("%d repetitions, want 2", len(s.Repetitions))
	}
	for _, r := range s.Repetitions {
		if r.Sent != 20 || r.Completed != 20 {
			t.Errorf("repetition %d: sent %d, completed %d; want 20 and 20", r.Index, r.Sent, r.Completed)
		}
	}
	if got := res.Identity.Target; got.BaseURL != url || got.Model != model {
		t.Errorf("target = %+v, want %s and %s", got, url, model)
	}
	// One repetition or two is a look, not a gate: no warning that it
	// cannot decide one.
	if strings.Contains(stderr.String(), "cannot show a significant difference") {
		t.Errorf("a quick run warned about significance:\n%s", stderr.String())
	}
}

// With a config file, the flags override its fields: the file's scenario
// at the flags' concurrency, requests and repetitions.
func TestQuickRunOverridesConfig(t *testing.T) {
	url, model := quickSim(t)
	conf := writeConfig(t, `
target: {base_url: "http://127.0.0.1:1", model: nope}
warmup: {method: none}
repetitions: 6
scenarios:
  - name: chat-c16
    synth: {requests: 50, input: {type: fixed, value: 16}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 16}
    requests: 50
    slo: {ttft: 1s}
`)
	out := filepath.Join(filepath.Dir(conf), "r.json")
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"run", "-c", conf, "--target", url, "--model", model,
		"--concurrency", "2", "--requests", "6", "--repetitions", "2", "-o", out, "-q"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("perfgate run: %v\n%s", err, stderr.String())
	}
	res, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Scenarios[0]
	if s.Name != "chat-c16" || s.Load.Type != "closed" || s.Load.Concurrency != 2 {
		t.Errorf("scenario = %s at %+v, want chat-c16 closed at 2", s.Name, s.Load)
	}
	if len(s.Repetitions) != 2 || s.Repetitions[0].Sent != 6 {
		t.Errorf("%d repetitions, the first sent %d; want 2 of 6", len(s.Repetitions), s.Repetitions[0].Sent)
	}
	if s.SLO.TTFT != 1000 {
		t.Errorf("slo = %+v, want the file's ttft 1000 ms", s.SLO)
	}
}

// Bad combinations and values of the quick flags are usage errors that
// name the flags, before anything is sent.
func TestQuickFlagErrors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--target", "http://127.0.0.1:1", "--concurrency", "4", "--rate", "2"}, "--concurrency and --rate"},
		{[]string{"run", "--target", "http://127.0.0.1:1", "--concurrency", "4", "--requests", "4", "--duration", "1s"}, "--requests and --duration"},
		{[]string{"run", "--target", "http://127.0.0.1:1", "--concurrency", "-1"}, `"--concurrency" flag: must be >= 1`},
		{[]string{"run", "--target", "http://127.0.0.1:1", "--concurrency", "0"}, `"--concurrency" flag: must be >= 1`},
		{[]string{"run", "--target", "http://127.0.0.1:1", "--rate", "-2"}, `"--rate" flag: must be > 0`},
		{[]string{"run", "--target", "http://127.0.0.1:1", "--concurrency", "1", "--duration", "0s"}, `"--duration" flag: must be positive`},
		{[]string{"run", "--target", "http://127.0.0.1:1"}, "give --concurrency N or --rate R"},
		{[]string{"run", "--target", "http://127.0.0.1:1", "--concurrency", "1", "--header", "no colon"}, "--header"},
		{[]string{"run", "--target", "http://127.0.0.1:1", "--concurrency", "1", "--slo", "p99=1s"}, "--slo"},
		{[]string{"run", "--target", "http://127.0.0.1:1", "--concurrency", "1", "--api", "embeddings"}, "--api"},
		{[]string{"gate", "--target", "http://127.0.0.1:1", "--concurrency", "1", "--rate", "1"}, "--concurrency and --rate"},
		{[]string{"ab", "--base", "a.yaml", "--concurrency", "-3"}, `"--concurrency" flag`},
		{[]string{"run"}, "perfgate init writes one"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Main(context.Background(), append(tc.args, "-o", filepath.Join(dir, "r.json")), &stdout, &stderr)
			if code := exit.Code(err); code != exit.Usage {
				t.Fatalf("exit %d (%v), want %d", code, err, exit.Usage)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
		})
	}
}

// Where ./perfgate.yaml lies it is read, -c or not, and every quick flag,
// --target included, overrides its fields (scripts run "perfgate run
// --target URL" beside their config); --no-config builds from the flags
// alone, and with -c is refused.
func TestQuickRunConfigChoice(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("perfgate.yaml", []byte("scenarios: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// --target beside the file reads it: the file's problem, not the
	// flags' missing workload.
	for _, args := range [][]string{
		{"run", "--target", "http://127.0.0.1:1", "--concurrency", "1", "--workload", "nope.jsonl"},
		{"run", "--target", "http://127.0.0.1:1"},
		{"gate", "--target", "http://127.0.0.1:1"},
		{"run", "--concurrency", "1"},
	} {
		var stdout, stderr bytes.Buffer
		err := Main(context.Background(), args, &stdout, &stderr)
		if code := exit.Code(err); code != exit.Usage || !strings.Contains(err.Error(), "at least one scenario") {
			t.Errorf("%v by perfgate.yaml: exit %d (%v), want %d and the file's problem", args, code, err, exit.Usage)
		}
		if strings.Contains(stderr.String(), "not read") {
			t.Errorf("%v: a note that perfgate.yaml was not read:\n%s", args, stderr.String())
		}
	}
	// --no-config: the flags alone, the file unread.
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"run", "--no-config", "--target", "http://127.0.0.1:1", "--concurrency", "1", "--workload", "nope.jsonl"}, &stdout, &stderr)
	if code := exit.Code(err); code != exit.Usage || !strings.Contains(err.Error(), "nope.jsonl") {
		t.Errorf("run --no-config: exit %d (%v), want %d naming nope.jsonl", code, err, exit.Usage)
	}
	err = Main(context.Background(), []string{"gate", "--no-config", "--target", "http://127.0.0.1:1"}, &stdout, &stderr)
	if code := exit.Code(err); code != exit.Usage || !strings.Contains(err.Error(), "give --concurrency N") || !strings.Contains(err.Error(), "-c FILE") {
		t.Errorf("gate --no-config without a load: exit %d (%v), want %d saying what to give", code, err, exit.Usage)
	}
	err = Main(context.Background(), []string{"run", "--no-config", "-c", "perfgate.yaml", "--concurrency", "1"}, &stdout, &stderr)
	if code := exit.Code(err); code != exit.Usage || !strings.Contains(err.Error(), "--no-config and -c") {
		t.Errorf("run --no-config -c: exit %d (%v), want %d naming both", code, err, exit.Usage)
	}
}

// --target (and the other flags) override ./perfgate.yaml read without
// -c; the file's scenarios run, at the flags' target and load.
func TestQuickTargetOverridesDefaultConfig(t *testing.T) {
	dir := t.TempDir()
	conf := `
target: {base_url: "http://127.0.0.1:1", model: m}
warmup: {method: none}
scenarios:
  - name: chat-c16
    synth: {requests: 50, input: {type: fixed, value: 16}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 16}
    requests: 50
`
	if err := os.WriteFile(filepath.Join(dir, "perfgate.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, gating := range []bool{false, true} {
		o := &runOptions{sys: &system{stderr: &bytes.Buffer{}}, configPath: filepath.Join(dir, "perfgate.yaml"), gating: gating,
			quick: config.Quick{Target: "http://127.0.0.1:2", Concurrency: 3}}
		cfg, built, err := loadConfig(o)
		if err != nil || built {
			t.Fatalf("gating %v: loadConfig = built %v, %v; want the file read", gating, built, err)
		}
		if cfg.Target.BaseURL != "http://127.0.0.1:2" || cfg.Target.Model != "m" {
			t.Errorf("gating %v: target %+v, want --target's URL and the file's model", gating, cfg.Target)
		}
		if len(cfg.Scenarios) != 1 || cfg.Scenarios[0].Name != "chat-c16" || cfg.Scenarios[0].Load.Concurrency != 3 {
			t.Errorf("gating %v: scenarios %+v, want chat-c16 at concurrency 3", gating, cfg.Scenarios)
		}
		o.noConfig = true
		cfg, built, err = loadConfig(o)
		if err != nil || !built || cfg.Scenarios[0].Name != "closed-c3" {
			t.Errorf("gating %v, --no-config: built %v, %v; want the flags' closed-c3", gating, built, err)
		}
	}
}

// --target over a perfgate.yaml read because it is there says so, and the
// file's headers, written for its own server, go to no other origin; -c,
// naming the file, sends them as written; --header always sends its own.
func TestQuickTargetKeepsFileHeadersHome(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "perfgate.yaml")
	conf := `
target: {base_url: "http://127.0.0.1:1", model: m, headers: {Authorization: "Bearer ${PROD_KEY}"}}
warmup: {method: none}
scenarios:
  - name: chat
    synth: {requests: 10, input: {type: fixed, value: 16}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 1}
    requests: 10
`
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		target    string
		configSet bool
		headers   []string
		want      map[string]string
		note      string
	}{
		{"another origin", "https://api.example.com", false, nil, nil, "are for http://127.0.0.1:1, another server than --target: not sent"},
		{"another port", "http://127.0.0.1:2", false, nil, nil, "not sent"},
		{"same origin", "http://127.0.0.1:1/", false, nil, map[string]string{"Authorization": "Bearer ${PROD_KEY}"}, "reading"},
		{"named with -c", "https://api.example.com", true, nil, map[string]string{"Authorization": "Bearer ${PROD_KEY}"}, ""},
		{"--header", "https://api.example.com", false, []string{"Authorization: Bearer ${OTHER}"}, map[string]string{"Authorization": "Bearer ${OTHER}"}, "not sent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			o := &runOptions{sys: &system{stderr: &stderr}, configPath: path, configSet: tc.configSet,
				quick: config.Quick{Target: tc.target, Headers: tc.headers}}
			cfg, built, err := loadConfig(o)
			if err != nil || built {
				t.Fatalf("loadConfig = built %v, %v; want the file read", built, err)
			}
			if len(tc.want) == 0 && len(cfg.Target.Headers) != 0 || len(tc.want) != 0 && !maps.Equal(cfg.Target.Headers, tc.want) {
				t.Errorf("headers %v, want %v", cfg.Target.Headers, tc.want)
			}
			if tc.note == "" && stderr.Len() != 0 {
				t.Errorf("stderr %q, want no note with -c", stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.note) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.note)
			}
		})
	}
}

// A gate built from flags alone measures enough repetitions to decide; a
// run, one.
func TestQuickGateRepetitions(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		gating bool
		want   int
	}{{false, 1}, {true, 6}} {
		var stderr bytes.Buffer
		o := &runOptions{sys: &system{stderr: &stderr}, configPath: filepath.Join(dir, "perfgate.yaml"), gating: tc.gating,
			quick: config.Quick{Target: "http://127.0.0.1:1", Concurrency: 2}}
		cfg, built, err := loadConfig(o)
		if err != nil || !built {
			t.Fatalf("loadConfig(gating %v) = built %v, %v; want a built config", tc.gating, built, err)
		}
		if got := cfg.Repetitions; got.Min != tc.want || got.Max != tc.want {
			t.Errorf("gating %v: repetitions %v, want %d", tc.gating, got, tc.want)
		}
	}
}
