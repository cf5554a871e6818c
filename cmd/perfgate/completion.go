package main

import (
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/traceimport"
)

// formatsOf are the values of each command's --format, by command path,
// for completion (`perfgate completion bash`).
func formatsOf() map[string][]string {
	return map[string][]string{
		"perfgate run":            runFormats,
		"perfgate gate":           verdictFormats,
		"perfgate ab":             verdictFormats,
		"perfgate compare":        verdictFormats,
		"perfgate report":         verdictFormats,
		"perfgate export":         exportFormats(),
		"perfgate workload stats": statsFormats,
	}
}

// valuesOf are the values of the flags that mean one thing wherever they
// appear, by flag name, for completion.
var valuesOf = map[string][]string{
	"metric":  baseline.Headline,
	"mode":    {config.ABCoResident, config.ABSwap},
	"rewarm":  {config.RewarmShort, config.RewarmFull},
	"from":    traceimport.Formats,
	"fail-on": exit.FailOnValues,
}

// registerCompletions completes the values of every command's flags under
// root that have a known set: --format (each command's own), --scenario
// (the scenarios of the config that -c names, perfgate.yaml by default),
// --metric, --mode, --from, --fail-on. Flags without one complete file
// names, as the shell would. It walks the tree, so a flag added later is
// completed too when its name is one of these.
func registerCompletions(root *cobra.Command) {
	formats := formatsOf()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			var fn cobra.CompletionFunc
			switch {
			case f.Name == "format":
				if vs, ok := formats[c.CommandPath()]; ok {
					fn = cobra.FixedCompletions(vs, cobra.ShellCompDirectiveNoFileComp)
				}
			case f.Name == "scenario":
				fn = completeScenarios
			case valuesOf[f.Name] != nil:
				fn = cobra.FixedCompletions(valuesOf[f.Name], cobra.ShellCompDirectiveNoFileComp)
			}
			if fn != nil {
				_ = c.RegisterFlagCompletionFunc(f.Name, fn) // the name is c's own flag, registered once
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeScenarios lists the scenarios of the config that the command's
// --config names (taken from --workdir where the command has one), and the
// sweeps they are points of: what --scenario accepts. A config that cannot
// be read completes nothing, silently.
func completeScenarios(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	path := "perfgate.yaml"
	if f := cmd.Flags().Lookup("config"); f != nil {
		path = f.Value.String()
	}
	if f := cmd.Flags().Lookup("workdir"); f != nil && f.Value.String() != "" && !filepath.IsAbs(path) {
		path = filepath.Join(f.Value.String(), path)
	}
	cfg, err := config.LoadFile(path)
	if err != nil {
		return nil, none
	}
	var names []string
	for _, sc := range cfg.Measured() {
		if sc.Point != nil && !slices.Contains(names, sc.Point.Of) {
			names = append(names, sc.Point.Of)
		}
		if !slices.Contains(names, sc.Name) {
			names = append(names, sc.Name)
		}
	}
	return names, none
}
