package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/github"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stat"
	"github.com/perfgate/perfgate/internal/workload"
)

// onlyTTFT gates TTFT p99 alone, so that a look is decided by one metric.
const onlyTTFT = `{ttft.p95: "off", ttft.p99: "+10%", tpot.p99: "off", e2e.p99: "off", output_throughput: "off", goodput: "off", error_rate: "off", cold_start: "off"}`

// setup writes a config of scenarios chat and other (closed loop at
// concurrency 4) with the given gates and repetitions {min: 3, max: 9}, and
// prepares its scenarios.
func setup(t *testing.T, gates string) (*config.Config, []run.Scenario) {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`
target: {base_url: "http://127.0.0.1:1"}
repetitions: {min: 3, max: 9}
gates: %s
scenarios:
  - name: chat
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: closed, concurrency: 4}
  - name: other
    synth: {requests: 10, input: {type: fixed, value: 16}, output: {type: fixed, value: 4}}
    load: {type: closed, concurrency: 4}
`, gates)
	path := filepath.Join(dir, "perfgate.yaml")
	cfg, err := config.Parse([]byte(yaml), path)
	if err != nil {
		t.Fatalf("config.Parse: %v", err)
	}
	scenarios, err := run.Prepare(cfg, nil)
	if err != nil {
		t.Fatalf("run.Prepare: %v", err)
	}
	return cfg, scenarios
}

// measured is scenario sc as a run of cfg would record it, with one
// repetition per TTFT p99 value.
func measured(cfg *config.Config, sc run.Scenario, ttftP99 ...float64) result.ScenarioResult {
	s := result.ScenarioResult{Name: sc.Config.Name, WorkloadHash: sc.WorkloadHash, Load: sc.Config.Load.Result(), SLO: sc.Config.SLO.Result(),
		Gates: config.ResultGates(cfg.GatesOf(sc.Config)), Sampling: workload.Sampling(sc.Requests), Salt: sc.SaltMode()}
	for i, v := range ttftP99 {
		s.Repetitions = append(s.Repetitions, result.Repetition{Index: i + 1, Sent: 10, Completed: 10,
			TTFT: result.Stats{P50: v / 2, P95: v, P99: v}, TPOT: result.Stats{P99: 10}, E2E: result.Stats{P99: 200},
			OutputThroughput: 1000, Goodput: 50, TokensFrom: "usage"})
	}
	return s
}

// resultOf is a result holding the scenarios.
func resultOf(scenarios ...result.ScenarioResult) *result.Result {
	return &result.Result{Schema: result.Schema, Scenarios: scenarios,
		Identity: result.Identity{Server: result.Server{Engine: "vllm", Version: "0.6.3"}}}
}

// promote makes s the baseline of its scenario in store.
func promote(t *testing.T, store baseline.Store, s result.ScenarioResult) {
	t.Helper()
	if _, err := store.Promote(resultOf(s), baseline.Meta{Commit: "base", Date: time.Unix(1700000000, 0).UTC()}); err != nil {
		t.Fatalf("promote %s: %v", s.Name, err)
	}
}

// steady are ten repetitions' TTFT p99 of a steady baseline.
var steady = []float64{20, 21, 20.5, 19.8, 20.2, 20.1, 20.4, 19.9, 20.3, 20.6}

