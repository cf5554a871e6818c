package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/stat"
)

// The view builder: what a report shows, in what order, for every medium.
// Adding a section to the reports is adding its blocks here.

// buildView is the view of docs: one document's report, or several merged
// (a job each, under one overall verdict). docs is not empty, and every
// document has a verdict.
func buildView(docs []*reportfile.Document) *view {
	v := &view{Outcome: reportfile.Outcome(docs), ExitCode: reportfile.ExitCode(docs, exit.FailOnConfig), Merged: len(docs) > 1}
	for i, d := range docs {
		dv := buildDoc(d.Verdict, d, d.Title)
		if v.Merged {
			dv.Title = jobName(d, i)
			if dv.PageTitle == "" {
				dv.PageTitle = "Report " + strconv.Itoa(i+1)
			}
		}
		v.Docs = append(v.Docs, dv)
	}
	v.Headline = v.Docs[0].Headline
	if v.Merged {
		v.Headline = mergedHeadline(docs)
	}
	v.Page = pageHeadline(docs)
	if !v.Merged {
		v.Name = docs[0].Title
		if v.Name == "" {
			v.Name = configName(docs[0].Key)
		}
	}
	v.Footer = footer(docs)
	return v
}

// verdictView is the view of a verdict alone: no charts, no telemetry, no
// percentiles, which only a Document has.
func verdictView(v *compare.Verdict) *view {
	dv := buildDoc(v, nil, "")
	return &view{Outcome: v.Outcome, ExitCode: v.ExitCode(), Headline: dv.Headline, Docs: []docView{dv}}
}

// jobName names document i of a merged report: its title, else its key,
// else its place.
func jobName(d *reportfile.Document, i int) string {
	switch {
	case d.Title != "":
		return d.Title
	case d.Key != "":
		return d.Key
	}
	return fmt.Sprintf("job %d", i+1)
}

// buildDoc is the view of verdict v; d, when not nil, is its document, with
// the charts, telemetry and percentiles.
func buildDoc(v *compare.Verdict, d *reportfile.Document, title string) docView {
	dv := docView{Title: title, PageTitle: title, Outcome: v.Outcome, Headline: verdictHeadline(v), Verdict: verdictLine(v)}
	if d != nil {
		dv.Fields = sourceFields(d)
		dv.Measured = measuredLine(d)
	}
	swept := map[string]bool{}
	for i := range v.Scenarios {
		var sd *reportfile.ScenarioData
		if d != nil {
			sd = scenarioData(d, i)
			// A sweep's section comes before its first point; a point
			// keeps a section of its own only when gated.
			if sw := sweepOf(d, v.Scenarios[i].Name); sw != nil {
				if !swept[sw.Of] {
					swept[sw.Of] = true
					dv.Blocks = append(dv.Blocks, block{Section: sweepSection(sw, v, sidesOf(v.AB))})
				}
				if !pointShown(&v.Scenarios[i]) {
					continue
				}
			}
		}
		dv.Blocks = append(dv.Blocks, block{Section: scenarioSection(&v.Scenarios[i], sd, d != nil, v.AB)})
	}
	if d != nil {
		// A sweep none of whose points the verdict has (a report file
		// edited by hand) is still shown, after the scenarios.
		for i := range d.Sweeps {
			if !swept[d.Sweeps[i].Of] {
				swept[d.Sweeps[i].Of] = true
				dv.Blocks = append(dv.Blocks, block{Section: sweepSection(&d.Sweeps[i], v, sidesOf(v.AB))})
			}
		}
	}
	var sources []item
	if d != nil {
		sources = unavailableItems(d.TelemetrySources)
	}
	for _, l := range []*list{
		{Title: "Telemetry", Kind: "warnings", Items: sources},
		{Title: "What changed", Kind: "changes", Items: differenceItems(v.Changes)},
		{Title: "Mismatches", Aside: "compared anyway: --allow-mismatch", Kind: "mismatches", Items: differenceItems(v.Mismatches)},
		{Title: "Warnings", Kind: "warnings", Items: textItems(v.Warnings)},
	} {
		if len(l.Items) > 0 {
			dv.Blocks = append(dv.Blocks, block{Drop: detailTables, List: l})
		}
	}
	if f := detailsFold(v, d); f != nil {
		dv.Blocks = append(dv.Blocks, block{Media: mediumMarkdown, Drop: detailNoDetails, Fold: f})
	}
	return dv
}

// scenarioData is the chart data of the document's j-th verdict scenario:
// the j-th entry when its name matches, else the entry of that name.
func scenarioData(d *reportfile.Document, j int) *reportfile.ScenarioData {
	name := d.Verdict.Scenarios[j].Name
	if j < len(d.Scenarios) && d.Scenarios[j].Name == name {
		return &d.Scenarios[j]
	}
	for k := range d.Scenarios {
		if d.Scenarios[k].Name == name {
			return &d.Scenarios[k]
		}
	}
	return nil
}

// sourceFields say where d came from, and how its verdict was reached.
func sourceFields(d *reportfile.Document) []field {
	var out []field
	add := func(name, value string) {
		if value != "" {
			out = append(out, field{name, value})
		}
	}
	src := d.Source
	add("repository", src.Repository)
	add("commit", src.Commit)
	if src.PullRequest > 0 {
		add("pull request", "#"+strconv.Itoa(src.PullRequest))
	}
	add("workflow run", src.RunURL)
	// The result file's path is the runner's, which means nothing to a
	// reader: the config's name says which job this was.
	add("config", configName(d.Key))
	add("alpha", verdictLevel(d.Verdict.Alpha))
	if d.Verdict.Sequential {
		add("gate", "sequential")
	}
	return out
}

// footer is the runs and commits docs measured, each once.
func footer(docs []*reportfile.Document) []link {
	var out []link
	seen := map[string]bool{}
	for _, d := range docs {
		if u := d.Source.RunURL; u != "" && !seen[u] {
			seen[u] = true
			out = append(out, link{RunURL: u})
		}
		if c := d.Source.Commit; c != "" && !seen[c] {
			seen[c] = true
			out = append(out, link{Commit: shortCommit(c)})
		}
	}
	return out
}

// sides is how a report names the two sides of its comparison: the side
// compared against and its possessive; the other is the candidate.
type sides struct {
	// Base is "baseline" (a stored baseline), or "base" (an A/B's base
	// arm); Whose is "the baseline's" or "the base arm's".
	Base, Whose string
}

// sidesOf names the sides of a comparison: an A/B's (ab not nil) are base
// and candidate, a stored baseline's baseline and candidate.
func sidesOf(ab *compare.AB) sides {
	if ab != nil {
		return sides{Base: "base", Whose: "the base arm's"}
	}
	return sides{Base: "baseline", Whose: "the baseline's"}
}

