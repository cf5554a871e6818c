package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/perfgate/perfgate/internal/metric"
)

// The starter config: what perfgate init writes for a server, commented
// key by key, at perfgate's defaults. It lives beside the config's
// defaults so that the two cannot drift apart; every config it renders
// must parse (perfgate init checks before it writes).

// StarterHeader is a header as written to the config.
type StarterHeader struct{ Name, Value string }

// plainKey is a header name YAML reads as the string it is, unquoted.
var plainKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// yamlKey is name as a YAML mapping key: as it is when plain (X-Team),
// else double-quoted, so that a token such as #x (a comment otherwise),
// a'b or true reads back as the same string.
func yamlKey(name string) (string, error) {
	switch strings.ToLower(name) {
	case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
	default:
		if plainKey.MatchString(name) {
			return name, nil
		}
	}
	b, err := json.Marshal(name)
	return string(b), err
}

// StarterValues fill the starter config (RenderStarter).
type StarterValues struct {
	BaseURL, API, Model, Engine string
	Headers                     []StarterHeader
	// Others are the server's other models, More how many more it lists.
	Others []string
	More   int
}

// RenderStarter writes the commented config perfgate init writes for v.
// Every key is in docs/config.md; cmd/perfgate's TestInitGolden pins what
// it renders.
func RenderStarter(v StarterValues) ([]byte, error) {
	gates := slices.Sorted(maps.Keys(DefaultGates))
	slices.SortStableFunc(gates, func(a, b string) int { return metric.Order(a) - metric.Order(b) })
	t, err := template.New("init").Funcs(template.FuncMap{
		"q": func(s string) (string, error) { // a YAML double-quoted scalar (JSON's escapes are YAML's)
			b, err := json.Marshal(s)
			return string(b), err
		},
		"gate": func(name string) string { return DefaultGates[name] },
		"key":  yamlKey,
	}).Parse(starterTemplate)
	if err != nil {
		return nil, fmt.Errorf("init template: %w", err)
	}
	var b bytes.Buffer
	data := struct {
		StarterValues
		Gates                     []string
		Repetitions               Repetitions
		Seed                      int
		Alpha                     float64
		OnInconclusive, Baselines string
	}{v, gates, DefaultRepetitions, DefaultSeed, DefaultAlpha, DefaultOnInconclusive, DefaultBaselines}
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("init template: %w", err)
	}
	return b.Bytes(), nil
}