func TestPrepare(t *testing.T) {
	tests := []struct {
		name    string
		gates   string
		allow   bool
		mutate  func(t *testing.T, store baseline.Store, cfg *config.Config, sc []run.Scenario)
		wantErr []string // all in the error, which is exit 2; nil: no error
	}{
		{
			name:    "no baseline at all",
			mutate:  func(*testing.T, baseline.Store, *config.Config, []run.Scenario) {},
			wantErr: []string{"no baseline in ", " for chat, other: run `perfgate run` on the base branch"},
		},
		{
			name: "a baseline that measured another load",
			mutate: func(t *testing.T, store baseline.Store, cfg *config.Config, sc []run.Scenario) {
				s := measured(cfg, sc[0], steady...)
				s.Load.Concurrency = 8
				promote(t, store, s)
			},
			wantErr: []string{"not comparable", "load shape", "--allow-mismatch"},
		},
		{
			name:  "another load, allowed",
			allow: true,
			mutate: func(t *testing.T, store baseline.Store, cfg *config.Config, sc []run.Scenario) {
				s := measured(cfg, sc[0], steady...)
				s.Load.Concurrency = 8
				promote(t, store, s)
			},
		},
		{
			name: "a baseline of another salting",
			mutate: func(t *testing.T, store baseline.Store, cfg *config.Config, sc []run.Scenario) {
				s := measured(cfg, sc[0], steady...)
				s.Salt = "off"
				promote(t, store, s)
			},
			wantErr: []string{"not comparable", "salt"},
		},
		{
			name: "a corrupt baseline",
			mutate: func(t *testing.T, store baseline.Store, _ *config.Config, _ []run.Scenario) {
				if err := os.MkdirAll(store.Dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(store.Path("chat"), []byte("{not json"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: []string{"chat.json"},
		},
		{
			name:  "a telemetry gate the baseline cannot answer",
			gates: `{gpu_memory_peak: "+5%"}`,
			mutate: func(t *testing.T, store baseline.Store, cfg *config.Config, sc []run.Scenario) {
				promote(t, store, measured(cfg, sc[0], steady...))
			},
			wantErr: []string{"baseline of scenario chat: ", "promote a baseline measured with it, or turn the gate off (gpu_memory_peak: off)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gates := tt.gates
			if gates == "" {
				gates = onlyTTFT
			}
			cfg, scenarios := setup(t, gates)
			store := baseline.Store{Dir: filepath.Join(t.TempDir(), "baselines")}
			tt.mutate(t, store, cfg, scenarios)
			g, err := Prepare(cfg, scenarios, store, tt.allow)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Prepare = %v, want no error", err)
				}
				if g.Baselines["chat"] == nil || len(g.Missing) != 1 || g.Missing[0] != "other" {
					t.Errorf("Prepare: baselines of %v, missing %v; want chat's, and other missing", keys(g.Baselines), g.Missing)
				}
				return
			}
			if err == nil {
				t.Fatalf("Prepare = nil error, want one containing %q", tt.wantErr)
			}
			if got := exit.Code(err); got != exit.Usage {
				t.Errorf("exit.Code(%v) = %d, want %d", err, got, exit.Usage)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Prepare error %q lacks %q", err, want)
				}
			}
		})
	}
}

func keys(m map[string]*result.Result) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Prepare's sequential test spends alpha over the scenarios that have a
// baseline, between the config's repetitions.
func TestPrepareSequential(t *testing.T) {
	cfg, scenarios := setup(t, onlyTTFT)
	store := baseline.Store{Dir: t.TempDir()}
	promote(t, store, measured(cfg, scenarios[0], steady...))
	g, err := Prepare(cfg, scenarios, store, false)
	if err != nil {
		t.Fatal(err)
	}
	seq := g.Sequential
	if seq.Min != 3 || seq.Max != 9 || seq.Share != cfg.Compare.Alpha || seq.Options.Alpha != cfg.Compare.Alpha {
		t.Errorf("Sequential = min %d, max %d, share %v, alpha %v; want 3, 9, %v (one scenario with a baseline), %v", seq.Min, seq.Max, seq.Share, seq.Options.Alpha, cfg.Compare.Alpha, cfg.Compare.Alpha)
	}
	if got := seq.Options.Gates("chat"); len(got) != 1 || got[0].Metric != "ttft.p99" {
		t.Errorf("Sequential's gates of chat = %+v, want ttft.p99 alone", got)
	}
}

// More measures past the minimum only while a gate is undecided: between
// looks always, at a look while the evidence is not enough, never for a
// scenario without a baseline. Its decisions carry into the verdict.
func TestMore(t *testing.T) {
	cfg, scenarios := setup(t, onlyTTFT)
	store := baseline.Store{Dir: t.TempDir()}
	promote(t, store, measured(cfg, scenarios[0], steady...))
	tests := []struct {
		name     string
		scenario int
		ttft     []float64
		want     bool
		wantLook string // in the look's line; "" for no line
	}{
		{"no baseline", 1, []float64{20, 20, 20}, false, ""},
		{"between looks", 0, []float64{20, 40, 20, 30}, true, ""},
		{"undecided at a look", 0, []float64{10, 30, 20}, true, "look at 3 repetitions (level 0.0226): undecided TTFT p99"},
		{"a clear regression at a look", 0, []float64{40, 41, 42}, false, "look at 3 repetitions (level 0.0226): every gate decided"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Prepare(cfg, scenarios, store, false)
			if err != nil {
				t.Fatal(err)
			}
			var looks bytes.Buffer
			g.Looks = &looks
			partial := measured(cfg, scenarios[tt.scenario], tt.ttft...)
			if got := g.More(&partial); got != tt.want {
				t.Errorf("More(%s with %d repetitions) = %v, want %v", partial.Name, len(tt.ttft), got, tt.want)
			}
			if tt.wantLook == "" && looks.Len() > 0 {
				t.Errorf("More printed %q, want no look", looks.String())
			}
			if tt.wantLook != "" && !strings.Contains(looks.String(), tt.wantLook) {
				t.Errorf("More printed %q, want a line containing %q", looks.String(), tt.wantLook)
			}
		})
	}
}

