package result

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/metric"
)

// field is the Stats field of percentile name, or nil for one with none
// (kept in Percentiles).
func (s *Stats) field(name string) *float64 {
	switch name {
	case "p50":
		return &s.P50
	case "p90":
		return &s.P90
	case "p95":
		return &s.P95
	case "p99":
		return &s.P99
	case "p99.9":
		return &s.P999
	}
	return nil
}

// Percentile is the distribution's percentile name ("p99", "p99.99"), from
// its field or Percentiles; ok is false when it was not measured.
func (s Stats) Percentile(name string) (v float64, ok bool) {
	if f := s.field(name); f != nil {
		return *f, true
	}
	v, ok = s.Percentiles[name]
	return v, ok
}

// PercentileNames are the latency percentiles r measured, ascending:
// Percentiles, or metric.DefaultPercentiles for a result that records none.
func (r *Result) PercentileNames() []string {
	if len(r.Percentiles) == 0 {
		return slices.Clone(metric.DefaultPercentiles)
	}
	return slices.Clone(r.Percentiles)
}

// WithPercentiles makes the aggregator measure the latency percentiles
// names (metric.ParsePercentile's, as the config's percentiles key lists
// them) of TTFT, TPOT, ITL and E2E (and, open loop, of TTFT and E2E from
// the schedule), beside the five Stats has fields for,
// which it always fills; a name ParsePercentile refuses is ignored (the
// config refused it). It returns a.
func (a *Aggregator) WithPercentiles(names []string) *Aggregator {
	a.percentiles = nil
	for _, n := range names {
		if pct, err := metric.ParsePercentile(n); err == nil && (&Stats{}).field(n) == nil {
			a.percentiles = append(a.percentiles, extraPercentile{n, pct})
		}
	}
	return a
}

// extraPercentile is a percentile without a Stats field: its name and its
// value in percent.
type extraPercentile struct {
	name string
	pct  float64
}

// latency summarises latency histogram name with the extra percentiles.
func (a *Aggregator) latency(name string) Stats {
	h := a.hists[name]
	s := stats(h)
	if s.Count == 0 || len(a.percentiles) == 0 {
		return s
	}
	s.Percentiles = map[string]float64{}
	for _, p := range a.percentiles {
		s.Percentiles[p.name] = float64(h.ValueAtQuantile(p.pct)) / 1e3
	}
	return s
}

// percentileValue is repetition r's percentile p (a name
// metric.ParsePercentile accepts) of latency family ("ttft"): from its
// Stats, else from its histogram (the same figure the aggregator would
// have taken: a result from a run that did not list p, an older one among
// them), else a *NotMeasuredError.
func percentileValue(r *Repetition, st *Stats, family, p string) (float64, error) {
	if v, ok := st.Percentile(p); ok {
		return v, nil
	}
	name := family + "." + p
	enc := r.Histograms[family]
	if len(enc) == 0 {
		if st.Count == 0 {
			return 0, nil // nothing measured: as the fields of an empty distribution
		}
		return 0, &NotMeasuredError{Metric: name, Repetition: r.Index,
			Why: "the run did not measure " + p + " (its percentiles key) and the result kept no histogram to take it from"}
	}
	h, err := DecodeHistogram(enc)
	if err != nil {
		return 0, fmt.Errorf("%s of repetition %d: %s histogram: %w", name, r.Index, family, err)
	}
	return histPercentile(h, p), nil
}

// histPercentile is percentile p of a histogram of microseconds, in
// milliseconds; 0 for an empty one.
func histPercentile(h *hdrhistogram.Histogram, p string) float64 {
	pct, err := metric.ParsePercentile(p)
	if err != nil || h.TotalCount() == 0 {
		return 0
	}
	return float64(h.ValueAtQuantile(pct)) / 1e3
}

// checkPercentiles checks a distribution's percentiles: each name in
// Percentiles one metric.ParsePercentile accepts and without a field of its
// own, each value finite and >= 0, and, in a distribution with values, the
// percentiles (fields and map together) ascending with their rank and none
// above the maximum.
func (v *checker) checkPercentiles(field string, s Stats) {
	type pv struct {
		name string
		pct  float64
		x    float64
	}
	var all []pv
	for _, name := range metric.DefaultPercentiles {
		x, _ := s.Percentile(name)
		pct, _ := metric.ParsePercentile(name)
		all = append(all, pv{name, pct, x})
	}
	for _, name := range slices.Sorted(maps.Keys(s.Percentiles)) {
		x := s.Percentiles[name]
		path := field + ".percentiles." + name
		pct, err := metric.ParsePercentile(name)
		switch {
		case err != nil:
			// The name is the file's, and may be anything: the error quotes it.
			v.add(field+".percentiles", "want percentiles p50 to p99.99 by name: %v", err)
			continue
		case s.field(name) != nil:
			v.add(path, "%s has a field of its own (%s); it is not repeated here", name, strings.ReplaceAll(name, ".", "_"))
			continue
		}
		v.nonNegative(path, x)
		all = append(all, pv{name, pct, x})
	}
	if s.Count == 0 || len(s.Percentiles) == 0 {
		return // the five fields alone are as older perfgates wrote them
	}
	slices.SortStableFunc(all, func(a, b pv) int { return cmp.Compare(a.pct, b.pct) })
	path := func(name string) string {
		if s.field(name) != nil {
			return field + "." + strings.ReplaceAll(name, ".", "_")
		}
		return field + ".percentiles." + name
	}
	for i := 1; i < len(all); i++ {
		if all[i].x < all[i-1].x {
			v.add(path(all[i].name), "want at least %s (%s), got %s: percentiles rise with their rank", all[i-1].name, fmtNum(all[i-1].x), fmtNum(all[i].x))
			return
		}
	}
	if top := all[len(all)-1]; top.x > s.Max {
		v.add(path(top.name), "want at most max (%s), got %s", fmtNum(s.Max), fmtNum(top.x))
	}
}

// percentileList checks Result.Percentiles with metric.CheckPercentiles:
// each a percentile metric.ParsePercentile accepts, ascending, none twice,
// at most metric.MaxPercentiles. Empty is the defaults.
func (v *checker) percentileList(list []string) {
	if len(list) == 0 {
		return
	}
	for _, err := range metric.CheckPercentiles(list, true) {
		path := "percentiles"
		var pe *metric.PercentileError
		if errors.As(err, &pe) && pe.Index >= 0 {
			path = fmt.Sprintf("percentiles[%d]", pe.Index)
		}
		v.add(path, "%v", err)
	}
}
