package gate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// minHistoryRuns is the fewest identical runs in history from which the
// run-to-run noise is estimated.
const minHistoryRuns = 3

// Detectability is what one gate can confirm at a config's repetitions,
// from the noise of a baseline: whether an unchanged candidate would pass
// it, and what would make it.
type Detectability struct {
	Scenario string
	Metric   string
	// Title ("TTFT p99") and Unit describe the metric.
	Title, Unit string
	// Tolerance is the gate's, as written, and its value (a fraction when
	// relative).
	Tolerance metric.Tolerance
	// Sign is the bad direction's: + where lower is better, - where higher
	// is; Points is set for a share, whose absolute changes are in
	// percentage points.
	Sign   string
	Points bool
	// Noise is the metric's noise, from the baseline's repetitions
	// (Within) and the history of identical runs (Between).
	Noise stat.Noise
	// Repetitions is the baseline's repetitions the noise is estimated
	// from; HistoryRuns the identical runs history held (0: Between is
	// not known and taken as 0).
	Repetitions, HistoryRuns int
	// Change is the detectable change at the config's looks
	// (stat.DetectableChange): a fraction for a relative tolerance,
	// else in the metric's unit; +Inf when the repetitions cannot decide.
	Change float64
	// Confirmable says the tolerance is at least Change: an unchanged
	// candidate passes the gate in all but compare.AAMiss/G of runs.
	Confirmable bool
	// PassRate is the share of runs in which an unchanged candidate
	// passes the gate at its tolerance (stat.AAPassRate).
	PassRate float64
	// Advice is what would confirm the tolerance, each a short phrase
	// ("600 requests", "ttft.p95", "+30%"); empty when it is confirmable.
	Advice []string
	// Cliff says the percentile sits where the distribution jumps: the
	// percentiles on either side of it (Neighbours) hold much steadier, so
	// its noise is where it falls among the same requests, not their
	// count, and more requests would not steady it.
	Cliff      bool
	Neighbours string
}

// Sentence says it as a warning does: "TTFT p99 of chat-c8 varies ±26%
// between repetitions; at +15% an unchanged candidate passes in about 20%
// of runs (it needs about +98%): use ttft.p95 or +100%".
func (d Detectability) Sentence() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %s varies %s between repetitions", d.Title, d.Scenario, d.spread(d.Noise.Within))
	if d.Noise.Between > 0 {
		fmt.Fprintf(&b, " and %s from run to run (%d identical runs in history)", d.spread(d.Noise.Between), d.HistoryRuns)
	}
	switch {
	case d.Confirmable:
		fmt.Fprintf(&b, "; %s is confirmable (an unchanged candidate needs about %s)", d.Tolerance.Text, d.show(d.Change))
		return b.String()
	case math.IsInf(d.Change, 1):
		fmt.Fprintf(&b, "; no tolerance can be confirmed at these repetitions")
	default:
		fmt.Fprintf(&b, "; at %s an unchanged candidate passes in about %s of runs (it needs about %s)",
			d.Tolerance.Text, passShare(d.PassRate), d.show(d.Change))
	}
	if d.Cliff {
		fmt.Fprintf(&b, "; it sits where the distribution jumps (%s hold steadier), so more requests would not steady it", d.Neighbours)
	}
	if len(d.Advice) > 0 {
		fmt.Fprintf(&b, ": use %s", orList(d.Advice))
	}
	return b.String()
}

// Likely says whether an unchanged candidate passes the gate more often
// than not.
func (d Detectability) Likely() bool { return d.PassRate >= 0.5 }

// Warn says whether the gate alone fails an unchanged candidate in more
// than compare.AAMiss of runs: more than the whole run's budget, worth a
// warning before anything is measured. A gate short of Confirmable but
// within it (passing in 98% of runs, say) spends part of the budget, and
// validate --baselines says so without a warning.
func (d Detectability) Warn() bool { return !d.Confirmable && d.PassRate < 1-compare.AAMiss }

// passShare writes a pass rate as a whole percentage, never 100% (it is
// below the confirmable rate) nor 0% when some draws passed.
func passShare(r float64) string {
	pct := math.Round(100 * r)
	switch {
	case pct >= 100:
		pct = 99
	case pct <= 0 && r > 0:
		return "1%"
	}
	return strconv.FormatFloat(pct, 'f', 0, 64) + "%"
}

// spread writes a noise: ±14% when relative, ±0.5 points for a share,
// ±3.2 ms otherwise.
func (d Detectability) spread(sd float64) string {
	return "±" + d.amount(sd, true)
}

