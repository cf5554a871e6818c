package report

import (
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/baseline"
)

// siteHistory is n runs of each scenario: nightly records with a
// promotion every tenth, TTFT p99 about 100 ms, 15% slower from run
// shift1 and back at shift2, goodput 5% lower from shift2, the engine
// version bumped at shift1; medians within ±2% noise.
func siteHistory(scenarios []string, n, shift1, shift2 int) []baseline.Entry {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2013, 1, 1, 3, 0, 0, 0, time.UTC)
	var out []baseline.Entry
	for _, sc := range scenarios {
		for i := range n {
			noise := func() float64 { return 1 + 0.02*(2*rng.Float64()-1) }
			ttft, goodput, version := 100.0, 20.0, "0.9.0"
			if i >= shift1 && i < shift2 {
				ttft = 115
			}
			if i >= shift1 {
				version = "0.10.0"
			}
			if i >= shift2 {
				goodput = 19
			}
			kind, tag, pr, run := baseline.KindRecord, "", 0, ""
			if i%10 == 0 {
				kind = baseline.KindPromotion
			}
			if i == 1000 || i == 4000 {
				tag, pr, run = fmt.Sprintf("v1.%d", i/1000), 100+i/1000, fmt.Sprintf("https://github.com/acme/serving/actions/runs/%d", i)
			}
			lo, hi := ttft*0.97, ttft*1.03
			out = append(out, baseline.Entry{Scenario: sc, Commit: sha(i), Date: start.Add(time.Duration(i) * 24 * time.Hour),
				Identity: "sha256:" + version, Engine: "vllm", Version: version, Model: "m", Repetitions: 6, Kind: kind, Tag: tag, PR: pr, Run: run,
				Metrics: map[string]baseline.Summary{
					"ttft.p99":   {Median: ttft * noise(), Lo: &lo, Hi: &hi, N: 6},
					"goodput":    {Median: goodput * noise(), N: 6},
					"error_rate": {Median: 0, N: 6},
				}})
		}
	}
	return out
}

// sha is a made-up commit of run i.
func sha(i int) string { return fmt.Sprintf("%08x%032x", uint32(i+1)*2654435761, i+1) }

// siteData reads a page's chart data back.
func readSiteData(t *testing.T, path string) siteData {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)<script type="application/json" id="perfgate-data">(.*?)</script>`).FindSubmatch(b)
	require.NotNil(t, m, "%s has its data", path)
	var d siteData
	require.NoError(t, json.Unmarshal(m[1], &d))
	return d
}

// A site of 5,000 runs a scenario: every page written, under 5 MB in
// all, the planted shifts marked where planted (worse, then better), the
// identity change where it was made, commits linked, nothing fetched.
func TestHistorySite(t *testing.T) {
	dir := t.TempDir()
	entries := siteHistory([]string{"chat", "long-context"}, 5000, 2000, 3500)
	site, err := WriteSite(dir, entries, SiteOptions{RepoURL: "https://github.com/acme/serving", Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	assert.Equal(t, []string{"index.html", "s1-chat.html", "s2-long-context.html"}, site.Pages)
	t.Logf("%d pages, %.2f MB", len(site.Pages), float64(site.Bytes)/(1<<20))
	assert.Less(t, site.Bytes, int64(5<<20), "the site stays under 5 MB")

	d := readSiteData(t, filepath.Join(dir, "s1-chat.html"))
	require.Len(t, d.Runs, 5000)
	assert.Equal(t, "p", d.Runs[0].K)
	assert.Equal(t, "r", d.Runs[1].K)
	charts := map[string]siteChartData{}
	for _, c := range d.Charts {
		charts[c.Title] = c
	}
	ttft := charts["TTFT p99"]
	require.Len(t, ttft.Changes, 2, "two shifts planted in TTFT p99")
	assert.Equal(t, 2000, ttft.Changes[0].I)
	assert.True(t, ttft.Changes[0].Worse)
	assert.InDelta(t, 115, ttft.Changes[0].After, 2)
	assert.Equal(t, 3500, ttft.Changes[1].I)
	assert.False(t, ttft.Changes[1].Worse)
	goodput := charts["goodput"]
	require.Len(t, goodput.Changes, 1)
	assert.Equal(t, 3500, goodput.Changes[0].I)
	assert.True(t, goodput.Changes[0].Worse, "5% less goodput is worse")
	require.Len(t, d.Idents, 1)
	assert.Equal(t, siteIdentPoint{I: 2000, Text: "engine version 0.9.0 → 0.10.0"}, d.Idents[0])
	assert.Equal(t, "https://github.com/acme/serving", d.Repo)
	assert.Equal(t, siteRun{D: "2015-09-28 03:00", C: sha(1000)[:12], K: "p", T: "v1.1", P: 101, U: "https://github.com/acme/serving/actions/runs/1000"}, d.Runs[1000])

	page, err := os.ReadFile(filepath.Join(dir, "s1-chat.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), `<meta http-equiv="Content-Security-Policy" content="`+html.EscapeString(htmlCSP)+`">`)
	assert.Contains(t, string(page), `<a href="https://github.com/acme/serving/commit/`+sha(1999)+`">`+sha(1999)[:12]+` (2018-06-23)</a>`, "the last run before the change, linked")
	assert.NotRegexp(t, `<script[^>]+src=|<link[^>]+href=`, string(page), "nothing fetched")
	assert.Contains(t, string(page), `<tr><td>v1.4</td><td>2023-12-15 03:00</td><td><a href="https://github.com/acme/serving/commit/`+sha(4000)+`">`+sha(4000)[:12]+`</a></td><td><a href="https://github.com/acme/serving/pull/104">#104</a></td><td><a href="https://github.com/acme/serving/actions/runs/4000">report</a></td></tr>`, "a release: its tag, commit, pull request and run")
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(index), `<a href="s2-long-context.html">long-context</a>`)
	row := regexp.MustCompile(`<tr><td><a href="s1-chat.html">chat</a></td><td>TTFT p99 \(ms\)</td>.*?</tr>`).FindString(string(index))
	assert.Regexp(t, `<td class="num">\d+(\.\d+)?</td><td class="trend">[▁▂▃▄▅▆▇█]{30} (&#43;|-)\d+\.\d%</td><td class="better">-1\d\.\d% at `+sha(3500)[:12]+` \(2022-08-02\)</td>`, row)
	assert.NotContains(t, string(index), "Chart.js", "the index draws nothing and inlines no library")
}

