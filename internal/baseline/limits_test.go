package baseline

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
)

// A result whose numbers cannot be true is refused by Promote and Record
// before anything is written, as bad input (result.ErrInvalid).
func TestPromoteRefusesImpossibleNumbers(t *testing.T) {
	bad := testResult(scenario("a", 30, 31, 32))
	bad.Scenarios[0].Repetitions[1].OutputThroughput = -1.5e19
	bad.Scenarios[0].Repetitions[2].Failed = bad.Scenarios[0].Repetitions[2].Sent + 1

	dir := filepath.Join(t.TempDir(), "baselines")
	_, err := Store{Dir: dir}.Promote(bad, Meta{})
	require.Error(t, err)
	assert.ErrorIs(t, err, result.ErrInvalid)
	assert.Contains(t, err.Error(), "scenarios[0].repetitions[1].output_throughput: want a finite number >= 0, got -1.5e+19")
	assert.Contains(t, err.Error(), "scenarios[0].repetitions[2].failed:")
	assert.NoDirExists(t, dir, "nothing is written")

	err = Store{Dir: dir}.Record(bad, Meta{})
	assert.ErrorIs(t, err, result.ErrInvalid)
	assert.NoDirExists(t, dir, "nothing is written")

	// The refusals Promote made before (a name, a duplicate) are bad input too.
	_, err = Store{Dir: dir}.Promote(testResult(scenario("a", 30), scenario("a", 31)), Meta{})
	assert.ErrorIs(t, err, result.ErrInvalid)
}

// History reads only a regular file, at once, in bounded lines.
func TestHistoryBounded(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	require.NoError(t, syscall.Mkfifo(store.HistoryPath(), 0o644))
	done := make(chan error, 1)
	go func() { _, err := store.History(); done <- err }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, safeio.ErrNotRegular)
		assert.ErrorContains(t, err, store.HistoryPath())
	case <-time.After(10 * time.Second):
		t.Fatal("History() of a named pipe still blocked after 10s")
	}

	line := `{"scenario":"a","date":"2025-03-01T12:00:00Z","repetitions":3}`
	store = Store{Dir: t.TempDir()}
	long := line + "\n" + `{"scenario":"` + strings.Repeat("a", MaxHistoryLineBytes) + `"}` + "\n"
	require.NoError(t, os.WriteFile(store.HistoryPath(), []byte(long), 0o644))
	_, err := store.History()
	assert.EqualError(t, err, store.HistoryPath()+":2: the line is longer than 1 MiB, the most perfgate reads in one line")

	// A history past its limit is refused at the line where it passes.
	_, err = parseHistory(strings.NewReader(strings.Repeat(line+"\n", 10)), "h.jsonl", 4*int64(len(line)+1)+5)
	assert.EqualError(t, err, "h.jsonl:5: the file is larger than 257 bytes, the most perfgate reads for a history")
}

// FuzzHistory: no history file makes the reader panic or run long; every
// error names the file and a line, in sentences; an entry it accepts has a
// scenario. The seed corpus (testdata/fuzz/FuzzHistory) holds torn lines,
// wrong kinds, huge numbers and a byte-order mark.
func FuzzHistory(f *testing.F) {
	if b, err := os.ReadFile("../../baselines/history.jsonl"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"scenario":"a","date":"2025-03-01T12:00:00Z","identity":"sha256:00","repetitions":3,"metrics":{"ttft.p99":{"median":60,"lo":50,"hi":70,"n":6}}}` + "\n"))
	const name = "history.jsonl"
	quoted := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			entries []Entry
			err     error
			done    = make(chan struct{})
		)
		go func() { entries, err = parseHistory(bytes.NewReader(data), name, MaxHistoryBytes); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("parseHistory(%q) did not return within 10s", data)
		}
		if err == nil {
			for _, e := range entries {
				if e.Scenario == "" {
					t.Fatal("an entry without a scenario was accepted")
				}
			}
			return
		}
		var p *result.Problem
		if !errors.As(err, &p) || p.File != name || p.Line < 1 {
			t.Fatalf("error %q (%T) names no file and line", err, err)
		}
		msg := quoted.ReplaceAllString(err.Error(), `""`)
		for _, goism := range []string{"Go struct", "Go value", "float64", "int64", "json: cannot", "%!", "<nil>", "2006-01-02"} {
			if strings.Contains(msg, goism) && !bytes.Contains(data, []byte(goism)) { // unless the input says it
				t.Fatalf("error %q speaks Go (%s)", err, goism)
			}
		}
	})
}