// show writes a change in the tolerance's terms, with the bad direction's
// sign: +27%, -6%, +0.5 points, +3.2 ms.
func (d Detectability) show(v float64) string {
	a := d.amount(v, false)
	if strings.TrimLeft(a, "0.") == "" || strings.HasPrefix(strings.TrimLeft(a, "0."), "%") || strings.HasPrefix(strings.TrimLeft(a, "0."), " ") {
		return a // no change at all: 0%, not -0%
	}
	return d.Sign + a
}

// amount writes a magnitude: a percentage (a log spread as the percentage
// it multiplies by, when spread), points, or the metric's unit.
func (d Detectability) amount(v float64, spread bool) string {
	switch {
	case d.Noise.Relative && spread:
		return strconv.FormatFloat(100*(math.Exp(v)-1), 'f', 0, 64) + "%"
	case d.Noise.Relative:
		return strconv.FormatFloat(100*v, 'f', 0, 64) + "%"
	case d.Points:
		return strconv.FormatFloat(100*v, 'g', 2, 64) + " points"
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + unitSuffix(d.Unit)
}

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " " + unit
}

// orList joins phrases as "a, b, or c".
func orList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	case 2:
		return xs[0] + " or " + xs[1]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + ", or " + xs[len(xs)-1]
}

