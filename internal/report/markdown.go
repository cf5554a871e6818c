package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/compare/stat"
	"github.com/perfgate/perfgate/internal/exit"
)

// detail is how much of a report the markdown shows: a report too long for
// its limit is rendered again with less, and the verdict is never cut.
type detail int

const (
	// detailFull is everything.
	detailFull detail = iota
	// detailNoDetails leaves out the collapsed per-repetition, percentile
	// and telemetry tables.
	detailNoDetails
	// detailNoCharts also leaves out the charts and the eval suites'
	// changed items.
	detailNoCharts
	// detailTables keeps the headlines and the gate tables alone.
	detailTables
)

// MarkdownOptions say where a markdown report goes.
type MarkdownOptions struct {
	// Limit is the most bytes the output may take (GitHub's limits are
	// internal/github's CommentLimit and SummaryLimit); 0 is no limit.
	Limit int
	// Marker, when set, is the first line, kept whatever is cut: the hidden
	// marker that finds a sticky comment again.
	Marker string
}

// WriteMarkdown renders docs as GitHub-flavoured markdown for a pull request
// comment or a step summary. One document is one verdict: a first line with
// the verdict and its worst change, per scenario the gate table, quality,
// collapsed mermaid charts (TTFT and TPOT percentiles on both sides, the
// promoted history) and a collapsed table of the engine, GPU and cost
// medians, the telemetry sources that were unavailable, what changed,
// warnings, and collapsed details with every percentile and per-repetition
// value. Several documents (a matrix of jobs,
// merged) get one overall verdict, a table of the jobs and a section each.
//
// When the result is longer than o.Limit, it is rendered again with less
// detail (the details and the telemetry tables first, then the charts and
// examples, then everything
// but the gate tables), and as a last resort cut at a line, with a note
// saying so; the first line, the verdict, always stays.
func WriteMarkdown(w io.Writer, docs []*Document, o MarkdownOptions) error {
	if len(docs) == 0 {
		return errNoDocuments
	}
	var out string
	for level := detailFull; level <= detailTables; level++ {
		out = renderMarkdown(docs, level, o)
		if o.Limit <= 0 || len(out) <= o.Limit {
			break
		}
	}
	if o.Limit > 0 && len(out) > o.Limit {
		out = cutMarkdown(out, o.Limit)
	}
	_, err := io.WriteString(w, out)
	return err
}

// cutNote ends a report that was rendered with less than everything.
const cutNote = "_Cut to fit GitHub's size limit: the HTML report and the report file have everything._"

// renderMarkdown is the report at one level of detail.
func renderMarkdown(docs []*Document, level detail, o MarkdownOptions) string {
	var buf bytes.Buffer
	p := &verdictPrinter{w: &buf}
	if o.Marker != "" {
		p.println(o.Marker)
	}
	if len(docs) == 1 {
		d := docs[0]
		mark, text := verdictHeadlineParts(d.Verdict)
		name := "perfgate"
		if d.Title != "" {
			name += " · " + verdictMD(d.Title)
		}
		p.printf("### %s %s: %s\n", mark, name, text)
		writeMarkdownBody(p, d.Verdict, d, level)
	} else {
		writeMergedMarkdown(p, docs, level)
	}
	if level > detailFull {
		p.println()
		p.println(cutNote)
	}
	writeSource(p, docs)
	return buf.String()
}

