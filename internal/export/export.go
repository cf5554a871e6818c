package export

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aclements/go-moremath/stats"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/textsafe"

	"github.com/perfgate/perfgate/internal/stat"
)

// Format names one of the formats Write writes.
type Format string

// The formats Write writes.
const (
	// BMF is Bencher Metric Format JSON (bmf.go).
	BMF Format = "bmf"
	// GAB is github-action-benchmark's custom JSON holding the metrics for
	// which smaller is better (tool: customSmallerIsBetter; gab.go).
	GAB Format = "gab"
	// GABBigger is github-action-benchmark's custom JSON holding the
	// metrics for which bigger is better (tool: customBiggerIsBetter).
	GABBigger Format = "gab-bigger"
	// CSV is comma-separated values for a spreadsheet (csv.go).
	CSV Format = "csv"
	// VLLM is the result JSON of `vllm bench serve`, as JSON lines
	// (vllm.go).
	VLLM Format = "vllm"
)

// Formats returns the formats Write writes, in the order help lists them.
func Formats() []Format { return []Format{BMF, GAB, GABBigger, CSV, VLLM} }

// Per says what one row of the csv format is.
type Per string

// The rows of the csv format.
const (
	// PerScenario writes one row per scenario and metric, with the median,
	// mean, minimum, maximum and standard deviation over the repetitions.
	PerScenario Per = "scenario"
	// PerRepetition writes one row per scenario, repetition and metric,
	// with the repetition's value: the samples themselves.
	PerRepetition Per = "repetition"
)

// Options are the choices a format may take; the zero value is every
// format's default.
type Options struct {
	// Per is what one csv row is (PerScenario when empty). The other
	// formats ignore it.
	Per Per
}

// Write writes r in format f to w. It renders in full before writing, so
// that an error (a result it cannot express in f) leaves nothing written.
func Write(w io.Writer, r *result.Result, f Format, o Options) error {
	if err := checkScenarios(r); err != nil {
		return err
	}
	var (
		data []byte
		err  error
	)
	switch f {
	case BMF:
		data, err = bmf(r)
	case GAB:
		data, err = gab(r, false)
	case GABBigger:
		data, err = gab(r, true)
	case CSV:
		data, err = csvTable(r, o.Per)
	case VLLM:
		data, err = vllm(r)
	default:
		return fmt.Errorf("unknown export format %q", f)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", f, err)
	}
	if f != CSV {
		// The same JSON, with every character a terminal or a CI log
		// would not show as itself written as a \u escape.
		data = textsafe.JSON(data)
	}
	_, err = w.Write(data)
	return err
}

// checkScenarios refuses a result whose scenarios cannot be told apart by
// name, as every format names them: one with no name, or two of one name
// (which only a hand-edited file can hold).
func checkScenarios(r *result.Result) error {
	seen := map[string]bool{}
	for i := range r.Scenarios {
		name := cleanName(r.Scenarios[i].Name)
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("scenario %d has no name", i+1)
		}
		if seen[name] {
			return fmt.Errorf("two scenarios are named %q", name)
		}
		seen[name] = true
	}
	return nil
}

// cleanName is text a result file controls (a scenario's name, a model's)
// as the formats write it: one line, every control or format character
// made a space (textsafe.Line), so that no name can break a csv row or
// reach a terminal as an escape sequence.
func cleanName(s string) string { return textsafe.Line(s) }

// measure is one metric as the formats write it.
type measure struct {
	metric.Info
	// unit is the unit its values are written in.
	unit string
	// scale converts a value in the result's unit to unit.
	scale float64
}

// measures are the metrics the formats write for r, in catalogue order:
// every metric of the catalogue with the percentiles r measured
// (metric.AllWith; the default five where r is nil), so that a metric the
// catalogue gains, or a percentile a config lists, is exported with it.
// This is the one place that decides a metric's unit.
func measures(r *result.Result) []measure {
	ps := metric.DefaultPercentiles
	if r != nil {
		ps = r.PercentileNames()
	}
	var out []measure
	for _, m := range metric.AllWith(ps) {
		e := measure{Info: m, unit: m.Unit(), scale: 1}
		if m.Kind == metric.Fraction {
			e.unit, e.scale = "%", 100
		}
		out = append(out, e)
	}
	return out
}

// perRepetition reports whether m has one value per repetition (not cold
// start, measured once per stack start, nor a capacity search's estimates,
// one per repetition index across its probes).
func (m measure) perRepetition() bool {
	return !m.PerStart && m.Group != metric.GroupCapacity
}

