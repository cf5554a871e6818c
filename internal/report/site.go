package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// The history site: a release manager's view of baselines/history.jsonl,
// as static pages that fetch nothing (the HTML report's style, script,
// inlined Chart.js and Content-Security-Policy). index.html lists every
// scenario's headline metrics with their latest value, their trend and
// their last change point; each scenario has a page with a chart a metric
// (every run's median and 95% interval, promotions and nightly records
// told apart, change points marked with their size and direction, identity
// changes on the axis, each point opening its commit) and the tables of
// its change points and identity changes.

// SiteOptions says how a site links out.
type SiteOptions struct {
	// RepoURL is the repository's web address (https://github.com/o/r): a
	// point or a commit links to RepoURL/commit/SHA. Empty: no links.
	RepoURL string
	// Now dates the site; zero is time.Now.
	Now time.Time
}

// Site is what WriteSite wrote.
type Site struct {
	// Pages are the files written, index.html first, relative to the
	// site's directory.
	Pages []string
	// Bytes is their size in all.
	Bytes int64
}

// siteTrendRuns is how many of the newest runs the index's trend spans.
const siteTrendRuns = 30

// WriteSite writes the history site of entries into dir (created if
// missing; the pages it writes replace those there).
func WriteSite(dir string, entries []baseline.Entry, o SiteOptions) (Site, error) {
	if len(entries) == 0 {
		return Site{}, fmt.Errorf("history site: the history is empty (each perfgate baseline promote or record adds to it)")
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.RepoURL != "" && !repoURL.MatchString(o.RepoURL) {
		return Site{}, fmt.Errorf("history site: repository URL %q: want https://HOST/OWNER/REPO", o.RepoURL)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Site{}, fmt.Errorf("history site: %w", err)
	}
	byScenario := map[string][]baseline.Entry{}
	for _, e := range entries {
		byScenario[e.Scenario] = append(byScenario[e.Scenario], e)
	}
	names := slices.Sorted(maps.Keys(byScenario))
	var site Site
	var rows []siteIndexRow
	for i, name := range names {
		series := byScenario[name]
		slices.SortStableFunc(series, func(a, b baseline.Entry) int { return a.Date.Compare(b.Date) })
		file := fmt.Sprintf("s%d-%s.html", i+1, slug(name))
		page := scenarioPage(name, series, o)
		n, err := writePage(filepath.Join(dir, file), "site-scenario", page)
		if err != nil {
			return site, err
		}
		site.Pages, site.Bytes = append(site.Pages, file), site.Bytes+n
		rows = append(rows, page.indexRows(file)...)
	}
	index := siteIndex{sitePage: sitePage{Title: "perfgate: performance history", Generated: o.Now.UTC().Format("2006-01-02 15:04 UTC")},
		Runs: len(entries), Scenarios: len(names), Rows: rows}
	n, err := writePage(filepath.Join(dir, "index.html"), "site-index", index)
	if err != nil {
		return site, err
	}
	site.Pages, site.Bytes = append([]string{"index.html"}, site.Pages...), site.Bytes+n
	return site, nil
}

// repoURL is what SiteOptions.RepoURL may be.
var repoURL = regexp.MustCompile(`^https://[A-Za-z0-9.-]+(:[0-9]+)?/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// notSlug is what a page's file name leaves out of a scenario's name.
var notSlug = regexp.MustCompile(`[^a-z0-9-]+`)

// slug is name as part of a file name: lowercase letters, digits and
// dashes, at most 40 (the page's number keeps names apart).
func slug(name string) string {
	s := strings.Trim(notSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		s = "scenario"
	}
	return s
}

// sitePage is what every page of the site has.
type sitePage struct {
	Title     string
	Generated string
	CSP       string
	Version   string
	Style     template.CSS
	Script    template.JS
	ChartJS   template.JS
	Data      json.RawMessage
}

// siteIndex is index.html.
type siteIndex struct {
	sitePage
	Runs, Scenarios int
	Rows            []siteIndexRow
}

// siteIndexRow is one scenario's metric on the index.
type siteIndexRow struct {
	Page, Scenario, Metric string
	First                  bool // the scenario's first row
	Latest, Trend, Change  string
	Worse                  bool
}

// siteScenario is a scenario's page.
type siteScenario struct {
	sitePage
	Name, Facts string
	Changes     []siteChangeRow
	Identities  []siteIdentityRow
	Releases    []siteReleaseRow
	Charts      []siteChart
	metrics     []siteMetric // for the index
}

// siteMetric is what the index says of one metric of a scenario.
type siteMetric struct {
	name, latest, trend, change string
	worse                       bool
}

// siteChangeRow is one change point in a scenario page's table.
type siteChangeRow struct {
	Metric, From, To, FromURL, ToURL, Levels, Change, Verdict, Identity string
	Worse                                                               bool
}

// siteReleaseRow is one run of a release tag in a scenario page's table.
type siteReleaseRow struct {
	Tag, Date, Commit, URL, Run, PRURL string
	PR                                 int
}

// siteIdentityRow is one identity change in a scenario page's table.
type siteIdentityRow struct {
	Date, Commit, URL, What string
}

// siteChart is one metric's chart: its canvas id and title.
type siteChart struct {
	ID, Title string
}

// siteData is the JSON a scenario page's script draws from: the runs
// (date, commit, kind), each metric's chart, the identity changes, and the
// repository to link commits to.
type siteData struct {
	Repo   string           `json:"repo"`
	Runs   []siteRun        `json:"runs"`
	Charts []siteChartData  `json:"charts"`
	Idents []siteIdentPoint `json:"identities"`
}

// siteRun is one run: its date, commit and kind (p: promotion, r: record,
// "": an entry from before kinds).
type siteRun struct {
	D string `json:"d"`
	C string `json:"c"`
	K string `json:"k"`
	// T is the release tag, P the pull request, U the workflow run's URL,
	// where the history knows them.
	T string `json:"t,omitempty"`
	P int    `json:"p,omitempty"`
	U string `json:"u,omitempty"`
}

// siteChartData is one metric's series: medians and interval bounds by
// run (null where a run lacks it), scaled to the unit shown, and its
// change points.
type siteChartData struct {
	ID      string            `json:"id"`
	Kind    string            `json:"kind"`
	Title   string            `json:"title"`
	YTitle  string            `json:"y_title"`
	Lower   bool              `json:"lower"`
	Y       []*float64        `json:"y"`
	Lo      []*float64        `json:"lo"`
	Hi      []*float64        `json:"hi"`
	Changes []siteChangePoint `json:"changes"`
}

// siteChangePoint is a change point on a chart: the run it starts at,
// the levels, the change in percent (or points) and whether it is worse.
type siteChangePoint struct {
	I      int     `json:"i"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Text   string  `json:"text"`
	Worse  bool    `json:"worse"`
}

// siteIdentPoint is an identity change: the run it starts at and what
// changed.
type siteIdentPoint struct {
	I    int    `json:"i"`
	Text string `json:"text"`
}

// scenarioPage builds the page of one scenario's entries, date order.
func scenarioPage(name string, series []baseline.Entry, o SiteOptions) *siteScenario {
	p := &siteScenario{sitePage: sitePage{Title: "perfgate history: " + textsafe.Cut(name, 80), Generated: o.Now.UTC().Format("2006-01-02 15:04 UTC")},
		Name: textsafe.Cut(name, 120)}
	data := siteData{Repo: o.RepoURL, Runs: make([]siteRun, len(series)), Charts: []siteChartData{}, Idents: []siteIdentPoint{}}
	promotions := 0
	for i, e := range series {
		k := ""
		switch e.Kind {
		case baseline.KindPromotion:
			k, promotions = "p", promotions+1
		case baseline.KindRecord:
			k = "r"
		}
		data.Runs[i] = siteRun{D: e.Date.UTC().Format("2006-01-02 15:04"), C: shortSHA(e.Commit), K: k,
			T: textsafe.Cut(e.Tag, 40), P: e.PR, U: runLink(o.RepoURL, e.Run)}
		if e.Tag != "" {
			p.Releases = append(p.Releases, siteReleaseRow{Tag: textsafe.Cut(e.Tag, 40), Date: data.Runs[i].D, Commit: data.Runs[i].C,
				URL: commitURL(o.RepoURL, e.Commit), Run: runLink(o.RepoURL, e.Run), PR: e.PR, PRURL: prURL(o.RepoURL, e.PR)})
		}
		if i > 0 {
			if what := strings.Join(baseline.IdentityChanges(series[i-1], e), ", "); what != "" {
				data.Idents = append(data.Idents, siteIdentPoint{I: i, Text: what})
				p.Identities = append(p.Identities, siteIdentityRow{Date: data.Runs[i].D, Commit: data.Runs[i].C, URL: commitURL(o.RepoURL, e.Commit), What: what})
			}
		}
	}
	p.Facts = fmt.Sprintf("%d runs from %s to %s: %d promotions, %d nightly records", len(series),
		series[0].Date.UTC().Format("2006-01-02"), series[len(series)-1].Date.UTC().Format("2006-01-02"), promotions, len(series)-promotions)
	for _, mname := range baseline.Headline {
		m, err := metric.Lookup(mname)
		if err != nil {
			continue
		}
		scale, unit := 1.0, m.Unit()
		if unit == "%" {
			scale = 100
		}
		c := siteChartData{ID: fmt.Sprintf("chart-%d", len(data.Charts)+1), Kind: "history", Title: m.Title,
			YTitle: metricLabelText(m.Title, unit), Lower: !m.HigherIsBetter,
			Y: make([]*float64, len(series)), Lo: make([]*float64, len(series)), Hi: make([]*float64, len(series)), Changes: []siteChangePoint{}}
		var idx []int // the runs that have the metric
		for i, e := range series {
			s, ok := e.Metrics[mname]
			if !ok {
				continue
			}
			idx = append(idx, i)
			c.Y[i] = round4(s.Median * scale)
			if s.Lo != nil && s.Hi != nil {
				c.Lo[i], c.Hi[i] = round4(*s.Lo*scale), round4(*s.Hi*scale)
			}
		}
		if len(idx) == 0 {
			continue
		}
		changes := baseline.Changes(series, name, m)
		for _, ch := range changes {
			i := idx[ch.Index]
			worse := (ch.After > ch.Before) != m.HigherIsBetter && ch.After != ch.Before
			text := siteChange(m, ch.Before, ch.After)
			before, after := round4(ch.Before*scale), round4(ch.After*scale)
			if before == nil || after == nil {
				continue // a level no figure can draw
			}
			c.Changes = append(c.Changes, siteChangePoint{I: i, Before: *before, After: *after, Text: text, Worse: worse})
			verdict := "better"
			if worse {
				verdict = "worse"
			}
			p.Changes = append(p.Changes, siteChangeRow{Metric: m.Title,
				From: shortSHA(ch.From.Commit) + " (" + ch.From.Date.UTC().Format("2006-01-02") + ")", FromURL: commitURL(o.RepoURL, ch.From.Commit),
				To: shortSHA(ch.To.Commit) + " (" + ch.To.Date.UTC().Format("2006-01-02") + ")", ToURL: commitURL(o.RepoURL, ch.To.Commit),
				Levels: valueText(m, ch.Before) + " → " + valueText(m, ch.After) + " " + unit, Change: text, Verdict: verdict, Worse: worse,
				Identity: textsafe.Cut(strings.Join(ch.Identity, "; "), 200)})
		}
		sm := siteMetric{name: m.Title + " (" + unit + ")"}
		last := series[idx[len(idx)-1]].Metrics[mname].Median
		sm.latest = valueText(m, last)
		from := max(0, len(idx)-siteTrendRuns)
		var trend []float64
		for _, i := range idx[from:] {
			trend = append(trend, series[i].Metrics[mname].Median)
		}
		sm.trend = baseline.Sparkline(trend)
		if len(trend) > 1 {
			sm.trend += " " + siteChange(m, trend[0], trend[len(trend)-1])
		}
		if n := len(changes); n > 0 {
			ch := changes[n-1]
			sm.change = siteChange(m, ch.Before, ch.After) + " at " + shortSHA(ch.To.Commit) + " (" + ch.To.Date.UTC().Format("2006-01-02") + ")"
			sm.worse = (ch.After > ch.Before) != m.HigherIsBetter && ch.After != ch.Before
		}
		p.metrics = append(p.metrics, sm)
		data.Charts = append(data.Charts, c)
		p.Charts = append(p.Charts, siteChart{ID: c.ID, Title: m.Title})
	}
	js, err := json.Marshal(data)
	if err != nil {
		js = []byte(`{"runs":[],"charts":[],"identities":[]}`) // numbers only and cleaned strings: cannot happen
	}
	p.Data = js
	return p
}

// indexRows are the index's rows of the page p, whose file is page.
func (p *siteScenario) indexRows(page string) []siteIndexRow {
	var out []siteIndexRow
	for i, m := range p.metrics {
		out = append(out, siteIndexRow{Page: page, Scenario: p.Name, Metric: m.name, First: i == 0,
			Latest: m.latest, Trend: m.trend, Change: m.change, Worse: m.worse})
	}
	return out
}

// shortSHA is a commit as shown: its first 12 characters, cleaned.
func shortSHA(c string) string {
	r := []rune(textsafe.Cut(c, 40))
	return string(r[:min(len(r), 12)])
}

// hexSHA is what a commit must be to be linked.
var hexSHA = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)