// The verdict keeps what a look decided, and says when; a candidate that
// measured something else is refused as bad input.
func TestVerdict(t *testing.T) {
	cfg, scenarios := setup(t, onlyTTFT)
	store := baseline.Store{Dir: t.TempDir()}
	promote(t, store, measured(cfg, scenarios[0], steady...))

	g, err := Prepare(cfg, scenarios, store, false)
	if err != nil {
		t.Fatal(err)
	}
	slow := measured(cfg, scenarios[0], 40, 41, 42)
	if g.More(&slow) {
		t.Fatalf("More(a clear regression) = true, want false")
	}
	res := resultOf(slow, measured(cfg, scenarios[1], 20, 20, 20))
	if got := g.BaselinesOf(res); len(got) != 1 || got[0].Scenarios[0].Name != "chat" {
		t.Fatalf("BaselinesOf = %d baselines, want chat's alone", len(got))
	}
	v, err := g.Verdict(res)
	if err != nil {
		t.Fatalf("Verdict = %v, want no error", err)
	}
	if v.Outcome != stat.Regression || !v.Sequential {
		t.Errorf("Verdict outcome %s (sequential %v), want regression (sequential)", v.Outcome, v.Sequential)
	}
	if reason := v.Scenarios[0].Gates[0].Reason; !strings.Contains(reason, "(decided at 3 repetitions)") {
		t.Errorf("gate reason %q does not say the look decided it", reason)
	}

	g, err = Prepare(cfg, scenarios, store, false)
	if err != nil {
		t.Fatal(err)
	}
	other := measured(cfg, scenarios[0], steady...)
	other.WorkloadHash = "sha256:another"
	_, err = g.Verdict(resultOf(other))
	var mismatch *compare.MismatchError
	if !errors.As(err, &mismatch) || exit.Code(err) != exit.Usage {
		t.Errorf("Verdict(another workload) = %v (exit %d), want a *compare.MismatchError, exit %d", err, exit.Code(err), exit.Usage)
	}
}

