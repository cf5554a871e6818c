package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/capacity"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// The view of load sweeps and capacity searches: a swept scenario as one
// section with a table of its points and its curves, before the points
// (which keep a section of their own only when gated); a capacity
// scenario's search as a table of both sides' capacities, the probes in a
// fold, and a chart of the probes' margins.

// sweepOf is the sweep of d that scenario name is a point of, or nil.
func sweepOf(d *reportfile.Document, name string) *reportfile.SweepData {
	for i := range d.Sweeps {
		for _, p := range d.Sweeps[i].Points {
			if p.Scenario == name {
				return &d.Sweeps[i]
			}
		}
	}
	return nil
}

// pointShown reports whether sweep point s gets a section of its own: only
// when something was gated on it. The sweep's table has its figures.
func pointShown(s *compare.Scenario) bool {
	return len(s.Gates) > 0 || len(s.Quality) > 0
}

// sweepParam is what a sweep varies and the unit of its values, as
// perfgate names them: rate in req/s or concurrency in users. A report
// file is untrusted, so its own words for them are not shown: any other
// param is "load", with no unit.
func sweepParam(sw *reportfile.SweepData) (param, unit string) {
	if u, ok := reportfile.SweepUnit(sw.Param); ok {
		return sw.Param, u
	}
	return "load", ""
}

// sweepRange is "rate 25…150 req/s · 4 points".
func sweepRange(sw *reportfile.SweepData) string {
	if len(sw.Points) == 0 {
		return "no points"
	}
	param, unit := sweepParam(sw)
	lo, hi := sw.Points[0].Value, sw.Points[len(sw.Points)-1].Value
	return strings.TrimSpace(fmt.Sprintf("%s %s…%s %s", param, loadText(lo), loadText(hi), unit)) + " · " + verdictCount(len(sw.Points), "point")
}

// loadText is a load (a rate in req/s or a concurrency in users) as every
// view of perfgate writes it, the terminal summary, the report and the
// frontier alike: whole from 100 up and when whole, else to 3 significant
// digits, with thousands grouped: 1,280, 148, 56.6, 0.707; "—" when not
// finite.
func loadText(x float64) string {
	if !finite(x) {
		return "—"
	}
	if math.Abs(x) >= 100 || x == math.Trunc(x) {
		return grouped(x, 0)
	}
	return strconv.FormatFloat(roundSig(x, 3), 'f', -1, 64)
}

// loadWithUnit is a load with its unit: "25 req/s", "4 users", "1 user".
func loadWithUnit(x float64, unit string) string {
	if unit == "users" && x == 1 {
		return "1 user"
	}
	return strings.TrimSpace(loadText(x) + " " + unit)
}

