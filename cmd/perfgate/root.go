package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// Main runs perfgate with args (without the program name), writing to stdout
// and stderr, with the process's environment. Its error carries the exit
// code (see internal/exit).
//
// Everything perfgate prints passes through a textsafe.Writer: model ids,
// engine versions and servers' errors reach a terminal or a runner's log
// with no control characters and no workflow commands but perfgate's own.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	out, errw := textsafe.NewWriter(stdout), textsafe.NewWriter(stderr)
	defer func() {
		_ = out.Flush()
		_ = errw.Flush()
	}()
	root := newRootCmd(&system{stdout: out, stderr: errw, getenv: os.Getenv, lookup: os.LookupEnv})
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// system is what perfgate's commands use of the process around them: its
// streams, its environment (the GitHub runner's variables come through
// getenv) and the HTTP client under GitHub's API. Main fills it from the
// process; each command is given it rather than reaching for os.
type system struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// lookup reads a variable as os.LookupEnv does, telling unset from
	// empty; nil is getenv, where "" is unset (see lookupEnv).
	lookup func(string) (string, bool)
	// githubHTTP is the HTTP client the pull request comment goes through;
	// nil is the default (see github.WithHTTPClient).
	githubHTTP *http.Client
	// commentBudget bounds the whole pull request comment step; 0 is
	// commentBudget, 3 minutes. Tests make it short.
	commentBudget time.Duration
}

// lookupEnv reads the variable name: sys.lookup, else getenv with "" as
// unset.
func (sys *system) lookupEnv(name string) (string, bool) {
	if sys.lookup != nil {
		return sys.lookup(name)
	}
	v := sys.getenv(name)
	return v, v != ""
}

func newRootCmd(sys *system) *cobra.Command {
	stdout, stderr := sys.stdout, sys.stderr
	root := &cobra.Command{
		Use:   "perfgate",
		Short: "Gate pull requests on LLM-serving performance and quality",
		Long: `perfgate replays a committed workload against an OpenAI-compatible serving
stack (vLLM, TGI, SGLang, llama.cpp, TensorRT-LLM, or its own simulator) at a
realistic load shape, measures TTFT, inter-token latency, end-to-end latency,
throughput and goodput over repetitions, and writes a versioned result file.

Exit codes: 0 pass, 1 regression, 2 usage or input error, 3 the run failed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return exit.UsageError(fmt.Errorf("unknown command %q; see perfgate --help", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		// --version and -v print what perfgate version does.
		Version: versionLine(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.InitDefaultVersionFlag()
	root.Flags().Lookup("version").Usage = "print perfgate's version, as perfgate version does"
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exit.UsageError(aliasFlagError(err))
	})
	root.AddCommand(
		newRunCmd(sys),
		newGateCmdWith(sys, &gateOutcome{}),
		newABCmd(sys, &gateOutcome{}),
		newCompareCmd(stdout, stderr),
		newReportCmd(sys),
		newActionCmd(sys),
		newBaselineCmd(sys),
		newExportCmd(stdout, stderr),
		newSimCmd(stderr),
		newValidateCmd(stdout, stderr),
		newInitCmd(sys),
		newWorkloadCmd(stdout, stderr),
		newVersionCmd(stdout),
	)
	// Unknown subcommands and bad argument counts are usage errors too.
	for _, c := range root.Commands() {
		wrapArgs(c)
	}
	root.InitDefaultHelpCmd()
	registerCompletions(root)
	return root
}

// wrapArgs makes cobra's argument-count errors usage errors (exit 2).
func wrapArgs(c *cobra.Command) {
	if c.Args != nil && c.HasParent() {
		args := c.Args
		c.Args = func(cmd *cobra.Command, a []string) error { return exit.UsageError(args(cmd, a)) }
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}

// isTerminal reports whether w is a character device (a terminal), for
// in-place progress lines.
func isTerminal(w io.Writer) bool {
	f, ok := textsafe.Unwrap(w).(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
