package telemetry

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/perfgate/perfgate/internal/httpguard"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/textsafe"
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

// ParsePage reads a page in the Prometheus text exposition format, at most
// 16 MiB of it (a larger page is an error, never read in part). An error
// names the line that could not be read and quotes it. It never panics,
// whatever r holds.
func ParsePage(r io.Reader, at time.Time) (*Page, error) {
	text, err := safeio.ReadAll(r, maxPageBytes, "the metrics page")
	if err != nil {
		return nil, fmt.Errorf("read metrics page: %w", err)
	}
	if len(text) > 0 && text[len(text)-1] != '\n' {
		// The parser takes a last line without its newline for a
		// truncated page; a server that leaves it off sent the page whole.
		text = append(text, '\n')
	}
	families, err := parseExposition(text)
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
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(text, '\n')
		if j < 0 {
			return "", false
		}
		text = text[j+1:]
	}
	if j := bytes.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	}
	return shorten(text), true
}

// EngineScraper reads an engine's metrics page over HTTP.
type EngineScraper struct {
	// URL is the page: http://127.0.0.1:8000/metrics.
	URL string
	// Client makes the request; nil is a client with a 5s timeout. Either
	// way no redirect is followed, and a client without a timeout gets
	// one of 5s.
	Client *http.Client
	// Now stamps each page; nil is time.Now.
	Now func() time.Time
	// Header is sent with every scrape: target.headers, expanded, where the
	// page is on the target's own origin (an engine such as llama-server
	// with --api-key guards /metrics with the key it guards /v1 with).
	Header map[string]string
	// Redact, if set, takes the headers' secrets out of an error's text,
	// should the server echo one; nil leaves the text as it is.
	Redact func(string) string
}

// scrapeTimeout bounds a read of a metrics page (engine or DCGM) when the
// client has no timeout of its own.
const scrapeTimeout = 5 * time.Second

// defaultScrapeClient reads pages for sources given no client: one
// transport for all, so that connections are reused.
var defaultScrapeClient = func() *http.Client {
	c := httpguard.Client(nil) // bounds response headers, uses no proxy
	c.Timeout = scrapeTimeout
	return c
}()

// guardClient is c (nil: defaultScrapeClient) made to follow no redirect
// and to give up after scrapeTimeout when c has no timeout of its own. c
// itself is left as it is.
func guardClient(c *http.Client) *http.Client {
	if c == nil {
		return defaultScrapeClient
	}
	g := *c
	g.CheckRedirect = httpguard.NoRedirects
	if g.Timeout <= 0 {
		g.Timeout = scrapeTimeout
	}
	return &g
}

// notServedHint says how each engine serves its metrics page, for an answer
// that says it serves none.
const notServedHint = "the engine serves no metrics page there: llama.cpp needs --metrics, " +
	"SGLang --enable-metrics; vLLM, TGI and perfgate's simulator serve /metrics by default " +
	"(or set telemetry.metrics to the page's path or URL, or to off)"

// Scrape GETs the page and parses it. An answer other than 200 is an error
// that names the URL and the status; a 404, or llama.cpp's 501 when it runs
// without --metrics, also says how each engine turns its page on. A
// redirect is not followed: it is an error that names where it pointed.
func (s *EngineScraper) Scrape(ctx context.Context) (*Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("engine metrics: %w", err)
	}
	// The text format, not OpenMetrics or protobuf, where the server
	// negotiates.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	for name, value := range s.Header {
		req.Header.Set(name, value)
	}
	p, err := s.scrape(req)
	if err != nil && s.Redact != nil {
		err = errors.New(s.Redact(err.Error()))
	}
	return p, err
}

// scrape does Scrape's request.
func (s *EngineScraper) scrape(req *http.Request) (*Page, error) {
	resp, err := guardClient(s.Client).Do(req)
	if err != nil {
		return nil, fmt.Errorf("engine metrics: %w", err) // names the URL
	}
	defer resp.Body.Close()
	at := time.Now()
	if s.Now != nil {
		at = s.Now()
	}
	if re := httpguard.Redirected(resp); re != nil {
		re.Redact = s.Redact // whole, before Error cuts the Location
		return nil, fmt.Errorf("engine metrics: %w", re)
	}
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("engine metrics GET %s: %s", s.URL, resp.Status)
		// Read more than is shown, and redact before the cut, so that a key
		// the server echoes across the cut cannot show in part.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
		text := string(bytes.TrimSpace(body))
		if s.Redact != nil {
			text = s.Redact(text)
		}
		if text != "" {
			msg += fmt.Sprintf(" (%q)", textsafe.Cut(text, 200))
		}
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusNotImplemented {
			msg += ": " + notServedHint
		}
		return nil, errors.New(msg)
	}
	p, err := ParsePage(resp.Body, at)
	if err != nil {
		return nil, fmt.Errorf("engine metrics GET %s: %w", s.URL, err)
	}
	return p, nil
}

