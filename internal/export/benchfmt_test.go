package export

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/result/resulttest"
)

// benchfmtResult is a result of 2 scenarios × 3 repetitions whose values
// differ between repetitions, scenarios and metrics, so a value written
// against the wrong unit or line is caught.
func benchfmtResult() *result.Result {
	mk := func(i int, scale float64) result.Repetition {
		r := resulttest.Rep(i, 30*scale+float64(i))
		r.TPOT = resulttest.Stats(14*scale + 0.25*float64(i))
		r.ITL = resulttest.Stats(13.5*scale + 0.5*float64(i))
		r.E2E = resulttest.Stats(2500*scale + 7*float64(i))
		r.OutputThroughput = 1600/scale + float64(i)
		r.InputThroughput = 2400/scale + 3*float64(i)
		r.PrefillThroughput = new(9000/scale + 5*float64(i))
		r.DecodeThroughput = new(71/scale + float64(i))
		r.Goodput = 7.25 / scale
		r.Failed, r.Completed = i-1, 101-i
		r.ErrorRate = float64(i-1) / 100
		return r
	}
	return &result.Result{
		Schema: result.Schema,
		Identity: result.Identity{
			PerfgateVersion: "v0.1.0",
			ConfigHash:      "sha256:0123456789abcdef",
			Target:          result.Target{BaseURL: "http://127.0.0.1:8000", API: "chat", Model: "meta-llama/Llama-3.1-8B-Instruct"},
			Server:          result.Server{Engine: "vllm", Version: "0.6.3"},
			Stack:           result.Stack{Kind: "docker", Image: "vllm/vllm-openai:v0.6.3", ImageID: "sha256:fedcba9876543210"},
			Host:            result.Host{OS: "linux", Arch: "amd64", CPUModel: "AMD EPYC 7763 64-Core Processor", CPUs: 16, GoVersion: "go1.26.0"},
			GPUs: []result.GPU{
				{Model: "NVIDIA H100 80GB HBM3", Driver: "550.54.15", CUDA: "12.4"},
				{Model: "NVIDIA H100 80GB HBM3", Driver: "550.54.15", CUDA: "12.4"},
			},
		},
		StartedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Scenarios: []result.ScenarioResult{
			{Name: "chat-16", Workload: "workloads/chat.jsonl", Load: result.Load{Type: config.LoadClosed, Concurrency: 16},
				ColdStartMS: 3238.6,
				Repetitions: []result.Repetition{mk(1, 1), mk(2, 1), mk(3, 1)}},
			{Name: "long_ctx.v2", Workload: "synth", Load: result.Load{Type: config.LoadPoisson, Rate: 4},
				Repetitions: []result.Repetition{mk(1, 3), mk(2, 3), mk(3, 3)}},
		},
	}
}