// The document carries each scenario's history; a history that cannot be
// read is a warning, not a failure.
func TestDocument(t *testing.T) {
	cfg, scenarios := setup(t, onlyTTFT)
	store := baseline.Store{Dir: t.TempDir()}
	promote(t, store, measured(cfg, scenarios[0], steady...))
	res := resultOf(measured(cfg, scenarios[0], steady...))

	document := func(t *testing.T) (*compare.Verdict, []error, int) {
		t.Helper()
		g, err := Prepare(cfg, scenarios, store, false)
		if err != nil {
			t.Fatal(err)
		}
		v, err := g.Verdict(res)
		if err != nil {
			t.Fatal(err)
		}
		doc, warnings, err := g.Document(v, res)
		if err != nil {
			t.Fatalf("Document = %v, want no error", err)
		}
		if doc.Verdict != v || len(doc.Scenarios) != 1 {
			t.Fatalf("Document: verdict %p with %d scenarios, want %p with 1", doc.Verdict, len(doc.Scenarios), v)
		}
		return v, warnings, len(doc.Scenarios[0].History)
	}

	if _, warnings, n := document(t); len(warnings) != 0 || n != 1 {
		t.Errorf("Document: %d history entries, warnings %v; want 1, none", n, warnings)
	}
	if err := os.WriteFile(store.HistoryPath(), []byte("not a history line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, warnings, n := document(t)
	if n != 0 || len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "the report has no history: ") {
		t.Errorf("Document with a broken history: %d entries, warnings %v; want 0 and one saying it has no history", n, warnings)
	}
}

func TestGatesFrom(t *testing.T) {
	cfg, _ := setup(t, `{ttft.p99: "+20%"}`)
	cfg.Scenarios[0].Gates = map[string]string{"tpot.p99": "off"}
	gates := GatesFrom(cfg)
	has := func(gs []config.Gate, metric string) bool {
		for _, g := range gs {
			if g.Metric == metric {
				return true
			}
		}
		return false
	}
	if gs := gates("chat"); has(gs, "tpot.p99") || !has(gs, "ttft.p99") {
		t.Errorf("GatesFrom(cfg)(chat) = %+v, want ttft.p99 and not tpot.p99 (off for chat)", gs)
	}
	if gs := gates("elsewhere"); !has(gs, "tpot.p99") || !has(gs, "ttft.p99") {
		t.Errorf("GatesFrom(cfg)(elsewhere) = %+v, want the top-level gates, tpot.p99 among them", gs)
	}

	// A sweep's point is found by its own name and has its own gates only
	// (none by default), not the defaults an unknown name gets.
	cfg.Scenarios = append(cfg.Scenarios, config.Scenario{Name: "sw", Synth: cfg.Scenarios[0].Synth,
		Load: config.Load{Type: config.LoadClosed, Sweep: []float64{1, 4}, SweepParam: config.SweepConcurrency}})
	if gs := GatesFrom(cfg)("sw.concurrency-4"); gs == nil || len(gs) != 0 {
		t.Errorf("GatesFrom(cfg)(sw.concurrency-4) = %#v, want no gates (a point's own, none)", gs)
	}
	cfg.Scenarios[2].Gates = map[string]string{"tpot.p99": "+5%"}
	if gs := GatesFrom(cfg)("sw.concurrency-1"); len(gs) != 1 || !has(gs, "tpot.p99") {
		t.Errorf("GatesFrom(cfg)(sw.concurrency-1) = %+v, want tpot.p99 alone", gs)
	}
}

// Source names the pull request's head, not the merge commit GITHUB_SHA
// names; outside GitHub Actions, or with an event it cannot read, only the
// result file.
func TestSource(t *testing.T) {
	dir := t.TempDir()
	payload := filepath.Join(dir, "event.json")
	ev, _ := json.Marshal(map[string]any{"pull_request": map[string]any{"number": 7, "head": map[string]any{"sha": "head1"}}})
	if err := os.WriteFile(payload, ev, 0o644); err != nil {
		t.Fatal(err)
	}
	runner := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": payload, "GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_REPOSITORY": "owner/repo", "GITHUB_SHA": "merge1",
		"GITHUB_SERVER_URL": "https://github.example", "GITHUB_RUN_ID": "42",
	}
	with := func(env map[string]string, changes ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(changes); i += 2 {
				if changes[i] == k {
					return changes[i+1]
				}
			}
			return env[k]
		}
	}
	tests := []struct {
		name   string
		getenv func(string) string
		want   string
	}{
		{"a pull request", with(runner), `{Result:r.json Repository:owner/repo Commit:head1 PullRequest:7 RunURL:https://github.example/owner/repo/actions/runs/42}`},
		{"not on GitHub Actions", with(runner, "GITHUB_ACTIONS", ""), `{Result:r.json Repository: Commit: PullRequest:0 RunURL:}`},
		{"an event it cannot read", with(runner, "GITHUB_EVENT_PATH", filepath.Join(dir, "missing.json")), `{Result:r.json Repository: Commit: PullRequest:0 RunURL:}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fmt.Sprintf("%+v", Source("r.json", github.NewAction(tt.getenv, &bytes.Buffer{})))
			if got != tt.want {
				t.Errorf("Source = %s, want %s", got, tt.want)
			}
		})
	}
}

// A capacity scenario's baseline is checked against the search the config
// asks for (the same search passes, another is a mismatch), and the ungated
// points of a sweep take no share of alpha from the gated scenarios.
func TestPrepareCapacityAndSweep(t *testing.T) {
	yaml := `
target: {base_url: "http://127.0.0.1:1"}
repetitions: 5
scenarios:
  - name: chat
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: poisson, rate: [10, 20, 40]}
  - name: cap
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: poisson}
    capacity: {slo: {tpot.p99: 50ms}, min: 1, max: 64}