// EngineWindow folds the pages of one measured window into the window's
// result.EngineTelemetry.
//
// A figure a page gives that cannot be true is refused, never averaged:
// the series is left out of the window's figures and Refused says why. The
// rules, per figure:
//
//   - KV-cache usage and the prefix-cache hit-rate gauge are fractions: a
//     series outside 0..1 is refused.
//   - Requests running and waiting are counts of requests: a series below
//     0 or above 1e9 is refused.
//   - Counters (preemptions, prefix-cache lookups and hits) count from 0: a
//     series below 0 or above 2^53 (past which a float64 no longer counts
//     by one) is refused, on either page. A counter that went backwards
//     from the first page to the last is an engine that restarted, and its
//     last value is its increase (as Prometheus's rate() reads it). Hits
//     that outnumber lookups refuse the hit rate.
//   - A latency histogram's bucket counts are counts (0..2^53) that never
//     decrease from one bound to the next, and its sum of seconds is
//     finite and not negative: a series that breaks any of it, on either
//     page, is refused. Its increase over the window must be a histogram
//     by the same rules (a series whose count fell restarted, and counts
//     whole); one that is not (buckets that fell while the count rose) is
//     refused.
//   - Every figure written is finite and not negative: a latency summary
//     or a TTFT overhead that would not be is refused whole.
//
// NaN, Prometheus's "no value", is skipped without a word.
type EngineWindow struct {
	a           *Adapter
	pages       int
	first, last *Page

	kv, running, waiting, hitRate windowGauge
	lora                          loraWindow

	refused map[string]string // figure or series → why, the first time
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

// valueRange is what a figure can truthfully be.
type valueRange struct {
	lo, hi float64
	// what says it in words, for the message of a refused value.
	what string
}

func (r valueRange) holds(v float64) bool { return v >= r.lo && v <= r.hi }

// maxCount is the largest count perfgate believes: 2^53, past which a
// float64 no longer counts by one.
const maxCount = 1 << 53

var (
	fractionRange = valueRange{0, 1, "a fraction, from 0 to 1"}
	requestsRange = valueRange{0, 1e9, "a number of requests, from 0 to 1e9"}
	counterRange  = valueRange{0, maxCount, "a count, from 0 to 2^53"}
)

// NewEngineWindow starts a window that reads pages with a.
func NewEngineWindow(a *Adapter) *EngineWindow { return &EngineWindow{a: a} }

// Add adds one page. Pages come in time order: the first is taken at the
// window's start and the last after its last response. The window keeps
// of the first and the last page only the metrics the adapter reads.
func (w *EngineWindow) Add(p *Page) {
	if p == nil {
		return
	}
	w.pages++
	kept := p.only(w.a.counterNames())
	if w.first == nil {
		w.first = kept
	}
	w.last = kept
	w.kv.add(p.gauge(w.a.kvUsage, foldMax, fractionRange, w.refuseSeries))
	w.running.add(p.gauge(w.a.running, foldSum, requestsRange, w.refuseSeries))
	w.waiting.add(p.gauge(w.a.waiting, foldSum, requestsRange, w.refuseSeries))
	w.hitRate.add(p.gauge(w.a.hitRate, foldMean, fractionRange, w.refuseSeries))
	if w.a.Name == "vllm" {
		w.lora.add(p)
	}
}

// Refused says, one sentence each, which values the window's pages gave
// that cannot be true and were left out (each figure or series once, in
// the order met). Nil when there were none.
func (w *EngineWindow) Refused() []string {
	if len(w.refused) == 0 {
		return nil
	}
	out := make([]string, 0, len(w.refused))
	for _, k := range slices.Sorted(maps.Keys(w.refused)) {
		out = append(out, w.refused[k])
	}
	return out
}

// refuse notes that key (a figure or a series) was left out, and why.
func (w *EngineWindow) refuse(key, why string) {
	if w.refused == nil {
		w.refused = map[string]string{}
	}
	if _, ok := w.refused[key]; !ok {
		w.refused[key] = why
	}
}

// refuseSeries notes a series whose value v is not what r allows.
func (w *EngineWindow) refuseSeries(f *dto.MetricFamily, m *dto.Metric, v float64, r valueRange) {
	s := seriesName(f, m)
	w.refuse(s, fmt.Sprintf("%s is %s, which cannot be true (%s): left out", s, formatValue(v), r.what))
}

// Summary returns the window's telemetry, or nil when no page was added.
// Gauges are read at every page; counters and histograms are their increase
// from the first page to the last, so they need two pages and are nil with
// one. clientTTFTMeanMS is perfgate's own mean TTFT over the window, in
// milliseconds; with hasClientTTFT and the engine's TTFT histogram, the
// difference is TTFTOverheadMS. No figure it returns is NaN, infinite or
// negative.
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
		LoRA:               w.lora.summary(),
	}
	if w.pages >= 2 {
		if v, ok := w.counterIncrease(w.a.preemptions); ok {
			t.Preemptions = &v
		}
		t.ServerTTFT = w.serverLatency("the engine's TTFT", w.a.ttft)
		t.ServerITL = w.serverLatency("the engine's inter-token latency", w.a.itl)
	}
	if t.ServerTTFT != nil && hasClientTTFT {
		o := clientTTFTMeanMS - t.ServerTTFT.Mean
		switch {
		case math.IsNaN(o) || math.IsInf(o, 0):
		case o < 0:
			// The engine's clock starts after perfgate's: its mean cannot be
			// the longer one unless it counted requests perfgate did not
			// send.
			w.refuse("ttft overhead", fmt.Sprintf("the engine's mean TTFT (%s ms) is longer than perfgate's (%s ms), which cannot be for the same requests: the TTFT overhead is left out",
				formatValue(t.ServerTTFT.Mean), formatValue(clientTTFTMeanMS)))
		default:
			t.TTFTOverheadMS = &o
		}
	}
	return t
}

