package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// alias is an old spelling of one of a command's flags, kept working after
// the flags took one vocabulary (docs/cli.md): hidden from help and
// completion, and its first use on a command line prints one warning on
// the command's stderr, "warning: --json is deprecated; use --format json".
type alias struct {
	// Old is the old long name, without dashes; "" for a one-letter form
	// alone (then Short is set).
	Old string
	// Short is the old one-letter form, if any (-n of baseline history's
	// --last).
	Short string
	// To is the flag it stands for, which must be defined already.
	To string
	// Value, if set, is what the old flag sets To to; it then takes no
	// value, as a switch: --json is --format json. --json=false is an
	// error that names the spelling to use (--format text): a switch that
	// warns and does nothing would leave a script believing it asked for
	// text.
	Value string
}

// addAliases adds each alias to cmd's flags. It panics on an alias whose
// To is not a flag of cmd: a mistake in perfgate's own wiring, which the
// tests run.
func addAliases(cmd *cobra.Command, aliases ...alias) {
	fs := cmd.Flags()
	for _, a := range aliases {
		to := fs.Lookup(a.To)
		if to == nil {
			panic(fmt.Sprintf("alias %q of %s: no flag --%s", a.Old+a.Short, cmd.CommandPath(), a.To))
		}
		v := &aliasValue{cmd: cmd, a: a, to: to}
		name := a.Old
		if name == "" {
			// pflag wants a name. One that begins with a dash cannot be
			// given as a long flag: "---n" is "bad flag syntax", so -n
			// is the only way to reach it.
			name = "-" + a.Short
		}
		f := &pflag.Flag{Name: name, Shorthand: a.Short, Value: v, Hidden: true,
			Usage: "deprecated: " + v.instead(), NoOptDefVal: to.NoOptDefVal}
		if a.Value != "" {
			f.NoOptDefVal = "true"
		}
		fs.AddFlag(f)
	}
}

// aliasValue sets the flag an alias stands for, warning once.
type aliasValue struct {
	cmd    *cobra.Command
	a      alias
	to     *pflag.Flag
	warned bool
}

// used is how the alias was spelled, for the warning: --old, or -n.
func (v *aliasValue) used() string {
	if v.a.Old != "" {
		return "--" + v.a.Old
	}
	return "-" + v.a.Short
}

// instead is the spelling to use: "--format json", "--baselines".
func (v *aliasValue) instead() string {
	if v.a.Value != "" {
		return "--" + v.a.To + " " + v.a.Value
	}
	return "--" + v.a.To
}

func (v *aliasValue) Set(s string) error {
	if v.a.Value != "" {
		switch on, err := strconv.ParseBool(s); {
		case err != nil:
			return fmt.Errorf("%s takes no value; use %s", v.used(), v.instead())
		case !on:
			return fmt.Errorf("%s takes no value; use --%s %s", v.used(), v.a.To, v.to.DefValue) // --json=false: --format text
		}
		s = v.a.Value
	}
	if err := v.to.Value.Set(s); err != nil {
		return err
	}
	if !v.warned {
		v.warned = true
		fmt.Fprintf(v.cmd.ErrOrStderr(), "warning: %s is deprecated; use %s\n", v.used(), v.instead())
	}
	v.to.Changed = true // what the command asks of --To, it asks of this too
	return nil
}

// aliasFlagError says a bad value of an alias with the spelling that was
// used (-n), not the name pflag keeps it under; other errors are returned
// as they are. Commands' flag error funcs call it.
func aliasFlagError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return err
	}
	v, ok := bad.GetFlag().Value.(*aliasValue)
	if !ok {
		return err
	}
	return fmt.Errorf("invalid argument %q for %s: %w", bad.GetValue(), v.used(), errors.Unwrap(bad))
}

func (v *aliasValue) String() string {
	if v.a.Value != "" {
		return "false"
	}
	return v.to.Value.String()
}

func (v *aliasValue) Type() string {
	if v.a.Value != "" {
		return "bool"
	}
	return v.to.Value.Type()
}
