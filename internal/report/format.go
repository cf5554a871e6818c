package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"

	"github.com/perfgate/perfgate/internal/metric"
)

// Numbers for people: how the reports write values, changes, intervals and
// p-values. These are perfgate's own figures, the same in every medium; a
// unit beside one is the metric's (untrusted), so a figure with its unit is
// a sentence.

// verdictMaxShown is the most runes of any text from a result (scenario names,
// identity strings, reasons) that a report shows.
const verdictMaxShown = 200

// metricLabel is "TTFT p99 (ms)".
func metricLabel(title, unit string) sentence {
	if unit == "" {
		return untrusted(title)
	}
	return cat(untrusted(title), plain(" ("), untrusted(unit), plain(")"))
}

// withUnit is a figure followed by its unit, if any.
func withUnit(figure, unit string) sentence {
	if unit == "" {
		return plain(figure)
	}
	return cat(plain(figure+" "), untrusted(unit))
}

// changeText is the Hodges-Lehmann change relative to the baseline median
// with its interval ("+31.2% [+25.0%, +38.1%]"); a share's in percentage
// points ("+2.00 [+1.00, +3.00] pts"); when there is no relative change (the
// baseline median is 0), the absolute shift in the metric's unit ("+3.10
// [+1.00, +5.20] ms"). An unbounded interval (too few repetitions, which
// the table's note says) is left out: "+4.3%".
func changeText(g compare.Gate) sentence {
	if g.Tail != nil {
		return tailChange(g.Tail)
	}
	if iv, ok := pointsChange(g); ok {
		if !iv.Estimate.Finite() {
			return plain("—")
		}
		return withUnit(verdictInterval(iv, verdictPoints), pointsUnit)
	}
	if g.Change.Estimate.Finite() {
		return plain(verdictInterval(g.Change, verdictPercent))
	}
	if g.Shift.Estimate.Finite() {
		f, unit := verdictShiftFormat(g.Unit)
		return withUnit(verdictInterval(g.Shift, f), unit)
	}
	return plain("—")
}

// detectableText is the change a gate can tell apart from its own noise
// (compare.Gate.Detectable), in its tolerance's terms and with its bad
// direction's sign: "+6.2%", "-0.8%", "+0.50 pts", "+3.10 ms"; "none"
// when its samples cannot decide at all, "—" when it has none (a tail
// gate, a verdict from before it).
func detectableText(g compare.Gate) sentence {
	if g.Detectable == nil {
		return plain("—")
	}
	d := float64(*g.Detectable)
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return plain("none")
	}
	if g.Better == "higher" {
		d = -d
	}
	switch {
	case g.Unit == shareUnit && !strings.HasSuffix(strings.TrimSpace(g.Tolerance), "%"):
		return withUnit(verdictPoints(100*d), pointsUnit)
	case strings.HasSuffix(strings.TrimSpace(g.Tolerance), "%"):
		return plain(verdictPercent(d))
	}
	f, unit := verdictShiftFormat(g.Unit)
	return withUnit(f(d), unit)
}

// tailChange is a tail gate's change: the candidate's share of requests
// beyond the baseline's pooled percentile, as measured and after the
// tolerance, against the share expected ("4.6% beyond (3.9% adjusted),
// expected 1%").
func tailChange(t *compare.Tail) sentence {
	share := func(n compare.Num) string {
		if !n.Finite() {
			return "—"
		}
		return strconv.FormatFloat(100*float64(n), 'f', 1, 64) + "%"
	}
	return plain(share(t.Share) + " beyond (" + share(t.AdjustedShare) + " adjusted), expected " +
		strconv.FormatFloat(100*float64(t.Expected), 'g', 4, 64) + "%")
}

