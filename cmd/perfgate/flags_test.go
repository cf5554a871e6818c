package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
)

// findCmd is the command at path (e.g. "baseline history") under a fresh
// root writing to stderr.
func findCmd(t *testing.T, stderr io.Writer, path string) *cobra.Command {
	t.Helper()
	root := newRootCmd(&system{stdout: io.Discard, stderr: stderr, getenv: func(string) string { return "" }})
	c, _, err := root.Find(strings.Fields(path))
	require.NoError(t, err, path)
	require.Equal(t, "perfgate "+path, c.CommandPath())
	return c
}

// TestDeprecatedFlagsStillWork: each old spelling sets the flag it stands
// for, prints one warning naming the new one, and is gone from the help.
func TestDeprecatedFlagsStillWork(t *testing.T) {
	tests := []struct {
		cmd  string
		args []string
		to   string // the flag the old spelling sets
		want string // its value then
		warn string
		old  *regexp.Regexp // the old spelling in help
	}{
		{"run", []string{"--json"}, "format", "json", "warning: --json is deprecated; use --format json", regexp.MustCompile(`--json\b`)},
		{"compare", []string{"--baseline", "a.json", "--baseline", "b/"}, "baselines", "[a.json,b/]", "warning: --baseline is deprecated; use --baselines", regexp.MustCompile(`--baseline\b[^s]`)},
		{"report", []string{"--baseline", "b/"}, "baselines", "[b/]", "warning: --baseline is deprecated; use --baselines", regexp.MustCompile(`--baseline\b[^s]`)},
		{"baseline promote", []string{"--dir", "b/"}, "baselines", "b/", "warning: --dir is deprecated; use --baselines", regexp.MustCompile(`--dir\b`)},
		{"baseline record", []string{"--dir", "b/"}, "baselines", "b/", "warning: --dir is deprecated; use --baselines", regexp.MustCompile(`--dir\b`)},
		{"baseline show", []string{"--dir", "b/"}, "baselines", "b/", "warning: --dir is deprecated; use --baselines", regexp.MustCompile(`--dir\b`)},
		{"baseline history", []string{"--dir", "b/"}, "baselines", "b/", "warning: --dir is deprecated; use --baselines", regexp.MustCompile(`--dir\b`)},
		{"baseline history", []string{"-n", "5"}, "last", "5", "warning: -n is deprecated; use --last", regexp.MustCompile(`-n,`)},
		{"workload synth", []string{"--out", "w.jsonl"}, "output", "w.jsonl", "warning: --out is deprecated; use --output", regexp.MustCompile(`--out\b`)},
		{"workload import", []string{"--out", "w.jsonl"}, "output", "w.jsonl", "warning: --out is deprecated; use --output", regexp.MustCompile(`--out\b`)},
		{"ab", []string{"--candidate", "c.yaml"}, "config", "c.yaml", "warning: --candidate is deprecated; use --config", regexp.MustCompile(`--candidate\b`)},
	}
	for _, tt := range tests {
		t.Run(tt.cmd+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			c := findCmd(t, &stderr, tt.cmd)
			require.NoError(t, c.ParseFlags(tt.args))
			f := c.Flags().Lookup(tt.to)
			assert.Equal(t, tt.want, f.Value.String(), "--%s after %v", tt.to, tt.args)
			assert.True(t, f.Changed, "--%s changed after %v", tt.to, tt.args)
			assert.Equal(t, tt.warn+"\n", stderr.String(), "one warning, even for a repeated flag")

			var help bytes.Buffer
			require.NoError(t, Main(context.Background(), append(strings.Fields(tt.cmd), "--help"), &help, io.Discard))
			assert.Contains(t, help.String(), "--"+tt.to)
			assert.NotRegexp(t, tt.old, help.String(), "help of %s lists the old spelling", tt.cmd)
		})
	}
}

// TestDeprecatedFlagEndToEnd: a command given an old spelling does what
// it did, with the warning on stderr.
func TestDeprecatedFlagEndToEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.jsonl")
	out, stderr, err := perfgate("workload", "synth", "-n", "3", "--out", path)
	require.NoError(t, err)
	assert.Empty(t, out)
	assert.Equal(t, "warning: --out is deprecated; use --output\n", stderr)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 3, bytes.Count(data, []byte("\n")))

	_, stderr, err = perfgate("run", "--json=maybe")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--json takes no value; use --format json")
	assert.Empty(t, stderr, "no warning for a flag refused")
}

// --json=false would do nothing: it is refused, naming what to write
// instead; --json=true is --json.
func TestDeprecatedSwitchFalse(t *testing.T) {
	_, stderr, err := perfgate("run", "--json=false")
	assert.Equal(t, exit.Usage, exit.Code(err))
	require.ErrorContains(t, err, "--json takes no value; use --format text")
	assert.Empty(t, stderr)

	var warn bytes.Buffer
	c := findCmd(t, &warn, "run")
	require.NoError(t, c.ParseFlags([]string{"--json=true"}))
	assert.Equal(t, "json", c.Flags().Lookup("format").Value.String())
	assert.Equal(t, "warning: --json is deprecated; use --format json\n", warn.String())
}

