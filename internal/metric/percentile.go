package metric

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultPercentiles are the latency percentiles measured when a config
// names none (its percentiles key), in report order.
var DefaultPercentiles = []string{"p50", "p90", "p95", "p99", "p99.9"}

// Bounds of a percentile, in hundredths of a percent: p50 to p99.99.
const (
	minHundredths = 5000
	maxHundredths = 9999
)

// ParsePercentile reads a latency percentile as configs, flags and metric
// names write it and returns its value in percent (99.9 for "p99.9").
//
// What is accepted is "p" followed by a whole number from 50 to 99 and at
// most two decimals, written as Go prints the number: p50, p75, p99.9,
// p99.99. Refused, each with an error that says what would be accepted:
// a value under 50 (p49) or of 100 or more (p100: that is the maximum), a
// third decimal (p99.999: a percentile finer than 1 in 10000 requests),
// anything not a number (p9x), and the spellings of an accepted value that
// are not its one name (P99, p99.0, p99.90, p099), so that one percentile
// has one metric name.
func ParsePercentile(s string) (float64, error) {
	h, err := parseHundredths(s)
	if err != nil {
		return 0, err
	}
	return float64(h) / 100, nil
}

// parseHundredths is ParsePercentile in hundredths of a percent (9999 for
// p99.99), exact.
func parseHundredths(s string) (int, error) {
	const want = "want p50 to p99.99, at most two decimals (p75, p99.9, p99.99)"
	num, ok := strings.CutPrefix(s, "p")
	if !ok {
		if lower, ok := strings.CutPrefix(s, "P"); ok && isPercentNumber(lower) {
			return 0, fmt.Errorf("%q is not a percentile: write p%s", s, lower)
		}
		return 0, fmt.Errorf("%q is not a percentile: %s", s, want)
	}
	if !isPercentNumber(num) {
		return 0, fmt.Errorf("%q is not a percentile: %s", s, want)
	}
	whole, frac, _ := strings.Cut(num, ".")
	if len(frac) > 2 {
		return 0, fmt.Errorf("%q has more than two decimals: %s", s, want)
	}
	w, err := strconv.Atoi(whole)
	if err != nil {
		return 0, fmt.Errorf("%q is not a percentile: %s", s, want)
	}
	h := w * 100
	if frac != "" {
		f, err := strconv.Atoi(frac)
		if err != nil {
			return 0, fmt.Errorf("%q is not a percentile: %s", s, want)
		}
		if len(frac) == 1 {
			f *= 10
		}
		h += f
	}
	switch {
	case h >= 10000:
		return 0, fmt.Errorf("%q is not a percentile perfgate measures (p100 is the maximum): %s", s, want)
	case h < minHundredths:
		return 0, fmt.Errorf("%q is below p50: %s", s, want)
	}
	if canon := percentileName(h); canon != s {
		return 0, fmt.Errorf("%q is written %s", s, canon)
	}
	return h, nil
}

// isPercentNumber reports whether s is digits with at most one '.' between
// digits.
func isPercentNumber(s string) bool {
	whole, frac, dot := strings.Cut(s, ".")
	digits := func(x string) bool {
		return x != "" && strings.Trim(x, "0123456789") == ""
	}
	return digits(whole) && (!dot || digits(frac))
}

// percentileName is the one name of a percentile of h hundredths: p99,
// p99.9, p99.99.
func percentileName(h int) string {
	name := fmt.Sprintf("p%d", h/100)
	switch f := h % 100; {
	case f == 0:
	case f%10 == 0:
		name += fmt.Sprintf(".%d", f/10)
	default:
		name += fmt.Sprintf(".%02d", f)
	}
	return name
}

// IsPercentile reports whether s is a latency percentile ParsePercentile
// accepts.
func IsPercentile(s string) bool {
	_, err := parseHundredths(s)
	return err == nil
}

// SortPercentiles sorts valid percentile names by value, ascending; invalid
// names go last, in their order.
func SortPercentiles(names []string) {
	slices.SortStableFunc(names, func(a, b string) int {
		ha, ea := parseHundredths(a)
		hb, eb := parseHundredths(b)
		switch {
		case ea != nil && eb != nil:
			return 0
		case ea != nil:
			return 1
		case eb != nil:
			return -1
		}
		return ha - hb
	})
}

// LatencyFamilies are the latency distributions a percentile can be taken
// of, as metric names begin: ttft, tpot, itl, e2e.
func LatencyFamilies() []string {
	out := make([]string, 0, len(latencyFamilies))
	for _, f := range latencyFamilies {
		out = append(out, f.name)
	}
	return out
}

