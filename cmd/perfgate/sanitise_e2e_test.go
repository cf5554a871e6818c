package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// Hostile text a model, an engine or a file can carry, to take over a
// terminal or a GitHub Actions runner's log.
const (
	hostileModel   = "m\n::error title=x::pwned\n::set-output name=verdict::pass"
	hostileVersion = "1.0\x1b[2J\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ \u202eexe.gnp\u200b\r::warning::pwned\u2028##[set-env name=X;]y\u0085\u009b31m\x7f"
)

// ownCommands are the workflow commands perfgate itself prints: log groups
// and its annotations, which all begin "perfgate: ".
var ownCommands = []string{"::group::", "::endgroup::", "::error::perfgate: ", "::warning::perfgate: ", "::notice::perfgate: "}

// checkPrinted fails t when what perfgate printed on a stream holds a
// control or format character (but newline, tab and U+2060), a line that
// begins a workflow command perfgate did not write itself, or "##[".
func checkPrinted(t *testing.T, what, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		for _, r := range line {
			if r != '\t' && r != '\u2060' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029') {
				t.Errorf("%s line %d %q holds %U", what, i+1, line, r)
				break
			}
		}
		if s := strings.TrimLeftFunc(line, unicode.IsSpace); strings.HasPrefix(s, "::") {
			own := false
			for _, c := range ownCommands {
				own = own || strings.HasPrefix(s, c)
			}
			if !own {
				t.Errorf("%s line %d %q begins a workflow command that is not perfgate's", what, i+1, line)
			}
		}
		if strings.Contains(line, "##[") {
			t.Errorf("%s line %d %q holds ##[, the runner's older command syntax", what, i+1, line)
		}
	}
}

// poisonStrings replaces every string value of a JSON document with s, but
// the schema's name (without which the file is not read at all).
func poisonStrings(v any, s string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k != "schema" {
				x[k] = poisonStrings(e, s)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = poisonStrings(e, s)
		}
	case string:
		return s
	}
	return v
}

// TestHostileTextNeverReachesTheLog runs every command that prints what a
// server or a file said, with a model id and an engine version built to
// inject workflow commands and escape sequences, and checks every line of
// stdout and stderr (errors included, printed as main prints them).
func TestHostileTextNeverReachesTheLog(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GITHUB_ACTIONS", "true") // log groups: perfgate's own commands
	t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(dir, "summary.md"))

	cfg := sim.DefaultConfig()
	cfg.StepBase = 2 * time.Millisecond
	cfg.Model, cfg.Version = hostileModel, hostileVersion
	url, _ := startSim(t, cfg)
	conf := writeConfig(t, `
target: {base_url: "`+url+`"}
warmup: {method: none}
repetitions: 2
compare: {baselines: baselines}
scenarios:
  - name: chat
    synth: {requests: 8, input: {type: fixed, value: 16}, output: {type: fixed, value: 4}}
    load: {type: closed, concurrency: 2}
`)
	cdir := filepath.Dir(conf)
	cand := filepath.Join(cdir, "cand.json")

	printed := func(args ...string) (string, string) {
		t.Helper()
		var so, se bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		err := Main(ctx, args, &so, &se)
		w := textsafe.NewWriter(&se) // as runProcess prints the error
		printError(w, err)
		_ = w.Flush()
		name := "perfgate " + strings.Join(args, " ")
		checkPrinted(t, name+" stdout", so.String())
		checkPrinted(t, name+" stderr", se.String())
		if t.Failed() {
			t.Logf("%s\nstdout:\n%s\nstderr:\n%s", name, so.String(), se.String())
		}
		return so.String(), se.String()
	}

	_, se := printed("run", "-c", conf, "-o", cand)
	if !strings.Contains(se, "pwned") || !strings.Contains(se, "::group::") {
		t.Fatalf("perfgate run: stderr names neither the hostile model nor a log group; the test tests nothing:\n%s", se)
	}
	printed("baseline", "promote", cand, "-c", conf, "--commit", "c0ffee\n::error::pwned\x1b[2J")
	printed("gate", "-c", conf, "--target", url, "-o", filepath.Join(cdir, "gate.json"), "--report", filepath.Join(cdir, "report.json"))
	for _, f := range verdictFormats {
		printed("compare", "--allow-mismatch", "--format", f, cand, filepath.Join(cdir, "gate.json"))
		printed("report", "--format", f, filepath.Join(cdir, "report.json"))
	}
	printed("baseline", "show", "-c", conf)
	printed("baseline", "history", "-c", conf)
	printed("export", cand)

	// Files whose every string is hostile: what perfgate says of them,
	// errors included, is clean too.
	for _, src := range []string{cand, filepath.Join(cdir, "report.json")} {
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		poisoned, err := json.Marshal(poisonStrings(doc, hostileModel+hostileVersion))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(cdir, "poisoned-"+filepath.Base(src))
		if err := os.WriteFile(p, poisoned, 0o644); err != nil {
			t.Fatal(err)
		}
		printed("report", "--format", "text", p)
		printed("compare", p, cand)
	}
	bad := filepath.Join(cdir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"prompt": 1, "`+strings.ReplaceAll(hostileModel, "\n", `\n`)+`": 2}`+"\n::error::pwned\x1b[2J\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	printed("validate", "-c", conf, bad)
}