// repValue is repetition rep's value of a per-repetition metric m in m's
// unit; ok is false where the repetition has none (its source was
// unavailable, a latency distribution with no requests in it, a value that
// is not finite). Any other error (a metric the result cannot answer) is
// returned.
func repValue(rep *result.Repetition, m measure) (v float64, ok bool, err error) {
	if family, _, isLatency := strings.Cut(m.Name, "."); isLatency && latencyCount(rep, family) == 0 {
		return 0, false, nil
	}
	v, err = rep.Value(m.Name)
	var nm *result.NotMeasuredError
	switch {
	case errors.As(err, &nm):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	}
	v *= m.scale
	if !finite(v) {
		return 0, false, nil
	}
	return v, true, nil
}

// latencyCount is how many values the repetition's latency distribution
// family holds; -1 for a name that is no client-side distribution.
func latencyCount(rep *result.Repetition, family string) int64 {
	switch family {
	case "ttft":
		return rep.TTFT.Count
	case "tpot":
		return rep.TPOT.Count
	case "itl":
		return rep.ITL.Count
	case "e2e":
		return rep.E2E.Count
	}
	return -1
}

// samples are metric m's values for scenario s in m's unit: one per
// repetition that measured it (cold start: one per stack start; capacity:
// one per repetition index of the search), finite values only.
func samples(s *result.ScenarioResult, m measure) ([]float64, error) {
	var out []float64
	if !m.perRepetition() {
		vals, err := s.Values(m.Name)
		var nm *result.NotMeasuredError
		switch {
		case errors.As(err, &nm):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		for _, v := range vals {
			if v *= m.scale; finite(v) {
				out = append(out, v)
			}
		}
		return out, nil
	}
	for i := range s.Repetitions {
		v, ok, err := repValue(&s.Repetitions[i], m)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// summary describes a metric's samples in one scenario.
type summary struct {
	n                 int
	median, mean      float64
	min, max          float64
	stddev            float64 // NaN for fewer than 2 samples
	hasSpread         bool    // n >= 2
	medianToExtremity float64 // the larger of median−min and max−median
}

// finite says every figure of s is finite (stddev too, where s has a
// spread). Values each finite can still sum, or differ, past the largest
// float (a mean of 1.7e308s is +Inf): a metric whose figures are not all
// finite is left out, as no format may write NaN or ±Inf.
func (s summary) finite() bool {
	ok := finite(s.median) && finite(s.mean) && finite(s.min) && finite(s.max)
	if s.hasSpread {
		ok = ok && finite(s.stddev) && finite(s.medianToExtremity)
	}
	return ok
}

// summarise describes xs; with none, a summary whose figures are not
// finite.
func summarise(xs []float64) summary {
	if len(xs) == 0 {
		return summary{median: math.NaN(), mean: math.NaN(), min: math.NaN(), max: math.NaN(), stddev: math.NaN()}
	}
	s := summary{
		n:      len(xs),
		median: stat.Median(xs),
		mean:   stats.Mean(xs),
		min:    slices.Min(xs),
		max:    slices.Max(xs),
		stddev: math.NaN(),
	}
	if s.n >= 2 {
		s.stddev = stats.StdDev(xs)
		s.hasSpread = true
		s.medianToExtremity = math.Max(s.median-s.min, s.max-s.median)
	}
	return s
}

// scenarioSummaries calls fn for each metric scenario s measured, in
// catalogue order, with the summary of its samples.
func scenarioSummaries(r *result.Result, s *result.ScenarioResult, fn func(m measure, sum summary)) error {
	for _, m := range measures(r) {
		xs, err := samples(s, m)
		if err != nil {
			return err
		}
		if sum := summarise(xs); len(xs) > 0 && sum.finite() {
			fn(m, sum)
		}
	}
	return nil
}

// digits is the significant digits values are written with: enough for any
// measurement, few enough that a share made a percentage prints as 7 and
// not as 7.000000000000001.
const digits = 12

// round is v at digits significant digits, as a float64 (for JSON).
func round(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	if err != nil || !finite(r) {
		return v
	}
	return r
}

// number is v at digits significant digits, as text, with no exponent for
// the magnitudes measurements have (for csv and ranges).
func number(v float64) string {
	return strconv.FormatFloat(round(v), 'f', -1, 64)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
