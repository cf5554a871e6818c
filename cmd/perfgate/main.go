// Command perfgate gates pull requests on the performance and quality of an
// LLM serving stack. See README.md; `perfgate --help` lists the subcommands.
//
// main only wires the process to Main: signals to a context, the error to an
// exit code (internal/exit is the one place that mapping lives). The same
// binary is also the guard of a process stack (stack.MaybeGuard), a hidden
// mode entered before anything else.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/stack"
)

func main() {
	stack.MaybeGuard() // returns unless perfgate was started as a stack guard
	os.Exit(runProcess())
}

// runProcess runs Main as the process: with SIGINT and SIGTERM cancelling its
// context, its error on stderr, and the exit code to exit with.
func runProcess() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfgate: "+err.Error())
	}
	return exit.Code(err)
}
