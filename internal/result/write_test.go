package result

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/safeio/safeiotest"
)

// resultOf is a valid result of n scenarios.
func resultOf(n int) *Result {
	r := &Result{Schema: Schema}
	for i := range n {
		r.Scenarios = append(r.Scenarios, ScenarioResult{Name: fmt.Sprintf("s%d", i), Repetitions: []Repetition{{
			Index: 1, Duration: 2, Sent: 10, Completed: 10, OutputTokens: 900, OutputThroughput: 450, RequestThroughput: 5,
			TTFT: Stats{Count: 10, Mean: 20, Min: 10, P50: 20, P90: 25, P95: 27, P99: 30, P999: 30, Max: 30},
		}}})
	}
	return r
}

// A write that fails midway (past a file size limit, as on a full disk)
// leaves the old result whole: never a truncated file that a later step
// reads as this run's, or cannot read at all.
func TestWriteFailingMidwayLeavesTheOldResult(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	if err := Write(path, resultOf(1)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	got := safeiotest.WithFileSizeLimit(t, uint64(st.Size())+1024, dir, func(dir string) error {
		return Write(filepath.Join(dir, "result.json"), resultOf(100))
	})
	if !strings.Contains(got, "file too large") {
		t.Errorf("Write(a result past the size limit) = %q, want an error saying the file is too large", got)
	}
	r, err := Read(path)
	if err != nil {
		t.Fatalf("after a failed Write, Read(%s) = %v, want the old result", path, err)
	}
	if len(r.Scenarios) != 1 {
		t.Errorf("after a failed Write the result holds %d scenarios, want the old 1", len(r.Scenarios))
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("after a failed Write %s holds %d files, want only result.json", dir, len(ents))
	}
}