// changeEstimate is the change without its interval ("+31.2%", "+3.10 ms",
// "+2.00 pts").
func changeEstimate(g compare.Gate) sentence {
	if g.Tail != nil {
		return tailChange(g.Tail)
	}
	if iv, ok := pointsChange(g); ok {
		if !iv.Estimate.Finite() {
			return plain("—")
		}
		return withUnit(verdictPoints(float64(iv.Estimate)), pointsUnit)
	}
	if g.Change.Estimate.Finite() {
		return plain(verdictPercent(float64(g.Change.Estimate)))
	}
	if g.Shift.Estimate.Finite() {
		f, unit := verdictShiftFormat(g.Unit)
		return withUnit(f(float64(g.Shift.Estimate)), unit)
	}
	return plain("—")
}

// telemetryChange is a telemetry row's change from baseline to candidate:
// a share's in percentage points ("+0.50 pts"); any other's relative, in
// percent of the baseline ("+3.1%"), or, from a baseline of 0, the absolute
// shift in the metric's unit ("+2"); "—" unless both sides have a value.
func telemetryChange(r reportfile.TelemetryRow) sentence {
	if r.Baseline == nil || r.Candidate == nil {
		return plain("—")
	}
	b, c := *r.Baseline, *r.Candidate
	switch {
	case !finite(b) || !finite(c):
		return plain("—")
	case r.Unit == shareUnit:
		return withUnit(verdictPoints(100*(c-b)), pointsUnit)
	case b == c:
		return plain("+0.0%")
	case b != 0:
		return plain(verdictPercent((c - b) / math.Abs(b)))
	}
	f, unit := verdictShiftFormat(r.Unit)
	return withUnit(f(c-b), unit)
}

// verdictSummary is a side's median with its interval as a ± percent of it,
// as benchstat prints it ("41.2 ± 3%"); a share's ± in percentage points
// ("2.00% ± 0.50 pts"). With no interval, or an unbounded one (too few
// repetitions, which the table's note says once), the median alone.
func verdictSummary(s compare.Summary, unit string) string {
	if !s.Median.Finite() {
		return "—"
	}
	m := verdictValue(float64(s.Median), unit)
	if !s.Lo.Finite() || !s.Hi.Finite() {
		return m
	}
	return m + " ± " + verdictSpread(float64(s.Median), float64(s.Lo), float64(s.Hi), unit)
}

// verdictSpread is the interval's larger distance from the center: a
// share's in percentage points ("0.70 pts"); otherwise as a percent of the
// center, as benchmath.Summary.PctRangeString writes it ("3%"), or, where a
// percent of the center means nothing (the interval reaches 0 or across
// it), in the metric's own unit ("± 2" preemptions) where benchstat writes
// "± ?".
func verdictSpread(center, lo, hi float64, unit string) string {
	half := math.Max(hi-center, center-lo)
	if unit == shareUnit {
		return fmt.Sprintf("%.2f %s", 100*half, pointsUnit)
	}
	if r := verdictPctRange(center, lo, hi); r != "?" {
		return r
	}
	return verdictValue(half, unit)
}

// verdictPctRange is benchmath.Summary.PctRangeString: the interval's larger
// distance from the center, as a percent of it; "?" where that means
// nothing (an interval that reaches 0 or crosses it).
func verdictPctRange(center, lo, hi float64) string {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return "∞"
	}
	sign := func(x float64) int {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}
	if cs := sign(center); cs != sign(lo) || cs != sign(hi) {
		return "?"
	}
	if center == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", 100*math.Max(hi/center-1, 1-lo/center))
}

// shareUnit is the unit of a share (the error rate, KV-cache use): its
// values are fractions shown as percentages, its changes in points.
const shareUnit = "%"

// pointsUnit is how a change in percentage points is labelled.
const pointsUnit = "pts"

// verdictPoints is a change in percentage points, signed, two decimals
// ("+2.00").
func verdictPoints(x float64) string { return verdictSigned(x, true) }

// pointsChange is a share's change in percentage points, and whether g is a
// share's gate: its ChangePoints, or, in a verdict from before it had them,
// its shift times 100.
func pointsChange(g compare.Gate) (compare.Interval, bool) {
	if g.ChangePoints != nil {
		return *g.ChangePoints, true
	}
	if g.Unit != shareUnit {
		return compare.Interval{}, false
	}
	return compare.Interval{Estimate: 100 * g.Shift.Estimate, Lo: 100 * g.Shift.Lo, Hi: 100 * g.Shift.Hi}, true
}

