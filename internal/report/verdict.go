package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/compare/stat"
	"github.com/perfgate/perfgate/internal/config"
)

// verdictMaxShown is the most runes of any text from a result (scenario names,
// identity strings, reasons) that a verdict report shows.
const verdictMaxShown = 200

// verdictMaxListed is how many regressed gates the last line of a text verdict names.
const verdictMaxListed = 5

// WriteVerdictText renders v for a terminal, in the spirit of benchstat: per
// scenario a header line and an aligned table of its gates (each side's median
// with its interval as ± percent, the Hodges-Lehmann change with its interval,
// the adjusted one-sided p, the tolerance and the outcome), the reasons and
// warnings that qualify them, and the configured gates that could not be
// tested; then what changed between the two results, the mismatches compared
// anyway, the run's warnings, and a last line with the verdict.
func WriteVerdictText(w io.Writer, v *compare.Verdict) error {
	return writeVerdictText(w, v, nil)
}

// writeVerdictText is WriteVerdictText; doc, when not nil, adds each
// scenario's engine, GPU and cost table and the telemetry sources that were
// unavailable.
func writeVerdictText(w io.Writer, v *compare.Verdict, doc *Document) error {
	p := &verdictPrinter{w: w}
	for i := range v.Scenarios {
		if i > 0 {
			p.println()
		}
		s := &v.Scenarios[i]
		if s.NoBaseline {
			p.printf("scenario %s · candidate n=%d · no baseline: not compared\n", clean(s.Name, verdictMaxShown), s.CandidateN)
			if err := writeTelemetryText(p, doc.scenario(s.Name)); err != nil {
				return err
			}
			continue
		}
		p.printf("scenario %s · baseline n=%d · candidate n=%d · level %s\n",
			clean(s.Name, verdictMaxShown), s.BaselineN, s.CandidateN, verdictLevel(s.Level))
		if len(s.Gates) == 0 {
			p.println("  no gates")
		} else {
			tw := tabwriter.NewWriter(p, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "  metric\tbaseline\tcandidate\tchange\tp\ttolerance\toutcome")
			for _, g := range s.Gates {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n",
					verdictMetricLabel(g.Title, g.Unit), verdictSummary(g.Baseline, g.Unit), verdictSummary(g.Candidate, g.Unit),
					verdictChange(g), verdictPString(g.PAdjusted), clean(g.Tolerance, verdictMaxShown), verdictOutcomeWord(g.Outcome))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		for _, n := range verdictNotes(s, verdictClean) {
			p.printf("  %s: %s\n", n.subject, n.text)
		}
		for _, ng := range s.NotGated {
			p.printf("  not gated: %s: %s — %s\n", verdictMetricLabel(ng.Title, ng.Unit), verdictNotGatedValues(ng), clean(ng.Reason, verdictMaxShown))
		}
		if err := writeQualityText(p, s); err != nil {
			return err
		}
		if err := writeTelemetryText(p, doc.scenario(s.Name)); err != nil {
			return err
		}
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		p.println()
		p.println(title)
		for _, it := range items {
			p.println("  " + it)
		}
	}
	if doc != nil {
		list("telemetry:", unavailableSources(doc.TelemetrySources, false, verdictClean))
	}
	list("what changed:", verdictDifferences(v.Changes, verdictClean))
	list("mismatches (compared anyway: --allow-mismatch):", verdictDifferences(v.Mismatches, verdictClean))
	list("warnings:", verdictCleanAll(v.Warnings, verdictClean))
	if len(v.Scenarios) > 0 || len(v.Changes) > 0 || len(v.Mismatches) > 0 || len(v.Warnings) > 0 {
		p.println()
	}
	p.println("verdict: " + verdictLine(v))
	return p.err
}

// WriteVerdictMarkdown renders v as GitHub-flavoured markdown, for a pull
// request comment or a job summary: a first line with the verdict and the
// worst change, a table per scenario, what changed, the warnings, and a
// collapsed block with every gate's per-repetition values. Everything that
// came from a result is stripped of control characters, cut to 200 runes and
// escaped. (WriteMarkdown renders a whole report Document, with its charts.)
func WriteVerdictMarkdown(w io.Writer, v *compare.Verdict) error {
	p := &verdictPrinter{w: w}
	p.println(verdictHeadline(v))
	writeMarkdownBody(p, v, nil, detailFull)
	return p.err
}

// writeMarkdownBody renders everything of v under its headline, to the given
// detail level; doc, when not nil, adds the charts and percentile tables.
func writeMarkdownBody(p *verdictPrinter, v *compare.Verdict, doc *Document, level detail) {
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		p.println()
		if s.NoBaseline {
			p.printf("#### Scenario %s · candidate n=%d\n\nNo baseline: not compared.\n", verdictMD(s.Name), s.CandidateN)
			if doc != nil && level < detailNoDetails {
				writeTelemetryMarkdown(p, doc.scenario(s.Name))
			}
			continue
		}
		p.printf("#### Scenario %s · baseline n=%d · candidate n=%d · level %s\n",
			verdictMD(s.Name), s.BaselineN, s.CandidateN, verdictLevel(s.Level))
		p.println()
		if len(s.Gates) == 0 {
			p.println("No gates.")
		} else {
			p.println("| metric | baseline | candidate | change | p | tolerance | outcome |")
			p.println("|:--|--:|--:|--:|--:|--:|:--|")
			for _, g := range s.Gates {
				p.printf("| %s | %s | %s | %s | %s | %s | %s |\n",
					verdictMD(verdictMetricLabel(g.Title, g.Unit)), verdictSummary(g.Baseline, g.Unit), verdictSummary(g.Candidate, g.Unit),
					verdictChange(g), verdictPString(g.PAdjusted), verdictMD(g.Tolerance), verdictOutcomeMarkdown(g.Outcome))
			}
		}
		if level >= detailTables {
			writeQualityMarkdown(p, s, false)
			continue
		}
		var items []string
		for _, n := range verdictNotes(s, verdictMD) {
			items = append(items, fmt.Sprintf("**%s**: %s", n.subject, n.text))
		}
		for _, ng := range s.NotGated {
			items = append(items, fmt.Sprintf("not gated: **%s**: %s — %s", verdictMD(verdictMetricLabel(ng.Title, ng.Unit)), verdictNotGatedValues(ng), verdictMD(ng.Reason)))
		}
		if len(items) > 0 {
			p.println()
			for _, it := range items {
				p.println("- " + it)
			}
		}
		writeQualityMarkdown(p, s, level < detailNoCharts)
		if doc != nil && level < detailNoCharts {
			writeCharts(p, s, doc.scenario(s.Name))
		}
		if doc != nil && level < detailNoDetails {
			writeTelemetryMarkdown(p, doc.scenario(s.Name))
		}
	}
	if level >= detailTables {
		return
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		p.println()
		p.println(title)
		p.println()
		for _, it := range items {
			p.println("- " + it)
		}
	}
	if doc != nil {
		list("**Telemetry**", unavailableSources(doc.TelemetrySources, false, verdictMD))
	}
	list("**What changed**", verdictDifferences(v.Changes, verdictMD))
	list("**Mismatches** (compared anyway: --allow-mismatch)", verdictDifferences(v.Mismatches, verdictMD))
	list("**Warnings**", verdictCleanAll(v.Warnings, verdictMD))
	if level < detailNoDetails {
		writeVerdictDetails(p, v, doc)
	}
}

