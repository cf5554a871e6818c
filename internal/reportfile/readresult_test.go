package reportfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadResultRefusesReports(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := os.WriteFile(path, []byte(`{"schema": "`+Schema+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadResult(path)
	if err == nil || !strings.Contains(err.Error(), path+": a report file, not a result: --frontier reads results") {
		t.Errorf("ReadResult(report) = %v, want the report refused with its path", err)
	}
	if err := os.WriteFile(path, []byte(`{"schema": "perfgate/result/v2", "scenarios": [{"name": "x", "repetitions": [{"sent": -1}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadResult(path); err == nil || !strings.Contains(err.Error(), "sent") {
		t.Errorf("ReadResult(invalid result) = %v, want a validation error", err)
	}
}