// prefixHitRate is hits over lookups in the window from the engine's
// counters, or, for an engine without them (or a window of one page), the
// mean of its hit-rate gauge.
func (w *EngineWindow) prefixHitRate() *float64 {
	if w.pages >= 2 {
		for _, c := range w.a.prefixCounters {
			q, okQ := w.counterIncrease([]string{c.queries})
			h, okH := w.counterIncrease([]string{c.hits})
			if !okQ || !okH {
				continue
			}
			if q <= 0 {
				return nil // no lookups in the window
			}
			r := h / q
			if !fractionRange.holds(r) {
				w.refuse(c.hits, fmt.Sprintf("%s rose by %s and %s by %s in the window: more hits than lookups cannot be true, and the prefix-cache hit rate is left out",
					c.hits, formatValue(h), c.queries, formatValue(q)))
				return nil
			}
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

// seriesName writes a series as a page does: name{label="value",...}, cut
// to a length fit for a message.
func seriesName(f *dto.MetricFamily, m *dto.Metric) string {
	var b strings.Builder
	b.WriteString(f.GetName())
	if len(m.GetLabel()) > 0 {
		b.WriteByte('{')
		for i, l := range m.GetLabel() {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=%q", l.GetName(), l.GetValue())
		}
		b.WriteByte('}')
	}
	return shorten([]byte(b.String()))
}

// formatValue writes a value for a message: 0.5, -3, 1e+30, +Inf.
func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
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

// counterIncrease is how much a counter rose from the window's first page to
// its last, summed over its series; ok is false when the last page has none
// of names, or none of its series could be believed. A series that fell
// restarted with the engine, and its last value is its increase; a series
// absent from the first page was created in the window (a labelled counter
// appears at its first increment), and so is its last value. A series
// outside counterRange on either page is refused.
func (w *EngineWindow) counterIncrease(names []string) (inc float64, ok bool) {
	f := w.last.family(names)
	if f == nil {
		return 0, false
	}
	before := seriesOf(w.first, f.GetName())
	for _, m := range f.GetMetric() {
		v, isValue := sampleValue(m)
		if !isValue {
			continue
		}
		if !counterRange.holds(v) {
			w.refuseSeries(f, m, v, counterRange)
			continue
		}
		if b, isValue := sampleValue(before[labelKey(m)]); isValue {
			if !counterRange.holds(b) {
				w.refuseSeries(f, m, b, counterRange)
				continue
			}
			if b <= v {
				v -= b
			}
		}
		inc += v
		ok = true
	}
	return inc, ok
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

// histogramIncrease is a histogram's increase from the window's first page
// to its last; ok is false when the last page has none of names as a
// histogram with a finite bucket, or none of its series could be believed
// (see EngineWindow for the rules).
func (w *EngineWindow) histogramIncrease(names []string) (d histogramDelta, ok bool) {
	f := w.last.family(names)
	if f == nil || f.GetType() != dto.MetricType_HISTOGRAM {
		return d, false
	}
	before := seriesOf(w.first, f.GetName())
	var series [][]bucket
	for _, m := range f.GetMetric() {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		bs, count, sum := histogramBuckets(h), sampleCount(h), h.GetSampleSum()
		if why := badHistogram(bs, count, sum); why != "" {
			w.refuse(seriesName(f, m), fmt.Sprintf("%s %s, which cannot be true: left out", seriesName(f, m), why))
			continue
		}
		// A series absent before, or whose count fell (the engine
		// restarted), counts whole.
		if p := before[labelKey(m)].GetHistogram(); p != nil {
			pbs, pcount, psum := histogramBuckets(p), sampleCount(p), p.GetSampleSum()
			if why := badHistogram(pbs, pcount, psum); why != "" {
				w.refuse(seriesName(f, m), fmt.Sprintf("%s %s on the window's first page, which cannot be true: left out", seriesName(f, m), why))
				continue
			}
			if pcount <= count {
				prev := map[float64]float64{}
				for _, b := range pbs {
					prev[b.upper] = b.count
				}
				for i := range bs {
					bs[i].count -= prev[bs[i].upper]
				}
				count -= pcount
				sum -= psum
				if why := badHistogram(bs, count, sum); why != "" {
					w.refuse(seriesName(f, m), fmt.Sprintf("%s rose by something that is not a histogram (%s): left out", seriesName(f, m), why))
					continue
				}
			}
		}
		d.count += count
		d.sum += sum
		series = append(series, bs)
	}
	if len(series) == 0 {
		return d, false
	}
	d.buckets = mergeBuckets(series)
	if len(d.buckets) < 2 {
		return d, false
	}
	return d, true
}

// badHistogram says what makes buckets (by bound, the last +Inf), count and
// sum something other than a latency histogram, or "" when nothing does.
func badHistogram(bs []bucket, count, sum float64) string {
	switch {
	case !counterRange.holds(count):
		return fmt.Sprintf("counts %s observations, not %s", formatValue(count), counterRange.what)
	case math.IsNaN(sum) || math.IsInf(sum, 0) || sum < 0:
		return fmt.Sprintf("sums its observations to %s seconds", formatValue(sum))
	}
	for i, b := range bs {
		switch {
		case math.IsNaN(b.upper):
			return "has a bucket bound that is not a number"
		case !counterRange.holds(b.count):
			return fmt.Sprintf("has %s observations at most %s, not %s", formatValue(b.count), formatValue(b.upper), counterRange.what)
		case i > 0 && b.count < bs[i-1].count:
			return fmt.Sprintf("has fewer observations at most %s (%s) than at most %s (%s): its buckets decrease",
				formatValue(b.upper), formatValue(b.count), formatValue(bs[i-1].upper), formatValue(bs[i-1].count))
		}
	}
	return ""
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
// in milliseconds; nil when the engine has no such histogram, nothing was
// observed in the window, or a figure would not be finite and not negative
// (what is named in the refusal).
func (w *EngineWindow) serverLatency(what string, names []string) *result.ServerLatency {
	d, ok := w.histogramIncrease(names)
	if !ok || d.count <= 0 || d.buckets[len(d.buckets)-1].count <= 0 {
		return nil
	}
	const ms = 1000
	l := &result.ServerLatency{
		Count: d.count,
		Mean:  d.sum / d.count * ms,
		P50:   bucketQuantile(0.5, d.buckets) * ms,
		P90:   bucketQuantile(0.9, d.buckets) * ms,
		P99:   bucketQuantile(0.99, d.buckets) * ms,
	}
	for _, v := range []float64{l.Count, l.Mean, l.P50, l.P90, l.P99} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			w.refuse(what, fmt.Sprintf("%s from the engine's histogram would be %s ms, which cannot be true: left out (are its bucket bounds seconds?)", what, formatValue(v)))
			return nil
		}
	}
	return l
}
