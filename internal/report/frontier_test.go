package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"

	"github.com/perfgate/perfgate/internal/frontier"
	"github.com/perfgate/perfgate/internal/reportfile"
)

// frontierFixture is one configuration of the frontier fixtures: what
// was measured, its capacity (0 throughput: no capacity search) and its
// eval suites' passes.
type frontierFixture struct {
	file, model, quant, engine, version string
	// usdPerHour is the deployment's price an hour (0: none).
	usdPerHour float64
	gpus       int
	outcome    string
	holds      float64
	breaks     float64
	tokens     float64 // output tok/s at capacity; 0: no capacity search
	suites     []frontierSuiteFixture
}

type frontierSuiteFixture struct {
	name, hash  string
	pass, items int
}

// frontierFixtures are six configurations: Pareto-optimal and dominated
// ones, one whose capacity is censored (the SLOs held at the highest load
// searched), one with no price and a different version of one suite, and
// one with no capacity search.
var frontierFixtures = []frontierFixture{
	{"a.json", "llama-8b", "fp8", "vllm", "0.6.3", 2.5, 1, result.CapacityBracketed, 148, 155, 2370,
		[]frontierSuiteFixture{{"mmlu", "sha256:aaaa", 148, 200}, {"gsm8k", "sha256:bbbb", 96, 120}}},
	{"b.json", "llama-8b", "awq", "vllm", "0.6.3", 0.8, 1, result.CapacityBracketed, 33, 35, 530,
		[]frontierSuiteFixture{{"mmlu", "sha256:aaaa", 142, 200}, {"gsm8k", "sha256:bbbb", 90, 120}}},
	{"c.json", "llama-70b", "fp8", "vllm", "0.6.3", 2.5, 2, result.CapacityBracketed, 38, 40, 610,
		[]frontierSuiteFixture{{"mmlu", "sha256:aaaa", 172, 200}, {"gsm8k", "sha256:bbbb", 110, 120}}},
	{"d.json", "llama-8b", "fp16", "sglang", "0.3.2", 2.5, 1, result.CapacityAboveMax, 160, 0, 2900,
		[]frontierSuiteFixture{{"mmlu", "sha256:aaaa", 140, 200}, {"gsm8k", "sha256:bbbb", 93, 120}}},
	{"e.json", "llama-8b", "fp8", "tgi", "2.3.1", 0, 1, result.CapacityBracketed, 130, 136, 2100,
		[]frontierSuiteFixture{{"mmlu", "sha256:aaaa", 147, 200}, {"gsm8k", "sha256:cccc", 88, 118}}},
	{"f.json", "qwen2.5-7b", "q4_k_m", "llamacpp", "b3600", 0.8, 1, "", 0, 0, 0,
		[]frontierSuiteFixture{{"mmlu", "sha256:aaaa", 139, 200}}},
}

// frontierRep is repetition i of a probe at load with output throughput
// tokens.
func frontierRep(i int, load, tokens float64) result.Repetition {
	r := rep(i, 40)
	r.RequestThroughput, r.OutputThroughput = load, tokens
	return r
}