// sweepSection is a swept scenario: a table of its points (each figure
// baseline → candidate), the warnings of the points shown in no section of
// their own, mermaid charts of TTFT and TPOT p99 against the offered load
// for markdown, and latency-throughput curves for HTML.
func sweepSection(sw *reportfile.SweepData, v *compare.Verdict, names sides) *section {
	sec := &section{Label: "Sweep", Name: sw.Of, Facts: sweepRange(sw)}
	t := &table{Kind: "sweep", Columns: []column{
		{Title: "point"},
		{Title: "offered", Kind: colNumber},
		{Title: "achieved req/s", Kind: colNumber},
		{Title: "output tok/s", Kind: colNumber},
		{Title: "TTFT p99 (ms)", Kind: colNumber},
		{Title: "TPOT p99 (ms)", Kind: colNumber},
	}}
	figure := func(p reportfile.SweepPointData, f func(*reportfile.PointStats) float64) string {
		c := "—"
		if p.Candidate != nil {
			c = verdictValue(f(p.Candidate), "")
		}
		if p.Baseline == nil {
			return c
		}
		return verdictValue(f(p.Baseline), "") + " → " + c
	}
	var n noteSet
	_, unit := sweepParam(sw)
	for _, p := range sw.Points {
		t.Rows = append(t.Rows, row{Cells: []cell{
			textCell(untrusted(p.Scenario)),
			plainCell(loadWithUnit(p.Value, unit)),
			plainCell(figure(p, func(s *reportfile.PointStats) float64 { return s.RequestRate })),
			plainCell(figure(p, func(s *reportfile.PointStats) float64 { return s.OutputThroughput })),
			plainCell(figure(p, func(s *reportfile.PointStats) float64 { return s.TTFTP99 })),
			plainCell(figure(p, func(s *reportfile.PointStats) float64 { return s.TPOTP99 })),
		}})
		for _, s := range v.Scenarios {
			if s.Name == p.Scenario && !pointShown(&s) {
				for _, w := range s.Warnings {
					n.add(p.Scenario, untrusted(w))
				}
			}
		}
	}
	sec.Blocks = append(sec.Blocks, block{Table: t})
	if items := n.items(); len(items) > 0 {
		sec.Blocks = append(sec.Blocks, block{Drop: detailTables, List: &list{Kind: "notes", Items: items}})
	}
	md := &chartGroup{Title: cat(plain("Charts: "), untrusted(sw.Of))}
	curves := &chartGroup{Title: plain("Latency against throughput"),
		Facts: "each point an offered load: the medians of its repetitions; solid p99, dashed p50; latency on a log scale"}
	for _, m := range sweepMetrics {
		if c, ok := sweepChart(sw, m, names); ok {
			md.Charts = append(md.Charts, c)
		}
		if c, ok := curveChart(sw, m, names); ok {
			curves.Charts = append(curves.Charts, c)
		}
	}
	if len(md.Charts) > 0 {
		sec.Blocks = append(sec.Blocks, block{Media: mediumMarkdown, Drop: detailNoCharts, Charts: md})
	}
	if len(curves.Charts) > 0 {
		sec.Blocks = append(sec.Blocks, block{Media: mediumHTML, Charts: curves})
	}
	return sec
}

// sweepMetric is a latency a sweep charts: its title and its p50 and p99.
type sweepMetric struct {
	metric, title string
	p50, p99      func(*reportfile.PointStats) float64
}

// sweepMetrics are the latencies a sweep charts.
var sweepMetrics = []sweepMetric{
	{"ttft", "TTFT", func(s *reportfile.PointStats) float64 { return s.TTFTP50 }, func(s *reportfile.PointStats) float64 { return s.TTFTP99 }},
	{"tpot", "TPOT", func(s *reportfile.PointStats) float64 { return s.TPOTP50 }, func(s *reportfile.PointStats) float64 { return s.TPOTP99 }},
}

// sweepChart is a sweep's p99 of m against the offered load, for markdown:
// the baseline as bars, the candidate as a line. Mermaid's xychart has a
// categorical x axis only, so the offered loads are its categories, evenly
// spaced whatever their values, and it cannot put the achieved throughput
// on x as the HTML's curves do. false when the candidate lacks a point
// (the baseline is left out when it does).
func sweepChart(sw *reportfile.SweepData, m sweepMetric, names sides) (*chart, bool) {
	c := &chart{Kind: "sweep", Scenario: sw.Of, Metric: m.metric + ".p99",
		YTitle: plain(m.title + " p99 (ms)")}
	base := series{Label: names.Base, Role: "baseline"}
	cand := series{Label: "candidate", Role: "candidate"}
	hasBase := true
	for i, p := range sw.Points {
		if p.Candidate == nil || !finite(m.p99(p.Candidate)) {
			return nil, false
		}
		c.Labels = append(c.Labels, []string{loadText(p.Value)})
		cand.Points = append(cand.Points, point{compare.Num(i), compare.Num(m.p99(p.Candidate))})
		if p.Baseline == nil || !finite(m.p99(p.Baseline)) {
			hasBase = false
			continue
		}
		base.Points = append(base.Points, point{compare.Num(i), compare.Num(m.p99(p.Baseline))})
	}
	if len(c.Labels) == 0 {
		return nil, false
	}
	param, unit := sweepParam(sw)
	by := fmt.Sprintf(" p99 (ms) by offered %s: ", param)
	if unit != "" {
		by = fmt.Sprintf(" p99 (ms) by offered %s (%s): ", param, unit)
	}
	c.Title = plain(m.title + by + "candidate line")
	if hasBase {
		c.Title = plain(m.title + by + names.Base + " bars, candidate line")
		c.Series = append(c.Series, base)
	}
	c.Series = append(c.Series, cand)
	setAxis(c, axisZero) // bars: their length is their value
	return c, true
}

