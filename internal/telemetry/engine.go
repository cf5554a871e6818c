package telemetry

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/perfgate/perfgate/internal/result"
)

// Page is one scrape of an engine's metrics page.
type Page struct {
	// At is when the page was read.
	At time.Time
	// Families are the page's metric families by name, as written on the
	// page: a counter's name keeps its _total suffix
	// (vllm:num_preemptions_total).
	Families map[string]*dto.MetricFamily
}

// maxPageBytes bounds a metrics page. An engine's page is tens of KiB; one
// of this size is something else.
const maxPageBytes = 16 << 20

// ParsePage reads a page in the Prometheus text exposition format. An error
// names the line that could not be read and quotes it.
func ParsePage(r io.Reader, at time.Time) (*Page, error) {
	text, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read metrics page: %w", err)
	}
	if len(text) > 0 && text[len(text)-1] != '\n' {
		// The parser takes a last line without its newline for a
		// truncated page; a server that leaves it off sent the page whole.
		text = append(text, '\n')
	}
	// UTF-8 validation: names with a colon (vllm:..., sglang:...) are
	// valid under either scheme; the zero TextParser rejects every name.
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		var pe expfmt.ParseError
		if errors.As(err, &pe) {
			if line, ok := lineAt(text, pe.Line); ok {
				return nil, fmt.Errorf("parse metrics page: %w: %q", err, line)
			}
		}
		return nil, fmt.Errorf("parse metrics page: %w", err)
	}
	return &Page{At: at, Families: families}, nil
}

// lineAt returns line n (from 1) of text, shortened to be quoted in an error.
func lineAt(text []byte, n int) (string, bool) {
	if n < 1 {
		return "", false
	}
	lines := bytes.Split(text, []byte("\n"))
	if n > len(lines) {
		return "", false
	}
	const most = 160
	line := strings.TrimRight(string(lines[n-1]), "\r")
	if len(line) > most {
		line = line[:most] + "..."
	}
	return line, true
}

// EngineScraper reads an engine's metrics page over HTTP.
type EngineScraper struct {
	// URL is the page: http://127.0.0.1:8000/metrics.
	URL string
	// Client makes the request; nil is a client with a 5s timeout.
	Client *http.Client
	// Now stamps each page; nil is time.Now.
	Now func() time.Time
}

var defaultScrapeClient = &http.Client{Timeout: 5 * time.Second}

// notServedHint says how each engine serves its metrics page, for an answer
// that says it serves none.
const notServedHint = "the engine serves no metrics page there: llama.cpp needs --metrics, " +
	"SGLang --enable-metrics; vLLM, TGI and perfgate's simulator serve /metrics by default " +
	"(or set telemetry.metrics to the page's path or URL, or to off)"

// Scrape GETs the page and parses it. An answer other than 200 is an error
// that names the URL and the status; a 404, or llama.cpp's 501 when it runs
// without --metrics, also says how each engine turns its page on.
func (s *EngineScraper) Scrape(ctx context.Context) (*Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("engine metrics: %w", err)
	}
	// The text format, not OpenMetrics or protobuf, where the server
	// negotiates.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	client := s.Client
	if client == nil {
		client = defaultScrapeClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("engine metrics: %w", err) // names the URL
	}
	defer resp.Body.Close()
	at := time.Now()
	if s.Now != nil {
		at = s.Now()
	}
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("engine metrics GET %s: %s", s.URL, resp.Status)
		if body, _ := io.ReadAll(io.LimitReader(resp.Body, 200)); len(bytes.TrimSpace(body)) > 0 {
			msg += fmt.Sprintf(" (%q)", bytes.TrimSpace(body))
		}
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusNotImplemented {
			msg += ": " + notServedHint
		}
		return nil, errors.New(msg)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("engine metrics GET %s: read: %w", s.URL, err)
	}
	if len(body) > maxPageBytes {
		return nil, fmt.Errorf("engine metrics GET %s: page larger than %d MiB", s.URL, maxPageBytes>>20)
	}
	p, err := ParsePage(bytes.NewReader(body), at)
	if err != nil {
		return nil, fmt.Errorf("engine metrics GET %s: %w", s.URL, err)
	}
	return p, nil
}

// EngineWindow folds the pages of one measured window into the window's
// result.EngineTelemetry.
type EngineWindow struct {
	a           *Adapter
	pages       int
	first, last *Page

	kv, running, waiting, hitRate windowGauge
}

// windowGauge is a gauge over a window's pages: how many pages had it, its
// sum and its largest value.
type windowGauge struct {
	n        int
	sum, max float64
}

func (g *windowGauge) add(v float64, ok bool) {
	if !ok {
		return
	}
	if g.n == 0 || v > g.max {
		g.max = v
	}
	g.sum += v
	g.n++
}

func (g windowGauge) peak() *float64 {
	if g.n == 0 {
		return nil
	}
	return &g.max
}