// scenarioSection is a scenario: its gates, the notes that qualify them, its
// eval suites, its charts and its engine, GPU and cost medians; in an A/B
// (ab not nil) the drift of its base arm, and its arms round by round in
// place of its repetitions. sd, when not nil, is its chart data; charts is
// false for a verdict without a document, which has none.
func scenarioSection(s *compare.Scenario, sd *reportfile.ScenarioData, charts bool, ab *compare.AB) *section {
	names := sidesOf(ab)
	sec := &section{Label: "Scenario", Name: s.Name, Badge: true, Compared: !s.NoBaseline, Outcome: s.Outcome()}
	add := func(b block) { sec.Blocks = append(sec.Blocks, b) }
	if sd != nil {
		if line := workloadLine(sd.Workload, sd.WorkloadHash, sd.WorkloadShape); line != "" {
			add(block{Para: &para{Text: sentence{{Text: line, Untrusted: true}}, Aside: true}})
		}
	}
	for _, b := range overloadBlocks(sd, names) {
		add(b)
	}
	if sd != nil && sd.Capacity != nil {
		for _, b := range capacityBlocks(s, sd.Capacity, names) {
			add(b)
		}
	}
	switch {
	case s.NoBaseline && ab != nil:
		sec.Facts, sec.Remark = fmt.Sprintf("candidate n=%d", s.CandidateN), "not measured on the base arm: not compared"
	case s.NoBaseline:
		sec.Facts, sec.Remark = fmt.Sprintf("candidate n=%d", s.CandidateN), "no baseline: not compared"
	default:
		sec.Facts = fmt.Sprintf("%s n=%d · candidate n=%d · level %s", names.Base, s.BaselineN, s.CandidateN, verdictLevel(s.Level))
		if len(s.Gates) == 0 {
			add(block{Para: &para{Text: plain("No gates.")}})
		} else {
			add(block{Table: gateTable(s.Gates, names)})
		}
		if ab != nil {
			if p := driftPara(s.Gates); p != nil {
				add(block{Para: p})
			}
		}
	}
	// A scenario without a baseline has nothing compared to qualify: the
	// terminal and markdown show its heading and telemetry alone, the HTML
	// report its notes and suites too.
	var only medium
	if s.NoBaseline {
		only = mediumHTML
	}
	items := append(intervalNotes(s, names, ab != nil), scenarioNotes(s, names)...)
	if sd != nil {
		items = append(items, warmupItems(sd.Warmup)...)
	}
	if len(items) > 0 {
		add(block{Media: only, Drop: detailTables, List: &list{Kind: "notes", Items: items}})
	}
	for _, q := range s.Quality {
		add(block{Media: only, Section: suiteSection(q, names)})
	}
	if sd != nil && !s.NoBaseline {
		if g := mermaidCharts(s, sd, names); g != nil {
			add(block{Media: mediumMarkdown, Drop: detailNoCharts, Charts: g})
		}
	}
	if sd != nil && len(sd.Telemetry) > 0 {
		// A terminal has no folds: it shows the table under the gates, the
		// fold's title in its first column's.
		add(block{Media: mediumText, Table: telemetryTable(sd.Telemetry, "engine, GPU and cost (median of repetitions)", "", names)})
		add(block{Media: mediumMarkdown | mediumHTML, Drop: detailNoDetails, Fold: &fold{Summary: plain("Engine, GPU and cost"),
			Blocks: []block{{Table: telemetryTable(sd.Telemetry, "metric (median of repetitions)", "gated", names)}}}})
	}
	if sd != nil && len(sd.Sessions) > 0 {
		add(block{Media: mediumText, Table: telemetryTable(sd.Sessions, "sessions (median of repetitions; not gated)", "", names)})
		add(block{Media: mediumMarkdown | mediumHTML, Drop: detailNoDetails, Fold: &fold{Summary: plain("Sessions (not gated)"),
			Blocks: []block{{Table: telemetryTable(sd.Sessions, "session figure (median of repetitions)", "", names)}}}})
	}
	if sd != nil && len(sd.Recovery) > 0 {
		title := "Spike recovery"
		if sd.RecoveryOf == "fault" {
			title = "Replica loss and recovery"
		}
		add(block{Media: mediumText, Table: telemetryTable(sd.Recovery, strings.ToLower(title)+" (median of repetitions)", "", names)})
		add(block{Media: mediumMarkdown | mediumHTML, Drop: detailNoDetails, Fold: &fold{Summary: plain(title),
			Blocks: []block{{Table: telemetryTable(sd.Recovery, "figure (median of repetitions)", "gated", names)}}}})
	}
	if charts {
		for _, b := range distributionCharts(s, sd, ab) {
			b.Media = mediumHTML
			add(b)
		}
	}
	return sec
}

// gateTable is a scenario's gates: each side's median with its interval,
// the change with its interval, the adjusted p, the tolerance and the
// outcome.
func gateTable(gates []compare.Gate, names sides) *table {
	t := &table{Kind: "gates", Columns: []column{
		{Title: "metric"},
		{Title: names.Base, Long: names.Base + " median [95% interval]", Kind: colNumber},
		{Title: "candidate", Long: "candidate median [95% interval]", Kind: colNumber},
		{Title: "change", Long: "change [interval]", Kind: colNumber},
		{Title: "p", Long: "p (Holm)", Kind: colNumber},
		{Title: "tolerance", Kind: colNumber},
		{Title: "detectable", Long: "detectable change (the least tolerance an unchanged candidate passes)", Kind: colNumber},
		{Title: "outcome"},
	}}
	for _, g := range gates {
		t.Rows = append(t.Rows, row{Outcome: g.Outcome, Cells: []cell{
			textCell(metricLabel(g.Title, g.Unit)),
			{Kind: cellSummary, Summary: g.Baseline, Unit: g.Unit},
			{Kind: cellSummary, Summary: g.Candidate, Unit: g.Unit},
			textCell(changeText(g)),
			plainCell(verdictPString(g.PAdjusted)),
			textCell(untrusted(g.Tolerance)),
			textCell(detectableText(g)),
			{Kind: cellOutcome, Outcome: g.Outcome},
		}})
	}
	return t
}

// noteSet gathers notes, each distinct text once with every subject it is
// about, in the order first seen.
type noteSet struct {
	order    []string
	texts    map[string]sentence
	subjects map[string][]string
}

// add notes text about the gate titled subject; an empty text is no note.
func (n *noteSet) add(subject string, text sentence) {
	if len(text) == 0 {
		return
	}
	k := text.raw()
	if n.texts == nil {
		n.texts, n.subjects = map[string]sentence{}, map[string][]string{}
	}
	if _, ok := n.texts[k]; !ok {
		n.order = append(n.order, k)
		n.texts[k] = text
	}
	if !slices.Contains(n.subjects[k], subject) {
		n.subjects[k] = append(n.subjects[k], subject)
	}
}

// items are the notes with their subjects ("TTFT p99, E2E p99").
func (n *noteSet) items() []item {
	var out []item
	for _, k := range n.order {
		var subject sentence
		for i, s := range n.subjects[k] {
			if i > 0 {
				subject = append(subject, span{Text: ", "})
			}
			subject = append(subject, untrusted(s)...)
		}
		out = append(out, item{Subject: subject, Text: n.texts[k]})
	}
	return out
}