// writeMergedMarkdown is the report of several jobs: the overall verdict, a
// table with one row per job, and each job's report as a section.
func writeMergedMarkdown(p *verdictPrinter, docs []*Document, level detail) {
	out, n := overall(docs)
	var worst string
	for i, d := range docs {
		if d.Verdict.Outcome != out {
			continue
		}
		if worst == "" {
			_, text := verdictHeadlineParts(d.Verdict)
			if _, w, ok := strings.Cut(text, " — "); ok {
				w = strings.TrimPrefix(strings.TrimPrefix(w, "worst change: "), "worst: ")
				worst = " — worst: " + jobTitle(d, i) + " · " + w
			}
		}
	}
	switch out {
	case stat.Pass:
		p.printf("### ✅ perfgate: pass (%s)\n", verdictCount(len(docs), "job"))
	default:
		p.printf("### %s perfgate: %s in %d of %s (exit %d)%s\n", outcomeMark(out), out, n, verdictCount(len(docs), "job"), ExitCode(docs, exit.FailOnConfig), worst)
	}
	p.println()
	p.println("| job | verdict |")
	p.println("|:--|:--|")
	for i, d := range docs {
		mark, text := verdictHeadlineParts(d.Verdict)
		summary, _, _ := strings.Cut(text, " — ")
		p.printf("| %s %s | %s |\n", mark, jobTitle(d, i), summary)
	}
	for i, d := range docs {
		mark, text := verdictHeadlineParts(d.Verdict)
		p.println()
		p.println("---")
		p.println()
		p.printf("### %s %s: %s\n", mark, jobTitle(d, i), text)
		writeMarkdownBody(p, d.Verdict, d, level)
	}
}

// jobName names document i of a merged report: its title, else its key,
// else its place.
func jobName(d *Document, i int) string {
	switch {
	case d.Title != "":
		return d.Title
	case d.Key != "":
		return d.Key
	}
	return fmt.Sprintf("job %d", i+1)
}

// jobTitle is jobName escaped for markdown.
func jobTitle(d *Document, i int) string { return verdictMD(jobName(d, i)) }

// writeSource is the last line: the run and commit measured, when known.
func writeSource(p *verdictPrinter, docs []*Document) {
	var parts []string
	seen := map[string]bool{}
	for _, d := range docs {
		src := d.Source
		if src.RunURL != "" && safeURL(src.RunURL) && !seen[src.RunURL] {
			seen[src.RunURL] = true
			parts = append(parts, fmt.Sprintf("[workflow run](%s)", src.RunURL))
		}
		if src.Commit != "" && !seen[src.Commit] {
			seen[src.Commit] = true
			parts = append(parts, "commit "+verdictMD(shortCommit(src.Commit)))
		}
	}
	if len(parts) > 0 {
		p.println()
		p.println("<sub>" + strings.Join(parts, " · ") + "</sub>")
	}
}

// safeURL reports whether u is an http(s) URL with nothing in it that could
// leave a markdown link.
func safeURL(u string) bool {
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return false
	}
	return !strings.ContainsAny(u, " ()<>[]\"'`\\\n\r\t")
}

// shortCommit is a commit's first 7 characters.
func shortCommit(c string) string {
	if len(c) > 7 {
		return c[:7]
	}
	return c
}

// cutMarkdown cuts s at a line so that it and cutNote fit in limit bytes.
func cutMarkdown(s string, limit int) string {
	room := limit - len(cutNote) - 2
	if room <= 0 {
		// Too small even for the note: the first line alone, cut.
		first, _, _ := strings.Cut(s, "\n")
		return truncateBytes(first, limit)
	}
	cut := s[:room]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i+1]
	} else {
		cut = truncateBytes(cut, room) + "\n"
	}
	return cut + "\n" + cutNote + "\n"
}

// truncateBytes cuts s to at most n bytes without splitting a character.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// scenario is the chart data of the scenario named name, or nil.
func (d *Document) scenario(name string) *ScenarioData {
	if d == nil {
		return nil
	}
	for i := range d.Scenarios {
		if d.Scenarios[i].Name == name {
			return &d.Scenarios[i]
		}
	}
	return nil
}

// chartMetrics are the latency metrics the markdown charts.
var chartMetrics = []string{"ttft", "tpot"}

// historyShown is how many of the latest history entries a chart shows.
const historyShown = 20

