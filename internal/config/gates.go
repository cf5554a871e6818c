package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/workload"
)

// Repetitions is how many times each scenario is measured: a fixed number
// (`repetitions: 5`), or a range (`repetitions: {min: 5, max: 15}`) within
// which `perfgate gate` adds repetitions while a gate is inconclusive.
// `perfgate run`, having nothing to compare with, measures Max (a baseline
// wants as many samples as the budget allows).
type Repetitions struct {
	// Min is how many repetitions are always measured.
	Min int `yaml:"min" json:"min"`
	// Max is the most a gate may measure; equal to Min for a fixed number.
	Max int `yaml:"max" json:"max"`
}

// Fixed reports whether the count is one number rather than a range.
func (r Repetitions) Fixed() bool { return r.Min == r.Max }

// String is "5" or "5..15".
func (r Repetitions) String() string {
	if r.Fixed() {
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d..%d", r.Min, r.Max)
}

// MarshalJSON writes a fixed count as a number (as configs before ranges
// hashed), a range as {"min","max"}.
func (r Repetitions) MarshalJSON() ([]byte, error) {
	if r.Fixed() {
		return json.Marshal(r.Min)
	}
	type plain Repetitions
	return json.Marshal(plain(r))
}

// UnmarshalJSON reads either form.
func (r *Repetitions) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*r = Repetitions{Min: n, Max: n}
		return nil
	}
	type plain Repetitions
	return json.Unmarshal(b, (*plain)(r))
}

// Gate outcomes at the end of the budget.
const (
	InconclusiveFail = "fail"
	InconclusivePass = "pass"
)

// Compare configures how results are compared with their baselines.
type Compare struct {
	// Alpha is the chance the gate accepts of calling a regression that is
	// not there, over all gates of a run (Holm) and all looks of a
	// sequential gate (alpha spending).
	Alpha float64 `yaml:"alpha" json:"alpha"`
	// OnInconclusive decides the exit code when the repetition budget runs
	// out with a gate still inconclusive: fail (exit 1) or pass (exit 0).
	// Either way the report says inconclusive.
	OnInconclusive string `yaml:"on_inconclusive" json:"on_inconclusive"`
	// Baselines is the directory of promoted baselines, relative to the
	// config file.
	Baselines string `yaml:"baselines" json:"baselines"`
	// Tail is the lowest latency percentile whose gates get a tail test
	// beside the per-repetition one (p99: ttft.p99 and e2e.p99 do,
	// ttft.p95 does not), or off (DefaultTail). It is how the results are
	// compared, not what is measured: it is not hashed.
	Tail string `yaml:"tail" json:"tail,omitempty"`
	// Estimator is how a gate takes a latency percentile of each
	// repetition: harrell-davis (DefaultEstimator), a weighted mean of
	// every order statistic that moves far less between repetitions of
	// an unchanged server, or sample, the one order statistic the
	// repetition's summary shows. It is how the results are compared,
	// not what is measured: it is not hashed.
	Estimator string `yaml:"estimator" json:"estimator,omitempty"`
}

// The estimators of compare.estimator.
const (
	EstimatorHarrellDavis = "harrell-davis"
	EstimatorSample       = "sample"
)

// TailOff as compare.tail turns the tail tests off.
const TailOff = "off"

// ParseTail reads a compare.tail value: the quantile of a latency
// percentile ("p99" is 0.99, "p99.9" 0.999, any metric.ParsePercentile
// accepts), 0 for off; "" is DefaultTail.
func ParseTail(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultTail
	}
	if s == TailOff {
		return 0, nil
	}
	pct, err := metric.ParsePercentile(s)
	if err != nil {
		return 0, fmt.Errorf("must be a latency percentile or %s: %w", TailOff, err)
	}
	return pct / 100, nil
}

// GateOff in a gates mapping turns a default gate off.
const GateOff = "off"

// Gate is one metric gated with its tolerance. A result records it as a
// result.Gate (Gate.Result): the metric's name and the tolerance as written.
type Gate struct {
	Metric    string           `json:"metric"`
	Tolerance metric.Tolerance `json:"tolerance"`
}

