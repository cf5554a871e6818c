package workload

import (
	"slices"
	"strconv"
	"strings"
)

// maxSamplingValues is how many distinct values Sampling lists for one
// parameter before it says how many more there are.
const maxSamplingValues = 5

// Sampling lists the sampling parameters the requests set, each with its
// distinct values in increasing order ("0, 0.7"), for the result's identity:
// two runs whose requests sample differently measure different things. A
// parameter no request sets is left out (the server's default applies), and
// "unset" is listed beside values when only some requests set it. It returns
// nil when no request sets any.
func Sampling(reqs []Request) map[string]string {
	seen := map[string]map[string]bool{}
	unset := map[string]int{}
	note := func(name string, set bool, value string) {
		if !set {
			unset[name]++
			return
		}
		if seen[name] == nil {
			seen[name] = map[string]bool{}
		}
		seen[name][value] = true
	}
	f := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	}
	for _, r := range reqs {
		note("temperature", r.Temperature != nil, f(r.Temperature))
		note("top_p", r.TopP != nil, f(r.TopP))
		if r.Seed != nil {
			note("seed", true, "set") // per-request seeds differ by design; that one is set is what matters
		} else {
			note("seed", false, "")
		}
		if r.IgnoreEOS != nil {
			note("ignore_eos", true, strconv.FormatBool(*r.IgnoreEOS))
		} else {
			note("ignore_eos", false, "")
		}
		if r.MinTokens != nil {
			note("min_tokens", true, strconv.Itoa(*r.MinTokens))
		} else {
			note("min_tokens", false, "")
		}
		note("response_format", len(r.ResponseFormat) > 0, "set")
	}
	if len(seen) == 0 {
		return nil
	}
	out := map[string]string{}
	for name, values := range seen {
		list := make([]string, 0, len(values))
		for v := range values {
			list = append(list, v)
		}
		slices.SortFunc(list, compareValues)
		if len(list) > maxSamplingValues {
			list = append(list[:maxSamplingValues], "… "+strconv.Itoa(len(values)-maxSamplingValues)+" more")
		}
		if unset[name] > 0 {
			list = append(list, "unset")
		}
		out[name] = strings.Join(list, ", ")
	}
	return out
}

// compareValues orders numbers by value and anything else by text.
func compareValues(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return strings.Compare(a, b)
}
