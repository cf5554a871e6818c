package baseline

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/suggest"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// showMetrics are the columns of WriteShow after the identity.
var showMetrics = []string{"ttft.p99", "tpot.p99", "output_throughput"}

// historySeed seeds the change-point search of WriteHistory, so a history
// always renders alike.
const historySeed = 1

// changeMarker marks a row where a new regime starts.
const changeMarker = "◆ change point"

// WriteShow prints the promoted baselines, one row per scenario: scenario,
// date, commit (12 characters), engine and version, model, repetitions, and
// the medians over repetitions of TTFT p99, TPOT p99 and output throughput.
// The date and commit come from the history entry the baseline was promoted
// with (the latest of its scenario with the same identity and figures); a
// baseline with none shows its result's finish time and no commit.
func WriteShow(w io.Writer, baselines []*result.Result, history []Entry) error {
	if len(baselines) == 0 {
		_, err := fmt.Fprintln(w, "no baselines (promote one with `perfgate baseline promote RESULT`)")
		return err
	}
	t := table{right: []bool{false, false, false, false, false, true, true, true, true}}
	header := []string{"scenario", "date", "commit", "engine", "model", "reps"}
	for _, name := range showMetrics {
		m, err := metric.Lookup(name)
		if err != nil {
			return err
		}
		header = append(header, fmt.Sprintf("%s (%s)", m.Title, m.Unit()))
	}
	t.add(header...)
	for _, r := range baselines {
		for i := range r.Scenarios {
			sc := &r.Scenarios[i]
			date, commit := r.FinishedAt, ""
			if e, ok := promotedWith(r, sc, history); ok {
				date, commit = e.Date, e.Commit
			}
			engine := strings.TrimSpace(r.Identity.Server.Engine + " " + r.Identity.Server.Version)
			row := []string{clean(sc.Name, 40), formatDate(date), dash(shortCommit(commit)),
				dash(clean(engine, 40)), dash(clean(r.Identity.Target.Model, 40)), fmt.Sprint(len(sc.Repetitions))}
			for _, name := range showMetrics {
				m, _ := metric.Lookup(name)
				vs, err := sc.Values(name)
				if err != nil {
					return fmt.Errorf("baseline %s: %w", sc.Name, err)
				}
				if len(vs) == 0 {
					row = append(row, "—")
					continue
				}
				row = append(row, formatValue(m, summarize(vs).Median))
			}
			t.add(row...)
		}
	}
	return t.write(w, "")
}

// promotedWith finds the history entry a baseline scenario was promoted
// with: the last of its scenario whose identity, repetitions and headline
// medians are the baseline's own.
func promotedWith(r *result.Result, sc *result.ScenarioResult, history []Entry) (Entry, bool) {
	own, err := NewEntry(r, sc, Meta{})
	if err != nil {
		return Entry{}, false
	}
	for i := len(history) - 1; i >= 0; i-- {
		e := history[i]
		if e.Scenario != own.Scenario || e.Identity != own.Identity || e.Repetitions != own.Repetitions {
			continue
		}
		same := true
		for name, s := range own.Metrics {
			if got, ok := e.Metrics[name]; !ok || got.Median != s.Median {
				same = false
				break
			}
		}
		if same {
			return e, true
		}
	}
	return Entry{}, false
}

// HistoryOptions chooses what WriteHistory shows.
type HistoryOptions struct {
	// Metric is the metric to show, one of Headline; "" is ttft.p99.
	Metric string
	// Last is how many of the latest entries of each scenario to show; 0 is
	// all of them.
	Last int
	// Scenario is the one scenario to show; "" is every scenario, a table
	// each.
	Scenario string
}

// WriteHistory prints, per scenario (in name order), a table of its history
// entries, oldest first: date, commit, the metric's median with its 95%
// interval, the change from the previous entry in percent, and a note — the
// marker "◆ change point" on each entry where ChangePoints, run over the
// scenario's whole series of medians (before it is cut to the Last entries),
// finds a new regime starting, and "identity changed" where the identity
// digest differs from the previous entry's. Under each table come a
// sparkline of the shown medians with the trend from the first shown to the
// last, and a line for each change point shown: the median of the regime
// before and of the one after, the change in percent, and whether that is
// better or worse by the metric's direction.
func WriteHistory(w io.Writer, entries []Entry, opts HistoryOptions) error {
	if opts.Metric == "" {
		opts.Metric = "ttft.p99"
	}
	m, err := metric.Lookup(opts.Metric)
	if err != nil {
		return err
	}
	if !slices.Contains(Headline, m.Name) {
		return fmt.Errorf("history keeps only %s, not %s", strings.Join(Headline, ", "), m.Name)
	}
	if opts.Last < 0 {
		return fmt.Errorf("history: last %d runs: want 0 (all) or more", opts.Last)
	}
	byScenario := map[string][]Entry{}
	for _, e := range entries {
		byScenario[e.Scenario] = append(byScenario[e.Scenario], e)
	}
	names := slices.Sorted(maps.Keys(byScenario))
	if opts.Scenario != "" {
		if _, ok := byScenario[opts.Scenario]; !ok {
			return noScenario(opts.Scenario, names)
		}
		names = []string{opts.Scenario}
	}
	if len(names) == 0 {
		_, err := fmt.Fprintln(w, "no history yet (each `perfgate baseline promote` adds to it)")
		return err
	}
	for i, name := range names {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if err := writeScenarioHistory(w, name, byScenario[name], m, opts.Last); err != nil {
			return err
		}
	}
	return nil
}