// WriteVerdictJSON writes v as indented JSON, with the model's own field
// names; NaN and infinite numbers (no estimate, an unbounded interval) are
// null.
func WriteVerdictJSON(w io.Writer, v *compare.Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeVerdictDetails is the collapsed block of per-repetition values, and
// of every latency percentile on both sides when doc has them.
func writeVerdictDetails(p *verdictPrinter, v *compare.Verdict, doc *Document) {
	shown := false
	for _, s := range v.Scenarios {
		shown = shown || len(s.Gates) > 0 || len(s.NotGated) > 0
	}
	if !shown {
		return
	}
	p.println()
	if doc != nil {
		p.println("<details><summary>All percentiles and per-repetition values</summary>")
	} else {
		p.println("<details><summary>Per-repetition values</summary>")
	}
	for _, s := range v.Scenarios {
		if len(s.Gates) == 0 && len(s.NotGated) == 0 {
			continue
		}
		p.println()
		p.printf("**Scenario %s**\n\n", verdictMD(s.Name))
		p.println("| metric | baseline values | candidate values | p (raw) | p (Holm) | level | interval confidence |")
		p.println("|:--|:--|:--|--:|--:|--:|--:|")
		for _, g := range s.Gates {
			p.printf("| %s | %s | %s | %s | %s | %s | %s |\n",
				verdictMD(verdictMetricLabel(g.Title, g.Unit)), verdictValues(g.Baseline.Values, g.Unit), verdictValues(g.Candidate.Values, g.Unit),
				verdictNumber(g.P, verdictP), verdictNumber(g.PAdjusted, verdictP), verdictNumber(g.Level, verdictLevel), verdictNumber(g.Confidence, verdictConfidence))
		}
		for _, ng := range s.NotGated {
			p.printf("| %s (not gated) | %s | %s | — | — | — | — |\n",
				verdictMD(verdictMetricLabel(ng.Title, ng.Unit)), verdictValues(ng.Baseline, ng.Unit), verdictValues(ng.Candidate, ng.Unit))
		}
		if doc != nil {
			writePercentiles(p, doc.scenario(s.Name))
		}
	}
	p.println()
	p.println("</details>")
}

// verdictLine is the text verdict's last line, after "verdict: ".
func verdictLine(v *compare.Verdict) string {
	total, regressed, undecided := 0, []string{}, 0
	for _, s := range v.Scenarios {
		for _, g := range s.Gates {
			total++
			switch g.Outcome {
			case stat.Regression:
				regressed = append(regressed, clean(s.Name, verdictMaxShown)+" "+clean(g.Title, verdictMaxShown)+" "+verdictChangeEstimate(g))
			case stat.Inconclusive:
				undecided++
			}
		}
		for _, q := range s.Quality {
			for _, g := range q.Gates {
				total++
				switch g.Outcome {
				case stat.Regression:
					regressed = append(regressed, clean(s.Name, verdictMaxShown)+" "+qualityGateName(q, g)+" "+qualityChangeEstimate(g))
				case stat.Inconclusive:
					undecided++
				}
			}
		}
	}
	switch v.Outcome {
	case stat.Regression:
		shown := regressed
		more := ""
		if len(shown) > verdictMaxListed {
			more = fmt.Sprintf(", and %d more", len(shown)-verdictMaxListed)
			shown = shown[:verdictMaxListed]
		}
		return fmt.Sprintf("REGRESSION (%s regressed: %s%s)", verdictCount(len(regressed), "gate"), strings.Join(shown, ", "), more)
	case stat.Pass:
		return fmt.Sprintf("pass (%s)", verdictCount(total, "gate"))
	}
	what := fmt.Sprintf("%s undecided", verdictCount(undecided, "gate"))
	if total == 0 {
		what = "no gate was tested"
	}
	return fmt.Sprintf("inconclusive (%s; on_inconclusive: %s → exit %d)", what, verdictOnInconclusive(v), v.ExitCode())
}

// verdictHeadline is the markdown's first line: the verdict and the worst
// change.
func verdictHeadline(v *compare.Verdict) string {
	mark, text := verdictHeadlineParts(v)
	return "### " + mark + " perfgate: " + text
}

// verdictHeadlineParts is the headline's outcome mark (❌, ✅ or ⚠️) and its
// text after "perfgate: ".
func verdictHeadlineParts(v *compare.Verdict) (mark, text string) {
	var t gateTally
	t.add(v, 0)
	mark = outcomeMark(v.Outcome)
	var b strings.Builder
	switch v.Outcome {
	case stat.Regression:
		fmt.Fprintf(&b, "regression (%d of %s regressed)", t.regressed, verdictCount(t.total, "gate"))
		switch {
		case t.worstRegressed != nil:
			b.WriteString(" — worst: " + t.worstRegressed.markdown())
		case t.worstQuality != nil:
			q := t.worstQuality
			b.WriteString(" — worst: " + verdictMD(q.s.Name) + " " + verdictMD(qualityGateName(*q.q, *q.g)) + " " + qualityChangeEstimate(*q.g))
		}
		return mark, b.String()
	case stat.Pass:
		fmt.Fprintf(&b, "pass (%s)", verdictCount(t.total, "gate"))
	default:
		if t.total == 0 {
			fmt.Fprintf(&b, "inconclusive (no gate was tested; on_inconclusive: %s → exit %d)", verdictOnInconclusive(v), v.ExitCode())
		} else {
			fmt.Fprintf(&b, "inconclusive (%d of %s undecided; on_inconclusive: %s → exit %d)",
				t.undecided, verdictCount(t.total, "gate"), verdictOnInconclusive(v), v.ExitCode())
		}
	}
	if t.worstAny != nil {
		b.WriteString(" — worst change: " + t.worstAny.markdown())
	}
	return mark, b.String()
}

// gateTally counts gates by outcome over one or more verdicts and keeps the
// worst changes, for the headlines: the worst regressed latency gate, the
// largest regressed quality drop (in points, so not ranked against latency
// changes in percent), and the worst latency change of any outcome. The
// *Doc fields say which verdict (by the index given to add) each came from.
type gateTally struct {
	total, regressed, undecided int
	worstRegressed, worstAny    *verdictGateRef
	worstQuality                *qualityGateRef
	worstRegressedDoc           int
	worstAnyDoc                 int
	worstQualityDoc             int
}

// qualityGateRef is a quality gate with its suite and scenario, for naming it.
type qualityGateRef struct {
	s *compare.Scenario
	q *compare.Suite
	g *compare.QualityGate
}

// add counts the gates of v, verdict number doc.
func (t *gateTally) add(v *compare.Verdict, doc int) {
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		for j := range s.Gates {
			g := &s.Gates[j]
			t.total++
			ref := &verdictGateRef{s, g}
			switch g.Outcome {
			case stat.Regression:
				t.regressed++
				if t.worstRegressed == nil || ref.worseThan(t.worstRegressed) {
					t.worstRegressed, t.worstRegressedDoc = ref, doc
				}
			case stat.Inconclusive:
				t.undecided++
			}
			if g.Change.Estimate.Finite() && (t.worstAny == nil || ref.worseThan(t.worstAny)) {
				t.worstAny, t.worstAnyDoc = ref, doc
			}
		}
		for k := range s.Quality {
			q := &s.Quality[k]
			for j := range q.Gates {
				g := &q.Gates[j]
				t.total++
				switch g.Outcome {
				case stat.Regression:
					t.regressed++
					if t.worstQuality == nil || float64(g.Change.Estimate) < float64(t.worstQuality.g.Change.Estimate) {
						t.worstQuality, t.worstQualityDoc = &qualityGateRef{s, q, g}, doc
					}
				case stat.Inconclusive:
					t.undecided++
				}
			}
		}
	}
}