// frontierResult is fixture x as a result file's content.
func frontierResult(x frontierFixture) *result.Result {
	r := &result.Result{Schema: result.Schema,
		Identity: result.Identity{PerfgateVersion: "v0.1.0", ConfigHash: "sha256:" + x.file,
			Target: result.Target{BaseURL: "http://127.0.0.1:8000", API: "chat", Model: x.model, Quantization: x.quant},
			Server: result.Server{Engine: x.engine, Version: x.version}},
	}
	if x.usdPerHour > 0 {
		r.Cost = &result.Price{USDPerGPUHour: x.usdPerHour, GPUs: x.gpus}
	}
	var quality []result.SuiteResult
	for _, s := range x.suites {
		q := result.SuiteResult{Name: s.name, Path: "evals/" + s.name + ".jsonl", Hash: s.hash, Mode: "separate", Gates: []result.Gate{}}
		for i := range s.items {
			q.Items = append(q.Items, result.ItemOutcome{ID: fmt.Sprintf("%s-%03d", s.name, i), Hash: fmt.Sprintf("sha256:%03d", i),
				Scorer: "exact", Pass: i < s.pass, Score: map[bool]float64{true: 1, false: 0}[i < s.pass], Output: "42", OutputTokens: 2})
		}
		quality = append(quality, q)
	}
	reps := func(load, tokens float64) []result.Repetition {
		return []result.Repetition{frontierRep(1, load, tokens*0.98), frontierRep(2, load, tokens), frontierRep(3, load, tokens*1.01)}
	}
	if x.tokens == 0 {
		r.Scenarios = []result.ScenarioResult{{Name: "chat", Workload: "synth", WorkloadHash: "sha256:0123",
			Load: result.Load{Type: config.LoadPoisson, Rate: 4}, Gates: []result.Gate{}, Repetitions: reps(4, 300), Quality: quality}}
		return r
	}
	c := &result.Capacity{
		Search: result.CapacitySearch{Metric: "request_rate", SLO: map[string]float64{"ttft.p99": 500, "tpot.p99": 50},
			Min: 10, Max: 160, Start: 40, Resolution: 0.05, Rule: "every", Repetitions: 3, Budget: 8},
		Outcome: x.outcome, Holds: x.holds, Breaks: x.breaks, RequestRate: x.holds, OutputThroughput: x.tokens,
	}
	if r.Cost != nil {
		cost := r.Cost.USDPerSecond() / x.tokens * 1e6
		c.CostPerMTok = &cost
	}
	held := result.CapacityProbe{Load: x.holds, Phase: "bracket", Held: true, Margin: map[string]float64{"ttft.p99": 0.6, "tpot.p99": 0.95},
		Repetitions: reps(x.holds, x.tokens)}
	c.Probes = []result.CapacityProbe{held}
	if x.breaks > 0 {
		c.Probes = append(c.Probes, result.CapacityProbe{Load: x.breaks, Phase: "bisect", Margin: map[string]float64{"ttft.p99": 0.7, "tpot.p99": 1.08},
			Repetitions: reps(x.breaks, x.tokens*1.03)})
	}
	for i := 1; i <= 3; i++ {
		s := result.CapacitySample{Repetition: i, Load: x.holds, RequestRate: x.holds, OutputThroughput: x.tokens}
		if x.outcome == result.CapacityAboveMax {
			s.Censored = result.CensoredAbove
		}
		c.Samples = append(c.Samples, s)
	}
	r.Scenarios = []result.ScenarioResult{
		{Name: "chat-capacity", Workload: "synth", WorkloadHash: "sha256:0123", Load: result.Load{Type: config.LoadPoisson},
			Gates: []result.Gate{{Metric: "capacity", Tolerance: "-5%"}}, Repetitions: reps(x.holds, x.tokens), Capacity: c},
		{Name: "quality", Workload: "synth", WorkloadHash: "sha256:0123", Load: result.Load{Type: config.LoadClosed, Concurrency: 1},
			Gates: []result.Gate{}, Repetitions: reps(1, 40), Quality: quality},
	}
	return r
}

// TestFrontierFixtures writes the fixtures (go test -run
// TestFrontierFixtures -update) and checks that each reads back as a
// valid result equal to what built it.
func TestFrontierFixtures(t *testing.T) {
	for _, x := range frontierFixtures {
		data, err := json.Marshal(frontierResult(x))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("frontier", x.file), append(data, '\n'))
		r, err := reportfile.ReadResult(filepath.Join("testdata", "frontier", x.file))
		if err != nil {
			t.Fatalf("reportfile.ReadResult(%s) = %v, want a valid result", x.file, err)
		}
		if r.Identity.Target.Model != x.model {
			t.Errorf("reportfile.ReadResult(%s).model = %q, want %q", x.file, r.Identity.Target.Model, x.model)
		}
	}
}

// frontierInputs are the fixtures as frontier.New's input.
func frontierInputs(t *testing.T) []frontier.Input {
	t.Helper()
	var in []frontier.Input
	for _, x := range frontierFixtures {
		in = append(in, frontier.Input{Path: "results/" + x.file, Result: frontierResult(x)})
	}
	return in
}