// writeCharts is a scenario's collapsed block of mermaid charts: TTFT and
// TPOT percentiles (baseline bars, candidate line) and, with history, each
// one's promoted p99 over time ending at this run.
func writeCharts(p *verdictPrinter, s *compare.Scenario, sd *ScenarioData) {
	if sd == nil {
		return
	}
	var charts []string
	for _, name := range chartMetrics {
		ld := sd.latency(name)
		if ld == nil || ld.Candidate == nil {
			continue
		}
		if c := percentileChart(ld); c != "" {
			charts = append(charts, c)
		}
	}
	for _, name := range chartMetrics {
		if c := historyChart(sd, name); c != "" {
			charts = append(charts, c)
		}
	}
	if len(charts) == 0 {
		return
	}
	p.println()
	p.printf("<details><summary>Charts: %s</summary>\n", verdictMD(s.Name))
	for _, c := range charts {
		p.println()
		p.println("```mermaid")
		p.print(c)
		p.println("```")
	}
	p.println()
	p.println("</details>")
}

// latency is the scenario's data of latency metric name, or nil.
func (sd *ScenarioData) latency(name string) *LatencyData {
	for i := range sd.Latency {
		if sd.Latency[i].Metric == name {
			return &sd.Latency[i]
		}
	}
	return nil
}

// percentileChart is a mermaid xychart of ld's percentiles: the baseline as
// bars, the candidate as a line; "" when a value is missing.
func percentileChart(ld *LatencyData) string {
	var names, cand, base []string
	for i, pc := range ld.Candidate.Percentiles {
		if !finite(pc.Value) {
			return ""
		}
		names = append(names, strconv.Quote(pc.Name))
		cand = append(cand, mermaidNumber(pc.Value))
		if ld.Baseline != nil {
			if i >= len(ld.Baseline.Percentiles) || !finite(ld.Baseline.Percentiles[i].Value) {
				return ""
			}
			base = append(base, mermaidNumber(ld.Baseline.Percentiles[i].Value))
		}
	}
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("xychart-beta\n")
	title := mermaidText(ld.Title) + " percentiles (ms): candidate line"
	if base != nil {
		title = mermaidText(ld.Title) + " percentiles (ms): baseline bars, candidate line"
	}
	fmt.Fprintf(&b, "    title %q\n", title)
	fmt.Fprintf(&b, "    x-axis [%s]\n", strings.Join(names, ", "))
	fmt.Fprintf(&b, "    y-axis %q\n", mermaidText(ld.Title)+" (ms)")
	if base != nil {
		fmt.Fprintf(&b, "    bar [%s]\n", strings.Join(base, ", "))
	}
	fmt.Fprintf(&b, "    line [%s]\n", strings.Join(cand, ", "))
	return b.String()
}