// Detect estimates, for every gate of the config's scenarios that have a
// baseline, what it can confirm at the policy's looks: the noise from the
// baseline's repetitions and from history (entries of the same scenario
// and identity as the baseline: identical runs), the detectable change,
// and when the tolerance is below it what would confirm it. baselines are
// by scenario name; history may be nil. Gates that are not tested per
// repetition (cold start), capacity gates, quality gates and tail gates
// are not estimated.
func (p Policy) Detect(cfg *config.Config, baselines map[string]*result.Result, history []baseline.Entry) []Detectability {
	total := 0
	fams := map[string]Family{}
	for _, f := range p.Families {
		total += f.Gates
		fams[f.Scenario] = f
	}
	var out []Detectability
	for _, s := range cfg.Measured() {
		f, ok := fams[s.Name]
		b := baselines[s.Name]
		if !ok || b == nil || f.Samples > 0 {
			continue
		}
		bs := scenarioOf(b, s.Name)
		if bs == nil {
			continue
		}
		for _, g := range cfg.GatesOf(s) {
			if d, ok := p.detect(cfg, s, f, total, g, b, bs, history); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

// scenarioOf is the scenario of r named name, or nil.
func scenarioOf(r *result.Result, name string) *result.ScenarioResult {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}

// detect is Detect for one gate g of scenario s (family f of a run of
// total gates), its baseline scenario bs of result b.
func (p Policy) detect(cfg *config.Config, s config.Scenario, f Family, total int, g config.Gate, b *result.Result, bs *result.ScenarioResult,
	history []baseline.Entry) (Detectability, bool) {
	m, err := metric.Lookup(g.Metric)
	if err != nil || m.PerStart || m.Group == metric.GroupCapacity || strings.HasSuffix(g.Metric, ".tail") {
		return Detectability{}, false
	}
	values, err := compare.GateValuesOrRecorded(bs, m.Name, cfg.Compare.Estimator)
	if err != nil || len(values) < 2 {
		return Detectability{}, false
	}
	d := Detectability{Scenario: s.Name, Metric: m.Name, Title: m.Title, Unit: m.Unit(), Tolerance: g.Tolerance, Repetitions: len(values),
		Sign: "+", Points: m.Points()}
	if m.HigherIsBetter {
		d.Sign = "-"
	}
	var ok bool
	d.Noise, ok = withinNoise(values, g.Tolerance.Relative)
	if !ok {
		return Detectability{}, false
	}
	d.Noise.Falls = m.HigherIsBetter
	d.Noise.Between, d.HistoryRuns = betweenNoise(history, s.Name, b.Identity.Digest(), m.Name, d.Noise, len(values))
	miss := compare.AAMiss / float64(max(1, total))
	// change is the detectable change of noise n under the policy reps,
	// against this baseline; another count of repetitions would measure
	// a baseline of its own (perfgate run measures its max).
	change := func(n stat.Noise, reps Policy) float64 {
		base := len(values)
		if reps.Max != p.Max {
			base = reps.Max
		}
		return stat.DetectableChange(n, reps.looks(base), f.Gates, miss)
	}
	d.Change = change(d.Noise, p)
	if d.Noise.Falls && d.Noise.Relative && d.Change >= 1 {
		d.Change = math.Inf(1) // a fall of -100% or more: no tolerance allows it
	}
	d.Confirmable = g.Tolerance.Value >= d.Change
	d.PassRate = stat.AAPassRate(d.Noise, p.looks(len(values)), f.Gates, g.Tolerance.Value)
	if d.Confirmable {
		return d, true
	}

	// What would confirm it: more requests a repetition (the noise within
	// a run falls as their square root; the run-to-run part does not),
	// more repetitions, a steadier percentile, or the tolerance it needs.
	// A percentile on a cliff of the distribution (both neighbours far
	// steadier: init's TTFT p95 of 128 requests moved ±8% between
	// repetitions where its p90 and p99 held within 2%) is steadied by
	// another percentile, not by more of the same requests, which only
	// move the cliff to another percentile.
	noiseOf := func(name string) (stat.Noise, bool) {
		vs, err := compare.GateValuesOrRecorded(bs, name, cfg.Compare.Estimator)
		if err != nil || len(vs) < 2 {
			return stat.Noise{}, false
		}
		return withinNoise(vs, g.Tolerance.Relative)
	}
	lower := steadierPercentile(m.Name)
	var lowerNoise stat.Noise
	lowerOK := false
	if lower != "" {
		lowerNoise, lowerOK = noiseOf(lower)
	}
	if higher := noisierPercentile(m.Name); lowerOK && higher != "" {
		if hn, ok := noiseOf(higher); ok && lowerNoise.Within <= d.Noise.Within/2 && hn.Within <= d.Noise.Within/2 {
			d.Cliff, d.Neighbours = true, lower+" and "+higher
		}
	}
	if !d.Cliff {
		if n := moreRequests(s, func(factor float64) bool {
			w := d.Noise
			w.Within /= math.Sqrt(factor)
			return change(w, p) <= g.Tolerance.Value
		}); n != "" {
			d.Advice = append(d.Advice, n)
		}
	}
	if r := p.moreRepetitions(func(q Policy) bool { return change(d.Noise, q) <= g.Tolerance.Value }); r > 0 {
		d.Advice = append(d.Advice, fmt.Sprintf("repetitions: %d", r))
	}
	if lowerOK && change(lowerNoise, p) <= g.Tolerance.Value {
		if d.Cliff {
			d.Advice = append([]string{lower}, d.Advice...)
		} else {
			d.Advice = append(d.Advice, lower)
		}
	}
	if !math.IsInf(d.Change, 1) && !math.IsNaN(d.Change) && g.Tolerance.Value > 0 {
		d.Advice = append(d.Advice, d.niceTolerance())
	}
	return d, true
}

// looks are the policy's looks for a baseline of nBase repetitions: the
// candidate's count grows look by look.
func (p Policy) looks(nBase int) []stat.Look {
	levels := p.LookLevels()
	var out []stat.Look
	for i, n := range p.Looks() {
		out = append(out, stat.Look{Baseline: nBase, Candidate: n, Level: levels[i]})
	}
	return out
}

// withinNoise is the spread of one run's repetitions: the standard
// deviation of the log values (relative) or of the values.
func withinNoise(values []float64, relative bool) (stat.Noise, bool) {
	xs := slices.Clone(values)
	if relative {
		for i, v := range xs {
			if !(v > 0) || math.IsInf(v, 0) {
				return stat.Noise{}, false
			}
			xs[i] = math.Log(v)
		}
	}
	sd := stdDev(xs)
	if math.IsNaN(sd) {
		return stat.Noise{}, false
	}
	return stat.Noise{Within: sd, Relative: relative}, true
}

// betweenNoise is the spread of a run's level from one run to the next,
// beyond what the spread within a run explains: from the medians history
// keeps of the scenario's identical runs (the same identity digest), at
// least minHistoryRuns of them. The variance of a median of n values is
// about π/2·within²/n; what the medians vary by beyond that is the runs'
// own. 0 and the runs found when there are too few, or the metric is not
// kept.
func betweenNoise(history []baseline.Entry, scenario, identity, name string, within stat.Noise, n int) (float64, int) {
	var meds []float64
	for _, e := range history {
		if e.Scenario != scenario || e.Identity != identity {
			continue
		}
		s, ok := e.Metrics[name]
		if !ok || math.IsNaN(s.Median) {
			continue
		}
		v := s.Median
		if within.Relative {
			if !(v > 0) {
				continue
			}
			v = math.Log(v)
		}
		meds = append(meds, v)
	}
	if len(meds) < minHistoryRuns {
		return 0, len(meds)
	}
	sd := stdDev(meds)
	between := sd*sd - math.Pi/2*within.Within*within.Within/float64(max(1, n))
	if !(between > 0) {
		return 0, len(meds)
	}
	return math.Sqrt(between), len(meds)
}

// stdDev is the sample standard deviation (n−1), NaN for fewer than two.
func stdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// maxAdvisedFactor bounds the more requests (or longer repetitions) advice:
// beyond ten times as many, the run-to-run noise or the tail's own
// roughness is what is left, and the advice would mislead.
const maxAdvisedFactor = 10

// moreRequests advises a repetition of more requests (or a longer one)
// when one at most maxAdvisedFactor times the size confirms: "600
// requests", "duration: 4m". ok(factor) says whether factor times as many
// would. "" when none does, or the scenario's size is not a count or a
// duration.
func moreRequests(s config.Scenario, ok func(factor float64) bool) string {
	if !ok(maxAdvisedFactor) {
		return ""
	}
	lo, hi := 1.0, float64(maxAdvisedFactor)
	for range 20 {
		mid := math.Sqrt(lo * hi)
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	switch {
	case s.Requests > 0:
		return fmt.Sprintf("%d requests", roundUpNice(float64(s.Requests)*hi))
	case s.Duration > 0:
		secs := roundUpNice(s.Duration.Seconds() * hi)
		if secs%60 == 0 {
			return fmt.Sprintf("duration: %dm", secs/60)
		}
		return fmt.Sprintf("duration: %ds", secs)
	}
	return ""
}

// moreRepetitions is the fewest repetitions (a fixed count, up to 30) with
// which ok says the gate confirms; 0 when none does.
func (p Policy) moreRepetitions(ok func(Policy) bool) int {
	for n := p.Max + 1; n <= 30; n++ {
		q := p
		q.Min, q.Max = n, n
		if ok(q) {
			return n
		}
	}
	return 0
}

// steadierPercentile is the lower percentile of a latency percentile gate
// that a user would gate instead (p95 for p99 and above, p90 for p95), ""
// for other metrics.
func steadierPercentile(name string) string {
	lat, pct, ok := metric.LatencyPercentile(name)
	if !ok {
		return ""
	}
	q, err := config.ParseTail(pct)
	if err != nil {
		return ""
	}
	switch {
	case q >= 0.99:
		return lat + ".p95"
	case q >= 0.95:
		return lat + ".p90"
	}
	return ""
}

// noisierPercentile is the percentile above a p90 or p95 gate's, of the
// same family (p95, p99), the other neighbour a cliff is judged by; "" for
// others.
func noisierPercentile(name string) string {
	lat, pct, ok := metric.LatencyPercentile(name)
	if !ok {
		return ""
	}
	switch pct {
	case "p90":
		return lat + ".p95"
	case "p95":
		return lat + ".p99"
	}
	return ""
}

// niceTolerance writes the tolerance the change needs, rounded up, as a
// config would: to a whole percent below 10%, to 5% above; points and
// units to two significant digits.
func (d Detectability) niceTolerance() string {
	switch {
	case d.Noise.Relative:
		pct := 100 * d.Change
		step := 1.0
		if pct > 10 {
			step = 5
		}
		return d.Sign + strconv.FormatFloat(math.Ceil(pct/step)*step, 'f', 0, 64) + "%"
	case d.Points:
		return d.Sign + strconv.FormatFloat(ceilSig(100*d.Change, 2), 'g', -1, 64) + " points"
	}
	v := strconv.FormatFloat(ceilSig(d.Change, 2), 'g', -1, 64)
	if d.Unit == "ms" {
		return d.Sign + v + "ms" // a duration, as config writes it: +20ms
	}
	return d.Sign + v + unitSuffix(d.Unit)
}

// roundUpNice rounds up to two significant digits, at least 1.
func roundUpNice(x float64) int { return max(1, int(ceilSig(x, 2))) }

// ceilSig rounds x > 0 up to digits significant digits.
func ceilSig(x float64, digits int) float64 {
	if !(x > 0) {
		return x
	}
	scale := math.Pow(10, float64(digits)-math.Ceil(math.Log10(x)))
	return math.Ceil(x*scale-1e-9) / scale
}

// Unconfirmed says what a warned gate risks, in words: "an unchanged
// candidate may fail this gate" when failing is likely, else "an unchanged
// candidate is unlikely to pass".
func (d Detectability) Unconfirmed() string {
	if d.Likely() {
		return "an unchanged candidate may fail this gate"
	}
	return "an unchanged candidate is unlikely to pass"
}