func writeBenchfmt(t *testing.T, r *result.Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteBenchfmt(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readBenchfmt parses out with the x/perf reader, failing on any syntax
// error.
func readBenchfmt(t *testing.T, out []byte) ([]*benchfmt.Result, []*benchfmt.UnitMetadata) {
	t.Helper()
	var results []*benchfmt.Result
	var units []*benchfmt.UnitMetadata
	rd := benchfmt.NewReader(bytes.NewReader(out), "export.txt")
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			results = append(results, rec.Clone())
		case *benchfmt.UnitMetadata:
			u := *rec
			units = append(units, &u)
		case *benchfmt.SyntaxError:
			t.Errorf("benchfmt reader: %v", rec)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return results, units
}

// close12 reports whether a and b agree to the 12 significant digits
// WriteBenchfmt writes.
func close12(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-11*math.Max(math.Abs(a), math.Abs(b))
}

func TestBenchfmtGolden(t *testing.T) {
	golden(t, "benchfmt.golden", writeBenchfmt(t, benchfmtResult()))
}

func TestBenchfmtReadsBack(t *testing.T) {
	r := benchfmtResult()
	out := writeBenchfmt(t, r)
	results, units := readBenchfmt(t, out)

	// The result carries no telemetry, no structured requests, no
	// reasoning and no step load: every metric but the engine's, the GPUs',
	// the cost's, structured_error_rate, the reasoning ones and the
	// recovery's, which are not written as a 0 they never measured.
	unmeasured := []string{"structured_error_rate", "ttfa.p50", "ttfa.p95", "ttfa.p99", "reasoning_tokens", "recovery", "recovery_breaches"}
	var metrics []metric.Info
	for _, m := range metric.All() {
		if !m.PerStart && !m.Telemetry() && m.Group != metric.GroupCapacity && !slices.Contains(unmeasured, m.Name) {
			metrics = append(metrics, m)
		}
	}
	assert.NotContains(t, string(out), "structured-error-rate")
	assert.NotContains(t, string(out), "ttfa")

	// One result per repetition per scenario, in order.
	want := 0
	for _, s := range r.Scenarios {
		want += len(s.Repetitions)
	}
	if len(results) != want {
		t.Fatalf("read %d results, want %d (one per repetition per scenario)", len(results), want)
	}
	i := 0
	for _, s := range r.Scenarios {
		for rep := range s.Repetitions {
			res := results[i]
			i++
			// The name maps back to the scenario, "-16" included.
			base, parts := res.Name.Parts()
			if string(base) != "Scenario" || len(parts) != 2 || string(parts[0]) != "/name="+s.Name || string(parts[1]) != "-1" {
				t.Errorf("name %q parts %q %q, want Scenario /name=%s -1", res.Name, base, parts, s.Name)
			}
			if res.Iters != 1 {
				t.Errorf("%s: iterations %d, want 1", res.Name, res.Iters)
			}
			if len(res.Values) != len(metrics) {
				t.Errorf("%s: %d values, want %d (every per-repetition metric measured)", res.Name, len(res.Values), len(metrics))
			}
			for _, m := range metrics {
				vals, err := s.Values(m.Name)
				if err != nil {
					t.Fatal(err)
				}
				unit := benchfmtUnit(m)
				got, ok := res.Value(unit)
				if !ok {
					t.Errorf("%s rep %d: no %s value (%s)", s.Name, rep+1, unit, m.Name)
					continue
				}
				var wantV float64
				switch m.Kind {
				case metric.Latency:
					wantV = vals[rep] / 1000
				case metric.Fraction:
					wantV = vals[rep] * 100
				default:
					wantV = vals[rep]
				}
				if !close12(got, wantV) {
					t.Errorf("%s rep %d %s: read %v %s, want %v (%v %s)", s.Name, rep+1, m.Name, got, unit, wantV, vals[rep], m.Unit())
				}
			}
			if _, ok := res.Value("cold-start-sec"); ok {
				t.Errorf("%s: cold start written per repetition", res.Name)
			}

			// The configuration carries the identity a comparison needs.
			id := r.Identity
			for key, want := range map[string]string{
				"model": id.Target.Model, "api": id.Target.API, "engine": id.Server.Engine,
				"simulated": "false", "gpu": "2x NVIDIA H100 80GB HBM3", "goos": id.Host.OS, "goarch": id.Host.Arch,
			} {
				if got := res.GetConfig(key); got != want {
					t.Errorf("%s: config %s = %q, want %q", res.Name, key, got, want)
				}
			}
			// ... and nothing that would keep benchstat from comparing a
			// baseline with a candidate.
			for _, key := range []string{"engine-version", "perfgate-version", "config-hash", "image", "image-id", "cpu"} {
				if got := res.GetConfig(key); got != "" {
					t.Errorf("%s: config %s = %q; it differs between baseline and candidate and would split benchstat's tables", res.Name, key, got)
				}
			}
		}
	}

	// Unit metadata: one better= line per unit, agreeing with the catalogue.
	better := map[string]string{}
	for _, u := range units {
		if u.Key != "better" {
			t.Errorf("unexpected unit metadata %s=%s for %s", u.Key, u.Value, u.OrigUnit)
			continue
		}
		if _, dup := better[u.Unit]; dup {
			t.Errorf("unit %s has two better= lines", u.Unit)
		}
		better[u.Unit] = u.Value
	}
	if len(better) != len(metrics) {
		t.Errorf("%d units have better= metadata, want %d", len(better), len(metrics))
	}
	for _, m := range metrics {
		if got := better[benchfmtUnit(m)]; got != m.Better() {
			t.Errorf("unit %s (%s): better=%q, want %q", benchfmtUnit(m), m.Name, got, m.Better())
		}
	}

	// The identity that normally differs is there for people, as comments.
	for _, line := range []string{
		"# perfgate-version: v0.1.0", "# engine-version: 0.6.3", "# image-id: sha256:fedcba9876543210",
		"# cpu: AMD EPYC 7763 64-Core Processor", "# gpu-driver: 550.54.15", "# cuda: 12.4", "# started-at: 2026-03-01T12:00:00Z",
	} {
		if !bytes.Contains(out, []byte("\n"+line+"\n")) {
			t.Errorf("output lacks line %q", line)
		}
	}
}

// TestBenchfmtUntrustedText checks that text from the server cannot break a
// line: an engine version or model with a newline could otherwise add a
// benchmark line or a configuration key.
func TestBenchfmtUntrustedText(t *testing.T) {
	r := benchfmtResult()
	r.Identity.Server.Version = "0.6.3\x1b[31m\nBenchmarkEvil 1 1 ns/op"
	r.Identity.Target.Model = "  m\r\nengine: other"
	out := writeBenchfmt(t, r)
	if bytes.ContainsAny(out, "\x1b\r") {
		t.Errorf("output passes a control character from the server through")
	}
	results, _ := readBenchfmt(t, out)
	if len(results) != 6 {
		t.Errorf("read %d results, want 6", len(results))
	}
	if got := results[0].GetConfig("model"); got != "m  engine: other" {
		t.Errorf("model = %q", got)
	}
	if got := results[0].GetConfig("engine"); got != "vllm" {
		t.Errorf("engine = %q, want vllm", got)
	}
	if !bytes.Contains(out, []byte("\n# engine-version: 0.6.3 [31m BenchmarkEvil 1 1 ns/op\n")) {
		t.Errorf("engine version not written as one comment line:\n%s", out)
	}
}

// TestBenchfmtComparable checks that a baseline and a candidate that differ
// only in what a change changes (engine version, image, perfgate version,
// config, client CPU) get the same file configuration, which benchstat needs
// to put them in one table and compare them.
func TestBenchfmtComparable(t *testing.T) {
	old := benchfmtResult()
	cand := benchfmtResult()
	cand.Identity.PerfgateVersion = "v0.2.0"
	cand.Identity.ConfigHash = "sha256:aaaa"
	cand.Identity.Server.Version = "0.7.0"
	cand.Identity.Stack.Image = "vllm/vllm-openai:v0.7.0"
	cand.Identity.Stack.ImageID = "sha256:bbbb"
	cand.Identity.Host.CPUModel = "Intel Xeon"
	for i := range cand.Identity.GPUs {
		cand.Identity.GPUs[i].Driver = "560.0"
	}
	cand.StartedAt = cand.StartedAt.Add(time.Hour)
	config := func(r *result.Result) string {
		results, _ := readBenchfmt(t, writeBenchfmt(t, r))
		var b strings.Builder
		for _, c := range results[0].Config {
			b.WriteString(c.Key + "=" + string(c.Value) + ";")
		}
		return b.String()
	}
	if a, b := config(old), config(cand); a != b {
		t.Errorf("baseline and candidate configurations differ, benchstat would not compare them:\n%s\n%s", a, b)
	}
	model := cand.Identity.Target.Model
	cand.Identity.Target.Model = "other"
	if a, b := config(old), config(cand); a == b {
		t.Errorf("results of different models share a configuration: benchstat would compare them")
	}
	cand.Identity.Target.Model = model
	cand.Identity.GPUs = cand.Identity.GPUs[:1]
	if a, b := config(old), config(cand); a == b {
		t.Errorf("results on different GPU counts share a configuration: benchstat would compare them")
	}
}

// TestBenchfmtUnitsTidy checks that benchunit.Tidy, which benchfmt's reader
// applies to every value, leaves every unit and value as written, and that
// every unit is distinct.
func TestBenchfmtUnitsTidy(t *testing.T) {
	seen := map[string]string{}
	for _, m := range metric.All() {
		if m.PerStart {
			continue
		}
		unit := benchfmtUnit(m)
		if v, u := benchunit.Tidy(1.5, unit); u != unit || v != 1.5 {
			t.Errorf("%s: Tidy(1.5, %q) = %v %q, want it unchanged", m.Name, unit, v, u)
		}
		if strings.ContainsAny(unit, " \t") {
			t.Errorf("%s: unit %q has a space", m.Name, unit)
		}
		if other, dup := seen[unit]; dup {
			t.Errorf("%s and %s share unit %q", m.Name, other, unit)
		}
		seen[unit] = m.Name
		want := benchunit.Decimal
		if m.Kind == metric.Memory {
			want = benchunit.Binary // bytes, scaled by 1024
		}
		if got := benchunit.ClassOf(unit); got != want {
			t.Errorf("%s: unit %q is scaled %v, want %v", m.Name, unit, got, want)
		}
	}
	for name, want := range map[string]string{
		"ttft.p99": "ttft-p99-sec", "itl.p99.9": "itl-p99.9-sec", "e2e.mean": "e2e-mean-sec",
		"output_throughput": "output-throughput-tok/s", "request_throughput": "request-throughput-req/s",
		"goodput": "goodput-req/s", "error_rate": "error-rate-%",
		"kv_cache_peak": "kv-cache-peak-%", "preemptions": "preemptions-count", "server_ttft": "server-ttft-sec",
		"gpu_memory_peak": "gpu-memory-peak-B", "gpu_power": "gpu-power-W", "energy_per_token": "energy-per-token-J/tok",
		"tokens_per_joule": "tokens-per-joule-tok/J", "cost_per_mtok": "cost-per-mtok-$/Mtok",
	} {
		m, err := metric.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := benchfmtUnit(m); got != want {
			t.Errorf("unit of %s = %q, want %q", name, got, want)
		}
	}
}

func TestBenchfmtNames(t *testing.T) {
	for _, tt := range []struct{ scenario, want string }{
		{"chat-16", "Scenario/name=chat-16"},
		{"long_ctx.v2", "Scenario/name=long_ctx.v2"},
		{"a b/c\nd", "Scenario/name=a_b_c_d"},
	} {
		line := benchfmtName(tt.scenario) + " 1 1 x"
		results, _ := readBenchfmt(t, []byte(line+"\n"))
		if len(results) != 1 {
			t.Fatalf("%q: read %d results", line, len(results))
		}
		if got, _ := results[0].Name.Parts(); string(results[0].Name) != tt.want+"-1" {
			t.Errorf("name of %q = %q (base %q), want %q", tt.scenario, results[0].Name, got, tt.want+"-1")
		}
	}
}

func TestBenchfmtEdgeCases(t *testing.T) {
	// A scenario with no name cannot be written.
	r := benchfmtResult()
	r.Scenarios[1].Name = ""
	if err := WriteBenchfmt(&bytes.Buffer{}, r); err == nil {
		t.Errorf("WriteBenchfmt accepted a scenario with no name")
	}

	// A scenario with no repetitions writes no lines; a result with none at
	// all writes no unit lines either, and still parses.
	r = benchfmtResult()
	r.Scenarios[0].Repetitions = nil
	results, _ := readBenchfmt(t, writeBenchfmt(t, r))
	if len(results) != 3 {
		t.Errorf("read %d results, want 3", len(results))
	}
	r.Scenarios[1].Repetitions = nil
	results, units := readBenchfmt(t, writeBenchfmt(t, r))
	if len(results) != 0 || len(units) != 0 {
		t.Errorf("result without repetitions: read %d results, %d unit lines", len(results), len(units))
	}

	// Values read back exactly, however small or large.
	r = benchfmtResult()
	tiny := 1e-7
	r.Scenarios[0].Repetitions[0].TTFT.P99 = tiny
	r.Scenarios[0].Repetitions[0].OutputThroughput = 123456789.125
	results, _ = readBenchfmt(t, writeBenchfmt(t, r))
	if v, _ := results[0].Value("ttft-p99-sec"); !close12(v, tiny/1000) {
		t.Errorf("ttft-p99-sec = %v, want %v", v, tiny/1000)
	}
	if v, _ := results[0].Value("output-throughput-tok/s"); v != 123456789.125 {
		t.Errorf("output-throughput-tok/s = %v, want 123456789.125", v)
	}
}

// TestBenchfmtTelemetry checks the engine, GPU and cost metrics: written in
// their units (GPU memory in bytes, prices in $/Mtok) where a repetition
// measured them, left out of a line where it did not, and given a Unit line
// only when some line has them.
func TestBenchfmtTelemetry(t *testing.T) {
	r := benchfmtResult()
	reps := r.Scenarios[0].Repetitions
	for i := range reps {
		reps[i] = resulttest.WithTelemetry(reps[i], float64(i))
		reps[i].Engine.WaitingPeak = nil // an engine with no queue gauge
		reps[i].Cost.USDPerMOutputGoodput, reps[i].Cost.USDPerMInputGoodput = nil, nil
	}
	reps[2].GPU = nil // the GPU source failed in repetition 3
	out := writeBenchfmt(t, r)
	results, units := readBenchfmt(t, out)
	require.Len(t, results, 6)

	memory, err := metric.Lookup("gpu_memory_peak")
	require.NoError(t, err)
	money, err := metric.Lookup("cost_per_mtok")
	require.NoError(t, err)
	assert.Equal(t, "gpu-memory-peak-B", benchfmtUnit(memory))
	assert.Equal(t, "cost-per-mtok-$/Mtok", benchfmtUnit(money))
	assert.Equal(t, 40000.0*1024*1024, benchfmtValue(memory, 40000))
	assert.Equal(t, 0.35, benchfmtValue(money, 0.35))

	for i, want := range []float64{40000, 40500} {
		got, ok := results[i].Value("gpu-memory-peak-B")
		require.True(t, ok, "repetition %d has GPU memory", i+1)
		assert.Equal(t, want*1024*1024, got, "repetition %d: bytes read back as written", i+1)
	}
	_, ok := results[2].Value("gpu-memory-peak-B")
	assert.False(t, ok, "repetition 3 measured no GPU: no value, not a zero")
	for i, want := range []float64{0.35, 0.36, 0.37} {
		got, ok := results[i].Value("cost-per-mtok-$/Mtok")
		require.True(t, ok)
		assert.True(t, close12(want, got), "repetition %d: cost %v, want %v", i+1, got, want)
	}
	if v, ok := results[0].Value("kv-cache-peak-%"); assert.True(t, ok) {
		assert.True(t, close12(80, v), "KV-cache peak in percent: %v", v)
	}
	if v, ok := results[0].Value("preemptions-count"); assert.True(t, ok) {
		assert.Equal(t, 2.0, v)
	}
	_, ok = results[3].Value("cost-per-mtok-$/Mtok")
	assert.False(t, ok, "the second scenario has no telemetry")

	better := map[string]string{}
	for _, u := range units {
		better[u.Unit] = u.Value
	}
	assert.Equal(t, "lower", better["gpu-memory-peak-B"])
	assert.Equal(t, "lower", better["cost-per-mtok-$/Mtok"])
	assert.Equal(t, "higher", better["tokens-per-joule-tok/J"])
	assert.NotContains(t, better, "cost-per-mtok-goodput-$/Mtok", "no repetition measured cost at goodput: no Unit line")
	assert.NotContains(t, string(out), "waiting-peak-count", "the engine reported no queue")
}

// The benchfmt export writes the result's percentiles, p99.99 among them,
// and only those.
func TestBenchfmtConfiguredPercentiles(t *testing.T) {
	r := benchfmtResult()
	r.Percentiles = []string{"p50", "p75", "p99", "p99.99"}
	r.Scenarios = r.Scenarios[:1]
	for i := range r.Scenarios[0].Repetitions {
		rep := &r.Scenarios[0].Repetitions[i]
		for _, st := range []*result.Stats{&rep.TTFT, &rep.TPOT, &rep.ITL, &rep.E2E} {
			st.Percentiles = map[string]float64{"p75": (st.P50 + st.P90) / 2, "p99.99": (st.P999 + st.Max) / 2}
		}
	}
	out := writeBenchfmt(t, r)
	results, _ := readBenchfmt(t, out)
	require.Len(t, results, 3)
	for i, res := range results {
		got, ok := res.Value("ttft-p99.99-sec")
		require.True(t, ok, "no ttft-p99.99-sec in %s", out)
		assert.InDelta(t, r.Scenarios[0].Repetitions[i].TTFT.Percentiles["p99.99"]/1000, got, 1e-12)
		_, ok = res.Value("itl-p75-sec")
		assert.True(t, ok, "itl-p75-sec")
		_, ok = res.Value("ttft-p90-sec")
		assert.False(t, ok, "p90 was not listed")
	}
}
