package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// parsePolicyConfig parses yaml as p.yaml in a directory holding a
// one-line workload wl.jsonl and the files given (name to content).
func parsePolicyConfig(t *testing.T, yaml string, files map[string]string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	files["wl.jsonl"] = `{"prompt": "hello", "max_tokens": 4}`
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data+"\n"), 0o644))
	}
	c, err := config.Parse([]byte(yaml), filepath.Join(dir, "p.yaml"))
	require.NoError(t, err)
	return c
}

// problems is Check's problems as strings, the directory left out.
func problems(c *config.Config, d Design) []string {
	var out []string
	for _, p := range Check(c, d) {
		out = append(out, strings.ReplaceAll(p.Error(), c.Dir+string(filepath.Separator), ""))
	}
	return out
}

const oneScenario = "scenarios:\n  - {name: s, workload: wl.jsonl, load: {concurrency: 1}}\n"

// Too few repetitions are a problem located at the repetitions key, with
// the rule's figures and the count that decides.
func TestCheckSaysWhatDecides(t *testing.T) {
	c := parsePolicyConfig(t, "repetitions: 3\n"+oneScenario, map[string]string{})
	assert.Equal(t, []string{"p.yaml:1:14: repetitions: 3 repetitions cannot show a significant difference on the 7 gates of scenario s: Holm's first step needs p < 0.00714 (alpha 0.05), and the U test's smallest p with 3 a side is 0.05: every gate would be inconclusive, neither a regression nor a pass. Set repetitions: 5 or more, or gate fewer metrics"},
		problems(c, TwoSamples))

	// An A/B's rounds are ab.rounds, tested pair by pair: 3 are fewer
	// still (the smallest p is 2^-3), 6 too few for 7 gates.
	c = parsePolicyConfig(t, "ab: {rounds: 3}\n"+oneScenario, map[string]string{})
	got := problems(c, Rounds)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "p.yaml:1:14: ab.rounds: 3 rounds cannot show a significant difference on the 7 gates of scenario s")
	assert.Contains(t, got[0], "the signed-rank test's smallest p with 3 pairs is 0.125")
	assert.Contains(t, got[0], "Set ab.rounds: 8 or more")

	c = parsePolicyConfig(t, "repetitions: 6\nab: {rounds: 6}\n"+oneScenario, map[string]string{})
	assert.Empty(t, problems(c, TwoSamples))
	assert.NotEmpty(t, problems(c, Rounds), "6 rounds of 7 gates: 2^-6·7 > 0.05")
	c = parsePolicyConfig(t, oneScenario, map[string]string{})
	assert.Empty(t, problems(c, TwoSamples), "the default repetitions decide")
	assert.Empty(t, problems(c, Rounds), "the default rounds decide")
}

// A range decides when one of its looks does, and the fix keeps its first
// look.
func TestCheckRange(t *testing.T) {
	two := "scenarios:\n  - {name: a, workload: wl.jsonl, load: {concurrency: 1}}\n  - {name: b, workload: wl.jsonl, load: {concurrency: 1}}\n"
	c := parsePolicyConfig(t, "repetitions: {min: 4, max: 6}\n"+two, map[string]string{})
	got := problems(c, TwoSamples)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "4..6 repetitions cannot show a significant difference on the 7 gates of each of scenarios a, b")
	assert.Contains(t, got[0], "Set repetitions: {min: 4, max: 7} or repetitions: 6")
	c = parsePolicyConfig(t, "repetitions: {min: 5, max: 10}\n"+two, map[string]string{})
	assert.Empty(t, problems(c, TwoSamples), "the second look, at 7, decides")
}

// The tail gates compare.tail adds are in the family, and only in a
// comparison with a stored baseline (an A/B has none).
func TestCheckCountsTailGates(t *testing.T) {
	scenario := "scenarios:\n  - {name: s, workload: wl.jsonl, load: {concurrency: 1}, gates: {ttft.p50: +10%, ttft.p90: +10%, e2e.p50: +10%}}\n"
	c := parsePolicyConfig(t, "repetitions: 5\n"+scenario, map[string]string{})
	assert.Empty(t, problems(c, TwoSamples), "10 gates, no tail gates: 5 a side reach Holm's first step")
	c = parsePolicyConfig(t, "repetitions: 5\ncompare: {tail: p90}\n"+scenario, map[string]string{})
	got := problems(c, TwoSamples)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "on the 15 gates of scenario s", "10 gates and 5 tail gates (ttft p90, p95, p99, tpot p99, e2e p99)")
	assert.Equal(t, 10, ConfigPolicy(c, Rounds, nil).Families[0].Gates, "no tail gates in an A/B")

	assert.Equal(t, 1, tailGates([]config.Gate{{Metric: "ttft.p99.99"}, {Metric: "ttft.p99"}, {Metric: "itl.p75"}, {Metric: "ttft.mean"}}, "p99.9"))
}