// scenarioNotes are the reason of every gate that did not pass and every
// warning of a gate or of its summaries, each distinct text once with the
// gates it applies to; then the scenario's own warnings; then the metrics
// shown but not gated.
func scenarioNotes(s *compare.Scenario, names sides) []item {
	var n noteSet
	for _, g := range s.Gates {
		if g.Outcome != stat.Pass {
			n.add(g.Title, untrusted(g.Reason))
		}
		for _, w := range g.Warnings {
			n.add(g.Title, untrusted(w))
		}
		for _, w := range g.Baseline.Warnings {
			if !oldIntervalWarning(g.Baseline, w) {
				n.add(g.Title, cat(plain(names.Base+": "), untrusted(w)))
			}
		}
		for _, w := range g.Candidate.Warnings {
			if !oldIntervalWarning(g.Candidate, w) {
				n.add(g.Title, cat(plain("candidate: "), untrusted(w)))
			}
		}
	}
	out := n.items()
	seen := map[string]bool{}
	for _, w := range s.Warnings {
		if !seen[w] {
			seen[w] = true
			out = append(out, item{Subject: plain("warning"), Text: untrusted(w)})
		}
	}
	for _, ng := range s.NotGated {
		out = append(out, item{Lead: "not gated", Subject: metricLabel(ng.Title, ng.Unit),
			Text: cat(plain(verdictNotGatedValues(ng, names.Base)+" — "), untrusted(ng.Reason))})
	}
	return out
}

// suiteSection is an eval suite: its quality gates, the output drift, the
// reasons and warnings, and a few items whose answers changed.
func suiteSection(q compare.Suite, names sides) *section {
	sec := &section{Label: "Eval suite", Name: q.Name,
		Facts: fmt.Sprintf("%d items · accuracy %s → %s", q.N, qualityAccuracy(q.Baseline), qualityAccuracy(q.Candidate)) + qualityFailedFacts(q)}
	if len(q.Gates) > 0 {
		t := &table{Kind: "gates", Columns: []column{
			{Title: "gate"},
			{Title: names.Base, Kind: colNumber},
			{Title: "candidate", Kind: colNumber},
			{Title: "change", Kind: colNumber},
			{Title: "p", Long: "p (Holm)", Kind: colNumber},
			{Title: "tolerance", Kind: colNumber},
			{Title: "outcome"},
		}}
		for _, g := range q.Gates {
			t.Rows = append(t.Rows, row{Outcome: g.Outcome, Cells: []cell{
				textCell(untrusted(g.Title)),
				plainCell(qualityRate(g.Baseline)),
				plainCell(qualityRate(g.Candidate)),
				plainCell(qualityChange(g.Change)),
				plainCell(verdictPString(g.PAdjusted)),
				textCell(untrusted(g.Tolerance)),
				{Kind: cellOutcome, Outcome: g.Outcome},
			}})
		}
		sec.Blocks = append(sec.Blocks, block{Table: t})
	}
	sec.Blocks = append(sec.Blocks, block{List: &list{Kind: "notes", Items: suiteNotes(q, names)}})
	if len(q.Examples) > 0 {
		examples := q.Examples[:min(len(q.Examples), compare.MaxExamples)]
		t := &table{Kind: "examples", Columns: []column{
			{Title: "changed item", Kind: colID},
			{Title: names.Base, Long: names.Base + " output"},
			{Title: "candidate", Long: "candidate output"},
		}}
		// A terminal is too narrow for a table of answers: it shows a line
		// per item.
		l := &list{Kind: "examples"}
		for _, ex := range examples {
			t.Rows = append(t.Rows, row{Cells: []cell{
				textCell(untrusted(ex.ID)),
				{Kind: cellOutput, Pass: ex.BaselinePass, Output: ex.BaselineOutput, Failed: ex.BaselineError},
				{Kind: cellOutput, Pass: ex.CandidatePass, Output: ex.CandidateOutput, Failed: ex.CandidateError},
			}})
			l.Items = append(l.Items, item{Text: cat(plain("changed "), untrusted(ex.ID),
				plain(" ("+qualityPassOrFailed(ex.BaselinePass, ex.BaselineError)+" → "+qualityPassOrFailed(ex.CandidatePass, ex.CandidateError)+"): "),
				qualityAnswer(ex.BaselineOutput, ex.BaselineError), plain(" → "), qualityAnswer(ex.CandidateOutput, ex.CandidateError))})
		}
		sec.Blocks = append(sec.Blocks, block{Media: mediumText, List: l}, block{Media: mediumMarkdown | mediumHTML, Drop: detailNoCharts, Table: t})
	}
	return sec
}

// suiteNotes are the output drift, then the reasons of the gates that did
// not pass, every gate warning and the suite's warnings, each text once.
func suiteNotes(q compare.Suite, names sides) []item {
	out := []item{{Text: plain(qualityDrift(q, names.Whose))}}
	seen := map[string]bool{}
	add := func(subject sentence, text string) {
		if text != "" && !seen[text] {
			seen[text] = true
			out = append(out, item{Subject: subject, Text: untrusted(text)})
		}
	}
	for _, g := range q.Gates {
		if g.Outcome != stat.Pass {
			add(untrusted(g.Title), g.Reason)
		}
		for _, w := range g.Warnings {
			add(untrusted(g.Title), w)
		}
	}
	for _, w := range q.Warnings {
		add(plain("warning"), w)
	}
	return out
}

// telemetryTable is a scenario's engine, GPU and cost medians on both
// sides, under first and gated, the titles of its first and last columns.
func telemetryTable(rows []reportfile.TelemetryRow, first, gated string, names sides) *table {
	t := &table{Kind: "telemetry", Columns: []column{
		{Title: first},
		{Title: names.Base, Kind: colNumber},
		{Title: "candidate", Kind: colNumber},
		{Title: "change", Kind: colNumber},
		{Title: gated},
	}}
	for _, r := range rows {
		flag := cell{Kind: cellFlag}
		if r.Gated {
			flag.Flag = "gated"
		}
		t.Rows = append(t.Rows, row{Cells: []cell{
			textCell(metricLabel(r.Title, r.Unit)),
			plainCell(telemetryValue(r.Baseline, r.Unit)),
			plainCell(telemetryValue(r.Candidate, r.Unit)),
			textCell(telemetryChange(r)),
			flag,
		}})
	}
	return t
}

// unavailableItems say which telemetry sources of the candidate were not
// read and why, engine first; a source turned off is no news.
func unavailableItems(info *telemetryInfo) []item {
	var out []item
	for _, s := range telemetrySources(info) {
		if !s.off {
			out = append(out, item{Text: cat(plain(s.name+": unavailable ("), untrusted(s.why), plain(")"))})
		}
	}
	return out
}