// What a history file holds is untrusted: a scenario's name becomes no
// path, a commit that is not a SHA no link, and markup stays text.
func TestHistorySiteHostile(t *testing.T) {
	dir := t.TempDir()
	entries := siteHistory([]string{"../../etc/x</script><script>alert(1)</script>"}, 20, 10, 15)
	for i := range entries {
		entries[i].Commit = "javascript:alert(1)"
		entries[i].Version = fmt.Sprintf("<img src=x onerror=alert(%d)>", i/5) // changes every fifth run: rendered
		entries[i].Tag, entries[i].Run = "<b>v1</b>", "javascript:alert(1)"
	}
	site, err := WriteSite(dir, entries, SiteOptions{RepoURL: "https://github.com/acme/serving"})
	require.NoError(t, err)
	assert.Equal(t, []string{"index.html", "s1-etc-x-script-script-alert-1-script.html"}, site.Pages)
	for _, p := range site.Pages {
		b, err := os.ReadFile(filepath.Join(dir, p))
		require.NoError(t, err)
		assert.NotContains(t, string(b), "<script>alert(1)")
		assert.NotContains(t, string(b), "<img src=x")
		if p != "index.html" {
			assert.Contains(t, string(b), "&lt;img src=x onerror=alert(1)&gt;", "the version change is shown, as text")
		}
		assert.NotContains(t, string(b), `href="javascript:`)
		assert.NotContains(t, string(b), `javascript:alert`, "a run URL that is not https is dropped")
		assert.NotContains(t, string(b), "<b>v1</b>")
	}
	assert.Equal(t, "", runLink("https://github.com/acme/serving", "https://evil.example/acme/serving/actions/runs/1"), "a run elsewhere is no report of this repository")
	assert.Equal(t, "", runLink("https://github.com/acme/serving", "https://github.com/acme/serving/actions/runs/1?x=<b>"))
	assert.Equal(t, "https://github.com/acme/serving/actions/runs/12", runLink("https://github.com/acme/serving", "https://github.com/acme/serving/actions/runs/12"))
	_, err = WriteSite(dir, entries, SiteOptions{RepoURL: "javascript:alert(1)//"})
	assert.ErrorContains(t, err, "want https://HOST/OWNER/REPO")
	_, err = WriteSite(dir, nil, SiteOptions{})
	assert.ErrorContains(t, err, "the history is empty")
	_ = strings.TrimSpace
}

// BenchmarkWriteSite5000 builds the site of two scenarios of 5,000 runs:
// what perfgate report --history costs at the scale.
func BenchmarkWriteSite5000(b *testing.B) {
	entries := siteHistory([]string{"chat", "long-context"}, 5000, 2000, 3500)
	dir := b.TempDir()
	for b.Loop() {
		if _, err := WriteSite(dir, entries, SiteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
