package report

import (
	"math"
	"strconv"
)

// Honest axes: every chart's value axis is decided here, once, for mermaid
// and the HTML report alike, so that what a chart shows is in proportion
// to what was measured. An axis starts at zero, or — for a line whose
// values all sit far from zero — spans at least minAxisShare of its largest
// value and says where it starts; a 0.3% change never fills a chart. A
// share (a "%" metric) is drawn from 0, and never past 100%. A log axis
// (the CDFs') is ticked at few enough values that their labels stay apart.

// minAxisShare is the least share of its largest value that a value axis
// not starting at zero spans.
const minAxisShare = 0.5

// axisRange is a value axis's ends.
type axisRange struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// axisKind says what a value axis may do.
type axisKind int

const (
	// axisLine may start above zero, spanning at least minAxisShare of
	// its largest value.
	axisLine axisKind = iota
	// axisZero starts at zero: bars, whose length is their value.
	axisZero
	// axisShare is a share in percent: from 0, and at most 100.
	axisShare
)

// valueAxis is the axis of kind over values (NaN and infinities are left
// out); false without a value to place. Its ends are finite, lo below hi:
// where rounding them would pass the largest float, the axis runs from
// zero to the values' far end instead.
func valueAxis(values []float64, kind axisKind) (axisRange, bool) {
	r, ok := niceValueAxis(values, kind)
	if !ok || (finite(r.Lo) && finite(r.Hi) && r.Lo < r.Hi) {
		return r, ok
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if finite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	r = axisRange{math.Min(lo, 0), math.Max(hi, 0)}
	if r.Lo == r.Hi {
		r.Hi = r.Lo + 1
	}
	return r, true
}

// niceValueAxis is valueAxis before its check of the ends.
func niceValueAxis(values []float64, kind axisKind) (axisRange, bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if finite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if lo > hi {
		if kind == axisShare {
			return axisRange{0, 1}, true
		}
		return axisRange{}, false
	}
	switch {
	case kind == axisShare:
		top := math.Min(100, niceCeil(math.Max(hi*1.1, 1)))
		return axisRange{0, math.Max(top, math.Min(hi, 100))}, true
	case lo < 0:
		pad := 0.1 * math.Max(hi-lo, math.Abs(hi))
		if pad == 0 {
			pad = 1
		}
		step := niceStep((hi - lo + 2*pad) / 5)
		return axisRange{math.Floor((lo-pad)/step) * step, math.Ceil((hi+pad)/step) * step}, true
	case hi == 0:
		return axisRange{0, 1}, true
	case kind == axisZero || lo <= hi*(1-minAxisShare):
		return axisRange{0, niceCeil(hi * 1.05)}, true
	}
	// Every value is well above zero: the axis spans minAxisShare of the
	// largest, ends rounded to a step that keeps its ticks readable.
	from := hi * (1 - minAxisShare)
	step := niceStep((hi - from) / 5)
	return axisRange{math.Floor(from/step) * step, math.Ceil(hi*1.02/step) * step}, true
}

// niceStep is the 1, 2, 2.5 or 5 times a power of ten at or above x > 0.
func niceStep(x float64) float64 {
	if !(x > 0) || !finite(x) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if s := m * p; finite(s) && s >= x*(1-1e-9) {
			return s
		}
	}
	// Near the largest float, no nicer step is finite.
	return math.MaxFloat64
}

// niceCeil is x > 0 rounded up to a tenth of its power of ten, or a
// multiple of a nicer step: 1.05 → 1.1, 437 → 450, 3960 → 4000.
func niceCeil(x float64) float64 {
	step := niceStep(x / 10)
	return math.Ceil(x/step*(1-1e-12)) * step
}

// setAxis gives chart c its value axis over the values of its series, of
// kind.
func setAxis(c *chart, kind axisKind) {
	var values []float64
	for _, s := range c.Series {
		for _, p := range s.Points {
			values = append(values, float64(p.Y))
		}
	}
	r, ok := valueAxis(values, kind)
	if !ok {
		return
	}
	c.YAxis = &r
}

