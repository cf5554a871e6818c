package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
)

// percentilesFlag is --percentiles of run, gate and ab: the latency
// percentiles to measure, replacing the config's percentiles key.
type percentilesFlag struct {
	list []string
	set  bool
}

// addPercentilesFlag adds --percentiles to f, into p.
func addPercentilesFlag(f *pflag.FlagSet, p *percentilesFlag) {
	f.Var(&percentilesValue{p}, "percentiles",
		"latency percentiles to show and measure beyond the default p50,p90,p95,p99,p99.9 (always measured, their gates always on): p50 to p99.99, comma-separated (e.g. p50,p90,p99.99); overrides the config's percentiles")
}

// apply puts the flag's list in cfg (nothing when the flag is not given);
// a list the config's key would refuse is a usage error naming the flag.
func (p *percentilesFlag) apply(cfg *config.Config) error {
	if p == nil || !p.set {
		return nil
	}
	if err := cfg.SetPercentiles("--percentiles", p.list); err != nil {
		return exit.UsageError(err)
	}
	return nil
}

// percentilesValue is the pflag.Value of --percentiles: a comma-separated
// list, repeatable, kept as given (apply checks it against the config's
// rules, so that the flag and the key say the same).
type percentilesValue struct{ p *percentilesFlag }

func (v *percentilesValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(v.p.list, ",")
}

func (v *percentilesValue) Set(s string) error {
	if !v.p.set {
		v.p.list = nil // the first use replaces the default
	}
	v.p.set = true
	if s != "" { // an empty list: apply says what is wanted
		v.p.list = append(v.p.list, strings.Split(s, ",")...)
	}
	return nil
}

func (v *percentilesValue) Type() string { return "list" }
