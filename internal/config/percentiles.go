package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/metric"
)

// MaxPercentiles is the most latency percentiles a config may list: each
// is a column of every latency table.
const MaxPercentiles = metric.MaxPercentiles

// MeasuredPercentiles are the latency percentiles a run of c lists, in
// ascending order: the percentiles key, or metric.DefaultPercentiles when
// it is not set. (A run measures the default five whatever the list says,
// into the result's fixed fields, and their gates always apply; the list
// adds percentiles and picks the reports' columns.) The config must have been validated (a name
// metric.ParsePercentile refuses is left out here, reported there).
func (c *Config) MeasuredPercentiles() []string {
	if len(c.Percentiles) == 0 {
		return slices.Clone(metric.DefaultPercentiles)
	}
	out := slices.DeleteFunc(slices.Clone(c.Percentiles), func(p string) bool { return !metric.IsPercentile(p) })
	metric.SortPercentiles(out)
	return slices.Compact(out)
}

// ResultPercentiles is what a result of c records as its percentiles
// (result.Result.Percentiles): nil for the defaults, so that a result of a
// config that does not set the key is written as before it existed.
func (c *Config) ResultPercentiles() []string {
	ps := c.MeasuredPercentiles()
	if slices.Equal(ps, metric.DefaultPercentiles) {
		return nil
	}
	return ps
}

// SetPercentiles replaces the percentiles with list, as the --percentiles
// flag gives it ("p50,p90,p99.99", already split at the commas), and checks
// it: an error names the flag, the value and what is accepted. Gates are
// checked against the new list by Validate.
func (c *Config) SetPercentiles(flag string, list []string) error {
	ps := make([]string, 0, len(list))
	for _, p := range list {
		ps = append(ps, strings.TrimSpace(p))
	}
	if errs := metric.CheckPercentiles(ps, false); len(errs) > 0 {
		return fmt.Errorf("%s: %s", flag, percentileMessage(errs[0], func(i int) string { return fmt.Sprintf("item %d", i+1) }))
	}
	c.Percentiles = ps
	return nil
}

// percentileMessage is a metric.CheckPercentiles error as a config says
// it: a repeated item names the one it repeats, as item(j) writes it.
func percentileMessage(err error, item func(j int) string) string {
	var pe *metric.PercentileError
	if errors.As(err, &pe) && pe.Earlier >= 0 {
		return fmt.Sprintf("%v (also %s)", err, item(pe.Earlier))
	}
	return err.Error()
}

// percentiles checks the percentiles key: each a percentile
// metric.ParsePercentile accepts, none twice, at most MaxPercentiles. It
// warns where a scenario's requests per repetition are too few for the
// highest percentile listed to be more than the slowest request
// (minRequestsFor). The list does not turn default gates off: the default
// percentiles are always measured (unmeasuredGate).
func (v *validator) percentiles() {
	list := v.c.Percentiles
	if list == nil {
		return
	}
	errs := metric.CheckPercentiles(list, false)
	for _, err := range errs {
		path := "percentiles"
		var pe *metric.PercentileError
		if errors.As(err, &pe) && pe.Index >= 0 {
			path = fmt.Sprintf("percentiles[%d]", pe.Index)
		}
		v.add(path, "%s", percentileMessage(err, func(j int) string { return fmt.Sprintf("percentiles[%d]", j) }))
	}
	if len(errs) > 0 {
		return
	}
	measured := v.c.MeasuredPercentiles()
	top := measured[len(measured)-1]
	need := minRequestsFor(top)
	for i, s := range v.c.Scenarios {
		// A repetition is Requests requests, or one pass over the
		// workload; a synthetic one says how long it is, a file is not
		// read here, and a duration's count is not known before the run.
		n, path := s.Requests, fmt.Sprintf("scenarios[%d].requests", i)
		if n == 0 && s.Duration == 0 && s.Synth != nil {
			n, path = s.Synth.Requests, fmt.Sprintf("scenarios[%d].synth.requests", i)
		}
		if n > 0 && n < need && !s.Searched() {
			v.warn(path,
				"%d requests a repetition are too few for %s: below %d, a repetition's %s of TTFT and E2E is its slowest request (ITL, with a figure per token, has more)",
				n, top, need, top)
		}
	}
}

// minRequestsFor is the fewest requests whose percentile p (a name
// metric.ParsePercentile accepts) is not the slowest of them: 1/(1-p),
// 10000 for p99.99, 1000 for p99.9, 100 for p99. An HDR histogram's value
// at quantile q of n values is the ceil(q·n)-th smallest, which is the
// largest while n < 1/(1-q).
func minRequestsFor(p string) int {
	pct, err := metric.ParsePercentile(p)
	if err != nil {
		return 0
	}
	h := int(pct*100 + 0.5)
	return (10000 + (10000 - h) - 1) / (10000 - h)
}

// unmeasuredGate is the problem with a gate on latency percentile name
// that the config does not measure, or "". The default percentiles
// (metric.DefaultPercentiles) are always measured, whatever the
// percentiles key lists: it adds percentiles, and says which the reports
// show, so that narrowing it never turns a gate off.
func (c *Config) unmeasuredGate(name string) string {
	_, p, ok := metric.LatencyPercentile(name)
	if !ok || slices.Contains(metric.DefaultPercentiles, p) {
		return ""
	}
	listed := c.MeasuredPercentiles()
	if slices.Contains(listed, p) {
		return ""
	}
	measured := slices.Concat(metric.DefaultPercentiles, listed)
	metric.SortPercentiles(measured)
	return fmt.Sprintf("%s is not measured: the percentiles measured are %s (add %s to percentiles, or --percentiles)",
		name, strings.Join(slices.Compact(measured), ", "), p)
}