// curveChart is a sweep's latency m against its achieved output
// throughput, for HTML: each side's p99 (solid) and p50 (dashed), point i
// of every series the offered load labelled i; a side's missing point is
// NaN. false when no side has a point.
func curveChart(sw *reportfile.SweepData, m sweepMetric, names sides) (*chart, bool) {
	param, unit := sweepParam(sw)
	c := &chart{Kind: "curve", Scenario: sw.Of, Metric: m.metric, Title: plain(m.title + " against output throughput"),
		Subtitle: "each point an offered " + param + "; solid p99, dashed p50",
		XTitle:   "output tok/s (achieved)", YTitle: plain(m.title + " (ms, log scale)")}
	for _, p := range sw.Points {
		c.Labels = append(c.Labels, []string{loadWithUnit(p.Value, unit)})
	}
	nan := compare.Num(math.NaN())
	any := false
	for _, side := range []struct {
		label, role string
		of          func(reportfile.SweepPointData) *reportfile.PointStats
	}{
		{names.Base, "baseline", func(p reportfile.SweepPointData) *reportfile.PointStats { return p.Baseline }},
		{"candidate", "candidate", func(p reportfile.SweepPointData) *reportfile.PointStats { return p.Candidate }},
	} {
		p99 := series{Label: side.label + " p99", Role: side.role}
		p50 := series{Label: side.label + " p50", Role: side.role + "-p50"}
		found := false
		for _, p := range sw.Points {
			s := side.of(p)
			if s == nil || !(s.OutputThroughput > 0) || !finite(s.OutputThroughput) {
				p99.Points = append(p99.Points, point{nan, nan})
				p50.Points = append(p50.Points, point{nan, nan})
				continue
			}
			x := compare.Num(s.OutputThroughput)
			p99.Points = append(p99.Points, point{x, positive(m.p99(s))})
			p50.Points = append(p50.Points, point{x, positive(m.p50(s))})
			found = true
		}
		if found {
			c.Series = append(c.Series, p99, p50)
			any = true
		}
	}
	return c, any
}

// positive is x where a log axis can place it, else NaN.
func positive(x float64) compare.Num {
	if x > 0 && finite(x) {
		return compare.Num(x)
	}
	return compare.Num(math.NaN())
}

// capacityUnit is the unit of a search's loads.
func capacityUnit(search result.CapacitySearch) string {
	switch search.Metric {
	case "concurrency":
		return "users"
	case result.HeadroomContext:
		return "tokens"
	}
	return "req/s"
}

// searchNoun names what a search found: "headroom" for a headroom
// search, else "capacity".
func searchNoun(search result.CapacitySearch) string {
	if search.Headroom != nil {
		return "headroom"
	}
	return "capacity"
}

// headroomText is what a headroom search held fixed and its limits:
// "at 16 users, 128 output tokens a request; no failure, no cut answer, at
// most 0 preemptions, KV cache at most 95%".
func headroomText(search result.CapacitySearch) string {
	h := search.Headroom
	fixed := fmt.Sprintf("at %s", verdictCount(h.Users, "user"))
	if h.Users == 0 {
		fixed = fmt.Sprintf("at %s tokens a user", grouped(float64(h.Context), 0))
	}
	limits := fmt.Sprintf("no failed request, no cut answer, at most %s preemptions a repetition", loadText(h.MaxPreemptions))
	if h.MaxPreemptions == 0 {
		limits = "no failed request, no cut answer, no preemption"
	}
	if h.MaxKVCache > 0 {
		limits += ", KV cache at most " + verdictPercentOf(h.MaxKVCache)
	}
	return fmt.Sprintf("%s, %d output tokens a request; %s", fixed, h.OutputTokens, limits)
}