// A suite's score gate counts only when its scorer is continuous, as
// compare tests it: at 5 repetitions (the U test's smallest p is 1/252),
// the 7 default latency gates and two pass/fail suites (accuracy and error
// rate each: 11 gates, Holm's first step at 0.05/11 = 0.0045) decide; two
// reference suites (three gates each: 13, at 0.0038) cannot.
func TestCheckCountsScoreOnlyForContinuousSuites(t *testing.T) {
	files := map[string]string{
		"a.jsonl": `{"id":"a","prompt":"1+1=","scorer":"numeric","expected":2}`,
		"b.jsonl": `{"id":"b","prompt":"2+2=","scorer":"exact","expected":"4"}`,
		"c.jsonl": `{"id":"c","prompt":"Say hi","scorer" : "reference","expected":"hi"}`,
		"d.jsonl": `{"id":"c","prompt":"Say hi","scorer":"exact","expected":"hi"}` + "\n" + `{"id":"d","prompt":"Say yo","scorer":"reference","expected":"yo"}`,
	}
	parse := func(suites string) *config.Config {
		return parsePolicyConfig(t, "repetitions: 5\nquality:\n  suites: ["+suites+"]\n"+oneScenario, files)
	}
	assert.Empty(t, problems(parse("a.jsonl, b.jsonl"), TwoSamples), "two pass/fail suites have no score gate: 11 gates decide")
	got := problems(parse("c.jsonl, d.jsonl"), TwoSamples)
	require.Len(t, got, 1, "two continuous suites: 13 gates cannot decide at 5 repetitions")
	assert.Contains(t, got[0], "13 gates")
}

// Only scenarios with gates share alpha: ungated sweep points take no
// share, and a capacity search is judged by its own samples
// (capacity.repetitions), located there.
func TestCheckCountsGatedSamples(t *testing.T) {
	parse := func(capReps string) *config.Config {
		return parsePolicyConfig(t, `repetitions: 3
scenarios:
  - name: chat
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: poisson, rate: [10, 20]}
  - name: cap
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: poisson}
    capacity: {slo: {tpot.p99: 50ms}, min: 10, max: 640, repetitions: `+capReps+`}
`, map[string]string{})
	}
	c := parse("6")
	p := ConfigPolicy(c, TwoSamples, nil)
	require.Len(t, p.Families, 1, "the sweep's points are ungated")
	assert.Equal(t, Family{Scenario: "cap", Gates: 1, Samples: 6, Search: "capacity"}, p.Families[0], "capacity, its one default gate")
	assert.Equal(t, 0.05, p.Share())
	assert.Empty(t, problems(c, TwoSamples))
	got := problems(parse("3"), TwoSamples)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "p.yaml:9:71: scenarios[1].capacity.repetitions: 3 capacity samples a side cannot show a significant difference on the gate of scenario cap")
	assert.Contains(t, got[0], "Set capacity.repetitions: 4 or more")
}

// gate, ab and compare give a scenario a share of alpha by one rule: the
// scenarios with gates share it. perfgate ab used to give every scenario a
// share, an ungated one too, and so tested at half the level that perfgate
// gate and validate judged the config by.
func TestOneShareForEveryCommand(t *testing.T) {
	cfg, scenarios := setup(t, onlyTTFT)
	cfg.Scenarios[1].Gates = map[string]string{"ttft.p99": "off"}
	cfg.AB.Rounds = cfg.Repetitions // the looks alike, to compare levels
	gated := ConfigPolicy(cfg, TwoSamples, nil)
	ab := ConfigPolicy(cfg, Rounds, nil)
	require.Len(t, gated.Families, 1, "other has no gate")
	assert.Equal(t, gated.Share(), ab.Share())
	assert.Equal(t, cfg.Compare.Alpha, gated.Share())
	seq := ab.Sequential(compare.Options{})
	assert.Equal(t, cfg.Compare.Alpha, seq.Share)
	assert.Equal(t, gated.FirstLevel(), seq.FirstLevel())
	assert.Len(t, scenarios, 2)

	// compare without a config: the families a first comparison found.
	p := FromFamilies(0.05, map[string]int{"a": 7, "b": 0, "c": 3})
	assert.Len(t, p.Families, 2)
	assert.Equal(t, map[string]float64{"a": 0.025, "c": 0.025}, p.Levels())
}

// Every whole config the README and docs show decides as perfgate gate
// tests it (what perfgate validate checks).
func TestDocsExamplesDecide(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	files = append(files, "../../README.md")
	checked := 0
	for _, file := range files {
		doc, err := os.ReadFile(file)
		require.NoError(t, err)
		for i, b := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
			if !strings.Contains(b[1], "scenarios:") {
				continue // a fragment, not a whole config
			}
			dir := t.TempDir()
			for _, m := range regexp.MustCompile(`(?m)^\s*(?:workload|- )?\s*(?:workload: )?(\S+\.jsonl)`).FindAllStringSubmatch(b[1], -1) {
				p := filepath.Join(dir, m[1])
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte("{\"prompt\": \"x\"}\n"), 0o644))
			}
			c, err := config.Parse([]byte(b[1]), filepath.Join(dir, "perfgate.yaml"))
			if err != nil {
				continue // config's own test says which examples parse
			}
			checked++
			assert.Empty(t, Check(c, TwoSamples), "%s example %d", file, i+1)
		}
	}
	assert.GreaterOrEqual(t, checked, 2)
}

