package gate

import (
	"context"
	"fmt"
	"io"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
)

// Measure runs the scenarios, asking more after each repetition whether a
// scenario needs another (session.Options.More), and returns the finished
// result, written where the caller writes it. perfgate gate's is the same
// measurement perfgate run makes.
type Measure func(ctx context.Context, more func(*result.ScenarioResult) bool) (*result.Result, error)

// RunOptions say how a gate runs beyond its config and scenarios.
type RunOptions struct {
	// Store is where the baselines are read from.
	Store baseline.Store
	// AllowMismatch compares even when hardware, workload or load shape
	// differ (--allow-mismatch).
	AllowMismatch bool
	// Log, if set, receives the preflight's warnings (a scenario without a
	// baseline, a tolerance within its baseline's noise) and one line per
	// sequential look; nil is quiet.
	Log io.Writer
	// Measured, if set, is called with the result as soon as it is
	// measured, before it is compared: a summary printed while the verdict
	// is computed.
	Measured func(*result.Result) error
}

// Outcome is a gate's end: the result measured, its verdict and the report
// document made of them.
type Outcome struct {
	Result   *result.Result
	Verdict  *compare.Verdict
	Document *reportfile.Document
	// Warnings are the document's (a chart it could not draw), said, not
	// failed on.
	Warnings []error
}

// Run is perfgate gate as one call: the baselines read and checked against
// the config before anything starts (Prepare, and the detectability
// warnings), the scenarios measured by measure with the sequential looks
// deciding how many repetitions each needs (More), the verdict, and the
// report document. The result is Outcome.Result whatever the verdict; an
// error before it is measured leaves Outcome nil.
func Run(ctx context.Context, cfg *config.Config, scenarios []run.Scenario, measure Measure, o RunOptions) (*Outcome, error) {
	g, err := Prepare(cfg, scenarios, o.Store, o.AllowMismatch)
	if err != nil {
		return nil, err
	}
	if o.Log != nil {
		for _, name := range g.Missing {
			fmt.Fprintf(o.Log, "warning: scenario %s has no baseline in %s: it is measured but not compared\n", name, o.Store.Dir)
		}
		// A tolerance within the baseline's own noise fails an unchanged
		// pull request more often than not: say so before measuring.
		for _, d := range g.Detect(cfg) {
			if d.Warn() {
				fmt.Fprintf(o.Log, "warning: %s: %s\n", d.Unconfirmed(), d.Sentence())
			}
		}
		g.Looks = o.Log
	}
	res, err := measure(ctx, g.More)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Result: res}
	if o.Measured != nil {
		if err := o.Measured(res); err != nil {
			return out, err
		}
	}
	if out.Verdict, err = g.Verdict(res); err != nil {
		return out, err
	}
	out.Document, out.Warnings, err = g.Document(out.Verdict, res)
	return out, err
}