// GatesOf returns the gates of scenario s (as measured: Config.Measured); a
// metric set to off is left out. They come in report order. The config must
// have been validated (a bad tolerance is skipped here, reported there).
//
//   - An ordinary scenario has the defaults (DefaultGates), changed by the
//     top-level gates mapping, changed by its own. Top-level capacity gates
//     are not its: it has no capacity search.
//   - A point of a sweep (or a swept scenario) has its own gates only, by
//     default none: a sweep draws a curve, and gating each point by default
//     would split the run's alpha (Holm) across all of them.
//   - A headroom scenario has DefaultHeadroomGates, changed by the
//     top-level headroom gate, changed by its own: headroom is all it
//     measures.
//   - A capacity scenario has DefaultCapacityGates, changed by the top-level
//     entries of capacity metrics, changed by its own; latency and
//     throughput are measured at each side's own capacity, so they are not
//     gated there.
func (c *Config) GatesOf(s Scenario) []Gate {
	capGate := func(name string) bool {
		m, err := metric.Lookup(name)
		return err == nil && m.Group == metric.GroupCapacity
	}
	var merged map[string]string
	switch {
	case s.Capacity != nil:
		merged = maps.Clone(DefaultCapacityGates)
		maps.Copy(merged, c.Gates)
		maps.Copy(merged, s.Gates)
		maps.DeleteFunc(merged, func(name, _ string) bool { return !capGate(name) || name == HeadroomGate })
	case s.Headroom != nil:
		merged = maps.Clone(DefaultHeadroomGates)
		maps.Copy(merged, c.Gates)
		maps.Copy(merged, s.Gates)
		maps.DeleteFunc(merged, func(name, _ string) bool { return name != HeadroomGate })
	case s.Point != nil || len(s.Load.Sweep) > 0:
		merged = maps.Clone(s.Gates)
	default:
		merged = maps.Clone(DefaultGates)
		structured := c.structuredWorkload(s)
		if structured {
			merged[StructuredGate] = DefaultStructuredGate
		}
		maps.Copy(merged, c.Gates)
		maps.Copy(merged, s.Gates)
		if !structured {
			// Nothing to measure: a top-level gate meant for the
			// scenarios of structured requests skips the others.
			delete(merged, StructuredGate)
		}
		maps.DeleteFunc(merged, func(name, _ string) bool { return capGate(name) })
		if !s.Disturbed() {
			// A top-level gate on a recovery skips the scenarios that
			// have none.
			maps.DeleteFunc(merged, func(name, _ string) bool { return metric.RecoveryOnly(name) })
		}
	}
	// The default gates are on the default percentiles, always measured
	// whatever the percentiles key lists; a gate on another percentile
	// the config does not measure is refused by Validate.
	names := slices.Collect(maps.Keys(merged))
	slices.SortFunc(names, func(a, b string) int { return metric.Order(a) - metric.Order(b) })
	out := []Gate{} // not nil: every gate off is a choice, not a missing list
	for _, name := range names {
		text := merged[name]
		if strings.TrimSpace(text) == GateOff {
			continue
		}
		g, err := parseGate(name, text)
		if err != nil {
			continue
		}
		out = append(out, g)
	}
	return out
}

func parseGate(name, text string) (Gate, error) {
	m, err := metric.Lookup(name)
	if err != nil {
		return Gate{}, err
	}
	if m.Quality {
		return Gate{}, fmt.Errorf("%s is a quality gate: set it under quality.gates", name)
	}
	t, err := metric.ParseTolerance(m, text)
	if err != nil {
		return Gate{}, err
	}
	return Gate{Metric: m.Name, Tolerance: t}, nil
}

// gates checks a gates mapping at path. A gate on a latency percentile the
// config does not measure (percentiles) is refused, naming those it does;
// one set to off is not.
func (v *validator) gates(path string, gates map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		if strings.TrimSpace(gates[name]) != GateOff {
			if msg := v.c.unmeasuredGate(name); msg != "" {
				v.add(path+"."+name, "%s", msg)
				continue
			}
		}
		if strings.TrimSpace(gates[name]) == GateOff {
			if m, err := metric.Lookup(name); err != nil {
				v.add(path+"."+name, "%v", err)
			} else if m.Quality {
				v.add(path+"."+name, "%s is a quality gate: set it under quality.gates", name)
			}
			continue
		}
		g, err := parseGate(name, gates[name])
		if err != nil {
			v.add(path+"."+name, "%v", err)
			continue
		}
		if m, err := metric.Lookup(g.Metric); err == nil {
			if msg := toleranceProblem(m, g.Tolerance); msg != "" {
				v.add(path+"."+name, "%s", msg)
			}
		}
	}
}

// BaselinesDir is compare.baselines resolved against the config's directory.
func (c *Config) BaselinesDir() string { return resolve(c.Dir, c.Compare.Baselines) }

// structuredFiles caches whether a workload file has structured requests,
// by path, size and modification time: GatesOf is asked often, and a
// workload is read once.
var structuredFiles sync.Map // string -> structuredFile

type structuredFile struct {
	size       int64
	mod        time.Time
	structured bool
}

// structuredWorkload reports whether scenario s replays a workload file
// with a structured request. A synthesised workload has none; a file that
// cannot be read counts as none here (the run that loads it says why).
func (c *Config) structuredWorkload(s Scenario) bool {
	if s.Workload == "" {
		return false
	}
	path := resolve(c.Dir, s.Workload)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if v, ok := structuredFiles.Load(path); ok {
		if f := v.(structuredFile); f.size == fi.Size() && f.mod.Equal(fi.ModTime()) {
			return f.structured
		}
	}
	w, err := workload.Load(path)
	if err != nil {
		return false
	}
	f := structuredFile{size: fi.Size(), mod: fi.ModTime()}
	for i := range w.Requests {
		if w.Requests[i].Structured() {
			f.structured = true
			break
		}
	}
	structuredFiles.Store(path, f)
	return f.structured
}