// verdictGateRef is a gate with its scenario, for naming it.
type verdictGateRef struct {
	s *compare.Scenario
	g *compare.Gate
}

// badness is the gate's relative change in its bad direction (positive is
// worse); -Inf when it has none.
func (r *verdictGateRef) badness() float64 {
	c := float64(r.g.Change.Estimate)
	if !r.g.Change.Estimate.Finite() {
		return math.Inf(-1)
	}
	if r.g.Better == "higher" {
		return -c
	}
	return c
}

func (r *verdictGateRef) worseThan(o *verdictGateRef) bool { return r.badness() > o.badness() }

func (r *verdictGateRef) markdown() string {
	return fmt.Sprintf("%s %s %s", verdictMD(r.s.Name), verdictMD(r.g.Title), verdictChange(*r.g))
}

// verdictNote is one line of qualification under a scenario's table: a gate's
// reason or warning, with the gates it is about.
type verdictNote struct{ subject, text string }

// verdictNotes lists the reason of every gate that did not pass and every
// warning of a gate or of its summaries, each distinct text once with the
// gates it applies to, then the scenario's own warnings. esc makes result
// text safe for the output.
func verdictNotes(s *compare.Scenario, esc func(string) string) []verdictNote {
	var order []string
	subjects := map[string][]string{}
	add := func(title, text string) {
		if text == "" {
			return
		}
		if _, ok := subjects[text]; !ok {
			order = append(order, text)
		}
		for _, t := range subjects[text] {
			if t == title {
				return
			}
		}
		subjects[text] = append(subjects[text], title)
	}
	for _, g := range s.Gates {
		title := esc(g.Title)
		if g.Outcome != stat.Pass {
			add(title, esc(g.Reason))
		}
		for _, w := range g.Warnings {
			add(title, esc(w))
		}
		for _, w := range g.Baseline.Warnings {
			add(title, "baseline: "+esc(w))
		}
		for _, w := range g.Candidate.Warnings {
			add(title, "candidate: "+esc(w))
		}
	}
	out := make([]verdictNote, 0, len(order)+len(s.Warnings))
	for _, text := range order {
		out = append(out, verdictNote{strings.Join(subjects[text], ", "), text})
	}
	seen := map[string]bool{}
	for _, w := range s.Warnings {
		if t := esc(w); !seen[t] {
			seen[t] = true
			out = append(out, verdictNote{"warning", t})
		}
	}
	return out
}

