package compare

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// estimator is the comparison's compare.estimator: the options', else the
// candidate's, else config.DefaultEstimator.
func (o Options) estimator(candidate *result.Result) (string, error) {
	e := o.Estimator
	if e == "" && candidate.Compare != nil {
		e = candidate.Compare.Estimator
	}
	if e == "" {
		e = config.DefaultEstimator
	}
	if e != config.EstimatorHarrellDavis && e != config.EstimatorSample {
		return "", fmt.Errorf("compare.estimator: must be %s or %s, got %q", config.EstimatorHarrellDavis, config.EstimatorSample, e)
	}
	return e, nil
}

// errNoHistogram says a repetition kept no histogram to estimate a
// percentile from, or kept one that cannot be read.
var errNoHistogram = errors.New("no usable histogram")

// GateValues is a gated metric's values in scenario s, as a comparison
// with estimator tests them: a latency percentile (ttft.p99) of each
// repetition by the Harrell-Davis estimate over the repetition's
// histogram (stat.HarrellDavis) when estimator is harrell-davis, and
// every other metric, or every metric with estimator sample, as the
// result records it (ScenarioResult.Values). A repetition that kept no
// histogram of a distribution it measured is an error wrapping
// errNoHistogram.
func GateValues(s *result.ScenarioResult, name, estimator string) ([]float64, error) {
	base, subset, inSubset := metric.Subset(name)
	family, pct, ok := metric.LatencyPercentile(base)
	if !ok || estimator != config.EstimatorHarrellDavis {
		return s.Values(name)
	}
	pc, err := metric.ParsePercentile(pct) // 99 for p99
	if err != nil {
		return nil, err
	}
	q := pc / 100
	out := make([]float64, 0, len(s.Repetitions))
	for i := range s.Repetitions {
		r := &s.Repetitions[i]
		if inSubset {
			if _, err := r.Value(name); err != nil {
				return nil, err // no such subset, or none of it timed
			}
			v, _ := r.View(subset)
			r = v
		}
		enc := r.Histograms[family]
		if len(enc) == 0 {
			if v, err := r.Value(base); err == nil && v == 0 && statsCount(r, family) == 0 {
				out = append(out, 0) // nothing measured, as the recorded figure says
				continue
			}
			return nil, fmt.Errorf("repetition %d kept no %s histogram, as results from before them do (%w)", r.Index, family, errNoHistogram)
		}
		bars, err := decodeBars(enc)
		if err != nil {
			return nil, fmt.Errorf("%s of repetition %d: its %s histogram: %w (%w)", name, r.Index, family, err, errNoHistogram)
		}
		v := stat.HarrellDavis(bars, q)
		if math.IsNaN(v) {
			return nil, fmt.Errorf("%s of repetition %d: no Harrell-Davis estimate of its %s histogram", name, r.Index, family)
		}
		out = append(out, v)
	}
	return out, nil
}

// statsCount is how many values a repetition's distribution of family
// holds.
func statsCount(r *result.Repetition, family string) int64 {
	switch family {
	case "ttft":
		return r.TTFT.Count
	case "tpot":
		return r.TPOT.Count
	case "itl":
		return r.ITL.Count
	case "e2e":
		return r.E2E.Count
	}
	return 0
}

// sideValues is a gate's values on both sides by estimator (GateValues);
// when a side kept no usable histogram (a result from before them) both
// sides are taken as recorded instead, and note says why. The errors are
// each side's, named for their side by the caller.
func sideValues(b, c *result.ScenarioResult, m metric.Info, estimator string) (bv, cv []float64, note string, baseErr, candErr error) {
	bv, baseErr = GateValues(b, m.Name, estimator)
	if baseErr == nil {
		cv, candErr = GateValues(c, m.Name, estimator)
	}
	if errors.Is(baseErr, errNoHistogram) || errors.Is(candErr, errNoHistogram) {
		side, why := "baseline", baseErr
		if baseErr == nil {
			side, why = "candidate", candErr
		}
		note = fmt.Sprintf("the %s's %v", side, why)
		bv, baseErr = b.Values(m.Name)
		cv, candErr = nil, nil
		if baseErr == nil {
			cv, candErr = c.Values(m.Name)
		}
	}
	return bv, cv, note, baseErr, candErr
}

// recordedNote is the scenario's warning for the gates whose percentiles
// were compared as recorded (titles), with the first reason.
func recordedNote(titles []string, why string) string {
	return fmt.Sprintf("%s compared as recorded on both sides (each repetition's order statistic, not its Harrell-Davis estimate): %s",
		strings.Join(titles, ", "), why)
}

// GateValuesOrRecorded is GateValues, or, where a repetition of s kept no
// usable histogram, every value as recorded: as a comparison falls back
// when a side has none, for what reads one side alone (the detectable
// change of a baseline).
func GateValuesOrRecorded(s *result.ScenarioResult, name, estimator string) ([]float64, error) {
	v, err := GateValues(s, name, estimator)
	if errors.Is(err, errNoHistogram) {
		return s.Values(name)
	}
	return v, err
}