// capacitySide is one side of a capacity scenario.
type capacitySide struct {
	label, role string
	c           *result.Capacity
	gate        compare.Summary
	gated       bool
}

// capacitySides are the sides of cd that searched, baseline first, each
// with its capacity gate's summary of the samples when a gate tested them.
func capacitySides(s *compare.Scenario, cd *reportfile.CapacityData, names sides) []capacitySide {
	var out []capacitySide
	var gate *compare.Gate
	for i := range s.Gates {
		if s.Gates[i].Metric == "capacity" || s.Gates[i].Metric == "headroom" {
			gate = &s.Gates[i]
		}
	}
	for _, side := range []capacitySide{{label: names.Base, role: "baseline", c: cd.Baseline}, {label: "candidate", role: "candidate", c: cd.Candidate}} {
		if side.c == nil {
			continue
		}
		if gate != nil {
			side.gated = true
			side.gate = gate.Baseline
			if side.role == "candidate" {
				side.gate = gate.Candidate
			}
		}
		out = append(out, side)
	}
	return out
}

// capacityBlocks are a capacity scenario's search on both sides: what was
// searched, a table of each side's capacity, its warnings, a chart of the
// probes (HTML) and a fold with every probe.
func capacityBlocks(s *compare.Scenario, cd *reportfile.CapacityData, names sides) []block {
	sidesList := capacitySides(s, cd, names)
	if len(sidesList) == 0 {
		return nil
	}
	search := sidesList[len(sidesList)-1].c.Search
	unit, noun := capacityUnit(search), searchNoun(search)
	samplesTitle, samplesLong := "samples' median (req/s)", "samples' median (req/s) [95% interval]: the capacity gate's samples, achieved request rates"
	if search.Headroom != nil {
		samplesTitle = "samples' median (" + unit + ")"
		samplesLong = "samples' median (" + unit + ") [95% interval]: the headroom gate's samples, one crossing a repetition"
	}
	t := &table{Kind: "capacity", Columns: []column{
		{Title: "side"},
		{Title: noun, Long: noun + " [holds, breaks)", Kind: colNumber},
		{Title: samplesTitle, Long: samplesLong, Kind: colNumber},
		{Title: "output tok/s", Kind: colNumber},
		{Title: "$/Mtok", Kind: colNumber},
		{Title: "TTFT / TPOT p99 (ms)", Long: "TTFT / TPOT p99 at capacity (ms)", Kind: colNumber},
		{Title: "probes", Long: "probes used of the budget", Kind: colNumber},
		{Title: "outcome"},
	}}
	var warnings noteSet
	for _, side := range sidesList {
		c := side.c
		samples := cell{Kind: cellSummary, Summary: side.gate, Unit: unit}
		if !side.gated {
			var xs []float64
			for _, smp := range c.Samples {
				if c.Search.Headroom != nil {
					xs = append(xs, smp.Load)
				} else {
					xs = append(xs, smp.RequestRate)
				}
			}
			samples = plainCell(verdictValue(stat.FiniteMedian(xs), ""))
		}
		cost := "—"
		if c.CostPerMTok != nil {
			cost = verdictValue(*c.CostPerMTok, "")
		}
		t.Rows = append(t.Rows, row{Cells: []cell{
			plainCell(side.label),
			plainCell(capacityInterval(c, unit)),
			samples,
			plainCell(verdictValue(c.OutputThroughput, "")),
			plainCell(cost),
			plainCell(capacityLatency(c)),
			plainCell(probesText(c)),
			textCell(capacityOutcome(c, unit)),
		}})
		if c.Boundary != "" {
			warnings.add(side.label, cat(plain("where it stopped holding: "), untrusted(c.Boundary)))
		}
		for _, w := range c.Warnings {
			warnings.add(side.label, untrusted(w))
		}
		if side.gated && unboundedSummary(side.gate) {
			warnings.add(side.label, plain(fmt.Sprintf("too few repetitions for a %s interval of the samples' median: one needs >= %d; the median is shown without one",
				percentOf(compare.MedianConfidence), compare.MedianIntervalNeeds())))
		}
	}
	out := []block{
		{Drop: detailTables, Para: &para{Text: capacitySearchText(sidesList[len(sidesList)-1].c.Search, unit), Aside: true}},
		{Table: t},
	}
	if items := warnings.items(); len(items) > 0 {
		out = append(out, block{Drop: detailTables, List: &list{Kind: "warnings", Items: items}})
	}
	facts := "each probe's worst SLO statistic over its limit: held filled, broken hollow; shaded, each side's [holds, breaks)"
	if search.Headroom != nil {
		facts = "each probe: held filled, broken hollow (by a failed request, a cut answer, users waiting for room, a preemption, a crash or an SLO); shaded, each side's [holds, breaks)"
	}
	out = append(out,
		block{Media: mediumHTML, Charts: &chartGroup{Title: plain(upperFirst(noun) + " search"),
			Facts:  facts,
			Charts: []*chart{capacityChart(s.Name, sidesList, unit)}}},
		block{Media: mediumMarkdown | mediumHTML, Drop: detailNoDetails, Fold: &fold{Summary: plain(upperFirst(noun) + " probes"), Collapse: true,
			Blocks: []block{{Table: probesTable(sidesList, unit)}}}},
	)
	return out
}