// starterTemplate is the config perfgate init writes.
const starterTemplate = `# perfgate.yaml, written by perfgate init. Every key, its default and its
# meaning: docs/config.md. Check it with: perfgate validate -c perfgate.yaml

# The OpenAI-compatible server under test: its root URL (perfgate adds
# /v1/...), the API to send (chat: /v1/chat/completions, completions:
# /v1/completions) and the model to ask for.
target:
  base_url: {{q .BaseURL}}
  api: {{.API}}
  model: {{q .Model}}
{{- if .Others}}
  # The server also lists:{{range .Others}}
  #   {{.}}{{end}}{{if .More}}
  #   ... and {{.More}} more{{end}}
{{- end}}
{{- if .Headers}}
  # Sent with every request. ${VAR} is read from the environment when the
  # run starts: a credential belongs there, not in this file.
  headers:{{range .Headers}}
    {{key .Name}}: {{q .Value}}{{end}}
{{- end}}
  timeout: 5m                      # one request, connect to end of stream

# How the server is run. external: it is already up at target.base_url, and
# perfgate neither starts nor stops it (kind: process or docker lets
# perfgate start it and record the cold start; docs/stacks.md).
stack:
  kind: external
  {{- if eq .Engine "auto"}}
  # auto asks each engine's identity endpoint in turn (vllm, tgi, sglang,
  # llamacpp or sim name one).
  {{- else}}
  # Guessed from the models' owner at /v1/models.
  {{- end}}
  engine: {{.Engine}}

# Each scenario is sent its own load until the server is steady (windows
# of median TTFT and throughput that agree within the tolerance), never
# measured. A server that is still drifting after max fails the run.
warmup:
  window: 5s
  windows: 3
  tolerance: 0.1
  max: 5m

# Each scenario is measured this many times: one sample a repetition for
# the gates. A baseline (perfgate run on the main branch) measures max; a
# pull request's gate measures min, compares, and measures more only while
# a gate is undecided. Before you gate, perfgate validate -c perfgate.yaml
# --baselines baselines/ says what each gate can confirm against your
# baseline's noise (docs/gating.md).
repetitions: {min: {{.Repetitions.Min}}, max: {{.Repetitions.Max}}}
# The same seed sends the same requests at the same times.
seed: {{.Seed}}

scenarios:
  # Closed loop: eight users, each sending its next request when its last
  # one ends. A synthetic workload (prompts of about 512 words, answers of
  # up to about 192 tokens); record your own traffic with perfgate workload
  # import, or write one with perfgate workload synth, and name it with
  # workload: instead (docs/workloads.md).
  - name: chat-c8
    synth:
      requests: 128
      input: {type: lognormal, mean: 512, stddev: 384, min: 8, max: 8192}
      output: {type: lognormal, mean: 192, stddev: 128, min: 8, max: 1024}
    load:
      type: closed
      concurrency: 8
    requests: 128                  # per repetition
    # A request is good (it counts towards goodput) when it meets these.
    slo:
      ttft: 1s
      tpot: 50ms
    # TTFT at p90 here: about six of these requests queue behind a long
    # prompt, and the seventh-slowest TTFT falls either side of that jump
    # from one repetition to the next. It is this scenario's p95 at 128
    # requests (±8% between identical repetitions) and its p90 at 64; the
    # p90 of 128 holds within 2%.
    gates:
      ttft.p95: off
      ttft.p90: +10%

  # Open loop: Poisson arrivals at 2 requests/s, whatever the server does,
  # as users arrive in production. A rate the server cannot keep up with
  # fails the run as overloaded; lower it, or find the highest rate that
  # holds the SLOs with a capacity search (docs/capacity.md).
  - name: chat-poisson
    synth:
      requests: 64
      input: {type: lognormal, mean: 512, stddev: 384, min: 8, max: 8192}
      output: {type: lognormal, mean: 192, stddev: 128, min: 8, max: 1024}
    load:
      type: poisson
      rate: 2
    requests: 64
    slo:
      ttft: 1s
      tpot: 50ms

# The gates perfgate gate applies to every scenario, at their defaults: a
# change beyond the tolerance, shown with significance at compare.alpha, is
# a regression. Uncomment a line to change it, or write "off".
# gates:{{range .Gates}}
#   {{.}}: {{q (gate .)}}{{end}}

# How a candidate is compared with its baseline (perfgate baseline promote
# writes baselines/<scenario>.json; perfgate gate reads them).
# alpha {{.Alpha}}: at most one false regression in 20 runs; on_inconclusive
# fail: a gate that could not decide fails.
compare:
  alpha: {{.Alpha}}
  on_inconclusive: {{.OnInconclusive}}
  baselines: {{.Baselines}}
`

// EngineOwning is the engine a model's owned_by at /v1/models names (vLLM
// says vllm, SGLang sglang, llama.cpp llamacpp, perfgate sim perfgate-sim);
// EngineAuto otherwise, which asks each engine's identity endpoint at run
// time.
func EngineOwning(ownedBy string) string {
	switch strings.ToLower(strings.TrimSpace(ownedBy)) {
	case "vllm":
		return EngineVLLM
	case "sglang":
		return EngineSGLang
	case "llamacpp", "llama.cpp":
		return EngineLlamaCpp
	case "perfgate-sim":
		return EngineSim
	}
	return EngineAuto
}
