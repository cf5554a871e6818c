package capacity

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/perfgate/perfgate/internal/result"
)

// Samples are one capacity estimate per repetition index (the capacity
// gate's samples), from the probes' repetitions: repetition r of every
// probe replays the same seeded arrivals, so it is one arrival sequence
// measured at several loads.
//
// For repetition r, m(x) is its largest SLO statistic over its limit at
// load x (+Inf when the repetition broke). b is the lowest load probed
// where m > 1, a the highest below it where m <= 1, and the crossing is
// c = a·(b/a)^t with t = ln(1/m(a)) / ln(m(b)/m(a)) clamped to [0, 1]:
// linear in log margin against log load, the geometric midpoint when the
// repetition broke at b. The first crossing is taken when the repetition
// held again above b.
//
// The sample's RequestRate is c itself for a request_rate search (the
// offered rate the SLOs held to, the quantity searched; the achieved rate
// of a repetition counts its drain too, and is noisier), and the achieved
// request rate interpolated at the same t for a concurrency search, as is
// OutputThroughput (geometrically, as the load). Where the repetition
// broke at b, its throughput there is not a measurement, so the sample
// takes a's achieved figures: what was shown to be reached.
//
// A headroom search's repetition broken at b by one of its limits (not an
// SLO) has no margin to interpolate: its sample is a, the most it was shown
// to hold.
//
// With no b the sample is censored above (held at every probe: c is the
// highest load it held at, a lower bound); with no a, censored below
// (broke at every probe: c is the lowest load it broke at, an upper bound).
func Samples(s Spec, probes []result.CapacityProbe) []result.CapacitySample {
	out, _ := samples(s, probes)
	return out
}

// point is one repetition at one probed load.
type point struct {
	load, margin, rate, output float64
}

// samples is Samples with the warnings the search shows: repetitions that
// held again above a load where they broke.
func samples(s Spec, probes []result.CapacityProbe) ([]result.CapacitySample, []string) {
	byRep := map[int][]point{}
	for _, p := range probes {
		for i := range p.Repetitions {
			r := &p.Repetitions[i]
			byRep[r.Index] = append(byRep[r.Index], point{load: p.Load, margin: worstMargin(s, p.Load, r),
				rate: r.RequestThroughput, output: r.OutputThroughput})
		}
	}
	indices := make([]int, 0, len(byRep))
	for k := range byRep {
		indices = append(indices, k)
	}
	slices.Sort(indices)
	out := make([]result.CapacitySample, 0, len(indices))
	var warnings []string
	for _, rep := range indices {
		pts := byRep[rep]
		slices.SortStableFunc(pts, func(x, y point) int { return cmp.Compare(x.load, y.load) })
		sample, warning := crossing(s, rep, pts)
		out = append(out, sample)
		if warning != "" {
			warnings = append(warnings, warning)
		}
	}
	return out, warnings
}

// crossing is repetition rep's sample from its points in increasing load,
// and a warning when it is not monotone.
func crossing(s Spec, rep int, pts []point) (result.CapacitySample, string) {
	sample := result.CapacitySample{Repetition: rep}
	bi := slices.IndexFunc(pts, func(p point) bool { return !(p.margin <= 1) })
	if bi < 0 { // held everywhere: at least the highest load
		a := pts[len(pts)-1]
		sample.Load, sample.RequestRate, sample.OutputThroughput, sample.Censored = a.load, s.rate(a, a.load), a.output, result.CensoredAbove
		return sample, ""
	}
	b := pts[bi]
	warning := ""
	for _, p := range pts[bi+1:] {
		if p.margin <= 1 {
			warning = fmt.Sprintf("non-monotone: repetition %d held at %s %s, above %s where it broke (its capacity is taken at the first crossing)",
				rep, FormatLoad(p.load), s.unit(), FormatLoad(b.load))
			break
		}
	}
	if bi == 0 { // broke everywhere below b too: at most the lowest load
		sample.Load, sample.RequestRate, sample.OutputThroughput, sample.Censored = b.load, s.rate(b, b.load), b.output, result.CensoredBelow
		return sample, warning
	}
	a := pts[bi-1]
	t := 0.5
	if s.Headroom != nil && math.IsInf(b.margin, 1) {
		// A headroom limit breaks at once, with no margin to interpolate
		// (a refusal, a cut answer, a preemption): the sample is what the
		// repetition was shown to hold, not a midpoint that the next probe
		// up, far above on a coarse bracket, would pull past the wall.
		t = 0
	}
	if !math.IsInf(b.margin, 1) {
		ma := max(a.margin, 1e-12)
		t = math.Log(1/ma) / math.Log(b.margin/ma)
		t = min(max(t, 0), 1)
	}
	sample.Load = geo(a.load, b.load, t)
	if math.IsInf(b.margin, 1) {
		sample.RequestRate, sample.OutputThroughput = s.rate(a, sample.Load), a.output
		return sample, warning
	}
	sample.RequestRate = s.rate(point{rate: geo(a.rate, b.rate, t)}, sample.Load)
	sample.OutputThroughput = geo(a.output, b.output, t)
	return sample, warning
}

// rate is a sample's request rate: the load itself for a request_rate
// search, else the achieved rate p carries.
func (s Spec) rate(p point, load float64) float64 {
	if s.Metric == metricRate {
		return load
	}
	return p.rate
}

// geo interpolates from x to y at t, geometrically when both are positive,
// linearly otherwise.
func geo(x, y, t float64) float64 {
	if x > 0 && y > 0 {
		return x * math.Pow(y/x, t)
	}
	return x + t*(y-x)
}