// capacityInterval is a search's capacity as the summary and the report
// write it: "128.8 req/s [128.8, 134.5)" (rounded by loadText), or the
// bound a search that did not bracket it found: "< 10 req/s", "≥ 640
// req/s", and "not found (no probe held)" when nothing held and nothing
// bounds it from above (perfgate fell behind before any probe held).
func capacityInterval(c *result.Capacity, unit string) string {
	v := func(x float64) string { return loadWithUnit(x, unit) }
	switch {
	case c.Outcome == result.CapacityBelowMin || c.Holds <= 0 && c.Breaks > 0:
		return "< " + v(c.Breaks)
	case c.Holds <= 0:
		return "not found (no probe held)"
	case c.Outcome == result.CapacityAboveMax || c.Outcome == result.CapacityClientLimited || c.Breaks <= 0:
		return "≥ " + v(c.Holds)
	}
	return fmt.Sprintf("%s [%s, %s)", v(c.Holds), loadText(c.Holds), loadText(c.Breaks))
}

// capacityLatency is the medians of TTFT and TPOT p99 over the capacity
// point's repetitions: "11.2 / 2.9".
func capacityLatency(c *result.Capacity) string {
	if c.At < 0 || c.At >= len(c.Probes) || len(c.Probes[c.At].Repetitions) == 0 {
		return "—"
	}
	var ttft, tpot []float64
	for _, r := range c.Probes[c.At].Repetitions {
		ttft, tpot = append(ttft, r.TTFT.P99), append(tpot, r.TPOT.P99)
	}
	return verdictValue(stat.FiniteMedian(ttft), "") + " / " + verdictValue(stat.FiniteMedian(tpot), "")
}

// capacityOutcome says how a search ended, in words: the one wording of
// the report's outcome column and of the terminal summary's outcome line
// (capacityOutcomeText), an outcome perfgate does not write shown as the
// untrusted text it is.
func capacityOutcome(c *result.Capacity, unit string) sentence {
	text, known := capacityOutcomeText(c, unit)
	if !known {
		return untrusted(text)
	}
	return plain(text)
}

