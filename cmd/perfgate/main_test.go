package main

import (
	"os"
	"testing"

	"github.com/perfgate/perfgate/internal/stack"
)

// beMain, set in a child's environment, makes the test binary act as the
// perfgate binary: tests start it as a stack (`perfgate sim ...`) or run it as
// perfgate itself to signal it, without building a second binary.
const beMain = "PERFGATE_TEST_BE_MAIN"

func TestMain(m *testing.M) {
	// Process stacks run under a guard that is this binary, started again.
	stack.MaybeGuard()
	if os.Getenv(beMain) == "1" {
		os.Exit(runProcess())
	}
	os.Exit(m.Run())
}
