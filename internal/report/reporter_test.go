package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
)

// Every rendering goes through a Reporter made for its object and
// format; a format the object has not is refused with those it has.
func TestReporters(t *testing.T) {
	_, err := DocumentsReporter(nil, "yaml", MarkdownOptions{})
	assert.EqualError(t, err, `format "yaml": want one of text, markdown, json, html`)
	_, err = VerdictReporter(&compare.Verdict{}, FormatHTML)
	assert.EqualError(t, err, `format "html": want one of text, markdown, json`)
	_, err = FrontierReporter(nil, "csv")
	assert.Error(t, err)

	// A reporter writes what the renderer it wraps writes.
	v := &compare.Verdict{Outcome: "pass"}
	for _, f := range TextFormats {
		r, err := VerdictReporter(v, f)
		require.NoError(t, err, f)
		var got, want bytes.Buffer
		require.NoError(t, r.Report(&got))
		switch f {
		case FormatText:
			require.NoError(t, emitVerdictText(&want, v))
		case FormatMarkdown:
			require.NoError(t, emitVerdictMarkdown(&want, v))
		case FormatJSON:
			require.NoError(t, emitVerdictJSON(&want, v))
		}
		assert.Equal(t, want.String(), got.String(), f)
		assert.NotEmpty(t, got.String(), f)
	}
}