// differenceItems are identity differences, each once.
func differenceItems(ds []compare.Difference) []item {
	var out []item
	seen := map[string]bool{}
	orNone := func(s string) sentence {
		if s == "" {
			return plain("(none)")
		}
		return untrusted(s)
	}
	for _, d := range ds {
		var text sentence
		if d.Scenario != "" {
			text = cat(plain("scenario "), untrusted(d.Scenario), plain(": "))
		}
		text = cat(text, untrusted(d.Field), plain(": "), orNone(d.Baseline), plain(" → "), orNone(d.Candidate))
		if k := text.raw(); !seen[k] {
			seen[k] = true
			out = append(out, item{Text: text})
		}
	}
	return out
}

// textItems are texts, each once.
func textItems(texts []string) []item {
	var out []item
	seen := map[string]bool{}
	for _, t := range texts {
		if !seen[t] {
			seen[t] = true
			out = append(out, item{Text: untrusted(t)})
		}
	}
	return out
}

// detailsFold is every gate's per-repetition values and, with a document,
// every latency percentile on both sides, per scenario; nil when no
// scenario has a gate or a metric shown.
func detailsFold(v *compare.Verdict, d *reportfile.Document) *fold {
	names, per := sidesOf(v.AB), "per-repetition"
	if v.AB != nil {
		per = "per-round"
	}
	f := &fold{Summary: plain(upperFirst(per) + " values")}
	if d != nil {
		f.Summary = plain("All percentiles and " + per + " values")
	}
	for i, s := range v.Scenarios {
		if len(s.Gates) == 0 && len(s.NotGated) == 0 {
			continue
		}
		t := &table{Kind: "values", Columns: []column{
			{Title: "metric"},
			{Title: names.Base + " values"},
			{Title: "candidate values"},
			{Title: "p (raw)", Kind: colNumber},
			{Title: "p (Holm)", Kind: colNumber},
			{Title: "level", Kind: colNumber},
			{Title: "interval confidence", Kind: colNumber},
		}}
		for _, g := range s.Gates {
			t.Rows = append(t.Rows, row{Cells: []cell{
				textCell(metricLabel(g.Title, g.Unit)),
				plainCell(verdictValues(g.Baseline.Values, g.Unit)),
				plainCell(verdictValues(g.Candidate.Values, g.Unit)),
				plainCell(verdictNumber(g.P, verdictP)),
				plainCell(verdictNumber(g.PAdjusted, verdictP)),
				plainCell(verdictNumber(g.Level, verdictLevel)),
				plainCell(verdictNumber(g.Confidence, verdictConfidence)),
			}})
		}
		for _, ng := range s.NotGated {
			t.Rows = append(t.Rows, row{Cells: []cell{
				textCell(cat(metricLabel(ng.Title, ng.Unit), plain(" (not gated)"))),
				plainCell(verdictValues(ng.Baseline, ng.Unit)),
				plainCell(verdictValues(ng.Candidate, ng.Unit)),
				plainCell("—"), plainCell("—"), plainCell("—"), plainCell("—"),
			}})
		}
		sec := &section{Label: "Scenario", Name: s.Name, Blocks: []block{{Table: t}}}
		if d != nil {
			if p := percentileTable(scenarioData(d, i)); p != nil {
				sec.Blocks = append(sec.Blocks, block{Table: p})
			}
		}
		f.Blocks = append(f.Blocks, block{Section: sec})
	}
	if len(f.Blocks) == 0 {
		return nil
	}
	return f
}

