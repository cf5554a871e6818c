package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/reportfile"
)

// A report read back renders as the one written.
func TestDocumentRoundTripRendersTheSame(t *testing.T) {
	dir := t.TempDir()
	d := testDocument(regressionVerdict(), 1.3, 3)
	d.Title, d.Source = "job", reportfile.Source{Repository: "a/b", PullRequest: 7, Commit: "abc"}
	path := filepath.Join(dir, "report.json")
	require.NoError(t, reportfile.Write(path, d))
	back, err := reportfile.Read(path)
	require.NoError(t, err)
	var a, b bytes.Buffer
	require.NoError(t, emitMarkdown(&a, []*reportfile.Document{d}, MarkdownOptions{}))
	require.NoError(t, emitMarkdown(&b, []*reportfile.Document{back}, MarkdownOptions{}))
	assert.Equal(t, a.String(), b.String(), "a report read back renders the same")
	assert.Equal(t, d.Source, back.Source)

}

func TestWriteTextAndJSON(t *testing.T) {
	a, b := testDocument(passVerdict(), 1, 0), testDocument(regressionVerdict(), 1.3, 0)
	a.Title, b.Title = "small", "big\x1b[31m"
	var buf bytes.Buffer
	require.NoError(t, emitText(&buf, []*reportfile.Document{a, b}))
	out := buf.String()
	assert.Contains(t, out, "=== small\n")
	assert.Contains(t, out, "=== big [31m\n", "control characters cleaned")
	assert.True(t, strings.HasSuffix(out, "overall: regression in 1 of 2 jobs (exit 1)\n"), out)

	buf.Reset()
	require.NoError(t, emitDocumentsJSON(&buf, []*reportfile.Document{a, b}))
	var docs []reportfile.Document
	require.NoError(t, json.Unmarshal(buf.Bytes(), &docs))
	assert.Len(t, docs, 2)
	buf.Reset()
	require.NoError(t, emitDocumentsJSON(&buf, []*reportfile.Document{a}))
	var one reportfile.Document
	require.NoError(t, json.Unmarshal(buf.Bytes(), &one))
	assert.Equal(t, reportfile.Schema, one.Schema)
	assert.ErrorIs(t, emitText(&buf, nil), errNoDocuments)
}