// historyChart is a mermaid line chart of metric name's p99 over the
// scenario's promoted history (the latest historyShown entries), ending with
// this run's candidate; "" without history.
func historyChart(sd *ScenarioData, name string) string {
	key := name + ".p99"
	var labels, values []string
	hist := sd.History
	if len(hist) > historyShown {
		hist = hist[len(hist)-historyShown:]
	}
	for _, e := range hist {
		m, ok := e.Metrics[key]
		if !ok || !finite(m.Median) {
			continue
		}
		label := shortCommit(e.Commit)
		if label == "" {
			label = e.Date.UTC().Format("01-02")
		}
		labels = append(labels, strconv.Quote(mermaidText(label)))
		values = append(values, mermaidNumber(m.Median))
	}
	if len(values) == 0 {
		return ""
	}
	ld := sd.latency(name)
	title := strings.ToUpper(name)
	if ld != nil {
		title = ld.Title
		if ld.Candidate != nil {
			for _, pc := range ld.Candidate.Percentiles {
				if pc.Name == "p99" && finite(pc.Value) {
					labels = append(labels, strconv.Quote("this run"))
					values = append(values, mermaidNumber(pc.Value))
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("xychart-beta\n")
	fmt.Fprintf(&b, "    title %q\n", mermaidText(title)+" p99 (ms): promoted baselines, then this run")
	fmt.Fprintf(&b, "    x-axis [%s]\n", strings.Join(labels, ", "))
	fmt.Fprintf(&b, "    y-axis %q\n", mermaidText(title)+" p99 (ms)")
	fmt.Fprintf(&b, "    line [%s]\n", strings.Join(values, ", "))
	return b.String()
}

// mermaidText keeps what a mermaid string can safely hold: letters, digits,
// spaces and a little punctuation, cut to 60 runes.
func mermaidText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(" .,:/()%+-_", r):
			return r
		}
		return ' '
	}, s)
	return clean(s, 60)
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
	return math.Round(x*scale) / scale
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// writePercentiles is a scenario's table of every latency percentile,
// baseline → candidate with the change.
func writePercentiles(p *verdictPrinter, sd *ScenarioData) {
	if sd == nil || len(sd.Latency) == 0 {
		return
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
		return
	}
	p.println()
	p.printf("| latency (ms, median of repetitions) | %s |\n", strings.Join(names, " | "))
	p.println("|:--" + strings.Repeat("|--:", len(names)) + "|")
	for _, ld := range sd.Latency {
		if ld.Candidate == nil {
			continue
		}
		cells := make([]string, len(names))
		for i := range names {
			cells[i] = "—"
			if i >= len(ld.Candidate.Percentiles) {
				continue
			}
			c := ld.Candidate.Percentiles[i].Value
			if ld.Baseline == nil || i >= len(ld.Baseline.Percentiles) {
				cells[i] = verdictValue(c, "ms")
				continue
			}
			b := ld.Baseline.Percentiles[i].Value
			cells[i] = verdictValue(b, "ms") + " → " + verdictValue(c, "ms")
			if b > 0 && finite(b) && finite(c) {
				cells[i] += fmt.Sprintf(" (%+.1f%%)", 100*(c/b-1))
			}
		}
		p.printf("| %s | %s |\n", verdictMD(ld.Title), strings.Join(cells, " | "))
	}
}

// overall is the outcome of docs together and how many of them have it.
func overall(docs []*Document) (out stat.Outcome, n int) {
	out = Outcome(docs)
	for _, d := range docs {
		if d.Verdict.Outcome == out {
			n++
		}
	}
	return out, n
}

// outcomeMark is the mark of an outcome: ❌, ✅ or ⚠️.
func outcomeMark(o stat.Outcome) string {
	switch o {
	case stat.Regression:
		return "❌"
	case stat.Pass:
		return "✅"
	}
	return "⚠️"
}

// WriteText renders docs for a terminal: one document is its verdict's text,
// with each scenario's engine, GPU and cost medians and the telemetry
// sources that were unavailable; several get a section each, headed by the
// job's title, and a last line with the overall verdict.
func WriteText(w io.Writer, docs []*Document) error {
	if len(docs) == 0 {
		return errNoDocuments
	}
	if len(docs) == 1 {
		return writeVerdictText(w, docs[0].Verdict, docs[0])
	}
	p := &verdictPrinter{w: w}
	for i, d := range docs {
		p.printf("=== %s\n\n", verdictClean(jobName(d, i)))
		if err := writeVerdictText(p, d.Verdict, d); err != nil {
			return err
		}
		p.println()
	}
	out, n := overall(docs)
	if out == stat.Pass {
		p.printf("overall: pass (%s)\n", verdictCount(len(docs), "job"))
	} else {
		p.printf("overall: %s in %d of %s (exit %d)\n", out, n, verdictCount(len(docs), "job"), ExitCode(docs, exit.FailOnConfig))
	}
	return p.err
}

// WriteDocumentsJSON writes one document as indented JSON, or several as a
// JSON array of documents.
func WriteDocumentsJSON(w io.Writer, docs []*Document) error {
	if len(docs) == 0 {
		return errNoDocuments
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(docs) == 1 {
		return enc.Encode(docs[0])
	}
	return enc.Encode(docs)
}
