package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/metric"
)

// Quality modes.
const (
	// QualityInterleaved mixes the suites' items into a scenario's measured
	// load, so that they are answered under the batching of real traffic.
	QualityInterleaved = "interleaved"
	// QualitySeparate answers the items alone, after the scenario's
	// measurement, on the same warm stack.
	QualitySeparate = "separate"
)

// Quality configures the eval suites answered in the same run as the latency
// measurement and gated item by item against the baseline's answers.
type Quality struct {
	// Suites are eval files (evals/*.jsonl), relative to the config file.
	// No suites, no quality stage.
	Suites []string `yaml:"suites" json:"suites,omitempty"`
	// Mode is interleaved or separate.
	Mode string `yaml:"mode" json:"mode,omitempty"`
	// Share is, in interleaved mode, the fraction of the requests sent that
	// are eval items while items remain (0.1: one in ten).
	Share float64 `yaml:"share" json:"share,omitempty"`
	// Scenario names the scenario whose load carries the suites; empty means
	// the first scenario.
	Scenario string `yaml:"scenario" json:"scenario,omitempty"`
	// Concurrency is how many items are in flight when items are answered
	// alone: separate mode, and the items an interleaved run had no room
	// for.
	Concurrency int `yaml:"concurrency" json:"concurrency,omitempty"`
	// Gates changes the default quality gates (DefaultQualityGates):
	// accuracy, score or identical to a tolerance in points, or off.
	Gates map[string]string `yaml:"gates" json:"gates,omitempty"`
}

// Enabled reports whether the config has eval suites.
func (q Quality) Enabled() bool { return len(q.Suites) > 0 }

// DefaultQualityGates are the gates of every suite unless quality.gates
// changes them. Accuracy may drop 2 points (a suite of a few hundred items
// cannot resolve much less); the mean score gate applies only to suites with
// a continuous scorer; identical outputs are reported but not gated, because
// a pull request that changes the engine or the quantisation is expected to
// change some outputs. The share of items whose request failed may rise 2
// points: a server that fails its eval requests cannot pass on the few it
// answered. It is below the default max_error_rate (5%), which stops a run
// whose suite fails more (exit 3), so the rise the gate sees is at most 5
// points and a tolerance of 5 could never regress; at 2 points a 200-item
// suite regresses from 10 failures, a 500-item one from 17 to 22 (by the
// family's level). A gate with no item failed on one side only passes.
var DefaultQualityGates = map[string]string{
	"accuracy":        "-2 points",
	"score":           "-2 points",
	"identical":       GateOff,
	"eval_error_rate": "+2 points",
}

// QualityGates returns the quality gates: the defaults changed by
// quality.gates, without those set to off, in report order. The config must
// have been validated.
func (c *Config) QualityGates() []Gate {
	merged := maps.Clone(DefaultQualityGates)
	maps.Copy(merged, c.Quality.Gates)
	out := []Gate{} // not nil: no gates at all is a choice, not a missing list
	for _, m := range metric.QualityMetrics() {
		text := merged[m.Name]
		if strings.TrimSpace(text) == GateOff {
			continue
		}
		if t, err := metric.ParseTolerance(m, text); err == nil {
			out = append(out, Gate{Metric: m.Name, Tolerance: t})
		}
	}
	return out
}

// SuiteGates returns how many quality gates a comparison tests for one
// suite: QualityGates without score, which applies only to a suite with a
// continuous scorer (a pass/fail suite's mean score is its accuracy), as
// perfgate compare leaves it out.
func (c *Config) SuiteGates(continuous bool) int {
	n := 0
	for _, g := range c.QualityGates() {
		if g.Metric != "score" || continuous {
			n++
		}
	}
	return n
}

// maxSuiteScan bounds what SuiteContinuous reads of a suite file.
const maxSuiteScan = 256 << 20

// SuiteContinuous reports whether the eval suite at path has an item with a
// continuous scorer (reference), reading only each line's scorer: enough
// for validation to count the suite's gates without loading it (package
// quality, which loads suites, imports this one). A file that cannot be
// read or a line that is not JSON counts as pass/fail: the suite's own
// loading reports it.
func SuiteContinuous(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxSuiteScan))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimPrefix(sc.Bytes(), []byte("\ufeff"))
		if !bytes.Contains(line, []byte("reference")) {
			continue
		}
		var item struct {
			Scorer string `json:"scorer"`
		}
		if json.Unmarshal(line, &item) == nil && item.Scorer == "reference" {
			return true
		}
	}
	return false
}