// verdictShiftFormat is how an absolute change of a metric in unit is shown:
// a fraction's change in percentage points ("+0.50 pts"), a count's as a
// signed number with no unit ("+3"), anything else with a few significant
// figures in its own unit ("+3.10 ms").
func verdictShiftFormat(unit string) (format func(float64) string, shown string) {
	switch unit {
	case shareUnit:
		return func(x float64) string { return verdictPoints(100 * x) }, pointsUnit
	case "count":
		return func(x float64) string {
			if finite(x) && x == math.Trunc(x) {
				return fmt.Sprintf("%+.0f", x)
			}
			return verdictSigned(x, false)
		}, ""
	}
	return func(x float64) string { return verdictSigned(x, false) }, unit
}

// verdictInterval is an estimate with its interval, "+31.2% [+25.0%,
// +38.1%]", each figure written by f; the estimate alone where the
// interval is missing or unbounded (too few repetitions for one: the
// table's note says so once, not "[-∞, +∞]" in every row).
func verdictInterval(iv compare.Interval, f func(float64) string) string {
	s := f(float64(iv.Estimate))
	if !iv.Lo.Finite() || !iv.Hi.Finite() {
		return s
	}
	return s + " [" + f(float64(iv.Lo)) + ", " + f(float64(iv.Hi)) + "]"
}