func (g windowGauge) mean() *float64 {
	if g.n == 0 {
		return nil
	}
	m := g.sum / float64(g.n)
	return &m
}

// NewEngineWindow starts a window that reads pages with a.
func NewEngineWindow(a *Adapter) *EngineWindow { return &EngineWindow{a: a} }

// Add adds one page. Pages come in time order: the first is taken at the
// window's start and the last after its last response.
func (w *EngineWindow) Add(p *Page) {
	if p == nil {
		return
	}
	w.pages++
	if w.first == nil {
		w.first = p
	}
	w.last = p
	w.kv.add(p.gauge(w.a.kvUsage, foldMax))
	w.running.add(p.gauge(w.a.running, foldSum))
	w.waiting.add(p.gauge(w.a.waiting, foldSum))
	w.hitRate.add(p.gauge(w.a.hitRate, foldMean))
}

// Summary returns the window's telemetry, or nil when no page was added.
// Gauges are read at every page; counters and histograms are their increase
// from the first page to the last, so they need two pages and are nil with
// one. clientTTFTMeanMS is perfgate's own mean TTFT over the window, in
// milliseconds; with hasClientTTFT and the engine's TTFT histogram, the
// difference is TTFTOverheadMS.
func (w *EngineWindow) Summary(clientTTFTMeanMS float64, hasClientTTFT bool) *result.EngineTelemetry {
	if w.pages == 0 {
		return nil
	}
	t := &result.EngineTelemetry{
		Adapter:            w.a.Name,
		Scrapes:            w.pages,
		KVCachePeak:        w.kv.peak(),
		KVCacheMean:        w.kv.mean(),
		RunningPeak:        w.running.peak(),
		WaitingPeak:        w.waiting.peak(),
		PrefixCacheHitRate: w.prefixHitRate(),
	}
	if w.pages >= 2 {
		if v, ok := counterIncrease(w.first, w.last, w.a.preemptions); ok {
			t.Preemptions = &v
		}
		t.ServerTTFT = serverLatency(w.first, w.last, w.a.ttft)
		t.ServerITL = serverLatency(w.first, w.last, w.a.itl)
	}
	if t.ServerTTFT != nil && hasClientTTFT {
		o := clientTTFTMeanMS - t.ServerTTFT.Mean
		t.TTFTOverheadMS = &o
	}
	return t
}

// prefixHitRate is hits over lookups in the window from the engine's
// counters, or, for an engine without them (or a window of one page), the
// mean of its hit-rate gauge.
func (w *EngineWindow) prefixHitRate() *float64 {
	if w.pages >= 2 {
		for _, c := range w.a.prefixCounters {
			q, okQ := counterIncrease(w.first, w.last, []string{c.queries})
			h, okH := counterIncrease(w.first, w.last, []string{c.hits})
			if !okQ || !okH {
				continue
			}
			if q <= 0 {
				return nil // no lookups in the window
			}
			r := h / q
			return &r
		}
	}
	return w.hitRate.mean()
}

// labelKey identifies a series within its family.
func labelKey(m *dto.Metric) string {
	pairs := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		pairs = append(pairs, l.GetName()+"\xff"+l.GetValue())
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "\xfe")
}

// seriesOf indexes the family called name on p by label set; nil when p has
// no such family.
func seriesOf(p *Page, name string) map[string]*dto.Metric {
	f := p.Families[name]
	if f == nil {
		return nil
	}
	out := make(map[string]*dto.Metric, len(f.GetMetric()))
	for _, m := range f.GetMetric() {
		out[labelKey(m)] = m
	}
	return out
}

// counterIncrease is how much a counter rose from first to last, summed over
// its series; ok is false when the last page has none of names. A series
// that fell restarted with the engine, and its last value is its increase;
// a series absent from the first page was created in the window (a labelled
// counter appears at its first increment), and so is its last value.
func counterIncrease(first, last *Page, names []string) (inc float64, ok bool) {
	f := last.family(names)
	if f == nil {
		return 0, false
	}
	before := seriesOf(first, f.GetName())
	for _, m := range f.GetMetric() {
		v, ok := sampleValue(m)
		if !ok {
			continue
		}
		if b, ok := sampleValue(before[labelKey(m)]); ok && b <= v {
			v -= b
		}
		inc += v
	}
	return inc, true
}

// bucket is a histogram bucket: the count of observations at most upper.
type bucket struct{ upper, count float64 }

// histogramDelta is a histogram's increase over a window, its series added
// together.
type histogramDelta struct {
	count, sum float64
	// buckets are cumulative, by upper bound, the last +Inf.
	buckets []bucket
}