// percentileTable is a scenario's every latency percentile, baseline →
// candidate with the change; nil without any.
func percentileTable(sd *reportfile.ScenarioData) *table {
	if sd == nil {
		return nil
	}
	var names []string
	for _, ld := range sd.Latency {
		if ld.Candidate != nil && len(ld.Candidate.Percentiles) > len(names) {
			names = nil
			for _, pc := range ld.Candidate.Percentiles {
				names = append(names, pc.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	t := &table{Kind: "percentiles", Columns: []column{{Title: "latency (ms, median of repetitions)"}}}
	for _, n := range names {
		t.Columns = append(t.Columns, column{Title: n, Kind: colNumber})
	}
	for _, ld := range sd.Latency {
		if ld.Candidate == nil {
			continue
		}
		r := row{Cells: []cell{textCell(untrusted(ld.Title))}}
		for _, name := range names {
			text := "—"
			if c, ok := ld.Candidate.Percentile(name); ok {
				text = verdictValue(c, "ms")
				if b, ok := ld.Baseline.Percentile(name); ok {
					text = verdictValue(b, "ms") + " → " + verdictValue(c, "ms")
					if b > 0 && finite(b) && finite(c) {
						text += fmt.Sprintf(" (%+.1f%%)", 100*(c/b-1))
					}
				}
			}
			r.Cells = append(r.Cells, plainCell(text))
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// Charts.

// chartMetrics are the latency metrics markdown charts.
var chartMetrics = []string{"ttft", "tpot"}

// historyShown is how many of the latest history entries a markdown chart
// shows.
const historyShown = 20

// mermaidCharts are a scenario's charts for markdown: TTFT and TPOT
// percentiles (baseline bars, candidate line) and, with history, each one's
// promoted p99 over time ending at this run; nil when there are none.
func mermaidCharts(s *compare.Scenario, sd *reportfile.ScenarioData, names sides) *chartGroup {
	g := &chartGroup{Title: cat(plain("Charts: "), untrusted(s.Name))}
	for _, name := range chartMetrics {
		if ld := sd.LatencyOf(name); ld != nil && ld.Candidate != nil {
			if c, ok := percentileChart(ld, names); ok {
				g.Charts = append(g.Charts, &c)
			}
		}
	}
	for _, name := range chartMetrics {
		if c, ok := historyChart(sd, name); ok {
			g.Charts = append(g.Charts, &c)
		}
	}
	if len(g.Charts) == 0 {
		return nil
	}
	return g
}

// percentileChart is ld's percentiles: the baseline as bars, the candidate
// as a line; false when a value is missing.
func percentileChart(ld *reportfile.LatencyData, names sides) (chart, bool) {
	c := chart{Kind: "percentiles", Metric: ld.Metric, YTitle: cat(untrusted(ld.Title), plain(" (ms)"))}
	cand := series{Label: "candidate", Role: "candidate"}
	base := series{Label: names.Base, Role: "baseline"}
	for i, pc := range ld.Candidate.Percentiles {
		if !finite(pc.Value) {
			return chart{}, false
		}
		c.Labels = append(c.Labels, []string{pc.Name})
		cand.Points = append(cand.Points, point{compare.Num(i), compare.Num(pc.Value)})
		if ld.Baseline != nil {
			b, ok := ld.Baseline.Percentile(pc.Name)
			if !ok || !finite(b) {
				return chart{}, false
			}
			base.Points = append(base.Points, point{compare.Num(i), compare.Num(b)})
		}
	}
	if len(c.Labels) == 0 {
		return chart{}, false
	}
	c.Title = cat(untrusted(ld.Title), plain(" percentiles (ms): candidate line"))
	if ld.Baseline != nil {
		c.Title = cat(untrusted(ld.Title), plain(" percentiles (ms): "+names.Base+" bars, candidate line"))
		c.Series = append(c.Series, base)
	}
	c.Series = append(c.Series, cand)
	setAxis(&c, axisZero) // bars: their length is their value
	return c, true
}

// historyChart is metric name's p99 over the scenario's promoted history
// (the latest historyShown entries), ending with this run's candidate;
// false without history.
func historyChart(sd *reportfile.ScenarioData, name string) (chart, bool) {
	key := name + ".p99"
	hist := sd.History
	if len(hist) > historyShown {
		hist = hist[len(hist)-historyShown:]
	}
	line := series{Label: "p99", Role: "history"}
	var labels [][]string
	for _, e := range hist {
		m, ok := e.Metrics[key]
		if !ok || !finite(m.Median) {
			continue
		}
		label := shortCommit(e.Commit)
		if label == "" {
			label = e.Date.UTC().Format("01-02")
		}
		line.Points = append(line.Points, point{compare.Num(len(labels)), compare.Num(m.Median)})
		labels = append(labels, []string{label})
	}
	if len(line.Points) == 0 {
		return chart{}, false
	}
	title := strings.ToUpper(name)
	if ld := sd.LatencyOf(name); ld != nil {
		title = ld.Title
		if ld.Candidate != nil {
			for _, pc := range ld.Candidate.Percentiles {
				if pc.Name == "p99" && finite(pc.Value) {
					line.Points = append(line.Points, point{compare.Num(len(labels)), compare.Num(pc.Value)})
					labels = append(labels, []string{"this run"})
				}
			}
		}
	}
	c := chart{Kind: "history", Metric: key, Title: cat(untrusted(title), plain(" p99 (ms): promoted baselines, then this run")),
		YTitle: cat(untrusted(title), plain(" p99 (ms)")), Labels: labels, Series: []series{line}}
	setAxis(&c, axisLine)
	return c, true
}

// distributionCharts are a scenario's charts for the HTML report: the
// latency distributions (CDFs), each gate's per-repetition values (an
// A/B's: both arms round by round, and a collapsed table of them), and the
// promoted history; a note in place of the distributions when the results
// kept no histograms.
func distributionCharts(s *compare.Scenario, sd *reportfile.ScenarioData, ab *compare.AB) []block {
	var out []block
	names := sidesOf(ab)
	cdf := &chartGroup{Title: plain("Latency distributions")}
	if sd != nil {
		for _, ld := range sd.Latency {
			if c, ok := cdfChart(s.Name, ld, names); ok {
				cdf.Charts = append(cdf.Charts, &c)
			}
		}
	}
	if len(cdf.Charts) > 0 {
		out = append(out, block{Charts: cdf})
	} else {
		out = append(out, block{Para: &para{Text: plain("No latency distributions: the results kept no histograms."), Aside: true}})
	}
	switch {
	case len(s.Gates) == 0:
	case ab != nil:
		out = append(out, roundsBlocks(s, ab)...)
	default:
		reps := &chartGroup{Title: plain("Per-repetition values")}
		for _, g := range s.Gates {
			reps.Charts = append(reps.Charts, repsChart(s.Name, g))
		}
		out = append(out, block{Charts: reps})
	}
	if sd != nil {
		if trend := trendCharts(s, sd); trend != nil {
			out = append(out, block{Charts: trend})
		}
	}
	return out
}

// cdfChart is the CDFs of a latency metric, baseline against candidate;
// false when neither side has one. A log axis has no place for 0 ms, so
// points at or below it are left out.
func cdfChart(scenario string, ld reportfile.LatencyData, names sides) (chart, bool) {
	c := chart{Kind: "cdf", Scenario: scenario, Metric: ld.Metric, Title: cat(untrusted(ld.Title), plain(" distribution")),
		XTitle: ld.Title + " (ms, log scale)", YTitle: plain("share of requests at or below")}
	for _, side := range []struct {
		label, role string
		d           *reportfile.Distribution
	}{{names.Base, "baseline", ld.Baseline}, {"candidate", "candidate", ld.Candidate}} {
		if side.d == nil || len(side.d.CDF) == 0 {
			continue
		}
		ser := series{Label: side.label, Role: side.role}
		for _, p := range side.d.CDF {
			if p.Value > 0 && !math.IsInf(p.Value, 0) && !math.IsNaN(p.Fraction) {
				ser.Points = append(ser.Points, point{compare.Num(p.Value), compare.Num(p.Fraction)})
			}
		}
		if len(ser.Points) > 0 {
			c.Series = append(c.Series, ser)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, ser := range c.Series {
		for _, p := range ser.Points {
			lo, hi = math.Min(lo, float64(p.X)), math.Max(hi, float64(p.X))
		}
	}
	if len(c.Series) > 0 {
		c.XAxis, c.XTicks = &axisRange{lo, hi}, logTicks(lo, hi)
	}
	return c, len(c.Series) > 0
}

// repsChart is a gate's value in each repetition on both sides, with each
// side's median as a dashed line.
func repsChart(scenario string, g compare.Gate) *chart {
	scale := compare.Num(1)
	if g.Unit == "%" {
		scale = 100
	}
	c := &chart{Kind: "reps", Scenario: scenario, Metric: g.Metric, Title: cat(untrusted(g.Title), plain(" by repetition")),
		Subtitle: "dashed: each side's median", XTitle: "repetition", YTitle: metricLabel(g.Title, g.Unit)}
	for _, side := range []struct {
		role string
		s    compare.Summary
	}{{"baseline", g.Baseline}, {"candidate", g.Candidate}} {
		ser := series{Label: side.role, Role: side.role}
		for i, v := range side.s.Values {
			ser.Points = append(ser.Points, point{compare.Num(i + 1), v * scale})
		}
		c.Series = append(c.Series, ser)
		if n := len(side.s.Values); n > 0 && side.s.Median.Finite() {
			m := side.s.Median * scale
			c.Series = append(c.Series, series{Label: side.role + " median", Role: side.role + "-median",
				Points: []point{{1, m}, {compare.Num(n), m}}})
		}
	}
	setAxis(c, unitAxis(g.Unit))
	return c
}

// unitAxis is the kind of value axis of a metric in unit: a share for
// "%", else a line's.
func unitAxis(unit string) axisKind {
	if unit == "%" {
		return axisShare
	}
	return axisLine
}

// trendCharts are one chart per headline metric of the scenario's history:
// each entry's median with its 95% interval, and where this run's candidate
// lands (a gate's median of the metric, else the candidate's summary as its
// history entry would hold it); nil without history.
func trendCharts(s *compare.Scenario, sd *reportfile.ScenarioData) *chartGroup {
	history := sd.History
	if len(history) == 0 {
		return nil
	}
	var labels [][]string
	var notes []string
	for _, e := range history {
		label := []string{e.Date.UTC().Format("2006-01-02")}
		if c := firstRunes(e.Commit, 7); c != "" {
			label = append(label, c)
		}
		labels = append(labels, label)
		note := strings.TrimSpace(cut(e.Engine, 60) + " " + cut(e.Version, 60))
		if e.Repetitions > 0 {
			note = strings.TrimSpace(note + fmt.Sprintf(" · %d repetitions", e.Repetitions))
		}
		notes = append(notes, note)
	}
	first, last := history[0], history[len(history)-1]
	g := &chartGroup{Title: plain("History"), Facts: fmt.Sprintf("%d promoted baseline%s, %s to %s", len(history), plural(len(history)),
		first.Date.UTC().Format("2006-01-02"), last.Date.UTC().Format("2006-01-02"))}
	nan := compare.Num(math.NaN())
	for _, name := range baseline.Headline {
		title, unit := name, ""
		if m, err := metric.Lookup(name); err == nil {
			title, unit = m.Title, m.Unit()
		}
		scale := compare.Num(1)
		if unit == "%" {
			scale = 100
		}
		med := series{Label: "baseline median", Role: "history"}
		lo := series{Label: "", Role: "lo"}
		hi := series{Label: "95% interval", Role: "hi"}
		found, bounded := false, false
		for i, e := range history {
			x := compare.Num(i)
			sum, ok := e.Metrics[name]
			if !ok {
				med.Points = append(med.Points, point{x, nan})
				lo.Points = append(lo.Points, point{x, nan})
				hi.Points = append(hi.Points, point{x, nan})
				continue
			}
			found = true
			med.Points = append(med.Points, point{x, compare.Num(sum.Median) * scale})
			l, h := nan, nan
			if sum.Lo != nil && sum.Hi != nil {
				l, h, bounded = compare.Num(*sum.Lo)*scale, compare.Num(*sum.Hi)*scale, true
			}
			lo.Points = append(lo.Points, point{x, l})
			hi.Points = append(hi.Points, point{x, h})
		}
		if !found {
			continue
		}
		c := chart{Kind: "trend", Scenario: s.Name, Metric: name, Title: untrusted(title), XTitle: "promoted baseline (date, commit)",
			YTitle: metricLabel(title, unit), Labels: labels, Notes: notes}
		if bounded {
			c.Series = append(c.Series, lo, hi)
		}
		c.Series = append(c.Series, med)
		if cur, ok := currentMedian(s, sd, name); ok {
			c.Labels = append(slices.Clone(labels), []string{"this PR"})
			c.Notes = append(slices.Clone(notes), "candidate median")
			c.Series = append(c.Series, series{Label: "this PR (candidate)", Role: "candidate",
				Points: []point{{compare.Num(len(history)), cur * scale}}})
		}
		setAxis(&c, unitAxis(unit))
		g.Charts = append(g.Charts, &c)
	}
	if len(g.Charts) == 0 {
		return nil
	}
	return g
}

// currentMedian is this run's candidate median of history metric name: a
// gate's when one measured it, else the candidate's summary in sd.Current;
// false when neither has it.
func currentMedian(s *compare.Scenario, sd *reportfile.ScenarioData, name string) (compare.Num, bool) {
	for _, gate := range s.Gates {
		if gate.Metric == name && gate.Candidate.Median.Finite() {
			return gate.Candidate.Median, true
		}
	}
	if sum, ok := sd.Current[name]; ok && finite(sum.Median) {
		return compare.Num(sum.Median), true
	}
	return 0, false
}

// A/B: base and candidate measured interleaved on one runner, round by
// round, and compared pair by pair (perfgate ab).

// abLine says how an A/B was measured: "A/B on one runner: «base.yaml» vs
// «perfgate.yaml» · «co-resident» · 8 rounds (ABBA)"; nil for a comparison
// with a stored baseline (ab nil). Every part of ab came from a file.
func abLine(ab *compare.AB) sentence {
	if ab == nil {
		return nil
	}
	name := func(s string) sentence {
		if s == "" {
			return plain("(unnamed)")
		}
		return untrusted(s)
	}
	s := cat(plain("A/B on one runner: "), name(ab.Base), plain(" vs "), name(ab.Candidate))
	if ab.Mode != "" {
		s = cat(s, plain(" · "), untrusted(ab.Mode))
	}
	s = cat(s, plain(" · "+verdictCount(ab.Rounds, "round")))
	if o := orderText(ab.Order); o != nil {
		s = cat(s, plain(" ("), o, plain(")"))
	}
	return s
}

// Orders of the arms in a round: the base first, or the candidate.
const (
	orderBaseFirst      = "AB"
	orderCandidateFirst = "BA"
)

// ordersShown is how many rounds' orders abLine lists when they are not
// ABBA.
const ordersShown = 12

// orderText is the arms' order across the rounds: "ABBA" for AB in odd
// rounds and BA in even ones, as perfgate ab runs them; else the orders as
// recorded ("AB AB BA", the first ordersShown); nil for none.
func orderText(order []string) sentence {
	if len(order) == 0 {
		return nil
	}
	abba := true
	for i, o := range order {
		want := orderBaseFirst
		if i%2 == 1 {
			want = orderCandidateFirst
		}
		abba = abba && o == want
	}
	if abba && len(order) > 1 {
		return plain("ABBA")
	}
	var parts []sentence
	for _, o := range order[:min(len(order), ordersShown)] {
		parts = append(parts, untrusted(o))
	}
	s := join(" ", parts...)
	if len(order) > ordersShown {
		s = cat(s, plain(" …"))
	}
	return s
}

// orderNote says who went first in a round whose order is o; "" for an
// order perfgate does not know.
func orderNote(o string) string {
	switch o {
	case orderBaseFirst:
		return "base first"
	case orderCandidateFirst:
		return "candidate first"
	}
	return ""
}

// driftShown is the least drift of an A/B's base arm, either way, that its
// report names: a smaller trend is within the noise between rounds.
const driftShown = 0.02

// driftPara is what the pairing of an A/B cancelled: the gated metrics
// whose base arm drifted by driftShown or more from the first round to the
// last (a gate's Drift), or that none did; nil when no gate knows its
// drift (fewer than 2 rounds).
func driftPara(gates []compare.Gate) *para {
	var drifted []sentence
	known := false
	for _, g := range gates {
		if !g.Drift.Finite() {
			continue
		}
		known = true
		if math.Abs(float64(g.Drift)) >= driftShown {
			drifted = append(drifted, join(" ", untrusted(g.Title), plain(verdictPercent(float64(g.Drift)))))
		}
	}
	switch {
	case len(drifted) > 0:
		return &para{Text: cat(plain("The base arm drifted across the rounds: "), join(", ", drifted...),
			plain("; each round's pair saw the same drift, so the comparison does not count it."))}
	case known:
		return &para{Text: plain(fmt.Sprintf("The base arm held steady across the rounds: no gated metric drifted by %.0f%% or more from the first round to the last.", 100*driftShown))}
	}
	return nil
}

// coldStart is the metric measured once per start of a stack: in an A/B
// that restarts its stacks (swap), its pairs are the arms' starts in order,
// not the rounds.
const coldStart = "cold_start"

// roundsBlocks are an A/B scenario's gates round by round, for the HTML
// report: a chart of both arms per gated metric, so that a drift shows,
// and a collapsed table of every round's values and ratio.
func roundsBlocks(s *compare.Scenario, ab *compare.AB) []block {
	g := &chartGroup{Title: plain("Per-round values"),
		Facts: "both arms, round by round: a round measures each arm once (AB: base first, BA: candidate first), and the pairs are compared"}
	for _, gate := range s.Gates {
		g.Charts = append(g.Charts, roundsChart(s.Name, gate, ab))
	}
	return []block{
		{Charts: g},
		{Fold: &fold{Summary: plain("Each round's values and ratio"), Collapse: true, Blocks: []block{{Table: roundsTable(s.Gates, ab)}}}},
	}
}

// roundsChart is a gate's value in each round on both arms (cold start: in
// each start, in order), x the round labelled with its order, and the
// base arm's drift as its subtitle.
func roundsChart(scenario string, g compare.Gate, ab *compare.AB) *chart {
	scale := compare.Num(1)
	if g.Unit == "%" {
		scale = 100
	}
	c := &chart{Kind: "rounds", Scenario: scenario, Metric: g.Metric, Title: cat(untrusted(g.Title), plain(" by round")),
		XTitle: "round", YTitle: metricLabel(g.Title, g.Unit)}
	if g.Metric == coldStart {
		c.Title, c.XTitle = cat(untrusted(g.Title), plain(" by start")), "start (each arm's, in order)"
	}
	if g.Drift.Finite() {
		c.Subtitle = "base arm: " + verdictPercent(float64(g.Drift)) + " from the first round to the last"
	}
	n := max(len(g.Baseline.Values), len(g.Candidate.Values))
	for i := range n {
		label, note := []string{strconv.Itoa(i + 1)}, ""
		if g.Metric != coldStart && i < len(ab.Order) {
			label, note = append(label, ab.Order[i]), orderNote(ab.Order[i])
		}
		c.Labels = append(c.Labels, label)
		c.Notes = append(c.Notes, note)
	}
	for _, side := range []struct {
		label, role string
		s           compare.Summary
	}{{"base", "baseline", g.Baseline}, {"candidate", "candidate", g.Candidate}} {
		ser := series{Label: side.label, Role: side.role}
		for i, v := range side.s.Values {
			ser.Points = append(ser.Points, point{compare.Num(i + 1), v * scale})
		}
		c.Series = append(c.Series, ser)
	}
	setAxis(c, unitAxis(g.Unit))
	return c
}

// roundsTable is every gate's values round by round (cold start's start
// by start): the round, its order, each arm's value and the candidate's
// over the base's.
func roundsTable(gates []compare.Gate, ab *compare.AB) *table {
	t := &table{Kind: "rounds", Columns: []column{
		{Title: "metric"},
		{Title: "round"},
		{Title: "order"},
		{Title: "base", Kind: colNumber},
		{Title: "candidate", Kind: colNumber},
		{Title: "ratio", Long: "ratio (candidate ÷ base)", Kind: colNumber},
	}}
	for _, g := range gates {
		b, c := g.Baseline.Values, g.Candidate.Values
		for i := range max(len(b), len(c)) {
			round, order := strconv.Itoa(i+1), plain("—")
			if g.Metric == coldStart {
				round = "start " + round
			} else if i < len(ab.Order) {
				order = untrusted(ab.Order[i])
			}
			value := func(xs []compare.Num) string {
				if i >= len(xs) {
					return "—"
				}
				return verdictValue(float64(xs[i]), g.Unit)
			}
			ratio := "—"
			if i < len(b) && i < len(c) && b[i] != 0 && b[i].Finite() && c[i].Finite() {
				ratio = fmt.Sprintf("%.3f", float64(c[i]/b[i]))
			}
			t.Rows = append(t.Rows, row{Cells: []cell{
				textCell(metricLabel(g.Title, g.Unit)), plainCell(round), textCell(order),
				plainCell(value(b)), plainCell(value(c)), plainCell(ratio),
			}})
		}
	}
	return t
}

// Headlines.

// verdictHeadline is v in a line: its outcome with the gates counted, and
// the worst change (the worst regressed gate in a regression); an A/B says
// how it was measured.
func verdictHeadline(v *compare.Verdict) headline {
	var t gateTally
	t.add(v, 0)
	h := headline{Kind: abLine(v.AB)}
	switch v.Outcome {
	case stat.Regression:
		h.Summary = plain(fmt.Sprintf("regression (%d of %s regressed)", t.regressed, verdictCount(t.total, "gate")))
		h.Worst = t.worstRegression()
		return h
	case stat.Pass:
		h.Summary = plain(fmt.Sprintf("pass (%s)", verdictCount(t.total, "gate")))
	default:
		what := fmt.Sprintf("%d of %s undecided", t.undecided, verdictCount(t.total, "gate"))
		if t.total == 0 {
			what = "no gate was tested"
		}
		h.Summary = cat(plain("inconclusive ("+what+"; on_inconclusive: "), onInconclusive(v), plain(fmt.Sprintf(" → exit %d)", v.ExitCode())))
	}
	if t.worstAny != nil {
		h.Worst = cat(plain("worst change: "), t.worstAny.name())
	}
	return h
}

// mergedHeadline is the verdict of several documents: the worst outcome,
// how many jobs have it and the exit code, and the worst change among
// those jobs, named by job.
func mergedHeadline(docs []*reportfile.Document) headline {
	out, n := overall(docs)
	if out == stat.Pass {
		return headline{Summary: plain(fmt.Sprintf("pass (%s)", verdictCount(len(docs), "job")))}
	}
	h := headline{Summary: plain(fmt.Sprintf("%s in %d of %s (exit %d)", out, n, verdictCount(len(docs), "job"), reportfile.ExitCode(docs, exit.FailOnConfig)))}
	var t gateTally
	for i, d := range docs {
		if d.Verdict.Outcome == out {
			t.add(d.Verdict, i)
		}
	}
	var worst sentence
	doc := 0
	switch {
	case out == stat.Regression && t.worstRegressed != nil:
		worst, doc = t.worstRegressed.name(), t.worstRegressedDoc
	case out == stat.Regression && t.worstQuality != nil:
		worst, doc = t.worstQuality.name(), t.worstQualityDoc
	case out != stat.Regression && t.worstAny != nil:
		worst, doc = t.worstAny.name(), t.worstAnyDoc
	}
	if worst != nil {
		h.Worst = cat(plain("worst: "), untrusted(jobName(docs[doc], doc)), plain(" · "), worst)
	}
	return h
}

// pageHeadline is the HTML report's header: the gates of docs counted
// together ("1 of 5 gates regressed") and their worst change: the worst
// regressed latency gate, else the largest quality drop that regressed,
// else the worst latency change. In a merged page the change is named by
// its document's title, when it has one; a page of one A/B says how it was
// measured (a merged page, under each document's title).
func pageHeadline(docs []*reportfile.Document) headline {
	var t gateTally
	for i, d := range docs {
		t.add(d.Verdict, i)
	}
	named := func(doc int, s sentence) sentence {
		if len(docs) > 1 && docs[doc].Title != "" {
			return cat(untrusted(docs[doc].Title), plain(": "), s)
		}
		return s
	}
	var h headline
	if len(docs) == 1 {
		h.Kind = abLine(docs[0].Verdict.AB)
	}
	switch reportfile.Outcome(docs) {
	case stat.Regression:
		h.Summary = plain(fmt.Sprintf("%d of %s regressed", t.regressed, verdictCount(t.total, "gate")))
		switch {
		case t.worstRegressed != nil:
			h.Worst = cat(plain("worst: "), named(t.worstRegressedDoc, t.worstRegressed.name()))
		case t.worstQuality != nil:
			q := t.worstQuality
			h.Worst = cat(plain("worst: "), named(t.worstQualityDoc, join(" ", untrusted(q.s.Name), untrusted(q.q.Name), untrusted(q.g.Title), plain(qualityChange(q.g.Change)))))
		}
		return h
	case stat.Pass:
		h.Summary = plain(verdictCount(t.total, "gate") + " passed")
	default:
		h.Summary = plain(fmt.Sprintf("%d of %s undecided", t.undecided, verdictCount(t.total, "gate")))
		if t.total == 0 {
			h.Summary = plain("no gate was tested")
		}
	}
	if t.worstAny != nil {
		h.Worst = cat(plain("worst change: "), named(t.worstAnyDoc, t.worstAny.name()))
	}
	return h
}

// overall is the outcome of docs together and how many of them have it.
func overall(docs []*reportfile.Document) (out stat.Outcome, n int) {
	out = reportfile.Outcome(docs)
	for _, d := range docs {
		if d.Verdict.Outcome == out {
			n++
		}
	}
	return out, n
}

// onInconclusive is the verdict's on_inconclusive, or the default.
func onInconclusive(v *compare.Verdict) sentence {
	if v.OnInconclusive == "" {
		return plain(config.DefaultOnInconclusive)
	}
	return untrusted(v.OnInconclusive)
}

// verdictListed is how many regressed gates a verdict line names.
const verdictListed = 5

// verdictLine is a verdict's line: its outcome, the regressed gates (a few
// of them) with their changes, or the gates counted.
func verdictLine(v *compare.Verdict) sentence {
	total, undecided := 0, 0
	var regressed []sentence
	for _, s := range v.Scenarios {
		for _, g := range s.Gates {
			total++
			switch g.Outcome {
			case stat.Regression:
				regressed = append(regressed, join(" ", untrusted(s.Name), untrusted(g.Title), changeEstimate(g)))
			case stat.Inconclusive:
				undecided++
			}
		}
		for _, q := range s.Quality {
			for _, g := range q.Gates {
				total++
				switch g.Outcome {
				case stat.Regression:
					regressed = append(regressed, join(" ", untrusted(s.Name), untrusted(q.Name), untrusted(g.Title), plain(qualityChangeEstimate(g))))
				case stat.Inconclusive:
					undecided++
				}
			}
		}
	}
	switch v.Outcome {
	case stat.Regression:
		shown, more := regressed, ""
		if len(shown) > verdictListed {
			more = fmt.Sprintf(", and %d more", len(shown)-verdictListed)
			shown = shown[:verdictListed]
		}
		return cat(plain(fmt.Sprintf("REGRESSION (%s regressed: ", verdictCount(len(regressed), "gate"))), join(", ", shown...), plain(more+")"))
	case stat.Pass:
		return plain(fmt.Sprintf("pass (%s)", verdictCount(total, "gate")))
	}
	what := fmt.Sprintf("%s undecided", verdictCount(undecided, "gate"))
	if total == 0 {
		what = "no gate was tested"
	}
	return cat(plain("inconclusive ("+what+"; on_inconclusive: "), onInconclusive(v), plain(fmt.Sprintf(" → exit %d)", v.ExitCode())))
}

// gateTally counts gates by outcome over one or more verdicts and keeps the
// worst changes, for the headlines: the worst regressed latency gate, the
// largest regressed quality drop (in points, so not ranked against latency
// changes in percent), and the worst latency change of any outcome. The
// *Doc fields say which verdict (by the index given to add) each came from.
type gateTally struct {
	total, regressed, undecided int
	worstRegressed, worstAny    *gateRef
	worstQuality                *qualityGateRef
	worstRegressedDoc           int
	worstAnyDoc                 int
	worstQualityDoc             int
}

// add counts the gates of v, verdict number doc.
func (t *gateTally) add(v *compare.Verdict, doc int) {
	for i := range v.Scenarios {
		s := &v.Scenarios[i]
		for j := range s.Gates {
			g := &s.Gates[j]
			t.total++
			ref := &gateRef{s, g}
			switch g.Outcome {
			case stat.Regression:
				t.regressed++
				if t.worstRegressed == nil || ref.worseThan(t.worstRegressed) {
					t.worstRegressed, t.worstRegressedDoc = ref, doc
				}
			case stat.Inconclusive:
				t.undecided++
			}
			if ref.badness() > math.Inf(-1) && (t.worstAny == nil || ref.worseThan(t.worstAny)) {
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
					if t.worstQuality == nil || qualityLoss(g) > qualityLoss(t.worstQuality.g) {
						t.worstQuality, t.worstQualityDoc = &qualityGateRef{s, q, g}, doc
					}
				case stat.Inconclusive:
					t.undecided++
				}
			}
		}
	}
}

// worstRegression is "worst: " and the worst regressed gate: a latency
// gate's, else a quality gate's; empty when none regressed.
func (t *gateTally) worstRegression() sentence {
	switch {
	case t.worstRegressed != nil:
		return cat(plain("worst: "), t.worstRegressed.name())
	case t.worstQuality != nil:
		return cat(plain("worst: "), t.worstQuality.name())
	}
	return nil
}

// gateRef is a gate with its scenario, for naming it.
type gateRef struct {
	s *compare.Scenario
	g *compare.Gate
}

// badness is the gate's relative change in its bad direction (positive is
// worse); -Inf when it has none, as a share's change in points has not (it
// is not ranked against changes in percent).
func (r *gateRef) badness() float64 {
	c := float64(r.g.Change.Estimate)
	if !r.g.Change.Estimate.Finite() || r.g.Unit == shareUnit {
		return math.Inf(-1)
	}
	if r.g.Better == "higher" {
		return -c
	}
	return c
}

func (r *gateRef) worseThan(o *gateRef) bool { return r.badness() > o.badness() }

// name is "chat-c16 TTFT p99 +31.2% [+25.0%, +38.1%]".
func (r *gateRef) name() sentence {
	return join(" ", untrusted(r.s.Name), untrusted(r.g.Title), changeText(*r.g))
}

// qualityGateRef is a quality gate with its suite and scenario, for naming it.
type qualityGateRef struct {
	s *compare.Scenario
	q *compare.Suite
	g *compare.QualityGate
}

// name is "chat-c16 arithmetic accuracy -30.0 points".
func (r *qualityGateRef) name() sentence {
	return join(" ", untrusted(r.s.Name), untrusted(r.q.Name), untrusted(r.g.Title), plain(qualityChangeEstimate(*r.g)))
}
