package metric

import (
	"math"
	"strconv"
)

// SigFigs formats x with three significant figures, but never rounds away
// digits before the point: 41.2, 1235, 0.450; "?" for NaN, "∞" and "-∞".
// Reports and the frontier write a metric's values with it.
func SigFigs(x float64) string {
	switch {
	case math.IsNaN(x):
		return "?"
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "-∞"
	case x == 0:
		return "0"
	}
	decimals := 0
	if a := math.Abs(x); a < 100 {
		decimals = min(2-int(math.Floor(math.Log10(a))), 9)
	}
	scale := math.Pow10(decimals)
	return strconv.FormatFloat(math.Round(x*scale)/scale, 'f', decimals, 64)
}
