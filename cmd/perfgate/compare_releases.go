package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	gating "github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// releaseExclusive are compare's flags --history refuses: both sides come
// from the history.
var releaseExclusive = []string{"baselines", "result", "aa"}

// runCompareReleases is compare --history: the runs around two refs
// compared as a gate compares, then the change points between them.
func runCompareReleases(cmd *cobra.Command, o compareOptions, stdout io.Writer) error {
	switch {
	case o.history == "":
		return exit.UsageError(errors.New("--from and --to: only with --history (the baselines directory)"))
	case o.from == "" || o.to == "":
		return exit.UsageError(errors.New("--history: needs --from and --to, the two releases (tags, commits or dates)"))
	case o.runs < 2 || o.runs > 1000:
		return exit.UsageError(fmt.Errorf("--runs: want 2 to 1000 runs a side, got %d", o.runs))
	}
	for _, name := range releaseExclusive {
		if cmd.Flags().Changed(name) {
			return exit.UsageError(fmt.Errorf("--history and --%s: both sides come from the history", name))
		}
	}
	hist, err := baseline.Store{Dir: o.history}.History()
	if err != nil {
		return exit.UsageError(err)
	}
	if len(hist) == 0 {
		return exit.UsageError(fmt.Errorf("--history %s: the history is empty", o.history))
	}
	ctx := cmd.Context()
	from, err := resolveRef(ctx, o.from)
	if err != nil {
		return exit.UsageError(fmt.Errorf("--from: %w", err))
	}
	to, err := resolveRef(ctx, o.to)
	if err != nil {
		return exit.UsageError(fmt.Errorf("--to: %w", err))
	}
	sides := [2]map[string][]baseline.Entry{{}, {}}
	var skipped []string
	scenarios := map[string]bool{}
	for _, e := range hist {
		scenarios[e.Scenario] = true
	}
	for name := range scenarios {
		a, errA := baseline.RunsAt(hist, name, from, o.runs)
		b, errB := baseline.RunsAt(hist, name, to, o.runs)
		if errA != nil || errB != nil {
			skipped = append(skipped, textsafe.Cut(name, 60))
			continue
		}
		sides[0][name], sides[1][name] = a, b
	}
	if len(sides[0]) == 0 {
		return exit.UsageError(fmt.Errorf("no scenario of the history has runs at both %s and %s", o.from, o.to))
	}
	opts := compare.Options{Alpha: o.alpha, AllowMismatch: true, Estimator: config.EstimatorSample, Tail: "off"}
	gates, cfg, err := headlineGates(o.configPath)
	if err != nil {
		return err
	}
	opts.Gates = gates
	if cfg != nil {
		if o.alpha == 0 {
			opts.Alpha = cfg.Compare.Alpha
		}
		opts.OnInconclusive = cfg.Compare.OnInconclusive
	}
	base, cand := baseline.AsResult(sides[0]), baseline.AsResult(sides[1])
	v, err := gating.Compare([]*result.Result{base}, cand, opts)
	if err != nil {
		return exit.UsageUnlessCoded(err)
	}
	if err := writeVerdict(stdout, v, o.format); err != nil {
		return err
	}
	if o.format != report.FormatJSON {
		fmt.Fprintf(stdout, "\nChange points between %s (%s) and %s (%s):\n", textsafe.Cut(o.from, 60), base.FinishedAt.UTC().Format("2006-01-02"),
			textsafe.Cut(o.to, 60), cand.FinishedAt.UTC().Format("2006-01-02"))
		changes := baseline.ChangesBetween(hist, base.FinishedAt, cand.FinishedAt)
		if len(changes) == 0 {
			fmt.Fprintln(stdout, "  none")
		}
		for _, c := range changes {
			fmt.Fprintf(stdout, "  - %s\n", c.Describe())
		}
		for _, name := range skipped {
			fmt.Fprintf(stdout, "\nscenario %s: not compared (no run at both refs)\n", name)
		}
	}
	return verdictError(v)
}

// hexRef is a commit SHA, whole or abbreviated.
var hexRef = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)

// resolveRef turns a ref as given into a baseline.Ref: a SHA as it is, a
// date to its day's end (or an RFC 3339 time), anything else through git
// (a tag or a branch) to its commit and that commit's date.
func resolveRef(ctx context.Context, ref string) (baseline.Ref, error) {
	r := baseline.Ref{Name: ref}
	if hexRef.MatchString(ref) {
		r.Commit = ref
		return r, nil
	}
	if d, err := time.Parse("2006-01-02", ref); err == nil {
		r.Until = d.Add(24*time.Hour - time.Nanosecond)
		return r, nil
	}
	if t, err := time.Parse(time.RFC3339, ref); err == nil {
		r.Until = t
		return r, nil
	}
	if strings.HasPrefix(ref, "-") {
		return r, fmt.Errorf("%q: want a tag or branch, a commit SHA, or a date (2026-10-01)", ref)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "show", "-s", "--format=%H %cI", ref+"^{commit}", "--").Output()
	if err != nil {
		return r, fmt.Errorf("%q is not a commit SHA or a date, and git could not resolve it here (%v): run in the repository, or give a commit or a date", ref, err)
	}
	sha, date, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	t, terr := time.Parse(time.RFC3339, date)
	if !ok || terr != nil {
		return r, fmt.Errorf("%q: git answered %q", ref, textsafe.Cut(string(out), 80))
	}
	r.Commit, r.Until = sha, t
	return r, nil
}

// headlineGates are the gates a release comparison tests: the config's
// (or the defaults) on the metrics the history keeps.
func headlineGates(configPath string) (func(string) []config.Gate, *config.Config, error) {
	var cfg *config.Config
	if configPath != "" {
		if _, err := os.Stat(configPath); err != nil {
			return nil, nil, exit.UsageError(fmt.Errorf("--config: %w", err))
		}
		c, err := config.LoadFile(configPath)
		if err != nil {
			return nil, nil, exit.UsageError(err)
		}
		cfg = c
	}
	// A config's gates by scenario, or with none the defaults: the gates
	// of a zero config.
	gatesOf := &config.Config{}
	if cfg != nil {
		gatesOf = cfg
	}
	from := gating.GatesFrom(gatesOf)
	return func(scenario string) []config.Gate {
		var out []config.Gate
		for _, g := range from(scenario) {
			if slices.Contains(baseline.Headline, g.Metric) {
				out = append(out, g)
			}
		}
		return out
	}, cfg, nil
}