// commitURL is the link to commit in the repository, "" when either is
// unknown or the commit is not a hexadecimal SHA.
func commitURL(repo, commit string) string {
	if repo == "" || !hexSHA.MatchString(commit) {
		return ""
	}
	return repo + "/commit/" + commit
}

// runLink is run when it is a workflow run of the repository
// (RepoURL/actions/runs/N): the history file is untrusted, and a link
// labelled "report" must lead to the repository's own run. "" otherwise,
// and without a repository.
func runLink(repo, run string) string {
	id, ok := strings.CutPrefix(run, repo+"/actions/runs/")
	if repo == "" || !ok || id == "" || strings.Trim(id, "0123456789") != "" || len(id) > 20 {
		return ""
	}
	return run
}

// prURL is pull request n's link in the repository, "" when either is
// unknown.
func prURL(repo string, n int) string {
	if repo == "" || n <= 0 {
		return ""
	}
	return repo + "/pull/" + strconv.Itoa(n)
}

// round4 is x to four significant figures, as a chart needs it.
func round4(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
	return &v
}

// valueText is a value of m in its unit, three significant figures.
func valueText(m metric.Info, v float64) string {
	if m.Unit() == "%" {
		v *= 100
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// siteChange is the change from a to b as perfgate baseline history
// writes it, "—" where there is none to tell (from zero).
func siteChange(m metric.Info, a, b float64) string {
	if c := baseline.FormatChange(m, a, b); c != "" {
		return c
	}
	return "—"
}

// metricLabelText is a metric's axis title: "TTFT p99 (ms)".
func metricLabelText(title, unit string) string {
	if unit == "" {
		return title
	}
	return title + " (" + unit + ")"
}

// writePage renders the template name with page into path, atomically,
// and returns its size.
func writePage(path, name string, page any) (int64, error) {
	switch p := page.(type) {
	case *siteScenario:
		p.fill()
	case siteIndex:
		p.fill()
		p.ChartJS, p.Script = "", "" // a table: nothing to draw
		page = p
	}
	var buf bytes.Buffer
	if err := siteTemplate.ExecuteTemplate(&buf, name, page); err != nil {
		return 0, fmt.Errorf("history site: %s: %w", filepath.Base(path), err)
	}
	if err := safeio.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return 0, fmt.Errorf("history site: %w", err)
	}
	return int64(buf.Len()), nil
}

// fill sets what every page shares: the policy, the style and the scripts.
func (p *sitePage) fill() {
	p.CSP, p.Version = htmlCSP, chartJSVersion
	p.Style, p.Script, p.ChartJS = template.CSS(htmlStyle), template.JS(htmlScript), template.JS(chartJS)
	if p.Data == nil {
		p.Data = json.RawMessage(`{"charts":[]}`)
	}
}
