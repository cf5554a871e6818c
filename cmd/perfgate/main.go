package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/stack"
	"github.com/perfgate/perfgate/internal/textsafe"
)

func main() {
	stack.MaybeGuard() // returns unless perfgate was started as a stack guard
	os.Exit(runProcess())
}

// runProcess runs Main as the process: with SIGINT and SIGTERM cancelling its
// context, its error on stderr, and the exit code to exit with.
func runProcess() (code int) {
	// An error's text can carry a server's: it is printed through the
	// same sanitiser as everything else.
	stderr := textsafe.NewWriter(os.Stderr)
	defer stderr.Flush()
	defer recoverPanic(stderr, &code)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := Main(ctx, os.Args[1:], os.Stdout, stderr)
	stop()
	printError(stderr, err)
	return exit.Code(err)
}

// printError prints err, if any, as perfgate's last word on w.
func printError(w io.Writer, err error) {
	if err != nil {
		fmt.Fprintln(w, "perfgate: "+err.Error())
	}
}

// recoverPanic turns a panic of the main goroutine (a bug in perfgate) into
// exit code 3, the run failed, with the trace on w. Go's own exit code for a
// panic is 2, which perfgate's callers read as bad input; a run that
// crashed must never look like that, nor like a pass.
func recoverPanic(w io.Writer, code *int) {
	p := recover()
	if p == nil {
		return
	}
	fmt.Fprintf(w, "perfgate: internal error, a bug in perfgate (please report it with this trace): %v\n%s", p, debug.Stack())
	*code = exit.RunFailed
}
