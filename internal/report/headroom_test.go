package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// Two headroom searches recorded against llama.cpp's server (the small
// random-weight test model on a CPU, 2 users, 32 output tokens, 5
// repetitions): started with --ctx-size 1024 --parallel 2 (slots of 512
// tokens) and with --ctx-size 512 (slots of 256). The halved slot is a
// headroom regression, each side's search lands on its slot within a step,
// and the reports show the boundary as the server said it.
func TestHeadroomReportOfLlamaCpp(t *testing.T) {
	base, err := result.Read("testdata/headroom/llama-slot512.json")
	require.NoError(t, err)
	cand, err := result.Read("testdata/headroom/llama-slot256.json")
	require.NoError(t, err)
	for _, side := range []struct {
		r    *result.Result
		slot float64
	}{{base, 512}, {cand, 256}} {
		c := side.r.Scenarios[0].Capacity
		require.NotNil(t, c)
		require.NotNil(t, c.Search.Headroom)
		assert.LessOrEqual(t, c.Holds, side.slot)
		assert.LessOrEqual(t, side.slot, c.Breaks)
		assert.LessOrEqual(t, c.Breaks/c.Holds, 1+c.Search.Resolution)
		assert.Contains(t, c.Boundary, "answers cut short")
		assert.True(t, c.Calibration.Measured)
		require.NotNil(t, side.r.Utilization)
		assert.Contains(t, side.r.Utilization.Sources[0], "GGUF header of small.gguf")
	}

	v, err := compare.Compare([]*result.Result{base}, cand, compare.Options{Detectable: true})
	require.NoError(t, err)
	require.Len(t, v.Scenarios[0].Gates, 1)
	g := v.Scenarios[0].Gates[0]
	assert.Equal(t, "headroom", g.Metric)
	assert.Equal(t, stat.Regression, g.Outcome, g.Reason)
	assert.Contains(t, g.Reason, "paired by repetition (the same requests of the same seed 1)")

	d, err := reportfile.New(v, []*result.Result{base}, cand, nil)
	require.NoError(t, err)
	d.Key = "perfgate.yaml"
	var text, md, summary bytes.Buffer
	require.NoError(t, emitText(&text, []*reportfile.Document{d}))
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{}))
	require.NoError(t, Summary(&summary, cand))
	golden(t, "headroom.txt", text.Bytes())
	golden(t, "headroom.md", md.Bytes())
	golden(t, "summary-headroom.golden", summary.Bytes())
	assert.Contains(t, summary.String(), "headroom 245 tokens [245, 256)")
	assert.Contains(t, summary.String(), "where it stopped holding: rep 5: answers cut short")
	assert.Contains(t, md.String(), "exceeds the available context size (256 tokens)")
	htmlHas(t, renderHTML(t, d), "Headroom search: probes by tokens")
}
