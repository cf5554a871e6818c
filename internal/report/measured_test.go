package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
)

// measuredDocument is the document of a candidate measured on two H100s,
// three days and two hours after its baseline was promoted at commit
// a1b2c3d4…, with that promotion and a later recorded entry (another
// identity) in the history.
func measuredDocument(t *testing.T, model string) *reportfile.Document {
	t.Helper()
	zero := []float64{0, 0, 0, 0, 0, 0}
	base := unitsResult([]float64{43.1, 43.8, 44.0, 43.5, 44.2, 43.9}, zero)
	cand := unitsResult([]float64{43.3, 43.9, 44.1, 43.6, 44.3, 44.0}, zero)
	promoted := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	base.FinishedAt = promoted.Add(-time.Hour)
	cand.StartedAt = promoted.Add(74 * time.Hour)
	for _, r := range []*result.Result{base, cand} {
		r.Identity.Target.Model = model
		r.Identity.GPUs = []result.GPU{{Index: 0, Model: "NVIDIA H100 80GB HBM3"}, {Index: 1, Model: "NVIDIA H100 80GB HBM3"}}
	}
	entry, err := baseline.NewEntry(base, &base.Scenarios[0], baseline.Meta{Commit: "a1b2c3d4e5f60718", Date: promoted})
	require.NoError(t, err)
	other := entry
	other.Identity, other.Commit, other.Date = "sha256:another", "ffffffffffff", promoted.Add(time.Hour)
	v, err := compare.Compare([]*result.Result{base}, cand, compare.Options{Detectable: true})
	require.NoError(t, err)
	d, err := reportfile.New(v, []*result.Result{base}, cand, []baseline.Entry{entry, other})
	require.NoError(t, err)
	d.Key = "/home/runner/work/serving/serving/perf/perfgate.yaml"
	d.Source = reportfile.Source{Result: "/home/runner/work/serving/serving/result.json"}
	return d
}

// renderAll is d in the three media: markdown, text and the HTML page.
func renderAll(t *testing.T, d *reportfile.Document) (md, text, page string) {
	t.Helper()
	var mb, tb bytes.Buffer
	require.NoError(t, emitMarkdown(&mb, []*reportfile.Document{d}, MarkdownOptions{}))
	require.NoError(t, emitText(&tb, []*reportfile.Document{d}))
	return mb.String(), tb.String(), renderHTML(t, d)
}

// The comment, the terminal and the HTML header say what was measured:
// the model, the engine and its version, the GPUs by model and count, the
// workload's hash and the baseline's commit and age, counted from when
// the candidate started (not the clock: a report rendered again later says
// the same). The HTML header names the config by its file name, and no
// local path shows.
func TestReportsSayWhatWasMeasured(t *testing.T) {
	d := measuredDocument(t, "meta-llama/Llama-3.1-8B-Instruct")
	require.NotNil(t, d.Measured)
	require.NotNil(t, d.Scenarios[0].Baseline)
	assert.Equal(t, "a1b2c3d4e5f60718", d.Scenarios[0].Baseline.Commit, "the promotion's entry, not the later one of another identity")
	md, text, page := renderAll(t, d)
	const line = "model meta-llama/Llama-3.1-8B-Instruct · engine vllm 0.6.3 · GPU NVIDIA H100 80GB HBM3 × 2 · workload sha256:w · baseline a1b2c3d, 3 days old"
	assert.Contains(t, md, "\n\n**Measured:** "+line+"\n")
	assert.Contains(t, text, "measured: "+line+"\n")
	header := page[strings.Index(page, "<header"):strings.Index(page, "</header>")]
	assert.Contains(t, header, `<p class="measured">`+line+"</p>")
	assert.Contains(t, header, `perfgate · <span class="name">perfgate.yaml</span></h1>`)
	assert.Contains(t, page, "<dt>config</dt><dd>perfgate.yaml</dd>")
	for _, out := range []string{md, text, page} {
		assert.NotContains(t, out, "/home/runner", "a local path")
	}
}

// What is not known is said, not left out: no model, an engine that did
// not say, no GPU seen, no baseline in the history (its finish time, the
// commit unknown).
func TestReportsSayWhatIsUnknown(t *testing.T) {
	d := measuredDocument(t, "")
	d.Measured.Engine, d.Measured.EngineVersion, d.Measured.GPUs = "", "", nil
	d.Scenarios[0].Baseline.Commit = ""
	d.Scenarios[0].WorkloadHash = ""
	md, _, _ := renderAll(t, d)
	assert.Contains(t, md, "**Measured:** model unknown · engine unknown (the server did not say) · GPU: none seen · workload unknown · baseline of 2026-11-20 (commit unknown), 3 days old\n")

	d.Scenarios[0].Baseline = nil
	d.Measured.Simulated = true
	md, _, _ = renderAll(t, d)
	assert.Contains(t, md, "GPU: none (perfgate's simulator) · workload unknown · baseline: none\n")
}

// A model id and an engine version come from the server: each medium
// makes them safe like every other untrusted text.
func TestMeasuredIsEscaped(t *testing.T) {
	d := measuredDocument(t, blocksEvil)
	d.Measured.EngineVersion = "<script>alert(1)</script>"
	md, text, page := renderAll(t, d)
	assert.Contains(t, md, "**Measured:** model "+verdictMD(blocksEvil)+" · engine vllm "+verdictMD("<script>alert(1)</script>"))
	assert.NotContains(t, md, "<b>x</b>")
	assert.NotContains(t, text, "\x1b")
	assert.NotContains(t, page, "<script>alert(1)")
	assert.NotContains(t, page, "<b>x</b>")
}

func TestAge(t *testing.T) {
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		then time.Time
		want string
	}{
		{at.Add(-30 * time.Second), "under a minute old"},
		{at.Add(-time.Minute), "1 minute old"},
		{at.Add(-5 * time.Hour), "5 hours old"},
		{at.Add(-47 * time.Hour), "47 hours old"},
		{at.Add(-74 * time.Hour), "3 days old"},
		{at.Add(time.Hour), "measured after this run"},
		{time.Time{}, "age unknown"},
	} {
		assert.Equal(t, c.want, age(at, c.then), "age(%v)", c.then)
	}
}
