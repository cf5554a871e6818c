package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
)

// overloadResult is sessionResult's scenario (chat-c16) with every
// repetition overloaded, declared when declared is true.
func overloadResult(declared bool) *result.Result {
	r := sessionResult(1)
	s := &r.Scenarios[0]
	for i := range s.Repetitions {
		s.Repetitions[i].Overload = &result.Overload{Requests: 240, OfferedRate: 12.05, ServedRate: 8.61,
			TTFTFirstMS: 970, TTFTLastMS: 17802, InFlightFirst: 9, InFlightLast: 52, TrendP: 1e-9, Overloaded: true}
	}
	if declared {
		s.Load.Overload = result.OverloadMeasure
	}
	return r
}

// An overloaded scenario is labelled in the run's summary and in the text,
// markdown and HTML reports, "overloaded (declared)" when it declares it;
// a scenario the server kept up with carries no label.
func TestOverloadLabel(t *testing.T) {
	const sentence = "offered 12.1 req/s, served 8.6 req/s; the queue grew through every repetition"
	var sum bytes.Buffer
	require.NoError(t, Summary(&sum, overloadResult(false)))
	assert.Contains(t, sum.String(), "   OVERLOADED: "+sentence+"\n")
	sum.Reset()
	require.NoError(t, Summary(&sum, overloadResult(true)))
	assert.Contains(t, sum.String(), "   overloaded (declared): "+sentence+"\n")

	d, err := reportfile.New(passVerdict(), []*result.Result{overloadResult(true)}, overloadResult(true), nil)
	require.NoError(t, err)
	d.Key = "perfgate.yaml"
	require.NotNil(t, d.Scenarios[0].Overload)
	var text, md bytes.Buffer
	require.NoError(t, emitText(&text, []*reportfile.Document{d}))
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{}))
	page := renderHTML(t, d)
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String(), "html": page} {
		assert.Contains(t, out, "Overloaded (declared): "+sentence, name)
		assert.Contains(t, out, "baseline: overloaded (declared): "+sentence, name)
	}

	d, err = reportfile.New(passVerdict(), []*result.Result{sessionResult(1)}, sessionResult(1), nil)
	require.NoError(t, err)
	assert.Nil(t, d.Scenarios[0].Overload)
	text.Reset()
	require.NoError(t, emitText(&text, []*reportfile.Document{d}))
	assert.NotContains(t, text.String(), "verloaded")
}
