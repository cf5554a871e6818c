package quality

import (
	"cmp"
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// numericScorer extracts the number an output answers and passes when it is
// within tolerance of one expected number.
type numericScorer struct {
	want           []float64
	absTol, relTol float64
}

// relFloor is the relative difference under which two numbers are equal
// whatever the tolerances: it absorbs floating-point rounding.
const relFloor = 1e-9

var (
	// numberRe matches a number: optional sign, optional currency symbol,
	// digits with optional thousands commas, decimals and exponent.
	numberRe = regexp.MustCompile(`([-−+]?)[$€£¥]?\s?([-−]?)(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)`)
	// anchorRe matches what introduces a final answer.
	anchorRe = regexp.MustCompile(`(?i)\banswers?\s*(?:is\b\s*:?|:)|=|####|\\boxed\{`)
)

// maxAnchorGap is how far (in bytes, on the same line) after an anchor its
// number may start.
const maxAnchorGap = 48

func (s *numericScorer) score(output string) Score {
	v, ok := extractNumber(output)
	if !ok {
		return fail("no number found")
	}
	detail := "number " + fmtNumber(v)
	for _, w := range s.want {
		if withinTolerance(v, w, s.absTol, s.relTol) {
			return pass(detail)
		}
	}
	return fail(detail)
}

func (s *numericScorer) continuous() bool { return false }

// withinTolerance reports whether got is within absTol of want, or within
// relTol of |want|; relFloor (relative to the larger magnitude) is added to
// both, so that rounding never decides ("3.13" is within 0.01 of 3.14).
func withinTolerance(got, want, absTol, relTol float64) bool {
	d := math.Abs(got - want)
	slack := relFloor * math.Max(math.Abs(got), math.Abs(want))
	return d <= max(absTol, relTol*math.Abs(want))+slack
}

// extractNumber finds the number an output answers: the first number after
// the last anchor ("answer is", "answer:", "=", "####", "\boxed{") that has
// one within maxAnchorGap bytes on its line; else the last number in the
// text. Markdown bold is ignored; thousands commas, a leading minus (also
// U+2212), a currency symbol before and units after ("$1,234.50", "42 km",
// "12%") are allowed. A minus directly after a letter or digit ("3-5") is a
// hyphen, not a sign.
func extractNumber(out string) (float64, bool) {
	out = strings.ReplaceAll(out, "**", "")
	nums := numberRe.FindAllStringSubmatchIndex(out, -1)
	anchors := anchorRe.FindAllStringIndex(out, -1)
	for i := len(anchors) - 1; i >= 0; i-- {
		end := anchors[i][1]
		j, _ := slices.BinarySearchFunc(nums, end, func(m []int, end int) int { return cmp.Compare(m[0], end) })
		for ; j < len(nums); j++ {
			m := nums[j]
			if m[0]-end > maxAnchorGap || strings.Contains(out[end:m[0]], "\n") {
				break
			}
			if v, ok := numberAt(out, m); ok {
				return v, true
			}
		}
	}
	for i := len(nums) - 1; i >= 0; i-- {
		if v, ok := numberAt(out, nums[i]); ok {
			return v, true
		}
	}
	return 0, false
}

// numberAt parses the numberRe match m of s. A number glued to a letter or
// digit before it ("x2", "H2O") still counts, but its sign does not; a value
// out of float64's range does not count.
func numberAt(s string, m []int) (float64, bool) {
	sign1, sign2 := s[m[2]:m[3]], s[m[4]:m[5]]
	digits := strings.ReplaceAll(s[m[6]:m[7]], ",", "")
	neg := sign1 == "-" || sign1 == "−" || sign2 == "-" || sign2 == "−"
	if sign1 != "" && endsAlnum(s[:m[0]]) {
		neg = sign2 != "" // "3-5": the hyphen is no sign
	}
	v, err := strconv.ParseFloat(digits, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsInf(v, 0) {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// fmtNumber writes v for details and answers: integers in full ("1234567"),
// others in the shortest form that reads back as v.
func fmtNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// expectedRe matches an expected answer of the numeric scorer: a decimal
// number, with optional thousands commas or exponent.
var expectedRe = regexp.MustCompile(`^[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)$`)

// parseExpectedNumber parses an expected answer of the numeric scorer.
func parseExpectedNumber(s string) (float64, bool) {
	t := strings.TrimSpace(s)
	if !expectedRe.MatchString(t) {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(t, ",", ""), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}