// axisNote says where a value axis starts when not at zero: "y axis from
// 60, not 0"; empty otherwise. Each medium shows it beside the chart.
func axisNote(c *chart) string {
	if c.YAxis == nil || c.YAxis.Lo <= 0 {
		return ""
	}
	return "y axis from " + axisNumber(c.YAxis.Lo) + ", not 0"
}

// axisNumber is an axis's end as its label shows it.
func axisNumber(x float64) string {
	return strconv.FormatFloat(roundSig(x, 4), 'f', -1, 64)
}

// maxLogTicks is the most labels a log axis gets: more would run into each
// other on a chart half a page wide.
const maxLogTicks = 7

// maxDecades bounds a log axis's decades: 10^-324 to 10^308 are the
// float64's ends, so no finite range has more.
const maxDecades = 640

// logTicks are the ticks of a log axis from lo to hi (both > 0): 1, 2 and
// 5 times each power of ten in range when they are few enough, else the
// powers of ten, else every other; the ends alone when none falls inside.
// Every loop is bounded by a count, never by a float reaching a value: a
// range narrower than the floats' spacing near it (1 to 1.0000000000000002)
// once spun forever, as v += step left v where it was.
func logTicks(lo, hi float64) []float64 {
	if !(lo > 0) || !(hi >= lo) || !finite(hi) {
		return nil
	}
	var all []float64
	first := math.Floor(math.Log10(lo))
	for i := 0; i < maxDecades; i++ {
		e := first + float64(i)
		if math.Pow(10, e) > hi {
			break
		}
		for _, m := range []float64{1, 2, 5} {
			if v := roundSig(m*math.Pow(10, e), 3); finite(v) && v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				all = append(all, v)
			}
		}
	}
	if len(all) < 3 {
		ticks, _ := linearTicks(lo, hi)
		return ticks
	}
	if len(all) <= maxLogTicks {
		return all
	}
	var decades []float64
	for _, v := range all {
		if e := math.Log10(v); math.Abs(e-math.Round(e)) < 1e-9 {
			decades = append(decades, v)
		}
	}
	for every := 1; every <= len(decades); every++ {
		var out []float64
		for i := 0; i < len(decades); i += every {
			out = append(out, decades[i])
		}
		if len(out) <= maxLogTicks {
			return out
		}
	}
	return decades[:1]
}

// maxLinearSteps bounds linearTicks's steps: a step is the power of ten
// below hi-lo, so fewer than 11 fit in the range.
const maxLinearSteps = 12

// linearTicks are the ticks of a log axis spanning less than a decade
// (0 < lo <= hi, both finite): every whole step of the power of ten below
// hi-lo (1.35 to 4.16: 2, 3, 4), with the ends; equal neighbours (as the
// ends of a range narrower than three significant digits) once. steps is
// how many steps it took, at most maxLinearSteps.
func linearTicks(lo, hi float64) (ticks []float64, steps int) {
	ticks = []float64{roundSig(lo, 3)}
	step := math.Pow(10, math.Floor(math.Log10(hi-lo)))
	// A tick closer to an end than a tenth of the axis would run into
	// its label.
	gap := 0.1 * math.Log(hi/lo)
	start := math.Ceil(lo/step) * step
	for i := 0; i < maxLinearSteps; i++ {
		steps++
		// By index, not by adding: v += step leaves v where it is once
		// step is less than half the floats' spacing near v.
		v := start + float64(i)*step
		if !(v < hi) || !(step > 0) || !finite(v) {
			break
		}
		if math.Log(v/lo) >= gap && math.Log(hi/v) >= gap && len(ticks) < maxLogTicks-1 {
			ticks = append(ticks, roundSig(v, 3))
		}
		if v+step == v {
			break
		}
	}
	ticks = append(ticks, roundSig(hi, 3))
	// Rounded to three digits, ends and steps may meet; a tick not
	// finite (never expected) is left out.
	out := ticks[:0]
	for _, v := range ticks {
		if finite(v) && (len(out) == 0 || v > out[len(out)-1]) {
			out = append(out, v)
		}
	}
	return out, steps
}
