package stack

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// The stack guard is perfgate's own binary, started again in a hidden mode,
// that sits between perfgate and a process stack (Linux only; see
// guard_linux.go). perfgate cannot promise by itself that nothing it started
// outlives it: SIGKILL gives it no chance to clean up, the kernel's
// parent-death signal reaches only the one process perfgate forked (not what a
// wrapper such as `sh -c "vllm serve ...; echo done"` forked in turn), and Go
// ties that signal to the OS thread that forked, not to the process. The
// guard makes itself a child subreaper, so that every process the stack
// starts, even one that leaves the stack's process group or session
// (`setsid`), stays its descendant; it learns that perfgate is gone from a
// pipe whose only writer is perfgate, and then stops every descendant.
//
// The guard is started with:
//
//	argv:  <perfgate> -perfgate-stack-guard <path of the stack's command> <the stack's argv...>
//	env:   the stack's environment, plus the PERFGATE_STACK_GUARD* variables
//	       below (the guard removes them before it starts the stack)
//	fd 0:  /dev/null, inherited by the stack
//	fd 1, 2: the pipe of the stack's output, inherited by the stack; the guard
//	       keeps no copy, so the pipe ends when the stack's last process does
//	fd 3:  the lifeline: the read end of a pipe only perfgate writes to; EOF
//	       means perfgate is gone
//	fd 4:  the status pipe: lines the guard writes to perfgate (see below)
//
// and it answers SIGTERM (perfgate's Stop) by stopping the stack: SIGTERM to
// its group and every descendant, SIGKILL to whatever is left after the
// grace. The status lines are:
//
//	pid <n>          the stack's leader started (its pid is its group's id)
//	error <text>     the stack could not be started; the guard exits
//	exit <code>      the leader exited with this status
//	signal <n>       the leader was killed by signal n
//	warning <text>   something perfgate should tell the user
//
// The guard exits once no process of the stack is left: by itself when the
// leader and all it started have ended, or after a stop.
const (
	// guardEnv, set to "1", makes perfgate's binary run as a stack guard.
	guardEnv = "PERFGATE_STACK_GUARD"
	// guardGraceEnv is the stop grace, as a Go duration.
	guardGraceEnv = "PERFGATE_STACK_GUARD_GRACE"
	// guardLogEnv is the stack's log file, where the guard writes what it
	// did once perfgate is gone and cannot be told.
	guardLogEnv = "PERFGATE_STACK_GUARD_LOG"
	// guardArg is the guard's first argument. It is a flag that no test
	// binary knows: a test binary that starts a process stack without
	// calling MaybeGuard in its TestMain fails at once on it, instead of
	// running its tests again as the guard.
	guardArg = "-perfgate-stack-guard"
	// The guard's descriptors beyond stdin, stdout and stderr.
	guardLifelineFD = 3
	guardStatusFD   = 4
)

// orphanGrace caps the grace the guard gives the stack when perfgate is gone
// without stopping it: SIGTERM, at most this long, then SIGKILL, so that
// nothing the stack started outlives perfgate by more than a few seconds.
const orphanGrace = 3 * time.Second

// guardKillTimeout bounds how long the guard keeps sending SIGKILL to
// descendants that are still there (in uninterruptible sleep, or forking
// faster than they die) before it names them in a warning and gives up.
const guardKillTimeout = 5 * time.Second

// MaybeGuard runs the stack guard and exits, when this process was started as
// one; otherwise it returns at once. Call it first thing in main, before
// flags are parsed: the guard's arguments are not perfgate's. A test binary
// that starts process stacks calls it first thing in TestMain, since the
// guard is whatever binary is running (os.Executable).
func MaybeGuard() {
	if os.Getenv(guardEnv) != "1" {
		return
	}
	os.Exit(runGuard(os.Args[1:]))
}

// guardStackEnv is env without the guard's own variables: the stack must not
// see them (a stack that is perfgate itself would become a guard).
func guardStackEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, guardEnv+"=") && !strings.HasPrefix(kv, guardEnv+"_") {
			out = append(out, kv)
		}
	}
	return out
}

// guardStatus is one line of the guard's status pipe, parsed.
type guardStatus struct {
	kind string // pid, error, exit, signal, warning
	n    int    // for pid, exit and signal
	text string // for error and warning
}

// parseGuardStatus reads one status line; ok is false for a line that is not
// one of the guard's.
func parseGuardStatus(line string) (guardStatus, bool) {
	kind, rest, _ := strings.Cut(strings.TrimRight(line, "\r\n"), " ")
	switch kind {
	case "error", "warning":
		return guardStatus{kind: kind, text: rest}, true
	case "pid", "exit", "signal":
		var n int
		if _, err := fmt.Sscanf(rest, "%d", &n); err != nil {
			return guardStatus{}, false
		}
		return guardStatus{kind: kind, n: n}, true
	}
	return guardStatus{}, false
}
