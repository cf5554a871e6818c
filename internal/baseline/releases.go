package baseline

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
)

// Release against release: the runs the history recorded around two refs
// (tags, commits or dates), compared as a gate compares a pull request with
// its baseline, each run's median a sample; and the change points between
// them, with their commit ranges: a release note's performance section.

// Ref is one side of a release comparison.
type Ref struct {
	// Name is the ref as given (v1.4, a SHA, a date), for messages.
	Name string
	// Commit is a full or abbreviated commit SHA; a run at that commit
	// ends the side. Empty for a date.
	Commit string
	// Until ends the side at the last run at or before it, where no run is
	// at Commit (the ref's commit date, for a tag), or for a date.
	Until time.Time
}

// RunsAt returns scenario's last k runs at ref, oldest first: up to the
// newest run at ref's commit, or else up to the last run at or before
// ref.Until. It is an error when ref names no run.
func RunsAt(entries []Entry, scenario string, ref Ref, k int) ([]Entry, error) {
	var series []Entry
	for _, e := range entries {
		if e.Scenario == scenario {
			series = append(series, e)
		}
	}
	slices.SortStableFunc(series, func(a, b Entry) int { return a.Date.Compare(b.Date) })
	end := -1
	if ref.Commit != "" {
		want := strings.ToLower(ref.Commit)
		for i, e := range series {
			// Either may be abbreviated: a tag resolves to a whole SHA, a
			// history may keep short ones.
			got := strings.ToLower(e.Commit)
			if len(got) >= 7 && (strings.HasPrefix(got, want) || strings.HasPrefix(want, got)) {
				end = i
			}
		}
	}
	if end < 0 && !ref.Until.IsZero() {
		for i, e := range series {
			if !e.Date.After(ref.Until) {
				end = i
			}
		}
	}
	if end < 0 {
		return nil, fmt.Errorf("scenario %s: no run at %s in the history", scenario, ref.Name)
	}
	return series[max(0, end-k+1) : end+1], nil
}

// AsResult is runs (by scenario, oldest first) as a result a gate can
// compare: each run one repetition holding its headline metrics' medians,
// the identity of the newest run. A run that lacks one of them (a line
// from before it was kept) is left out rather than counted as a zero. The samples are the runs' medians, so a
// comparison tests whether the runs around one ref and around the other
// differ, as perfgate gate tests repetitions.
func AsResult(runs map[string][]Entry) *result.Result {
	r := &result.Result{Schema: result.Schema}
	var newest Entry
	for _, name := range slices.Sorted(maps.Keys(runs)) {
		s := result.ScenarioResult{Name: name}
		for _, e := range runs[name] {
			if slices.ContainsFunc(Headline, func(n string) bool { _, ok := e.Metrics[n]; return !ok }) {
				continue
			}
			if e.Date.After(newest.Date) {
				newest = e
			}
			i := len(s.Repetitions)
			m := func(n string) float64 { return e.Metrics[n].Median }
			s.Repetitions = append(s.Repetitions, result.Repetition{Index: i + 1, Sent: 1, Completed: 1,
				TTFT: result.Stats{P50: m("ttft.p50"), P99: m("ttft.p99")}, TPOT: result.Stats{P99: m("tpot.p99")},
				E2E: result.Stats{P99: m("e2e.p99")}, OutputThroughput: m("output_throughput"), Goodput: m("goodput"),
				ErrorRate: m("error_rate"), TokensFrom: "usage"})
		}
		r.Scenarios = append(r.Scenarios, s)
	}
	r.Identity.Server = result.Server{Engine: newest.Engine, Version: newest.Version}
	r.Identity.Target = result.Target{Model: newest.Model, Quantization: newest.Quantization}
	r.FinishedAt = newest.Date
	return r
}

// ChangesBetween are the change points of every scenario's headline
// metrics whose new level starts after from and no later than to: what
// moved between two releases, oldest first.
func ChangesBetween(entries []Entry, from, to time.Time) []Change {
	var out []Change
	for _, scenario := range scenariosOf(entries) {
		for _, name := range Headline {
			m, err := metric.Lookup(name)
			if err != nil {
				continue
			}
			for _, c := range Changes(entries, scenario, m) {
				if c.To.Date.After(from) && !c.To.Date.After(to) {
					out = append(out, c)
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int { return a.To.Date.Compare(b.To.Date) })
	return out
}

// Describe is a change point in a line: the scenario, the metric, the
// levels and the change, better or worse, the commit range and the
// identity change inside it. Every text from the history is cleaned.
func (c Change) Describe() string {
	m, err := metric.Lookup(c.Metric)
	if err != nil {
		return clean(c.Metric, 40)
	}
	plain := func(s string) string { return s }
	s := fmt.Sprintf("%s %s: %s → %s %s (%s, %s), between %s and %s", clean(c.Scenario, 60), m.Name,
		formatValue(m, c.Before), formatValue(m, c.After), m.Unit(), dash(FormatChange(m, c.Before, c.After)),
		verdict(m, c.Before, c.After), at(c.From, plain), at(c.To, plain))
	if len(c.Identity) > 0 {
		s += "; identity: " + strings.Join(c.Identity, ", ")
	}
	return s
}