// capacityOutcomeText says how a search ended, in words; known is false
// for an outcome perfgate does not write, returned as it was read: the
// caller must sanitise it (untrusted, clean).
func capacityOutcomeText(c *result.Capacity, unit string) (text string, known bool) {
	v := func(x float64) string { return loadText(x) + " " + unit }
	res := verdictPercentOf(c.Search.Resolution)
	if c.Search.Headroom != nil {
		switch c.Outcome {
		case result.CapacityBelowMin:
			return fmt.Sprintf("nothing held at the lowest probe, %s: the headroom is below it (lower headroom.min to find it)", v(c.Breaks)), true
		case result.CapacityAboveMax:
			return fmt.Sprintf("everything held at the highest probe, %s: the headroom is at least that (raise headroom.max to find it)", v(c.Holds)), true
		}
	}
	switch c.Outcome {
	case result.CapacityBracketed:
		return "bracketed to " + res, true
	case result.CapacityBelowMin:
		return fmt.Sprintf("SLO broken at the lowest load, %s: the capacity is below it (lower capacity.min to find it)", v(c.Breaks)), true
	case result.CapacityAboveMax:
		return fmt.Sprintf("SLO held at the highest load, %s: the capacity is at least that (raise capacity.max to find it)", v(c.Holds)), true
	case result.CapacityBudget:
		spent := fmt.Sprintf("the budget of %s ran out before the interval narrowed to %s", verdictCount(c.Search.Budget, "probe"), res)
		switch {
		case c.Holds <= 0:
			return spent + ": no probe held, the capacity is below " + v(c.Breaks), true
		case c.Breaks <= 0:
			return spent + ": no probe broke, the capacity is at least " + v(c.Holds), true
		}
		return spent + ": the capacity is in the interval reached", true
	case result.CapacityClientLimited:
		fell := v(clientLimitedAt(c))
		if c.Holds <= 0 {
			return fmt.Sprintf("no probe held before perfgate fell behind its schedule at %s (an open loop with no max_in_flight cap): the capacity was not found, and the server was not shown to break", fell), true
		}
		return fmt.Sprintf("perfgate fell behind its schedule at %s (an open loop with no max_in_flight cap): the capacity is at least %s, and the server was not shown to break", fell, v(c.Holds)), true
	}
	return c.Outcome, false
}

// clientLimitedAt is the load at which a client_limited search's open
// loop fell behind: the search stops at that probe, so it is the last
// probe of the search proper (closing probes, which come after, aside);
// NaN when the search made none.
func clientLimitedAt(c *result.Capacity) float64 {
	for i := len(c.Probes) - 1; i >= 0; i-- {
		if c.Probes[i].Phase != capacity.PhaseClose {
			return c.Probes[i].Load
		}
	}
	return math.NaN()
}

// probesText is how many probes a search made against its budget, the
// closing probes (made beyond the budget) counted apart: "6 of 8 probes",
// "8 of 8 probes + 2 closing".
func probesText(c *result.Capacity) string {
	closing := 0
	for _, p := range c.Probes {
		if p.Phase == capacity.PhaseClose {
			closing++
		}
	}
	s := fmt.Sprintf("%d of %s", len(c.Probes)-closing, verdictCount(c.Search.Budget, "probe"))
	if closing > 0 {
		s += fmt.Sprintf(" + %d closing", closing)
	}
	return s
}

// verdictPercentOf is a fraction as a whole percent: 5%.
func verdictPercentOf(x float64) string {
	return strconv.FormatFloat(roundSig(100*x, 3), 'f', -1, 64) + "%"
}

