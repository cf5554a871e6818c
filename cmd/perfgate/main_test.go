package main

import (
	"os"
	"testing"
)

// beMain, set in a child's environment, makes the test binary act as the
// perfgate binary: tests start it as a stack (`perfgate sim ...`) or run it as
// perfgate itself to signal it, without building a second binary.
const beMain = "PERFGATE_TEST_BE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beMain) == "1" {
		os.Exit(runProcess())
	}
	os.Exit(m.Run())
}
