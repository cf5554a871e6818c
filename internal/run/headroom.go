package run

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/workload"
)

// HeadroomRequests are a headroom probe's requests: n requests of a prompt
// of words words (synthetic text, seeded, as a synth workload's) that each
// ask for exactly output tokens (max_tokens, min_tokens and ignore_eos), so
// that each holds its context to the end unless the server cuts it. api is
// chat or completions.
func HeadroomRequests(api string, words, output, n int, seed int64) ([]workload.Request, error) {
	spec := workload.SynthSpec{Requests: n, API: api,
		Input:  workload.Dist{Type: "fixed", Value: words},
		Output: workload.Dist{Type: "fixed", Value: output}}
	reqs, err := workload.Synthesize(spec, "", seed)
	if err != nil {
		return nil, fmt.Errorf("headroom requests of %d words and %d output tokens: %w", words, output, err)
	}
	yes := true
	for i := range reqs {
		reqs[i].ID = fmt.Sprintf("headroom-%06d", i+1)
		reqs[i].IgnoreEOS = &yes
		mt := reqs[i].MaxTokens
		reqs[i].MinTokens = &mt
	}
	return reqs, nil
}
