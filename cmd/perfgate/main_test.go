package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/stack"
)

// beMain, set in a child's environment, makes the test binary act as the
// perfgate binary: tests start it as a stack (`perfgate sim ...`) or run it as
// perfgate itself to signal it, without building a second binary.
const beMain = "PERFGATE_TEST_BE_MAIN"

// peakRSSFile, set beside beMain, makes the child write its own peak
// resident memory (VmHWM, in KiB) to that file as it exits. The rusage a
// parent reads is no good for this: Linux carries the high-water mark of
// the forked copy of the (large) test process across exec.
const peakRSSFile = "PERFGATE_TEST_PEAK_RSS_FILE"

func TestMain(m *testing.M) {
	// Process stacks run under a guard that is this binary, started again.
	stack.MaybeGuard()
	if os.Getenv(beMain) == "1" {
		code := runProcess()
		if path := os.Getenv(peakRSSFile); path != "" {
			writePeakRSS(path)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// writePeakRSS copies the VmHWM line of /proc/self/status to path.
func writePeakRSS(path string) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(status), "\n") {
		if kib, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			_ = os.WriteFile(path, []byte(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kib), "kB"))), 0o644)
		}
	}
}

// A panic in perfgate is a failed run (exit 3) with its trace, never Go's
// exit code 2, which reads as bad input.
func TestRecoverPanic(t *testing.T) {
	var buf bytes.Buffer
	code := func() (code int) {
		defer recoverPanic(&buf, &code)
		var m map[string]int
		m["x"] = 1 // a nil map write: a real runtime panic
		return 0
	}()
	if code != exit.RunFailed {
		t.Errorf("exit code after a panic = %d, want %d", code, exit.RunFailed)
	}
	if !strings.Contains(buf.String(), "internal error, a bug in perfgate") || !strings.Contains(buf.String(), "assignment to entry in nil map") {
		t.Errorf("stderr = %q", buf.String())
	}
	code = func() (code int) {
		defer recoverPanic(&buf, &code)
		return 1
	}()
	if code != 1 {
		t.Errorf("exit code without a panic = %d, want 1", code)
	}
}
