package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docCommand is one perfgate command line found in a document.
type docCommand struct {
	where string // file:line
	args  []string
	// showsDeprecation is set when the block shows the deprecation warning
	// itself (docs/cli.md's table of old spellings).
	showsDeprecation bool
}

// perfgateLine finds a perfgate invocation in a line of a shell block or a
// workflow's run: step; it is anchored on the program name so that prose
// and paths (bin/perfgate is fine, perfgate/perfgate@v1 is not a command)
// are not taken for one.
var perfgateLine = regexp.MustCompile(`(?:^|[\s;&|($]|bin/|\./)perfgate\s+([a-z].*)$`)

// docCommands reads every fenced block of path and returns the perfgate
// command lines in it, continuation lines (a trailing \) joined.
func docCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []docCommand
	inBlock := false
	var pending strings.Builder
	var block []int // the commands of the current block, by index in out
	pendingLine := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			pending.Reset()
			block = block[:0]
			continue
		}
		if strings.Contains(line, "is deprecated; use") {
			for _, i := range block {
				out[i].showsDeprecation = true
			}
		}
		if !inBlock {
			continue
		}
		if pending.Len() == 0 {
			pendingLine = n
		}
		if strings.HasSuffix(line, `\`) {
			pending.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		pending.WriteString(line)
		full := pending.String()
		pending.Reset()
		if i := strings.Index(full, " #"); i >= 0 {
			full = full[:i] // a comment
		}
		m := perfgateLine.FindStringSubmatch(strings.TrimSpace(full))
		if m == nil {
			continue
		}
		cmdline := m[1]
		for _, sep := range []string{" | ", " > ", " >> ", " 2>", " && ", " ; ", " &"} {
			if i := strings.Index(cmdline, sep); i >= 0 {
				cmdline = cmdline[:i] // the next command, or a redirection
			}
		}
		out = append(out, docCommand{where: filepath.Base(path) + ":" + strconv.Itoa(pendingLine), args: strings.Fields(cmdline)})
		block = append(block, len(out)-1)
	}
	return out
}

// TestDocsUseTheFlagsThatExist: every perfgate command line in the README
// and docs/ names a command that exists and flags that command has, in
// their current spelling (no deprecated alias, docs/cli.md). Docs that show
// a flag the binary refuses, or an old spelling, fail here rather than on a
// user's terminal.
func TestDocsUseTheFlagsThatExist(t *testing.T) {
	files := []string{"../../README.md"}
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	files = append(files, docs...)
	root := newRootCmd(&system{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }})
	checked := 0
	for _, f := range files {
		for _, dc := range docCommands(t, f) {
			cmd, rest, err := root.Find(dc.args)
			if err != nil || cmd == root {
				continue // "perfgate" in prose-like shell (e.g. a path); not a command line
			}
			checked++
			for _, a := range rest {
				if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if name == "" || strings.ContainsAny(name, "<[|{$") {
					continue // a placeholder
				}
				fl := lookupFlag(cmd, name, !strings.HasPrefix(a, "--"))
				if !assert.NotNil(t, fl, "%s: perfgate %s has no flag %s", dc.where, cmd.Name(), a) {
					continue
				}
				assert.False(t, fl.Hidden && !dc.showsDeprecation, "%s: perfgate %s %s is a deprecated spelling (%s)", dc.where, cmd.Name(), a, fl.Usage)
			}
		}
	}
	t.Logf("%d command lines checked", checked)
	assert.Greater(t, checked, 40, "the docs' command lines were found")
}

// lookupFlag finds a long flag, or a one-letter one (short; each letter of
// a group -qf is checked by its first), of cmd or its parents' persistent
// flags.
func lookupFlag(cmd *cobra.Command, name string, short bool) *pflag.Flag {
	fs := cmd.Flags()
	if short {
		return fs.ShorthandLookup(name[:1])
	}
	if f := fs.Lookup(name); f != nil {
		return f
	}
	return cmd.InheritedFlags().Lookup(name)
}
