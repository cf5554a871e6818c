package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	gating "github.com/perfgate/perfgate/internal/gate"
)

// The quick run's flags a command takes (addQuickFlags).
const (
	// quickTarget: --target, --api, --model, --header: where the requests
	// go. perfgate ab has two targets, its configs', and takes none.
	quickTarget = 1 << iota
	// quickLoad: --concurrency, --rate, --arrival, --burstiness,
	// --requests, --duration, --workload, --slo, --repetitions: what is
	// sent, the same for both arms of perfgate ab.
	quickLoad
)

// addQuickFlags adds the quick run's flags (docs/quickrun.md) to f, writing
// into q: which says which of them (quickTarget, quickLoad). A number flag
// refuses 0 and negatives as it is parsed, naming itself: it is a usage
// error (exit 2), as is any bad combination q.Check finds.
func addQuickFlags(f *pflag.FlagSet, q *config.Quick, which int) {
	if which&quickTarget != 0 {
		f.StringVar(&q.Target, "target", "", "the server's root `URL` (target.base_url), e.g. http://127.0.0.1:8000; without a config file, a quick run of the flags alone")
		f.StringVar(&q.API, "api", "", "target.api: chat or completions")
		f.StringVar(&q.Model, "model", "", "target.model: the model `NAME` to ask for (auto takes the server's first)")
		f.StringArrayVar(&q.Headers, "header", nil, "a header sent with every request, \"Name: value\" (repeatable); ${VAR} is read from the environment")
	}
	if which&quickLoad != 0 {
		f.Var(positiveInt{&q.Concurrency}, "concurrency", "a closed loop of `N` users in every scenario (not with --rate)")
		f.Var(positiveFloat{&q.Rate}, "rate", "an open loop at `R` requests per second in every scenario (not with --concurrency)")
		f.StringVar(&q.Arrival, "arrival", "", "the open loop's arrivals with --rate: poisson (default) or gamma")
		f.Var(positiveFloat{&q.Burstiness}, "burstiness", "gamma's shape `B` with --arrival gamma: < 1 burstier, > 1 smoother (default 1)")
		f.Var(positiveInt{&q.Requests}, "requests", "`N` requests per repetition (replaces requests and duration; not with --duration)")
		f.Var(positiveDuration{&q.Duration}, "duration", "time `D` per repetition, e.g. 30s (replaces requests and duration; not with --requests)")
		f.StringVar(&q.Workload, "workload", "", "a workload JSONL `FILE` for every scenario (default without a config: a synthetic one)")
		f.StringVar(&q.SLO, "slo", "", "per-request objectives, e.g. ttft=500ms,tpot=50ms,e2e=10s (0 unsets one)")
		f.Var(positiveInt{&q.Repetitions}, "repetitions", "`N` repetitions of each scenario (a fixed count, >= 1)")
	}
}

// positiveInt is an int flag that must be >= 1.
type positiveInt struct{ p *int }

func (v positiveInt) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	return strconv.Itoa(*v.p)
}

func (v positiveInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number")
	}
	if n < 1 {
		return fmt.Errorf("must be >= 1, got %d", n)
	}
	*v.p = n
	return nil
}

func (positiveInt) Type() string { return "int" }

// positiveFloat is a float flag that must be > 0.
type positiveFloat struct{ p *float64 }

func (v positiveFloat) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

func (v positiveFloat) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("want a number")
	}
	if !(x > 0) || x > 1e9 {
		return fmt.Errorf("must be > 0, got %s", s)
	}
	*v.p = x
	return nil
}

func (positiveFloat) Type() string { return "float" }

// positiveDuration is a duration flag that must be > 0.
type positiveDuration struct{ p *time.Duration }

func (v positiveDuration) String() string {
	if v.p == nil || *v.p == 0 {
		return ""
	}
	return v.p.String()
}

func (v positiveDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration like 30s or 2m")
	}
	if d <= 0 {
		return fmt.Errorf("must be positive, got %s", s)
	}
	*v.p = d
	return nil
}

func (positiveDuration) Type() string { return "duration" }

