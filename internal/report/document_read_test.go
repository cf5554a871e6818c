package report

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReadDocument reads only regular files, at once (a report may be uploaded
// by a fork's pull request), and says what is wrong in the file's terms.
func TestReadDocumentBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "report.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, path := range []string{fifo, "/dev/zero", dir} {
		done := make(chan error, 1)
		go func() { _, err := ReadDocument(path); done <- err }()
		select {
		case err := <-done:
			assert.ErrorContains(t, err, path)
			assert.ErrorContains(t, err, "not a regular file")
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadDocument(%s) still blocked after 10s", path)
		}
	}

	wrong := filepath.Join(dir, "wrong.json")
	require.NoError(t, os.WriteFile(wrong, []byte("{\"schema\":\"perfgate/report/v1\",\n\"verdict\":{\"scenarios\":\"none\"}}"), 0o644))
	_, err := ReadDocument(wrong)
	assert.EqualError(t, err, "read report: "+wrong+":2:24: verdict.scenarios: want an array, got a string")
}