// An old one-letter form is reachable by its letter only: the name pflag
// keeps it under is no long flag, and a bad value names the letter.
func TestDeprecatedShortOnly(t *testing.T) {
	for _, args := range [][]string{{"--deprecated-n", "3"}, {"---n", "3"}, {"--n", "3"}} {
		_, _, err := perfgate(append([]string{"baseline", "history", "-b", t.TempDir()}, args...)...)
		assert.Equal(t, exit.Usage, exit.Code(err), "%v: %v", args, err)
		assert.NotContains(t, fmt.Sprint(err), "no history", "%v was taken as a flag", args)
	}
	_, _, err := perfgate("baseline", "history", "-n", "abc")
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.ErrorContains(t, err, `invalid argument "abc" for -n: `)
	assert.NotContains(t, err.Error(), "--", "the error names no long form of -n")

	// Every command's aliases: none has a long name that works but was
	// never a flag of perfgate's.
	root := newRootCmd(&system{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if v, ok := f.Value.(*aliasValue); ok && v.a.Old == "" {
				assert.True(t, strings.HasPrefix(f.Name, "-"), "%s: alias -%s is reachable as --%s", c.CommandPath(), f.Shorthand, f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// vocabulary is each concept's one spelling and short letter (docs/cli.md):
// wherever a command has the flag, it has this letter.
var vocabulary = map[string]string{
	"format": "f", "output": "o", "config": "c", "scenario": "s", "quiet": "q", "baselines": "b", "workdir": "C",
}

// TestFlagVocabulary walks every command's flags: no old spelling is
// visible, each flag of the vocabulary has its letter, and a letter means
// one flag everywhere.
func TestFlagVocabulary(t *testing.T) {
	root := newRootCmd(&system{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	banned := map[string]string{"out": "output", "dir": "baselines", "json": "format", "baseline": "baselines", "candidate": "config"}
	letters := map[string]string{} // short letter → flag name
	where := map[string]string{}   // short letter → the command that first used it
	formats := formatsOf()
	seen := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" || f.Name == "version" {
				return
			}
			seen++
			path := c.CommandPath()
			if to, ok := banned[f.Name]; ok {
				t.Errorf("%s --%s is visible; the vocabulary spells it --%s", path, f.Name, to)
			}
			if want, ok := vocabulary[f.Name]; ok && f.Shorthand != want {
				t.Errorf("%s --%s has short %q, want -%s", path, f.Name, f.Shorthand, want)
			}
			if f.Name == "format" {
				if _, ok := formats[path]; !ok {
					t.Errorf("%s --format: its values are not in formatsOf, so they do not complete", path)
				}
				if _, ok := c.GetFlagCompletionFunc("format"); !ok {
					t.Errorf("%s --format completes no values", path)
				}
			}
			if f.Shorthand == "" {
				return
			}
			if name, ok := letters[f.Shorthand]; ok && name != f.Name {
				t.Errorf("-%s is --%s in %s but --%s in %s", f.Shorthand, name, where[f.Shorthand], f.Name, path)
			}
			if _, ok := letters[f.Shorthand]; !ok {
				letters[f.Shorthand], where[f.Shorthand] = f.Name, path
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	assert.Greater(t, seen, 50, "flags walked")
}

// TestVersionFlag: perfgate --version and -v print what perfgate version
// does.
func TestVersionFlag(t *testing.T) {
	want, _, err := perfgate("version")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(want, "perfgate "), want)
	for _, arg := range []string{"--version", "-v"} {
		got, _, err := perfgate(arg)
		require.NoError(t, err, arg)
		assert.Equal(t, want, got, arg)
	}
}

// complete is what `perfgate __complete args...` offers: its candidates,
// without the directive line, run in dir.
func complete(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	if dir != "" {
		t.Chdir(dir)
	}
	out, _, err := perfgate(append([]string{"__complete"}, args...)...)
	require.NoError(t, err)
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" && !strings.HasPrefix(line, ":") {
			got = append(got, strings.SplitN(line, "\t", 2)[0])
		}
	}
	return got
}

func TestCompleteFlagValues(t *testing.T) {
	conf := filepath.Join("testdata", "complete", "perfgate.yaml")
	tests := []struct {
		name string
		dir  string
		args []string
		want []string
	}{
		{"scenarios of -c", "", []string{"run", "-c", conf, "--scenario", ""}, []string{"chat-c8", "chat-poisson"}},
		{"scenarios of perfgate.yaml", filepath.Join("testdata", "complete"), []string{"run", "--scenario", ""}, []string{"chat-c8", "chat-poisson"}},
		{"gate's scenarios from --workdir", "", []string{"gate", "-C", filepath.Join("testdata", "complete"), "-s", ""}, []string{"chat-c8", "chat-poisson"}},
		{"no config, no scenarios", "", []string{"run", "-c", "missing.yaml", "--scenario", ""}, nil},
		{"run formats", "", []string{"run", "--format", ""}, runFormats},
		{"compare formats", "", []string{"compare", "-f", ""}, verdictFormats},
		{"stats formats", "", []string{"workload", "stats", "--format", ""}, statsFormats},
		{"history metrics", "", []string{"baseline", "history", "--metric", ""}, []string{"ttft.p50", "ttft.p99", "tpot.p99", "e2e.p99", "output_throughput", "goodput", "error_rate"}},
		{"ab modes", "", []string{"ab", "--mode", ""}, []string{"co-resident", "swap"}},
		{"import sources", "", []string{"workload", "import", "--from", ""}, []string{"openai", "sharegpt", "mooncake", "aiperf"}},
		{"fail-on", "", []string{"gate", "--fail-on", ""}, []string{"config", "regression", "inconclusive", "never"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, complete(t, tt.dir, tt.args...))
		})
	}
}

// TestCompletionScript: perfgate completion bash writes a script that
// calls perfgate __complete.
func TestCompletionScript(t *testing.T) {
	out, _, err := perfgate("completion", "bash")
	require.NoError(t, err)
	assert.Contains(t, out, "__perfgate_")
	assert.Contains(t, out, "__complete")
}