// loadConfig is the config a measuring command runs: the config file with
// the quick flags over it (config.Quick.Apply), or, without one, the config
// the flags make alone (config.Quick.Build). built says which.
//
// The file is read when -c was given or ./perfgate.yaml (the default -c,
// under --workdir where the command has it) exists, unless --no-config
// says to build from the flags alone; every quick flag, --target included,
// overrides the file's field. A gate built from flags alone measures
// config.QuickGateRepetitions repetitions unless --repetitions says, enough to
// decide; a run, config.DefaultQuickRepetitions.
func loadConfig(o *runOptions) (cfg *config.Config, built bool, err error) {
	q := o.quick
	if o.noConfig && o.configSet {
		return nil, false, exit.UsageError(errors.New("--no-config and -c: give one (--no-config builds the config from the flags alone)"))
	}
	_, statErr := os.Stat(o.configPath)
	exists := statErr == nil || !errors.Is(statErr, fs.ErrNotExist)
	if !o.noConfig && (o.configSet || exists || !q.Given()) {
		cfg, err := config.LoadFile(o.configPath)
		if err != nil {
			if !o.configSet && !exists {
				err = fmt.Errorf("%w (give -c FILE, or run without a config: --target URL --concurrency N; perfgate init writes one)", err)
			}
			return nil, false, exit.UsageError(err)
		}
		if !o.configSet && q.Target != "" {
			implicitTarget(o, cfg)
		}
		if err := q.Apply(cfg); err != nil {
			return nil, false, exit.UsageError(err)
		}
		return cfg, false, nil
	}
	if o.gating && q.Repetitions == 0 {
		q.Repetitions = config.QuickGateRepetitions
	}
	cfg, err = q.Build(filepath.Dir(o.configPath))
	if err != nil {
		return nil, false, exit.UsageError(err)
	}
	return cfg, true, nil
}

// implicitTarget is --target over a perfgate.yaml read because it was
// there, not named with -c: the user may not know it is read, so it is
// said; and the file's target.headers, written for its own base_url, are
// not sent to a server of another origin (a key for one host must not
// reach another because of where a command was typed). --header still
// sends what the command line gives; -c sends the file's headers as named.
func implicitTarget(o *runOptions, cfg *config.Config) {
	say := func(format string, args ...any) {
		if !o.quiet {
			fmt.Fprintf(o.sys.stderr, "note: "+format+"\n", args...)
		}
	}
	say("reading %s beside you: --target replaces its target.base_url, and its scenarios run (--no-config runs the flags alone)", o.configPath)
	if len(cfg.Target.Headers) > 0 && !config.SameOrigin(o.quick.Target, cfg.Target.BaseURL) {
		names := slices.Sorted(maps.Keys(cfg.Target.Headers))
		cfg.Target.Headers = nil
		say("%s's target.headers (%s) are for %s, another server than --target: not sent (give -c %s to send them, or --header)",
			o.configPath, strings.Join(names, ", "), cfg.Target.BaseURL, o.configPath)
	}
}

// addNoConfigFlag adds --no-config: build the config from the quick flags
// alone even beside a perfgate.yaml.
func addNoConfigFlag(f *pflag.FlagSet, o *runOptions) {
	f.BoolVar(&o.noConfig, "no-config", false, "build the config from the flags alone; do not read perfgate.yaml (under --workdir where the command has it) even where it exists")
}

// quickWarnings are the warnings of cfg worth showing: the config's own,
// and, for perfgate run and gate, repetitions too few for its gates to
// decide as perfgate gate tests them (gate.Check; perfgate validate refuses
// them, perfgate ab checks its rounds itself). A run of a config built from
// flags alone is a look, not a gate, so that its repetitions cannot decide
// a gate is not news.
func quickWarnings(o *runOptions, cfg *config.Config, built bool) []config.Problem {
	out := slices.Clone(cfg.Warnings)
	if o.ab || (built && !o.gating) {
		return out
	}
	out = append(out, gating.Advise(cfg)...)
	return append(out, gating.Check(cfg, gating.TwoSamples)...)
}