// capacitySearchText is what a search looked for: "SLO tpot.p99 ≤ 3 ms,
// ttft.p99 ≤ 25 ms · holds: every · 5 repetitions a probe · 10 to 640
// req/s, to 5%".
func capacitySearchText(search result.CapacitySearch, unit string) sentence {
	keys := make([]string, 0, len(search.SLO))
	for k := range search.SLO {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var slo []sentence
	for _, k := range keys {
		slo = append(slo, cat(untrusted(k), plain(" ≤ "+loadText(search.SLO[k])+" ms")))
	}
	rule := cat(plain("holds: "), untrusted(search.Rule))
	if search.Confidence > 0 {
		rule = cat(rule, plain(" at "+verdictPercentOf(search.Confidence)))
	}
	if search.Headroom != nil {
		lead := plain(headroomText(search))
		if len(slo) > 0 {
			lead = cat(lead, plain(" · SLO "), join(", ", slo...))
		}
		return cat(lead, plain(" · "), rule,
			plain(fmt.Sprintf(" · %s a probe · %s to %s %s, to %s", verdictCount(search.Repetitions, "repetition"),
				loadText(search.Min), loadText(search.Max), unit, verdictPercentOf(search.Resolution))))
	}
	return cat(plain("SLO "), join(", ", slo...), plain(" · "), rule,
		plain(fmt.Sprintf(" · %s a probe · %s to %s %s, to %s", verdictCount(search.Repetitions, "repetition"),
			loadText(search.Min), loadText(search.Max), unit, verdictPercentOf(search.Resolution))))
}

// worstMargin is a probe's largest margin and the statistic it is of;
// NaN when it has none.
func worstMargin(p *result.CapacityProbe) (float64, string) {
	worst, of := math.NaN(), ""
	keys := make([]string, 0, len(p.Margin))
	for k := range p.Margin {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if m := p.Margin[k]; finite(m) && (math.IsNaN(worst) || m > worst) {
			worst, of = m, k
		}
	}
	return worst, of
}

// probePeaks are a headroom probe's telemetry in the probes table: the
// engine's KV-cache peak (%) and preemptions, and the GPUs' memory peak
// (MiB), each the most over the probe's repetitions; "—" where no
// repetition measured it.
func probePeaks(p *result.CapacityProbe) (kv, preemptions, memory string) {
	most := func(get func(r *result.Repetition) *float64) float64 {
		m := math.NaN()
		for i := range p.Repetitions {
			if v := get(&p.Repetitions[i]); v != nil && finite(*v) && (math.IsNaN(m) || *v > m) {
				m = *v
			}
		}
		return m
	}
	text := func(x float64, format string) string {
		if math.IsNaN(x) {
			return "—"
		}
		return fmt.Sprintf(format, x)
	}
	k := most(func(r *result.Repetition) *float64 {
		if r.Engine == nil {
			return nil
		}
		return r.Engine.KVCachePeak
	})
	pr := most(func(r *result.Repetition) *float64 {
		if r.Engine == nil {
			return nil
		}
		return r.Engine.Preemptions
	})
	mem := most(func(r *result.Repetition) *float64 {
		if r.GPU == nil {
			return nil
		}
		return &r.GPU.MemoryPeakMiB
	})
	return text(100*k, "%.1f"), text(pr, "%.0f"), text(mem, "%.0f")
}

// probesTable is every probe of each side, in the order made.
func probesTable(sidesList []capacitySide, unit string) *table {
	t := &table{Kind: "probes", Columns: []column{
		{Title: "side"},
		{Title: "probe", Kind: colNumber},
		{Title: "phase"},
		{Title: "load", Long: "load (" + unit + ")", Kind: colNumber},
		{Title: "verdict"},
		{Title: "worst margin", Long: "worst margin (statistic ÷ SLO)", Kind: colNumber},
		{Title: "broken", Long: "broken repetitions", Kind: colNumber},
	}}
	// A headroom search's probes break on its limits too: say which.
	whys := false
	for _, side := range sidesList {
		whys = whys || side.c.Search.Headroom != nil
	}
	if whys {
		t.Columns = append(t.Columns,
			column{Title: "KV peak", Long: "the engine's KV-cache peak (%), highest over the probe's repetitions", Kind: colNumber},
			column{Title: "preemptions", Long: "the engine's preemptions, most in a repetition", Kind: colNumber},
			column{Title: "GPU mem (MiB)", Long: "GPU memory peak (MiB), highest over the probe's repetitions", Kind: colNumber},
			column{Title: "why", Long: "why it broke beyond its SLOs (a refusal, a cut answer, users waiting, a preemption, a crash)"})
	}
	for _, side := range sidesList {
		for i := range side.c.Probes {
			p := &side.c.Probes[i]
			verdict := "breaks"
			if p.Held {
				verdict = "holds"
			}
			margin := plainCell("—")
			if m, of := worstMargin(p); finite(m) {
				margin = textCell(cat(plain(fmt.Sprintf("%.3f (", m)), untrusted(of), plain(")")))
			}
			cells := []cell{
				plainCell(side.label), plainCell(strconv.Itoa(i + 1)), textCell(untrusted(p.Phase)),
				plainCell(loadText(p.Load)), plainCell(verdict), margin, plainCell(strconv.Itoa(p.Broken)),
			}
			if whys {
				kv, pre, mem := probePeaks(p)
				cells = append(cells, plainCell(kv), plainCell(pre), plainCell(mem))
				why := untrusted(clean(p.Why, 200))
				if p.Restarted {
					why = cat(why, plain(" (the stack was started again)"))
				}
				cells = append(cells, textCell(why))
			}
			t.Rows = append(t.Rows, row{Cells: cells})
		}
	}
	return t
}

// capacityChart is the probes of each side for HTML: x the load, y the
// worst margin, both log-scaled; role baseline or candidate for the probes
// that held, -broken for those that broke, and -band for the side's
// [holds, breaks) as two points on x (NaN for an open end).
func capacityChart(scenario string, sidesList []capacitySide, unit string) *chart {
	c := &chart{Kind: "capacity", Scenario: scenario, Metric: "capacity", Title: plain("Capacity search: worst SLO margin by load"),
		Subtitle: "a probe holds at a margin of 1 or less", XTitle: "load (" + unit + ", log scale)",
		YTitle: plain("worst SLO margin (log scale)")}
	// A headroom search with no SLO has no margins: its probes are placed
	// by verdict, held at 0.5 and broken at 2, either side of the line.
	byVerdict := len(sidesList) > 0 && sidesList[0].c.Search.Headroom != nil && len(sidesList[0].c.Search.SLO) == 0
	if len(sidesList) > 0 && sidesList[0].c.Search.Headroom != nil {
		c.Metric, c.Title = "headroom", plain("Headroom search: worst SLO margin by "+unit)
		if byVerdict {
			c.Title = plain("Headroom search: probes by " + unit)
			c.Subtitle = "no SLO: a probe that held sits below the line, one that broke above it"
			c.YTitle = plain("held (0.5) or broke (2)")
		}
	}
	nan := compare.Num(math.NaN())
	for _, side := range sidesList {
		held := series{Label: side.label + " held", Role: side.role}
		broken := series{Label: side.label + " broke", Role: side.role + "-broken"}
		for i := range side.c.Probes {
			p := &side.c.Probes[i]
			m, _ := worstMargin(p)
			if byVerdict || (side.c.Search.Headroom != nil && math.IsNaN(m)) {
				// No margin (no SLO, or every repetition broken by a
				// limit): placed by its verdict, either side of the line.
				m = 0.5
				if !p.Held {
					m = 2
				}
			}
			pt := point{positive(p.Load), positive(m)}
			if p.Held {
				held.Points = append(held.Points, pt)
			} else {
				broken.Points = append(broken.Points, pt)
			}
		}
		lo, hi := positive(side.c.Holds), positive(side.c.Breaks)
		band := series{Label: side.label + " [holds, breaks)", Role: side.role + "-band", Points: []point{{lo, nan}, {hi, nan}}}
		c.Series = append(c.Series, held, broken, band)
	}
	return c
}
