package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/safeio/safeiotest"
)

// ReadDocument reads only regular files, at once (a report may be uploaded
// by a fork's pull request), and says what is wrong in the file's terms.
func TestReadDocumentBounded(t *testing.T) {
	dir := t.TempDir()
	safeiotest.RefusesWhatIsNotAFile(t, "report.json", func(p string) error { _, err := ReadDocument(p); return err })

	wrong := filepath.Join(dir, "wrong.json")
	require.NoError(t, os.WriteFile(wrong, []byte("{\"schema\":\"perfgate/report/v1\",\n\"verdict\":{\"scenarios\":\"none\"}}"), 0o644))
	_, err := ReadDocument(wrong)
	assert.EqualError(t, err, "read report: "+wrong+":2:24: verdict.scenarios: want an array, got a string")
}
