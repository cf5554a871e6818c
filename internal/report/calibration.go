package report

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/perfgate/perfgate/internal/compare"
)

// WriteCalibration prints an A/A calibration: per scenario, each gated
// metric's noise between repetitions, the smallest regression the
// configuration detects, the repetitions its tolerance needs, and the false
// alarms among the A/A comparisons.
func WriteCalibration(w io.Writer, c *compare.Calibration) error {
	fmt.Fprintf(w, "A/A calibration: %d results, %d comparisons, alpha %g\n", c.Results, c.Pairs, c.Alpha)
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, s := range c.Scenarios {
		fmt.Fprintf(w, "\nscenario %s · %d repetitions a side · %d gates (Holm's first step at level %.3g)\n",
			clean(s.Name, 80), s.Repetitions, s.Gates, float64(s.Level))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "metric\tmedian\tnoise (CV)\tdetects (80%)\ttolerance\trepetitions needed\tfalse alarms\tinconclusive")
		for _, m := range s.Metrics {
			needed := "-"
			if m.RepetitionsNeeded > 0 {
				needed = fmt.Sprint(m.RepetitionsNeeded)
			}
			fmt.Fprintf(tw, "%s (%s)\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%d/%d\n",
				m.Title, m.Unit, verdictValue(float64(m.Median), m.Unit), calPct(float64(m.CV)), calDetects(float64(m.MinDetectable)),
				m.Tolerance, needed, m.FalseAlarms, c.Pairs, m.Inconclusive, c.Pairs)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nnoise: standard deviation / mean over every repetition of every result. detects: the smallest")
	fmt.Fprintln(w, "regression found 80% of the time with these repetitions. A tolerance below it leaves gates inconclusive;")
	fmt.Fprintln(w, "\"repetitions needed\" is where the tolerance becomes detectable.")
	return nil
}

func calPct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

func calDetects(f float64) string {
	if math.IsInf(f, 1) {
		return "nothing (too few repetitions)"
	}
	return "+" + calPct(f)
}