func noScenario(name string, known []string) error {
	if len(known) == 0 {
		return fmt.Errorf("no history for scenario %s: the history is empty", name)
	}
	if s, ok := suggest.Closest(name, known); ok {
		return fmt.Errorf("no history for scenario %s (did you mean %s?)", name, s)
	}
	return fmt.Errorf("no history for scenario %s (history has %s)", name, strings.Join(known, ", "))
}

// point is one entry of a scenario's series of the metric.
type point struct {
	Entry
	Summary
}

func writeScenarioHistory(w io.Writer, name string, entries []Entry, m metric.Info, last int) error {
	var series []point
	for _, e := range entries {
		if s, ok := e.Metrics[m.Name]; ok {
			series = append(series, point{e, s})
		}
	}
	slices.SortStableFunc(series, func(a, b point) int { return a.Date.Compare(b.Date) })
	direction := "lower is better"
	if m.HigherIsBetter {
		direction = "higher is better"
	}
	title := fmt.Sprintf("== %s · %s (%s, %s)", clean(name, 60), m.Title, m.Unit(), direction)
	if len(series) == 0 {
		_, err := fmt.Fprintf(w, "%s · no entry has it\n", title)
		return err
	}

	medians := make([]float64, len(series))
	for i, p := range series {
		medians[i] = p.Median
	}
	cps := ChangePoints(medians, historySeed)
	from := 0
	if last > 0 && len(series) > last {
		from = len(series) - last
	}
	shown := series[from:]
	if from > 0 {
		title += fmt.Sprintf(" · last %d of %d runs", len(shown), len(series))
	} else {
		title += fmt.Sprintf(" · %d run%s", len(series), plural(len(series)))
	}
	if _, err := fmt.Fprintln(w, title); err != nil {
		return err
	}

	t := table{right: []bool{false, false, true, false, true, false}}
	t.add("date", "commit", "median", "95% interval", "change", "")
	for i := from; i < len(series); i++ {
		p := series[i]
		change := ""
		var notes []string
		if i > 0 {
			change = FormatChange(m, medians[i-1], medians[i])
			if p.Identity != series[i-1].Identity {
				notes = append(notes, "identity changed ("+dash(clean(strings.TrimSpace(p.Engine+" "+p.Version), 40))+")")
			}
		}
		if slices.Contains(cps, i) {
			notes = append([]string{changeMarker}, notes...)
		}
		t.add(formatDate(p.Date), dash(shortCommit(p.Commit)), formatValue(m, p.Median), formatInterval(m, p.Summary), change, strings.Join(notes, "; "))
	}
	if err := t.write(w, "  "); err != nil {
		return err
	}

	shownMedians := medians[from:]
	trend := Sparkline(shownMedians)
	if len(shown) > 1 {
		trend += fmt.Sprintf("  trend: %s over %d runs", dash(FormatChange(m, shownMedians[0], shownMedians[len(shownMedians)-1])), len(shown))
	}
	if _, err := fmt.Fprintf(w, "  %s\n", trend); err != nil {
		return err
	}
	for k, cp := range cps {
		if cp < from {
			continue
		}
		lo, hi := 0, len(medians)
		if k > 0 {
			lo = cps[k-1]
		}
		if k+1 < len(cps) {
			hi = cps[k+1]
		}
		before, after := summarize(medians[lo:cp]).Median, summarize(medians[cp:hi]).Median
		at := formatDate(series[cp].Date)
		if c := shortCommit(series[cp].Commit); c != "" {
			at = c + " (" + at + ")"
		}
		if _, err := fmt.Fprintf(w, "  change point at %s: median %s → %s %s (%s), %s\n", at,
			formatValue(m, before), formatValue(m, after), m.Unit(), dash(FormatChange(m, before, after)), verdict(m, before, after)); err != nil {
			return err
		}
	}
	return nil
}