// compare, gate and compare --aa test one config with the same families at
// the same levels: alpha over the two scenarios with gates, Holm within
// each scenario's gates.
func TestCompareGateAndCalibrateAgree(t *testing.T) {
	cfg, scenarios := setup(t, "{ttft.p95: +10%, ttft.p99: +10%, cold_start: off}")
	side := func(shift float64) *result.Result {
		var out []result.ScenarioResult
		for _, sc := range scenarios {
			out = append(out, measured(cfg, sc, 100+shift, 103+shift, 99+shift, 101+shift, 98+shift, 102+shift))
		}
		return resultOf(out...)
	}
	results := []*result.Result{side(0), side(0.5), side(-0.3)}
	policy := ConfigPolicy(cfg, TwoSamples, nil)
	cmp, err := Compare(results[:1], results[1], compare.Options{Alpha: 0.05, Gates: GatesFrom(cfg)})
	require.NoError(t, err)
	assert.False(t, cmp.Sequential, "compare takes no looks")
	seq := ConfigPolicy(cfg, TwoSamples, nil)
	seq.Min, seq.Max = 6, 6
	gated, err := seq.Sequential(compare.Options{Gates: GatesFrom(cfg)}).Final(results[:1], results[1], false)
	require.NoError(t, err)
	cal, err := Calibrate(results, 0.05, GatesFrom(cfg))
	require.NoError(t, err)
	require.Len(t, cal.Scenarios, 2)
	require.Len(t, policy.Families, 2)
	for i, cs := range cal.Scenarios {
		c, g := cmp.Scenarios[i], gated.Scenarios[i]
		require.Equal(t, cs.Name, c.Name)
		assert.Equal(t, policy.Share(), c.Level, "compare: scenario %s at its share", c.Name)
		assert.Equal(t, g.Level, c.Level, "compare and gate: scenario %s", c.Name)
		assert.Len(t, c.Gates, cs.Gates, "compare and --aa: family of %s", c.Name)
		assert.Len(t, g.Gates, cs.Gates, "gate and --aa: family of %s", c.Name)
		assert.Equal(t, policy.Families[i].Gates, cs.Gates, "the policy and --aa: family of %s", c.Name)
		assert.InDelta(t, c.Level/float64(len(c.Gates)), float64(cs.Level), 1e-15, "Holm's first step of %s", c.Name)
		for j := range c.Gates {
			assert.Equal(t, g.Gates[j].PAdjusted, c.Gates[j].PAdjusted, "%s %s: Holm within the scenario", c.Name, c.Gates[j].Metric)
		}
	}
}

// capacity.repetitions are judged at the capacity scenario's share of
// alpha. Under fresh arrivals a comparison tests them as pairs where the
// pairs can reach the family's level: 5 pairs decide one gate at 0.05
// (1/32), not at half of it (two scenarios with gates), where the gate
// falls back to unpaired samples, and says so; 6 pairs do.
func TestCapacityRepetitionsAsPairs(t *testing.T) {
	parse := func(capReps int, gated bool, arrivals string) *config.Config {
		plain := ""
		if gated {
			plain = "\n  - name: chat\n    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}\n    load: {concurrency: 2}"
		}
		return parsePolicyConfig(t, fmt.Sprintf(`repetitions: 10
scenarios:%s
  - name: cap
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: poisson%s}
    capacity: {slo: {tpot.p99: 50ms}, min: 10, max: 640, repetitions: %d}
`, plain, arrivals, capReps), map[string]string{})
	}
	assert.Empty(t, Advise(parse(5, false, ", arrivals: fresh")), "5 pairs decide one gate at 0.05")
	got := Advise(parse(5, true, ", arrivals: fresh"))
	require.Len(t, got, 1)
	assert.Contains(t, got[0].Error(), "scenarios[1].capacity.repetitions: 5 repetitions give 5 capacity samples a side, drawn afresh (load.arrivals: fresh)")
	assert.Contains(t, got[0].Error(), "set capacity.repetitions: 6 or more")
	assert.Empty(t, Advise(parse(6, true, ", arrivals: fresh")))
	assert.Empty(t, Advise(parse(5, true, "")), "one schedule for every repetition: unpaired by design")
	for _, c := range []*config.Config{parse(5, true, ", arrivals: fresh"), parse(5, true, "")} {
		assert.Empty(t, Check(c, TwoSamples), "5 samples a side decide unpaired")
	}
	assert.NotEmpty(t, Check(parse(3, true, ""), TwoSamples))
}