// verdictPercent is a relative change as a signed percent with one decimal.
func verdictPercent(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return verdictSigned(x, false)
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

// verdictSigned is x with an explicit sign: two decimals when points, else a few
// significant figures.
func verdictSigned(x float64, points bool) string {
	switch {
	case math.IsNaN(x):
		return "?"
	case math.IsInf(x, 1):
		return "+∞"
	case math.IsInf(x, -1):
		return "-∞"
	case points:
		return fmt.Sprintf("%+.2f", x)
	case x < 0:
		return "-" + verdictSigFigs(-x)
	}
	return "+" + verdictSigFigs(x)
}

// verdictValue is one value of a metric for people: a few significant figures
// (71234 MiB, 0.0352 $/Mtok), a fraction as a percent, a whole count as a
// whole number.
func verdictValue(x float64, unit string) string {
	switch {
	case !finite(x):
	case unit == "%":
		return fmt.Sprintf("%.2f%%", 100*x)
	case unit == "count" && x == math.Trunc(x):
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return verdictSigFigs(x)
}

func verdictValues(xs []compare.Num, unit string) string {
	if len(xs) == 0 {
		return "—"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = verdictValue(float64(x), unit)
	}
	return strings.Join(parts, ", ")
}

// verdictNotGatedValues is "baseline 3239 · candidate 3401, 3390", the
// first side named base.
func verdictNotGatedValues(ng compare.NotGated, base string) string {
	return base + " " + verdictValues(ng.Baseline, ng.Unit) + " · candidate " + verdictValues(ng.Candidate, ng.Unit)
}

// verdictSigFigs is metric.SigFigs.
func verdictSigFigs(x float64) string { return metric.SigFigs(x) }

// verdictPString is the adjusted p-value as the table shows it ("p=0.002").
func verdictPString(p compare.Num) string {
	if !p.Finite() {
		return "—"
	}
	if p < 0.001 {
		return "p<0.001"
	}
	return "p=" + verdictP(float64(p))
}

func verdictP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

func verdictLevel(l float64) string { return strconv.FormatFloat(l, 'g', 3, 64) }

func verdictConfidence(c float64) string { return fmt.Sprintf("%.1f%%", 100*c) }

// number formats a Num with f, or "—" when it is not a number.
func verdictNumber(n compare.Num, f func(float64) string) string {
	if !n.Finite() {
		return "—"
	}
	return f(float64(n))
}

// verdictCount is "1 gate", "3 gates".
func verdictCount(n int, noun string) string { return strconv.Itoa(n) + " " + noun + plural(n) }

// qualityAccuracy is "90.0% (180/200)".
func qualityAccuracy(a compare.Accuracy) string {
	if a.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(a.Rate.Estimate), a.Pass, a.N)
}

// qualityRate is a mean as a percent with its interval: "90.0% [85.1, 93.4]".
func qualityRate(iv compare.Interval) string {
	if !iv.Estimate.Finite() {
		return "—"
	}
	s := fmt.Sprintf("%.1f%%", 100*float64(iv.Estimate))
	if iv.Lo.Finite() && iv.Hi.Finite() {
		s += fmt.Sprintf(" [%.1f, %.1f]", 100*float64(iv.Lo), 100*float64(iv.Hi))
	}
	return s
}

// qualityChange is a change in points with its interval: "-30.0 [-36.2, -23.8] points".
func qualityChange(iv compare.Interval) string {
	pts := func(x compare.Num) string {
		v := float64(x)
		switch {
		case math.IsNaN(v):
			return "?"
		case math.IsInf(v, 0):
			return verdictSigned(v, false)
		}
		return fmt.Sprintf("%+.1f", 100*v)
	}
	if !iv.Estimate.Finite() {
		return "—"
	}
	return pts(iv.Estimate) + " [" + pts(iv.Lo) + ", " + pts(iv.Hi) + "] points"
}

// qualityDrift is the output drift line; whose is the side compared
// against, possessive ("the baseline's").
func qualityDrift(q compare.Suite, whose string) string {
	if q.N == 0 {
		return "output drift: no items compared"
	}
	s := fmt.Sprintf("outputs identical to %s: %d of %d (%s)", whose, q.Drift.Identical, q.N, qualityRate(q.Drift.Share))
	if q.Drift.Differ > 0 {
		s += fmt.Sprintf("; where they differ, the first difference is at character %d, word %d (medians)",
			q.Drift.FirstDiffChar, q.Drift.FirstDiffWord)
	}
	return s
}

// qualityChangeEstimate is "-30.0 points".
func qualityChangeEstimate(g compare.QualityGate) string {
	if !g.Change.Estimate.Finite() {
		return "—"
	}
	return fmt.Sprintf("%+.1f points", 100*float64(g.Change.Estimate))
}

// telemetryValue is a row's median on one side as the tables show it; "—"
// when that side has none.
func telemetryValue(v *float64, unit string) string {
	if v == nil {
		return "—"
	}
	return verdictValue(*v, unit)
}

// mermaidNumber is a chart value: at most 4 significant digits, no exponent.
func mermaidNumber(x float64) string {
	return strconv.FormatFloat(roundSig(x, 4), 'f', -1, 64)
}

// roundSig rounds x to n significant digits.
func roundSig(x float64, n int) float64 {
	if x == 0 || !finite(x) {
		return x
	}
	scale := math.Pow(10, float64(n-1)-math.Floor(math.Log10(math.Abs(x))))
	if r := math.Round(x*scale) / scale; finite(r) && scale > 0 && finite(scale) {
		return r
	}
	// Near the floats' ends (subnormals: scale is +Inf; x*scale past
	// the largest float) the scaled value is not finite: round in
	// decimal instead.
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', n, 64), 64)
	if err != nil || !finite(r) {
		return x
	}
	return r
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// shortCommit is a commit's first 7 characters.
func shortCommit(c string) string {
	if len(c) > 7 {
		return c[:7]
	}
	return c
}

// verdictPrinter writes lines, keeping the first error.
type verdictPrinter struct {
	w   io.Writer
	err error
}

func (p *verdictPrinter) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.w.Write(b)
	p.err = err
	return n, err
}

func (p *verdictPrinter) printf(format string, args ...any) { fmt.Fprintf(p, format, args...) }

func (p *verdictPrinter) println(args ...any) { fmt.Fprintln(p, args...) }

func (p *verdictPrinter) print(s string) { _, _ = io.WriteString(p, s) }
