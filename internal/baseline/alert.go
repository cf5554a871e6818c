package baseline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/metric"
)

// A nightly run that records its result (perfgate baseline record) can
// raise its hand: when the newest records make a new change point in a
// metric's history, and the new level is worse than the one before by more
// than the metric's gate tolerance, it is a regression of the default
// branch that no pull request's gate caught (a dependency bump, a driver, a
// slow drift). The alert is a function of the history alone: it holds
// while the level it names lasts, and ends when a later change point
// returns the metric to within tolerance of the level before it.

// Change is a change point of one metric of a scenario's history: where a
// new level starts, and the levels' medians on either side.
type Change struct {
	Scenario string `json:"scenario"`
	Metric   string `json:"metric"`
	// Index is the first entry of the new level, in the scenario's entries
	// that have the metric, oldest first.
	Index int `json:"index"`
	// From is the last entry of the old level and To the first of the new:
	// the change came in by a commit after From's, up to To's.
	From Entry `json:"from"`
	To   Entry `json:"to"`
	// Before and After are the medians of the runs' medians of the level
	// before and of the level after (up to the next change point).
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// Identity lists what changed in the server's identity between From and
	// To (engine, version, model, quantisation, GPU, driver): a cause to
	// look at first.
	Identity []string `json:"identity,omitempty"`

	level []float64 // the runs' medians of the new level
}

// Changes returns the change points of metric m in scenario's entries,
// oldest first: ChangePoints over the series of medians in date order, as
// perfgate baseline history marks them.
func Changes(entries []Entry, scenario string, m metric.Info) []Change {
	series := seriesOf(entries, scenario, m.Name)
	medians := make([]float64, len(series))
	for i, e := range series {
		medians[i] = e.Metrics[m.Name].Median
	}
	cps := ChangePoints(medians, historySeed)
	out := make([]Change, 0, len(cps))
	for k, cp := range cps {
		lo, hi := 0, len(medians)
		if k > 0 {
			lo = cps[k-1]
		}
		if k+1 < len(cps) {
			hi = cps[k+1]
		}
		out = append(out, Change{Scenario: scenario, Metric: m.Name, Index: cp, From: series[cp-1], To: series[cp],
			Before: summarize(medians[lo:cp]).Median, After: summarize(medians[cp:hi]).Median,
			Identity: IdentityChanges(series[cp-1], series[cp]), level: medians[cp:hi]})
	}
	return out
}

// seriesOf is scenario's entries that have metric name, in date order.
func seriesOf(entries []Entry, scenario, name string) []Entry {
	var out []Entry
	for _, e := range entries {
		if _, ok := e.Metrics[name]; ok && e.Scenario == scenario {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return a.Date.Compare(b.Date) })
	return out
}

// IdentityChanges says what differs between two entries' identities:
// "engine version 0.9.0 → 0.10.0", each text cut short and cleaned; the
// digest alone when nothing it names differs.
func IdentityChanges(a, b Entry) []string {
	var out []string
	for _, f := range []struct{ name, a, b string }{
		{"engine", a.Engine, b.Engine}, {"engine version", a.Version, b.Version}, {"model", a.Model, b.Model},
		{"quantization", a.Quantization, b.Quantization}, {"GPU", a.GPU, b.GPU}, {"driver", a.Driver, b.Driver},
	} {
		if f.a != f.b {
			out = append(out, fmt.Sprintf("%s %s → %s", f.name, dash(clean(f.a, 60)), dash(clean(f.b, 60))))
		}
	}
	if len(out) == 0 && a.Identity != b.Identity && a.Identity != "" && b.Identity != "" {
		out = append(out, "identity digest changed (the config, the workload or the stack)")
	}
	return out
}

// Worse says whether going from a to b is worse for m beyond tolerance t.
func Worse(m metric.Info, t metric.Tolerance, a, b float64) bool {
	delta := b - a
	if m.HigherIsBetter {
		delta = -delta
	}
	if !(delta > 0) {
		return false
	}
	if t.Relative {
		return a > 0 && delta/a > t.Value || a == 0
	}
	return delta > t.Value
}

// Alert is a regression of the history: a change point to a level worse
// than the one before it beyond the metric's tolerance, whose level has
// not come back within tolerance since.
type Alert struct {
	Change
	// Tolerance is the metric's gate tolerance, as written.
	Tolerance string `json:"tolerance"`
	// New is true when the newest entry made the change point: the history
	// without it does not show this regression.
	New bool `json:"new"`
}