// LatencyPercentile splits a latency metric's name into its family and its
// percentile ("ttft.p99.99" is ttft, p99.99); ok is false for any other
// metric, the means among them.
func LatencyPercentile(name string) (family, percentile string, ok bool) {
	family, percentile, ok = strings.Cut(name, ".")
	if !ok || !slices.Contains(LatencyFamilies(), family) || !IsPercentile(percentile) {
		return "", "", false
	}
	return family, percentile, true
}

// latencyInfo is the Info of latency statistic stat (a percentile or mean)
// of family f.
func latencyInfo(name, title, stat string) Info {
	return Info{Name: name + "." + stat, Kind: Latency, Title: title + " " + stat, Group: GroupLatency,
		Doc: "client-side " + title + " " + stat + " of a repetition"}
}

// percentileInfo is the Info of a latency percentile outside the default
// catalogue ("ttft.p99.99"); ok is false when name is not one.
func percentileInfo(name string) (Info, bool) {
	family, p, ok := LatencyPercentile(name)
	if !ok {
		return Info{}, false
	}
	for _, f := range latencyFamilies {
		if f.name == family {
			return latencyInfo(f.name, f.title, p), true
		}
	}
	return Info{}, false
}

// AllWith returns every metric, in report order, with each latency family's
// statistics the given percentiles (sorted by value; names ParsePercentile
// refuses are left out) and the mean, in place of DefaultPercentiles: the
// catalogue of a result that measured those percentiles.
func AllWith(percentiles []string) []Info {
	ps := slices.Clone(percentiles)
	ps = slices.DeleteFunc(ps, func(p string) bool { return !IsPercentile(p) })
	SortPercentiles(ps)
	ps = slices.Compact(ps)
	var out []Info
	for _, f := range latencyFamilies {
		for _, st := range slices.Concat(ps, []string{"mean"}) {
			out = append(out, latencyInfo(f.name, f.title, st))
		}
	}
	for _, m := range catalogue {
		if _, _, family := LatencyPercentile(m.Name); family || isFamilyMean(m.Name) {
			continue // listed above, with the result's percentiles
		}
		out = append(out, m)
	}
	return out
}

// isFamilyMean reports whether name is a latency family's mean ("ttft.mean").
func isFamilyMean(name string) bool {
	for _, f := range latencyFamilies {
		if name == f.name+".mean" {
			return true
		}
	}
	return false
}

// MaxPercentiles is the most latency percentiles a list may hold (a
// config's percentiles key, a result's): each is a column of every
// latency table.
const MaxPercentiles = 12

// PercentileError is one problem CheckPercentiles finds in a list of
// percentiles. The message names no field: the caller places it
// (percentiles[2], --percentiles).
type PercentileError struct {
	// Index is the item the problem is with, or -1 for the list as a
	// whole (empty, too long).
	Index int
	// Earlier is, for an item listed twice or out of order, the index of
	// the item it repeats or follows; else -1.
	Earlier int
	// Err says what is wrong.
	Err error
}

func (e *PercentileError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *PercentileError) Unwrap() error { return e.Err }

// CheckPercentiles checks a list of percentile names, as a config's
// percentiles key, the --percentiles flag and a result's percentiles
// write them: at least one, at most MaxPercentiles, each one
// ParsePercentile accepts, none twice, and, where ascending is set, in
// ascending order. Each error is a *PercentileError; an empty or too long
// list is one error alone.
func CheckPercentiles(list []string, ascending bool) []error {
	whole := func(format string, args ...any) []error {
		return []error{&PercentileError{Index: -1, Earlier: -1, Err: fmt.Errorf(format, args...)}}
	}
	switch {
	case len(list) == 0:
		return whole("list at least one percentile (p50 to p99.99), or leave it out for the defaults (%s)", strings.Join(DefaultPercentiles, ", "))
	case len(list) > MaxPercentiles:
		return whole("at most %d percentiles, got %d", MaxPercentiles, len(list))
	}
	var errs []error
	prev := -1 // the last valid item's index
	for i, p := range list {
		h, err := parseHundredths(p)
		switch {
		case err != nil:
			errs = append(errs, &PercentileError{Index: i, Earlier: -1, Err: err})
			continue
		case slices.Index(list, p) < i:
			errs = append(errs, &PercentileError{Index: i, Earlier: slices.Index(list, p), Err: fmt.Errorf("%s is listed twice", p)})
			continue
		}
		if ascending && prev >= 0 {
			if hp, _ := parseHundredths(list[prev]); h < hp {
				errs = append(errs, &PercentileError{Index: i, Earlier: prev,
					Err: fmt.Errorf("want ascending percentiles, got %s after %s", p, list[prev])})
			}
		}
		prev = i
	}
	return errs
}
