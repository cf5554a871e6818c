package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

// beMain, set in a child's environment, makes the test binary act as the
// perfgate binary: tests start it as a stack (`perfgate sim ...`) or run it as
// perfgate itself to signal it, without building a second binary.
const beMain = "PERFGATE_TEST_BE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beMain) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "perfgate: "+err.Error())
		}
		os.Exit(exit.Code(err))
	}
	os.Exit(m.Run())
}
