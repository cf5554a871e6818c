package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/github"
)

func newActionCmd(sys *system) *cobra.Command {
	stdout, stderr := sys.stdout, sys.stderr
	return &cobra.Command{
		Use:   "action",
		Short: "Run as the GitHub Action: gate (or ab) with the step's inputs and set its outputs",
		Long: `action is the entry point of perfgate's container action (action.yml). It
reads the step's inputs (the INPUT_* variables), runs perfgate gate (mode
gate, the default) or perfgate ab (mode ab) with the flag each input maps to
(config → --config, scenarios → --scenario, baselines → --baselines (gate),
base-config → --base (ab), ab-mode → --mode (ab), github-token →
--github-token, comment → --comment, fail-on → --fail-on, working-directory →
--workdir, result → --output, report → --report, html → --html, title →
--title), and sets the outputs verdict (pass, regression, inconclusive, or
error when the run failed), result, report and comment-url. The exit code is
the command's.

See docs/action.md for the workflow around it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			gh := github.NewAction(sys.getenv, stdout)
			mode, err := gh.Mode()
			if err != nil {
				return exit.UsageError(err)
			}
			gateArgs, err := gh.Args(mode)
			if err != nil {
				return exit.UsageError(err)
			}
			out := &gateOutcome{}
			gate := newGateCmdWith(sys, out)
			if mode == github.ModeAB {
				gate = newABCmd(sys, out)
			}
			gate.SetArgs(gateArgs)
			gate.SetOut(stdout)
			gate.SetErr(stderr)
			gate.SilenceUsage, gate.SilenceErrors = true, true
			gate.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exit.UsageError(err) })
			gateErr := gate.ExecuteContext(cmd.Context())

			verdict := out.verdict
			if verdict == "" {
				verdict = "error"
			}
			outputs := []struct{ name, value string }{
				{github.OutputVerdict, verdict},
				{github.OutputResult, out.result},
				{github.OutputReport, out.report},
				{github.OutputCommentURL, out.commentURL},
			}
			for _, o := range outputs {
				if err := gh.SetOutput(o.name, o.value); err != nil && !errors.Is(err, github.ErrNoOutputFile) {
					gh.Warningf("perfgate: could not set output %s: %v", o.name, err)
				}
			}
			switch verdict {
			case "regression":
				gh.Errorf("perfgate: regression; the step summary and the pull request comment say where")
			case "inconclusive":
				gh.Warningf("perfgate: inconclusive; the step summary says which gates could not be decided")
			case "error":
				if gateErr != nil {
					gh.Errorf("perfgate: %v", gateErr)
				}
			}
			return gateErr
		},
	}
}