// verdictDifferences renders identity differences, each part made safe by esc.
func verdictDifferences(ds []compare.Difference, esc func(string) string) []string {
	out := make([]string, 0, len(ds))
	seen := map[string]bool{}
	for _, d := range ds {
		safe := compare.Difference{Field: esc(d.Field), Baseline: esc(d.Baseline), Candidate: esc(d.Candidate)}
		if d.Scenario != "" {
			safe.Scenario = esc(d.Scenario)
		}
		if s := safe.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func verdictCleanAll(texts []string, esc func(string) string) []string {
	out := make([]string, 0, len(texts))
	seen := map[string]bool{}
	for _, t := range texts {
		if s := esc(t); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// verdictClean makes result text safe for a terminal.
func verdictClean(s string) string { return clean(s, verdictMaxShown) }

// verdictMD makes result text safe for markdown: control characters stripped, cut
// to verdictMaxShown runes, and every character that markdown or HTML could read
// as syntax escaped with a backslash (which GitHub's markdown reads as the
// literal character, in tables too; a '$' would open inline math). GitHub
// links @name and #123 in text
// even when escaped, so a word joiner (U+2060, invisible) follows each @ and
// #: a model's output can neither notify a user nor reference an issue.
func verdictMD(s string) string {
	s = clean(s, verdictMaxShown)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\|*_`<>[]~&#!@$", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
		if r == '@' || r == '#' {
			b.WriteRune('\u2060')
		}
	}
	return b.String()
}

// verdictMetricLabel is "TTFT p99 (ms)".
func verdictMetricLabel(title, unit string) string {
	if unit == "" {
		return clean(title, verdictMaxShown)
	}
	return clean(title, verdictMaxShown) + " (" + clean(unit, verdictMaxShown) + ")"
}

// verdictSummary is a side's median with its interval as a ± percent of it,
// as benchstat prints it ("41.2 ± 3%", "41.2 ± ∞" for an unbounded interval).
func verdictSummary(s compare.Summary, unit string) string {
	if !s.Median.Finite() {
		return "—"
	}
	m := verdictValue(float64(s.Median), unit)
	if math.IsNaN(float64(s.Lo)) || math.IsNaN(float64(s.Hi)) {
		return m
	}
	return m + " ± " + verdictPctRange(float64(s.Median), float64(s.Lo), float64(s.Hi))
}

// verdictPctRange is benchmath.Summary.PctRangeString: the interval's larger
// distance from the center, as a percent of it.
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

// verdictChange is the Hodges-Lehmann change relative to the baseline median
// with its interval ("+31.2% [+25.0%, +38.1%]"); when there is no relative
// change (the baseline median is 0), the absolute shift in the metric's unit
// ("+3.10 [+1.00, +5.20] ms").
func verdictChange(g compare.Gate) string {
	if g.Change.Estimate.Finite() {
		return verdictInterval(g.Change, verdictPercent)
	}
	if g.Shift.Estimate.Finite() {
		f, unit := verdictShiftFormat(g.Unit)
		s := verdictInterval(g.Shift, f)
		if unit != "" {
			s += " " + unit
		}
		return s
	}
	return "—"
}

// verdictChangeEstimate is the change without its interval ("+31.2%", "+3.10 ms").
func verdictChangeEstimate(g compare.Gate) string {
	if g.Change.Estimate.Finite() {
		return verdictPercent(float64(g.Change.Estimate))
	}
	if g.Shift.Estimate.Finite() {
		f, unit := verdictShiftFormat(g.Unit)
		s := f(float64(g.Shift.Estimate))
		if unit != "" {
			s += " " + unit
		}
		return s
	}
	return "—"
}

// verdictShiftFormat is how an absolute change of a metric in unit is shown:
// a fraction's change in percentage points ("+0.50 points"), a count's as a
// signed number with no unit ("+3"), anything else with a few significant
// figures in its own unit ("+3.10 ms").
func verdictShiftFormat(unit string) (format func(float64) string, shown string) {
	switch unit {
	case "%":
		return func(x float64) string { return verdictSigned(100*x, true) }, "points"
	case "count":
		return func(x float64) string {
			if finite(x) && x == math.Trunc(x) {
				return fmt.Sprintf("%+.0f", x)
			}
			return verdictSigned(x, false)
		}, ""
	}
	return func(x float64) string { return verdictSigned(x, false) }, clean(unit, verdictMaxShown)
}

func verdictInterval(iv compare.Interval, f func(float64) string) string {
	s := f(float64(iv.Estimate))
	lo, hi := float64(iv.Lo), float64(iv.Hi)
	if math.IsNaN(lo) && math.IsNaN(hi) {
		return s
	}
	return s + " [" + f(lo) + ", " + f(hi) + "]"
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

// verdictNotGatedValues is "baseline 3239 · candidate 3401, 3390".
func verdictNotGatedValues(ng compare.NotGated) string {
	return "baseline " + verdictValues(ng.Baseline, ng.Unit) + " · candidate " + verdictValues(ng.Candidate, ng.Unit)
}

// verdictSigFigs formats x with three significant figures, but never rounds away
// digits before the point: 41.2, 1235, 0.450.
func verdictSigFigs(x float64) string {
	switch {
	case math.IsNaN(x):
		return "?"
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "-∞"
	case x == 0:
		return "0"
	}
	decimals := 0
	if a := math.Abs(x); a < 100 {
		decimals = min(2-int(math.Floor(math.Log10(a))), 9)
	}
	scale := math.Pow10(decimals)
	return strconv.FormatFloat(math.Round(x*scale)/scale, 'f', decimals, 64)
}

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

func verdictOutcomeWord(o stat.Outcome) string {
	switch o {
	case stat.Regression:
		return "REGRESSION"
	case stat.Pass:
		return "pass"
	case stat.Inconclusive:
		return "inconclusive"
	}
	return verdictClean(fmt.Sprint(o))
}

func verdictOutcomeMarkdown(o stat.Outcome) string {
	switch o {
	case stat.Regression:
		return "❌ **regression**"
	case stat.Pass:
		return "✅ pass"
	case stat.Inconclusive:
		return "⚠️ inconclusive"
	}
	return verdictMD(fmt.Sprint(o))
}

func verdictOnInconclusive(v *compare.Verdict) string {
	if v.OnInconclusive == "" {
		return config.DefaultOnInconclusive
	}
	return clean(v.OnInconclusive, verdictMaxShown)
}

// verdictCount is "1 gate", "3 gates".
func verdictCount(n int, noun string) string { return strconv.Itoa(n) + " " + noun + plural(n) }

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
