package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/exit"
)

// newBaselineShowCmd is perfgate baseline show: the promoted baselines.
func newBaselineShowCmd(stdout io.Writer) *cobra.Command {
	var dirs baselineDirFlags
	cmd := &cobra.Command{
		Use:   "show",
		Short: "List the promoted baselines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := dirs.store()
			if err != nil {
				return err
			}
			list, err := store.List()
			if err != nil {
				return exit.UsageError(err)
			}
			if len(list) == 0 {
				return exit.UsageError(fmt.Errorf("no baselines in %s (promote one with `perfgate baseline promote RESULT`)", store.Dir))
			}
			hist, err := store.History()
			if err != nil {
				return exit.UsageError(err)
			}
			return baseline.WriteShow(stdout, list, hist)
		},
	}
	dirs.register(cmd)
	return cmd
}

// newBaselineHistoryCmd is perfgate baseline history: a metric's trend.
func newBaselineHistoryCmd(stdout io.Writer) *cobra.Command {
	var (
		dirs baselineDirFlags
		opts baseline.HistoryOptions
	)
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Print a metric's history with its trend and change points",
		Long: `history prints, per scenario, one row per line of history.jsonl: the date,
the commit, the metric's median with its 95% interval and the change from the
row before, with a sparkline of the trend. Change points (where the series
shifts to a new level) are found with the E-divisive means method and marked.`,
		Example: `  perfgate baseline history --metric ttft.p99 --last 20
  perfgate baseline history --metric output_throughput --scenario chat`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Last < 0 {
				return exit.UsageError(fmt.Errorf("--last: must be >= 0, got %d", opts.Last))
			}
			store, err := dirs.store()
			if err != nil {
				return err
			}
			hist, err := store.History()
			if err != nil {
				return exit.UsageError(err)
			}
			if len(hist) == 0 {
				return exit.UsageError(fmt.Errorf("no history in %s", filepath.Join(store.Dir, "history.jsonl")))
			}
			if err := baseline.WriteHistory(stdout, hist, opts); err != nil {
				return exit.UsageError(err)
			}
			return nil
		},
	}
	dirs.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&opts.Metric, "metric", "m", "ttft.p99", "metric to trace (e.g. ttft.p99, tpot.p99, output_throughput, goodput)")
	f.IntVar(&opts.Last, "last", 0, "show only the last N entries (0: all)")
	f.StringVarP(&opts.Scenario, "scenario", "s", "", "only this scenario")
	addAliases(cmd, alias{Short: "n", To: "last"})
	return cmd
}