`
	cfg, err := config.Parse([]byte(yaml), filepath.Join(t.TempDir(), "perfgate.yaml"))
	if err != nil {
		t.Fatalf("config.Parse: %v", err)
	}
	scenarios, err := run.Prepare(cfg, nil)
	if err != nil {
		t.Fatalf("run.Prepare: %v", err)
	}
	if len(scenarios) != 4 {
		t.Fatalf("run.Prepare gave %d scenarios, want 3 points and the search", len(scenarios))
	}
	baseOf := func(sc run.Scenario, search *config.Capacity) result.ScenarioResult {
		s := measured(cfg, sc, steady[:5]...)
		if search != nil {
			c := &result.Capacity{Search: search.Result(), Outcome: result.CapacityBracketed, Holds: 8, Breaks: 16,
				Probes: []result.CapacityProbe{
					{Load: 8, Phase: "bracket", Held: true, Margin: map[string]float64{"tpot.p99": 0.5}, Repetitions: s.Repetitions},
					{Load: 16, Phase: "bracket", Margin: map[string]float64{"tpot.p99": 1.5}, Repetitions: s.Repetitions}}}
			for i := range s.Repetitions {
				c.Samples = append(c.Samples, result.CapacitySample{Repetition: i + 1, Load: 11, RequestRate: 11, OutputThroughput: 44})
			}
			s.Load.Rate, s.Capacity = 0, c
		}
		return s
	}
	store := baseline.Store{Dir: t.TempDir()}
	for _, sc := range scenarios {
		promote(t, store, baseOf(sc, sc.Config.Capacity))
	}
	g, err := Prepare(cfg, scenarios, store, false)
	if err != nil {
		t.Fatalf("Prepare with the config's own search: %v", err)
	}
	if len(g.Policy.Families) != 1 || g.Sequential.Share != cfg.Compare.Alpha {
		t.Errorf("%d families, share %v; want 1, %v: only the capacity scenario has gates", len(g.Policy.Families), g.Sequential.Share, cfg.Compare.Alpha)
	}

	other := *scenarios[3].Config.Capacity
	other.Max = 128
	promote(t, store, baseOf(scenarios[3], &other))
	_, err = Prepare(cfg, scenarios, store, false)
	if err == nil || !strings.Contains(err.Error(), "capacity search") {
		t.Errorf("Prepare with a baseline that searched to 128 = %v, want a capacity search mismatch", err)
	}
}