// histogramIncrease is a histogram's increase from first to last; ok is
// false when the last page has none of names as a histogram with a finite
// bucket.
func histogramIncrease(first, last *Page, names []string) (d histogramDelta, ok bool) {
	f := last.family(names)
	if f == nil || f.GetType() != dto.MetricType_HISTOGRAM {
		return d, false
	}
	before := seriesOf(first, f.GetName())
	var series [][]bucket
	for _, m := range f.GetMetric() {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		bs, count, sum := histogramBuckets(h), sampleCount(h), h.GetSampleSum()
		// A series absent before, or whose count fell (the engine
		// restarted), counts whole.
		if p := before[labelKey(m)].GetHistogram(); p != nil && sampleCount(p) <= count {
			prev := map[float64]float64{}
			for _, b := range histogramBuckets(p) {
				prev[b.upper] = b.count
			}
			for i := range bs {
				bs[i].count -= prev[bs[i].upper]
			}
			count -= sampleCount(p)
			sum -= p.GetSampleSum()
		}
		d.count += count
		d.sum += sum
		series = append(series, bs)
	}
	d.buckets = mergeBuckets(series)
	if len(d.buckets) < 2 {
		return d, false
	}
	return d, true
}

func sampleCount(h *dto.Histogram) float64 {
	if h.SampleCountFloat != nil {
		return h.GetSampleCountFloat()
	}
	return float64(h.GetSampleCount())
}

// histogramBuckets are h's cumulative buckets by upper bound, ending with
// +Inf: the text format lists that bucket, a client library's own
// histogram leaves it implicit in the sample count.
func histogramBuckets(h *dto.Histogram) []bucket {
	out := make([]bucket, 0, len(h.GetBucket())+1)
	for _, b := range h.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		out = append(out, bucket{b.GetUpperBound(), c})
	}
	slices.SortFunc(out, func(a, b bucket) int { return cmp.Compare(a.upper, b.upper) })
	if len(out) == 0 || !math.IsInf(out[len(out)-1].upper, 1) {
		out = append(out, bucket{math.Inf(1), sampleCount(h)})
	}
	return out
}

// mergeBuckets adds cumulative bucket lists that may have different bounds:
// at each bound of any list, a list counts what its largest bound at or
// below that one holds. The result is made monotonic, as Prometheus does
// before it interpolates.
func mergeBuckets(series [][]bucket) []bucket {
	var bounds []float64
	for _, bs := range series {
		for _, b := range bs {
			bounds = append(bounds, b.upper)
		}
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	out := make([]bucket, len(bounds))
	for i, u := range bounds {
		out[i].upper = u
	}
	for _, bs := range series {
		j, c := 0, 0.0
		for i, u := range bounds {
			for j < len(bs) && bs[j].upper <= u {
				c = bs[j].count
				j++
			}
			out[i].count += c
		}
	}
	for i := 1; i < len(out); i++ {
		out[i].count = max(out[i].count, out[i-1].count)
	}
	return out
}

// bucketQuantile is the q-quantile (0..1) of cumulative buckets ending with
// +Inf, as Prometheus's histogram_quantile computes it: linear
// interpolation within the bucket the rank falls in, from 0 for the first
// bucket; the upper bound of the last finite bucket when the rank falls in
// +Inf. NaN when there are no observations or no finite bucket.
func bucketQuantile(q float64, bs []bucket) float64 {
	switch {
	case math.IsNaN(q):
		return math.NaN()
	case q < 0:
		return math.Inf(-1)
	case q > 1:
		return math.Inf(1)
	}
	if len(bs) < 2 || !math.IsInf(bs[len(bs)-1].upper, 1) {
		return math.NaN()
	}
	observations := bs[len(bs)-1].count
	if observations <= 0 {
		return math.NaN()
	}
	rank := q * observations
	b := sort.Search(len(bs)-1, func(i int) bool { return bs[i].count >= rank })
	if b == len(bs)-1 {
		return bs[len(bs)-2].upper
	}
	if b == 0 && bs[0].upper <= 0 {
		return bs[0].upper
	}
	start, end, count := 0.0, bs[b].upper, bs[b].count
	if b > 0 {
		start = bs[b-1].upper
		count -= bs[b-1].count
		rank -= bs[b-1].count
	}
	if count <= 0 { // q = 0 and an empty bucket
		return start
	}
	return start + (end-start)*(rank/count)
}

// serverLatency summarises a latency histogram in seconds over the window,
// in milliseconds; nil when the engine has no such histogram or nothing was
// observed in the window.
func serverLatency(first, last *Page, names []string) *result.ServerLatency {
	d, ok := histogramIncrease(first, last, names)
	if !ok || d.count <= 0 || d.buckets[len(d.buckets)-1].count <= 0 {
		return nil
	}
	const ms = 1000
	return &result.ServerLatency{
		Count: d.count,
		Mean:  d.sum / d.count * ms,
		P50:   bucketQuantile(0.5, d.buckets) * ms,
		P90:   bucketQuantile(0.9, d.buckets) * ms,
		P99:   bucketQuantile(0.99, d.buckets) * ms,
	}
}
