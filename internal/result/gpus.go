package result

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/textsafe"
)

// DescribeGPUs describes GPUs by model and count, "8x NVIDIA H100 80GB HBM3"
// (models in order of first appearance, joined by ", "; a model the source
// did not name is "unknown"); "" when there are none. A model name comes
// from the GPU source, so it is made safe to print and cut to 100 characters.
// The benchfmt and github-action-benchmark exports say the hardware with it.
func DescribeGPUs(gpus []GPU) string {
	var models []string
	count := map[string]int{}
	for _, g := range gpus {
		m := strings.TrimSpace(textsafe.Cut(g.Model, 100))
		if m == "" {
			m = "unknown"
		}
		if count[m] == 0 {
			models = append(models, m)
		}
		count[m]++
	}
	parts := make([]string, len(models))
	for i, m := range models {
		parts[i] = fmt.Sprintf("%dx %s", count[m], m)
	}
	return strings.Join(parts, ", ")
}