// verdict says whether going from a to b is better or worse for m.
func verdict(m metric.Info, a, b float64) string {
	switch {
	case a == b:
		return "unchanged"
	case (b > a) == m.HigherIsBetter:
		return "better"
	default:
		return "worse"
	}
}

// Sparkline draws values as block heights from the lowest to the highest; a
// flat series is a row of middle blocks, none an empty string.
func Sparkline(values []float64) string {
	if len(values) == 0 {
		return ""
	}
	const blocks = "▁▂▃▄▅▆▇█"
	levels := []rune(blocks)
	lo, hi := slices.Min(values), slices.Max(values)
	var b strings.Builder
	for _, v := range values {
		i := len(levels) / 2
		if hi > lo {
			i = int(math.Round((v - lo) / (hi - lo) * float64(len(levels)-1)))
		}
		b.WriteRune(levels[i])
	}
	return b.String()
}

// formatValue writes a metric value in its unit (m.Unit()): milliseconds to
// two decimals, token rates to one, request rates to two, fractions as
// percent, counts whole (or to one decimal, a median of two), MiB whole,
// watts to one decimal, and joules per token, tokens per joule and dollars
// per million tokens to three significant figures or more.
func formatValue(m metric.Info, v float64) string {
	switch m.Kind {
	case metric.Latency, metric.RequestRate:
		return fmt.Sprintf("%.2f", v)
	case metric.TokenRate:
		return fmt.Sprintf("%.1f", v)
	case metric.Fraction:
		return fmt.Sprintf("%.2f", v*100)
	case metric.Count:
		if v == math.Trunc(v) {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.1f", v)
	case metric.Memory:
		return fmt.Sprintf("%.0f", v)
	case metric.Power:
		return fmt.Sprintf("%.1f", v)
	}
	// Energy, Efficiency, Money: small numbers, read to a few significant
	// figures (0.412 J/tok, 2.45 tok/J, 0.0352 $/Mtok).
	return sigFigs(v)
}

// sigFigs writes v with three significant figures, but never rounds away
// digits before the point and never uses an exponent: 0.0352, 2.45, 1235.
func sigFigs(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	decimals := 0
	if a := math.Abs(v); a < 100 {
		decimals = min(2-int(math.Floor(math.Log10(a))), 9)
	}
	return fmt.Sprintf("%.*f", decimals, v)
}

// formatInterval writes a Summary's interval, or "—" when it is unbounded.
func formatInterval(m metric.Info, s Summary) string {
	if s.Lo == nil || s.Hi == nil {
		return "—"
	}
	return "[" + formatValue(m, *s.Lo) + ", " + formatValue(m, *s.Hi) + "]"
}

// FormatChange is the change from a to b in m's unit of change: percentage
// points for a share (the error rate: 2% to 4% is +2.00 pts, and from 0 it
// is still a change), a percentage of a for everything else.
func FormatChange(m metric.Info, a, b float64) string {
	if m.Points() {
		return fmt.Sprintf("%+.2f pts", 100*(b-a))
	}
	return formatPct(a, b)
}

// formatPct is the change from a to b in percent of a, or "" when a is 0
// (and b is not).
func formatPct(a, b float64) string {
	if a == b {
		return "+0.0%"
	}
	if a == 0 {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", (b-a)/math.Abs(a)*100)
}

func formatDate(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// shortCommit is a commit cut to 12 characters, made safe for a terminal.
func shortCommit(c string) string {
	c = clean(c, math.MaxInt)
	if r := []rune(c); len(r) > 12 {
		return string(r[:12])
	}
	return c
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// clean makes untrusted text (from a result file or the history, so in the
// end from a server) safe for a terminal: control and format characters
// become spaces, and it is cut to at most n runes.
func clean(s string, n int) string { return textsafe.Cut(s, n) }

// table is a text table written through a tabwriter: left-aligned columns
// are padded by the tabwriter, right-aligned ones are padded here first.
type table struct {
	right []bool
	rows  [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the table, each line after indent, with two spaces between
// columns and no trailing blanks.
func (t *table) write(w io.Writer, indent string) error {
	widths := map[int]int{}
	for _, row := range t.rows {
		for i, c := range row {
			if i < len(t.right) && t.right[i] {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	for _, row := range t.rows {
		cells := make([]string, len(row))
		for i, c := range row {
			if pad := widths[i] - utf8.RuneCountInString(c); pad > 0 {
				c = strings.Repeat(" ", pad) + c
			}
			cells[i] = c
		}
		if _, err := fmt.Fprint(tw, indent+strings.Join(cells, "\t")+"\t\n"); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var out bytes.Buffer
	for line := range bytes.Lines(buf.Bytes()) {
		out.Write(bytes.TrimRight(line, " \n"))
		out.WriteByte('\n')
	}
	_, err := w.Write(out.Bytes())
	return err
}