// Title is the alert in a few words, for an issue's title: "chat
// ttft.p99 +15.0%" (points for a share).
func (a Alert) Title() string {
	m, err := metric.Lookup(a.Metric)
	if err != nil {
		return clean(a.Scenario, 60) + " " + clean(a.Metric, 40)
	}
	return clean(a.Scenario, 60) + " " + m.Name + " " + dash(FormatChange(m, a.Before, a.After))
}

// Recovery is a regression that the newest entry ended: the level is back
// within tolerance of the level before the regression.
type Recovery struct {
	Alert
	// Back is the change point that ended it.
	Back Change `json:"back"`
}

// Gate is a metric and its tolerance, what an alert is measured by.
type Gate struct {
	Metric    metric.Info
	Tolerance metric.Tolerance
}

// Alerts is what the history says now: the regressions that hold (Open;
// those the newest entry made are New) and those the newest entry ended.
type Alerts struct {
	Open      []Alert    `json:"open"`
	Recovered []Recovery `json:"recovered"`
}

// AnyNew says whether the newest entry raised an alert.
func (a Alerts) AnyNew() bool {
	return slices.ContainsFunc(a.Open, func(x Alert) bool { return x.New })
}

// FindAlerts returns the alerts of every scenario of entries on each of
// gates (a scenario's gates by its name; metrics the history does not keep
// are skipped). recorded names the scenarios the newest record appended a
// line to (nil: every scenario): for those the history is read with and
// without that line, to tell a regression it raised (New) and one it ended
// (Recovered); any other scenario's open regression is listed as it holds.
func FindAlerts(entries []Entry, gates func(scenario string) []Gate, recorded []string) Alerts {
	var out Alerts
	for _, scenario := range scenariosOf(entries) {
		fresh := recorded == nil || slices.Contains(recorded, scenario)
		for _, g := range gates(scenario) {
			if !slices.Contains(Headline, g.Metric.Name) {
				continue
			}
			all := seriesOf(entries, scenario, g.Metric.Name)
			if len(all) == 0 {
				continue
			}
			now, closedBy := regressionState(Changes(all, scenario, g.Metric), g)
			if !fresh {
				if now != nil {
					out.Open = append(out.Open, *now)
				}
				continue
			}
			before, _ := regressionState(Changes(all[:len(all)-1], scenario, g.Metric), g)
			switch {
			case now != nil:
				// The same metric's regression held last night: not new, even
				// where more runs moved its boundary.
				now.New = before == nil
				out.Open = append(out.Open, *now)
			case before != nil && closedBy != nil:
				out.Recovered = append(out.Recovered, Recovery{Alert: *before, Back: *closedBy})
			case before != nil:
				// The newest run made its change point no longer significant,
				// and no level within tolerance shows yet: it holds.
				out.Open = append(out.Open, *before)
			}
		}
	}
	slices.SortStableFunc(out.Open, func(a, b Alert) int {
		return cmp.Or(strings.Compare(a.Scenario, b.Scenario), strings.Compare(a.Metric, b.Metric))
	})
	return out
}

// regressionState walks a metric's change points in order and returns the
// regression that holds at the end: the first change to a level worse than
// the level before it beyond g's tolerance, unless a later level came back
// within tolerance of that level before it; and, when the last regression
// came back, the change that brought it back. Either needs minSegment runs
// of its level to say so on their own: E-divisive may place a change at
// the history's newest edge with one run of the old level in the new (two
// slow nights and the fast one before them), and two nights of a spike
// are not a level.
func regressionState(changes []Change, g Gate) (open *Alert, closedBy *Change) {
	for _, c := range changes {
		switch {
		case open == nil && Worse(g.Metric, g.Tolerance, c.Before, c.After) &&
			count(c.level, func(x float64) bool { return Worse(g.Metric, g.Tolerance, c.Before, x) }) >= minSegment:
			open, closedBy = &Alert{Change: c, Tolerance: g.Tolerance.Text}, nil
		case open != nil && !Worse(g.Metric, g.Tolerance, open.Before, c.After) &&
			count(c.level, func(x float64) bool { return !Worse(g.Metric, g.Tolerance, open.Before, x) }) >= minSegment:
			open, closedBy = nil, &c // back
		}
	}
	return open, closedBy
}

// count is how many of xs ok holds for.
func count(xs []float64, ok func(float64) bool) int {
	n := 0
	for _, x := range xs {
		if ok(x) {
			n++
		}
	}
	return n
}

// scenariosOf is the scenarios of entries, sorted.
func scenariosOf(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		if !slices.Contains(out, e.Scenario) {
			out = append(out, e.Scenario)
		}
	}
	slices.Sort(out)
	return out
}
