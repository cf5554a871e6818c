package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/result"
)

// workloadLine says in one line what a scenario replayed: "workload
// chat.jsonl sha256:1a2b3c4d: 300 requests, prompts p50 20 / p99 2100
// words, max_tokens p50 128, prefix sharing 12%, 40 sessions of 2-5 turns,
// arrivals 2.1 req/s burstiness 1.8". Empty when the result has no shape
// (a result from before shapes were kept). The file name is untrusted and
// cleaned.
func workloadLine(file, hash string, s *result.WorkloadShape) string {
	if s == nil {
		return ""
	}
	parts := []string{
		fmt.Sprintf("%d request%s", s.Requests, plural(s.Requests)),
		fmt.Sprintf("prompts p50 %d / p99 %d words", s.PromptWords.P50, s.PromptWords.P99),
		fmt.Sprintf("max_tokens p50 %d", s.MaxTokens.P50),
		"prefix sharing " + strconv.FormatFloat(100*s.PrefixSharing.Ratio, 'f', 0, 64) + "%",
	}
	if ss := s.Sessions; ss != nil {
		turns := strconv.Itoa(ss.TurnsMin)
		if ss.TurnsMax != ss.TurnsMin {
			turns += "-" + strconv.Itoa(ss.TurnsMax)
		}
		parts = append(parts, fmt.Sprintf("%d sessions of %s turns", ss.Count, turns))
	}
	if a := s.Arrivals; a != nil {
		parts = append(parts, fmt.Sprintf("arrivals %s req/s burstiness %s",
			strconv.FormatFloat(a.MeanRate, 'f', 1, 64), strconv.FormatFloat(a.Burstiness, 'f', 1, 64)))
	}
	return fmt.Sprintf("workload %s %s: %s", clean(file, 80), shortHash(hash), strings.Join(parts, ", "))
}