func frontierOfFixtures(t *testing.T) *frontier.Frontier {
	t.Helper()
	f, err := frontier.New(frontierInputs(t), frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFrontierGoldens(t *testing.T) {
	f := frontierOfFixtures(t)
	for _, r := range []struct {
		name  string
		write func(*bytes.Buffer, *frontier.Frontier) error
	}{
		{"frontier.txt", func(b *bytes.Buffer, f *frontier.Frontier) error { return emitFrontierText(b, f) }},
		{"frontier.md", func(b *bytes.Buffer, f *frontier.Frontier) error { return emitFrontierMarkdown(b, f) }},
		{"frontier.json", func(b *bytes.Buffer, f *frontier.Frontier) error { return emitFrontierJSON(b, f) }},
	} {
		var buf bytes.Buffer
		if err := r.write(&buf, f); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		golden(t, filepath.Join("render", r.name), buf.Bytes())
	}
}

// TestFrontierOfFixtures checks the fixtures' frontiers against what was
// worked out by hand from their figures.
func TestFrontierOfFixtures(t *testing.T) {
	f := frontierOfFixtures(t)
	idx := func(file string) int {
		t.Helper()
		for i, c := range f.Configs {
			if c.File == file {
				return i
			}
		}
		t.Fatalf("no config %s", file)
		return -1
	}
	a, b, c, d, e, ff := idx("a.json"), idx("b.json"), idx("c.json"), idx("d.json"), idx("e.json"), idx("f.json")
	suite := func(name, hash string) *frontier.Suite {
		t.Helper()
		for i := range f.Suites {
			if f.Suites[i].Suite == name && f.Suites[i].Hash == hash {
				return &f.Suites[i]
			}
		}
		t.Fatalf("no suite %s %s in %+v", name, hash, f.Suites)
		return nil
	}
	mmlu := suite("mmlu", "")
	if got, want := mmlu.Cost.Optimal, []int{d, a, c}; !slices.Equal(got, want) {
		t.Errorf("mmlu cost optimal = %v, want %v (cheapest first)", got, want)
	}
	if got := mmlu.Cost.Dominated; len(got) != 1 || got[0].Config != b || !slices.Equal(got[0].By, []int{a}) || !got[0].WithinNoise[0] {
		t.Errorf("mmlu cost dominated = %+v, want b by a, within noise", got)
	}
	if got, want := mmlu.Throughput.Optimal, []int{d, a, c}; !slices.Equal(got, want) {
		t.Errorf("mmlu throughput optimal = %v, want %v (fastest first)", got, want)
	}
	// b (530 tok/s, 0.71) is beaten by a, c and e; e (2100, 0.735) by a.
	if got := mmlu.Throughput.Dominated; len(got) != 2 || got[0].Config != b || !slices.Equal(got[0].By, []int{a, c, e}) ||
		got[1].Config != e || !slices.Equal(got[1].By, []int{a}) {
		t.Errorf("mmlu throughput dominated = %+v, want b by a, c and e, e by a", got)
	} else if !slices.Equal(got[0].WithinNoise, []bool{true, false, true}) {
		t.Errorf("b's dominators within noise = %v, want a and e within (0.74, 0.735 vs 0.71), c not (0.86)", got[0].WithinNoise)
	}
	// e answered another version of gsm8k: two gsm8k suites, e alone in one.
	if g := suite("gsm8k", "sha256:cccc"); len(g.Points) != 1 || g.Points[0].Config != e {
		t.Errorf("gsm8k sha256:cccc points = %+v, want e alone", g.Points)
	}
	if g := suite("gsm8k", "sha256:bbbb"); len(g.Points) != 4 {
		t.Errorf("gsm8k sha256:bbbb has %d points, want 4 (a b c d)", len(g.Points))
	}
	if !slices.ContainsFunc(f.Warnings, func(w string) bool {
		return strings.Contains(w, "gsm8k") && strings.Contains(w, "e.json") && strings.Contains(w, "charted apart")
	}) {
		t.Errorf("warnings = %q, want one on gsm8k's two versions", f.Warnings)
	}
	// e has no price: off the cost frontier, on the throughput one; f has
	// no capacity: on none.
	for _, p := range mmlu.Cost.Optimal {
		if p == e || p == ff {
			t.Errorf("mmlu cost frontier has %s, which has no price or no capacity", f.Configs[p].File)
		}
	}
	want := map[int]bool{e: true, ff: false}
	for _, n := range f.NotPlaced {
		th, ok := want[n.Config]
		if !ok || n.Throughput != th {
			t.Errorf("not placed %s (throughput %v: %s), want only e (on throughput) and f", f.Configs[n.Config].File, n.Throughput, n.Reason)
		}
		delete(want, n.Config)
	}
	if len(want) > 0 {
		t.Errorf("not placed lacks %v", want)
	}
	if got := f.Configs[d].Bound; got != frontier.BoundAtLeast {
		t.Errorf("d's bound = %q, want %q (above_max)", got, frontier.BoundAtLeast)
	}
	// Accuracy is the share passed with its Wilson interval.
	lo, hi := stat.Wilson(148, 200, 0.95)
	if p := mmlu.Points[0]; p.Config != a || p.Accuracy != 0.74 || p.Lo != lo || p.Hi != hi {
		t.Errorf("mmlu a = %+v, want 148/200 = 0.74 [%v, %v]", p, lo, hi)
	}
}

func TestFrontierNotPlacedReasons(t *testing.T) {
	base := frontierFixtures[0]
	noSuites := base
	noSuites.file, noSuites.suites = "nosuites.json", nil
	noCap := base
	noCap.file, noCap.tokens = "nocap.json", 0
	noPrice := base
	noPrice.file, noPrice.usdPerHour = "noprice.json", 0
	zero := frontierResult(base)
	zero.Scenarios[0].Capacity.OutputThroughput = 0
	negative := frontierResult(base)
	*negative.Scenarios[0].Capacity.CostPerMTok = -1
	inputs := []frontier.Input{
		{Path: "nosuites.json", Result: frontierResult(noSuites)},
		{Path: "nocap.json", Result: frontierResult(noCap)},
		{Path: "noprice.json", Result: frontierResult(noPrice)},
		{Path: "zero.json", Result: zero},
		{Path: "negative.json", Result: negative},
	}
	f, err := frontier.New(inputs, frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		reason     string
		throughput bool
	}{
		{"no eval suite answered", false}, {"no capacity search", false}, {"no price", true},
		{"no output throughput at capacity", false}, {"is not a price", false},
	}
	if len(f.NotPlaced) != len(want) {
		t.Fatalf("NotPlaced = %+v, want %d entries", f.NotPlaced, len(want))
	}
	for i, w := range want {
		n := f.NotPlaced[i]
		if n.Config != i || !strings.Contains(n.Reason, w.reason) || n.Throughput != w.throughput {
			t.Errorf("NotPlaced[%d] = %+v, want config %d, %q, throughput %v", i, n, i, w.reason, w.throughput)
		}
	}
}

func TestFrontierScenarioChoice(t *testing.T) {
	two := frontierResult(frontierFixtures[0])
	second := two.Scenarios[0]
	second.Name = "long-capacity"
	two.Scenarios = append(two.Scenarios, second)
	in := []frontier.Input{{Path: "results/two.json", Result: two}}
	_, err := frontier.New(in, frontier.Options{})
	if err == nil || !strings.Contains(err.Error(), "results/two.json has 2 capacity searches (chat-capacity, long-capacity): pick one with --scenario") {
		t.Errorf("frontier.New(two searches) = %v, want the error naming both", err)
	}
	f, err := frontier.New(in, frontier.Options{Scenario: "long-capacity"})
	if err != nil || f.Configs[0].Scenario != "long-capacity" {
		t.Errorf("frontier.New(--scenario long-capacity) = %+v, %v, want it chosen", f, err)
	}
	f, err = frontier.New(in, frontier.Options{Scenario: "nope"})
	if err != nil || len(f.NotPlaced) != 1 || !strings.Contains(f.NotPlaced[0].Reason, "no capacity scenario nope (it has chat-capacity, long-capacity)") {
		t.Errorf("frontier.New(--scenario nope) = %+v, %v, want it not placed, naming the searches", f, err)
	}
}

// TestFrontierEscapes puts markup into every label and checks that no
// medium passes it through.
func TestFrontierEscapes(t *testing.T) {
	in := frontierInputs(t)
	evil := "<img src=x onerror=alert(1)>|**x**\x1b[31m"
	in[0].Result.Identity.Target.Model = evil
	in[1].Result.Scenarios[1].Quality[0].Name = "</script><script>alert(2)</script>"
	f, err := frontier.New(in, frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var txt, md, page bytes.Buffer
	if err := emitFrontierText(&txt, f); err != nil {
		t.Fatal(err)
	}
	if err := emitFrontierMarkdown(&md, f); err != nil {
		t.Fatal(err)
	}
	if err := emitFrontierHTML(&page, f); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(txt.String(), "\x1b") {
		t.Errorf("text passes a terminal escape through")
	}
	if unescaped := regexp.MustCompile(`(^|[^\\])(<img|\|\*\*x)`); unescaped.MatchString(md.String()) {
		t.Errorf("markdown passes markup through:\n%s", md.String())
	}
	body := htmlWithoutLibrary(t, page.String())
	for _, bad := range []string{"<img", "<script>alert", "</script><script>"} {
		if strings.Contains(body, bad) {
			t.Errorf("HTML passes %q through", bad)
		}
	}
}

func TestFrontierHTML(t *testing.T) {
	f := frontierOfFixtures(t)
	var buf bytes.Buffer
	if err := emitFrontierHTML(&buf, f); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	htmlHas(t, htmlText(page), `content="`+htmlCSP+`"`, "the report's CSP")
	htmlHas(t, page, "the quality-cost frontier")
	raw := page[strings.Index(page, `id="perfgate-data">`)+len(`id="perfgate-data">`):]
	raw = raw[:strings.Index(raw, "</script>")]
	var data frontierHTMLData
	if err := json.Unmarshal([]byte(raw), &data); err != nil {
		t.Fatalf("chart data: %v", err)
	}
	// Two charts a suite (mmlu, gsm8k and gsm8k's other version), but
	// none on cost for the version only e.json, which has no price,
	// answered.
	if len(data.Charts) != 5 || len(f.Suites) != 3 {
		t.Fatalf("%d charts for %d suites, want 5 for 3", len(data.Charts), len(f.Suites))
	}
	for _, c := range data.Charts {
		if c.Kind != "frontier" || !strings.Contains(page, `<canvas id="`+c.ID+`"`) {
			t.Errorf("chart %s (%s) has no canvas, or kind %q", c.ID, c.Title, c.Kind)
		}
	}
	cost := data.Charts[0] // gsm8k sorts first
	if !strings.HasPrefix(cost.Title, "gsm8k") || cost.XUnit != "$/Mtok" || !cost.Lower || len(cost.Points) != 4 {
		t.Errorf("first chart = %+v, want gsm8k's cost chart with a b c d", cost)
	}
	optimal := 0
	for _, p := range cost.Points {
		if p.Optimal {
			optimal++
		}
		if p.Label == "llama-8b fp16 · sglang 0.3.2" && p.Bound != "at most" {
			t.Errorf("d's cost point bound = %q, want at most (its capacity is at least)", p.Bound)
		}
	}
	// The staircase visits every optimal point, with a corner between two.
	if len(cost.Step) != 2*optimal-1 {
		t.Errorf("cost step has %d corners for %d optimal points, want %d", len(cost.Step), optimal, 2*optimal-1)
	}
	for i := 1; i < len(cost.Step); i++ {
		if cost.Step[i].X < cost.Step[i-1].X || cost.Step[i].Y < cost.Step[i-1].Y {
			t.Errorf("cost step %v goes back or down at %d, want it rising left to right", cost.Step, i)
		}
	}
	tput := data.Charts[1]
	for i := 1; i < len(tput.Step); i++ {
		if tput.Step[i].X < tput.Step[i-1].X || tput.Step[i].Y > tput.Step[i-1].Y {
			t.Errorf("throughput step %v goes back or up at %d, want it falling left to right", tput.Step, i)
		}
	}
}

// TestFrontierCensored checks that a capacity below the searched range is
// placed at its bound and marked as one in every medium.
func TestFrontierCensored(t *testing.T) {
	x := frontierFixtures[0]
	x.outcome, x.holds, x.breaks = result.CapacityBelowMin, 0, 10
	r := frontierResult(x)
	f, err := frontier.New([]frontier.Input{{Path: "low.json", Result: r}}, frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Configs[0]; c.Bound != frontier.BoundAtMost || c.OutputThroughput != 2370 {
		t.Fatalf("below_min config = %+v, want bound at_most at 2370 tok/s", c)
	}
	if len(f.Suites) == 0 || !slices.Equal(f.Suites[0].Cost.Optimal, []int{0}) {
		t.Errorf("suites = %+v, want the censored config placed", f.Suites)
	}
	var txt bytes.Buffer
	if err := emitFrontierText(&txt, f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"< 10 req/s", "≤ 2370", "≥ $0.29", "below_min"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	var page bytes.Buffer
	if err := emitFrontierHTML(&page, f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `"bound":"at least"`) || !strings.Contains(page.String(), `"bound":"at most"`) {
		t.Errorf("chart data lacks the bounds: at least on cost, at most on throughput")
	}
}

// The error naming a result's capacity searches quotes the result file's
// scenario names, untrusted: they are cleaned for the terminal.
func TestFrontierScenarioChoiceCleansNames(t *testing.T) {
	two := frontierResult(frontierFixtures[0])
	second := two.Scenarios[0]
	second.Name = "evil\x1b]52;c;cGF3bmVk\x07"
	two.Scenarios = append(two.Scenarios, second)
	_, err := frontier.New([]frontier.Input{{Path: "two.json", Result: two}}, frontier.Options{})
	if err == nil {
		t.Fatal("frontier.New(two searches) = nil error")
	}
	if strings.ContainsAny(err.Error(), "\x1b\x07") || !strings.Contains(err.Error(), "(chat-capacity, evil ]52;c;cGF3bmVk )") {
		t.Errorf("error = %q, want the names cleaned", err)
	}
}

// An item whose request failed is no answer: a configuration's accuracy on
// the frontier is over the items it answered, with a warning; one that
// answered none is not placed on that suite.
func TestFrontierFailedItems(t *testing.T) {
	a, b := frontierResult(frontierFixtures[0]), frontierResult(frontierFixtures[1])
	mmlu := &a.Scenarios[1].Quality[0] // 148 of 200 right: fail 20 of the wrong ones' requests
	for i := 180; i < 200; i++ {
		mmlu.Items[i].Error, mmlu.Items[i].ErrorKind = "http 500: boom", "http"
	}
	gsm := &b.Scenarios[1].Quality[1]
	for i := range gsm.Items {
		gsm.Items[i].Pass, gsm.Items[i].Score, gsm.Items[i].Error, gsm.Items[i].ErrorKind = false, 0, "connect: refused", "connect"
	}
	f, err := frontier.New([]frontier.Input{{Path: "a.json", Result: a}, {Path: "b.json", Result: b}}, frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"a.json: 20 of 200 requests of suite mmlu failed: its accuracy is over the 180 answered",
		"b.json: every request of suite gsm8k failed: not placed on it",
	} {
		if !slices.Contains(f.Warnings, w) {
			t.Errorf("Warnings = %q, want %q among them", f.Warnings, w)
		}
	}
	for _, s := range f.Suites {
		for _, p := range s.Points {
			switch {
			case s.Suite == "mmlu" && p.Config == 0:
				if p.Passed != 148 || p.Items != 180 {
					t.Errorf("mmlu point of a.json = %d/%d, want 148/180", p.Passed, p.Items)
				}
			case s.Suite == "gsm8k" && p.Config == 1:
				t.Errorf("gsm8k has a point for b.json, which answered none: %+v", p)
			}
		}
	}
}
