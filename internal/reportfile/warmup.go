package reportfile

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/result"
)

// warmupNotes are what a report says about the two sides' warm-ups: the
// warm-up requests that failed, and a drain cut short, for each side where
// it happened (a warm-up that was not steady is compare's warning).
func warmupNotes(base, cand *result.ScenarioResult) []string {
	var out []string
	for _, side := range []struct {
		name string
		s    *result.ScenarioResult
	}{{"baseline", base}, {"candidate", cand}} {
		if side.s == nil || side.s.Warmup == nil {
			continue
		}
		w := side.s.Warmup
		if w.Failed > 0 {
			n := w.Requests + w.Failed
			note := fmt.Sprintf("the %s's warm-up: %d of %d request%s failed", side.name, w.Failed, n, plural(n))
			if kinds := w.FailureKinds(); kinds != "" {
				note += ": " + kinds
			}
			out = append(out, note)
		}
		if w.DrainCut > 0 || w.DrainQueue != nil {
			out = append(out, fmt.Sprintf("the %s's warm-up did not drain within target.timeout: its last requests may have run into repetition 1", side.name))
		}
	}
	return out
}