// SuitePaths are quality.suites resolved against the config's directory.
func (c *Config) SuitePaths() []string {
	out := make([]string, len(c.Quality.Suites))
	for i, s := range c.Quality.Suites {
		out[i] = resolve(c.Dir, s)
	}
	return out
}

// QualityScenario is the name of the scenario that carries the suites: the
// configured one, else the first.
func (c *Config) QualityScenario() string {
	if c.Quality.Scenario != "" || len(c.Scenarios) == 0 {
		return c.Quality.Scenario
	}
	return c.Scenarios[0].Name
}

// quality checks the quality section.
func (v *validator) quality() {
	q := v.c.Quality
	if !q.Enabled() {
		if q.Mode != "" || q.Share != 0 || q.Scenario != "" || q.Concurrency != 0 || len(q.Gates) > 0 {
			v.add("quality.suites", "required when the quality section sets anything: list the eval files")
		}
		return
	}
	for i, s := range q.Suites {
		p := fmt.Sprintf("quality.suites[%d]", i)
		if strings.TrimSpace(s) == "" {
			v.add(p, "must name an eval file")
			continue
		}
		v.file(p, s)
		base := filepath.Base(s)
		switch name := strings.TrimSuffix(base, filepath.Ext(base)); {
		case !namePattern.MatchString(name):
			v.add(p, "the suite's name (its file's base name, %s) must be letters, digits, '.', '_' and '-', starting with a letter or digit: it names the suite in results and reports", name)
		case len(name) > MaxNameLength:
			v.add(p, "the suite's name (its file's base name) must be at most %d characters, got %d", MaxNameLength, len(name))
		}
		if j := slices.Index(q.Suites, s); j < i {
			v.add(p, "%s is listed twice (also quality.suites[%d])", s, j)
		}
	}
	if q.Mode != QualityInterleaved && q.Mode != QualitySeparate {
		v.add("quality.mode", "must be interleaved or separate, got %q", q.Mode)
	}
	if !(q.Share > 0 && q.Share <= 0.5) {
		v.add("quality.share", "must be in (0, 0.5] (a fraction of the requests sent: 0.1 is one in ten), got %s", fmtFloat(q.Share))
	}
	v.intIn("quality.concurrency", q.Concurrency, 1, MaxConcurrency, "")
	v.qualityScenario()
	for _, name := range slices.Sorted(maps.Keys(q.Gates)) {
		p := "quality.gates." + name
		m, err := metric.Lookup(name)
		if err != nil || !m.Quality {
			v.add(p, "unknown quality gate %q (quality gates: accuracy, score, identical, eval_error_rate)", name)
			continue
		}
		if strings.TrimSpace(q.Gates[name]) == GateOff {
			continue
		}
		if t, err := metric.ParseTolerance(m, q.Gates[name]); err != nil {
			v.add(p, "%v", err)
		} else if msg := toleranceProblem(m, t); msg != "" {
			v.add(p, "%s", msg)
		}
	}
}

// qualityScenario checks the scenario that carries the suites: it exists,
// and it is measured at one load (a point of a sweep is; a sweep and a
// capacity search are not).
func (v *validator) qualityScenario() {
	name := v.c.QualityScenario()
	i := slices.IndexFunc(v.c.Scenarios, func(s Scenario) bool { return s.Name == name })
	if i < 0 {
		if _, ok := v.c.ScenarioNamed(name); !ok && v.c.Quality.Scenario != "" {
			v.add("quality.scenario", "no scenario is named %q", name)
		}
		return
	}
	s := v.c.Scenarios[i]
	what := ""
	switch {
	case len(s.Load.Sweep) > 0:
		what = "sweeps its load"
	case s.Capacity != nil:
		what = "searches its capacity"
	case s.Headroom != nil:
		what = "searches its headroom"
	default:
		return
	}
	if v.c.Quality.Scenario == "" {
		v.add("quality", "the first scenario, %s, %s: set quality.scenario", name, what)
		return
	}
	v.add("quality.scenario", "%s %s: answer eval items in a scenario at one load", name, what)
}
