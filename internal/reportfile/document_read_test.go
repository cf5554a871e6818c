package reportfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/safeio/safeiotest"
	"github.com/perfgate/perfgate/internal/stat"
)

// Read reads only regular files, at once (a report may be uploaded
// by a fork's pull request), and says what is wrong in the file's terms.
func TestReadDocumentBounded(t *testing.T) {
	dir := t.TempDir()
	safeiotest.RefusesWhatIsNotAFile(t, "report.json", func(p string) error { _, err := Read(p); return err })

	wrong := filepath.Join(dir, "wrong.json")
	require.NoError(t, os.WriteFile(wrong, []byte("{\"schema\":\"perfgate/report/v1\",\n\"verdict\":{\"scenarios\":\"none\"}}"), 0o644))
	_, err := Read(wrong)
	assert.EqualError(t, err, "read report: "+wrong+":2:24: verdict.scenarios: want an array, got a string")
}

// A report whose write fails midway (past a file size limit, as on a full
// disk) leaves the old report whole, and no temporary file.
func TestWriteDocumentFailingMidwayLeavesTheOldReport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := Write(path, docOf(stat.Pass, 0)); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := safeiotest.WithFileSizeLimit(t, uint64(len(before))+512, dir, func(dir string) error {
		return Write(filepath.Join(dir, "report.json"), docOf(stat.Pass, 200))
	})
	if !strings.Contains(got, "file too large") || !strings.Contains(got, path) {
		t.Errorf("Write(past the size limit) = %q, want an error naming %s, file too large", got, path)
	}
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(after, before) {
		t.Errorf("after a failed Write %s holds %d bytes (%v), want the old %d", path, len(after), err, len(before))
	}
	if _, err := Read(path); err != nil {
		t.Errorf("Read after a failed write = %v, want the old report", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("after a failed Write %s holds %d files, want only report.json", dir, len(ents))
	}
}
