package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/workload"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/bad")

// TestBadConfigs loads every file of testdata/bad and compares the error text
// with its .golden file. The absolute path of testdata is written $TESTDATA in
// the golden files, so they do not depend on where the repository lies.
func TestBadConfigs(t *testing.T) {
	// Problems that have no line (nothing in the file to point at) or no
	// path (the file as a whole), by file.
	noLine := map[string]bool{"empty.yaml": true}
	noPath := map[string]bool{"syntax.yaml": true, "two-documents.yaml": true, "not-a-mapping.yaml": true, "duplicate-key.yaml": true,
		// limits of the file itself, checked before it is parsed
		"deep-brackets.yaml": true, "deep-block.yaml": true, "deep-dashes.yaml": true, "too-many-aliases.yaml": true,
		"billion-laughs.yaml": true, "utf16.yaml": true}

	files, err := filepath.Glob("testdata/bad/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	abs, err := filepath.Abs("testdata")
	require.NoError(t, err)
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			c, err := LoadFile(file)
			require.Error(t, err, "LoadFile(%s) = %+v, want an error", file, c)
			assert.Nil(t, c)
			var errs *Errors
			require.True(t, errors.As(err, &errs), "LoadFile(%s) error is %T, want *Errors", file, err)
			require.NotEmpty(t, errs.Problems)
			for _, p := range errs.Problems {
				assert.Equal(t, file, p.File, "problem %q: file", p)
				if !noLine[name] {
					assert.Positive(t, p.Line, "problem %q: line", p)
					assert.Positive(t, p.Column, "problem %q: column", p)
				}
				if !noPath[name] {
					assert.NotEmpty(t, p.Path, "problem %q: path", p)
				}
				assert.NotEmpty(t, p.Msg)
			}

			got := strings.ReplaceAll(err.Error(), abs, "$TESTDATA") + "\n"
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing golden file; run go test -update")
			assert.Equal(t, string(want), got, "LoadFile(%s) error text", file)
		})
	}
}

func TestThreeProblemsAllReported(t *testing.T) {
	_, err := LoadFile("testdata/bad/three-problems.yaml")
	var errs *Errors
	require.ErrorAs(t, err, &errs)
	var paths []string
	for _, p := range errs.Problems {
		paths = append(paths, p.Path)
	}
	assert.Equal(t, []string{"repetitions", "scenarios[0].load.rate", "scenarios[1].name"}, paths)
	assert.Equal(t, 9, errs.Problems[1].Line)
	assert.Equal(t, 13, errs.Problems[1].Column)
}

func TestGoodConfig(t *testing.T) {
	c, err := LoadFile("testdata/good.yaml")
	require.NoError(t, err)
	dir, err := filepath.Abs("testdata")
	require.NoError(t, err)
	want := &Config{
		Target: Target{
			BaseURL: "http://127.0.0.1:8000",
			API:     "chat",
			Model:   "Qwen/Qwen2.5-0.5B-Instruct",
			Headers: map[string]string{"Authorization": "Bearer token"},
			Timeout: 5 * time.Minute,
		},
		Stack:  Defaults().Stack,
		Warmup: Defaults().Warmup,
		Scenarios: []Scenario{
			{
				Name:         "chat-closed",
				Workload:     "workloads/chat.jsonl",
				Load:         Load{Type: LoadClosed, Concurrency: 8},
				SLO:          SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond},
				Requests:     200,
				MaxErrorRate: DefaultMaxErrorRate,
			},
			{
				Name: "synth.poisson",
				Synth: &workload.SynthSpec{
					Requests: 100,
					Input:    workload.Dist{Type: "normal", Mean: 200, Stddev: 50},
					Output:   workload.Dist{Type: "fixed", Value: 128},
					API:      "chat", // from target.api
				},
				Load:         Load{Type: LoadPoisson, Rate: 4.5, MaxInFlight: 64},
				Duration:     2 * time.Minute,
				MaxErrorRate: DefaultMaxErrorRate,
			},
			{
				Name:         "bursty_gamma",
				Workload:     "workloads/chat.jsonl",
				Load:         Load{Type: LoadGamma, Rate: 2, Burstiness: 1},
				MaxErrorRate: DefaultMaxErrorRate,
			},
			{
				Name:         "replay",
				Workload:     "workloads/chat.jsonl",
				Load:         Load{Type: LoadTrace, Speedup: 2},
				MaxErrorRate: DefaultMaxErrorRate,
			},
		},
		Repetitions: Repetitions{Min: 6, Max: 6},
		Compare:     Compare{Alpha: DefaultAlpha, OnInconclusive: DefaultOnInconclusive, Baselines: DefaultBaselines, Tail: DefaultTail, Estimator: DefaultEstimator},
		AB:          AB{Mode: ABCoResident, Rewarm: RewarmShort, Rounds: DefaultABRounds},
		Telemetry:   Telemetry{Metrics: TelemetryAuto, Interval: DefaultTelemetryInterval, GPU: TelemetryAuto},
		Seed:        1,
		Dir:         dir,
		Path:        "testdata/good.yaml",
	}
	require.NotNil(t, c.src, "a loaded config keeps where its fields are, for ProblemAt")
	assert.Equal(t, "testdata/good.yaml:37:14: repetitions: too few", c.ProblemAt("repetitions", "too few").Error())
	c.src = nil
	assert.Equal(t, want, c)
	assert.Equal(t, filepath.Join(dir, "workloads/chat.jsonl"), c.WorkloadPath(c.Scenarios[0]))
	assert.Empty(t, c.WorkloadPath(c.Scenarios[1]))
	assert.Empty(t, c.Warnings)
}

func TestDefaultsOfMinimalConfig(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.jsonl")
	data := []byte("scenarios:\n  - name: s\n    workload: " + missing + "\n    load: {concurrency: 1}\n")
	c, err := Parse(data, "perfgate.yaml")
	var errs *Errors
	require.ErrorAs(t, err, &errs)
	require.Len(t, errs.Problems, 1)
	assert.Equal(t, "perfgate.yaml:3:15: scenarios[0].workload: file "+missing+" not found (resolved to "+missing+")", errs.Problems[0].Error())
	assert.Nil(t, c)

	wl := filepath.Join(dir, "w.jsonl")
	require.NoError(t, os.WriteFile(wl, []byte("{}\n"), 0o644))
	c, err = Parse([]byte(strings.ReplaceAll(string(data), missing, wl)), "perfgate.yaml")
	require.NoError(t, err)
	d := Defaults()
	assert.Equal(t, d.Target, c.Target)
	assert.Equal(t, d.Repetitions, c.Repetitions)
	assert.Equal(t, d.Seed, c.Seed)
	assert.Equal(t, LoadClosed, c.Scenarios[0].Load.Type)
	assert.Equal(t, wl, c.WorkloadPath(c.Scenarios[0]), "an absolute workload path is kept")
	assert.Zero(t, c.Scenarios[0].Requests, "neither requests nor duration: one pass over the workload")
	assert.Zero(t, c.Scenarios[0].Duration)
}

// A value the file states is never replaced by a default, even a zero one.
func TestExplicitZeroIsNotDefaulted(t *testing.T) {
	wl := writeWorkload(t)
	cases := []struct {
		yaml, want string
	}{
		{"repetitions: 0\n", "repetitions: must be from 1 to 1000, got 0"},
		{"target: {timeout: 0}\n", "target.timeout: must be > 0 and at most 1h, got 0s"},
		{"target: {api: \"\"}\n", `target.api: must be chat or completions, got ""`},
	}
	for _, tc := range cases {
		data := tc.yaml + "scenarios:\n  - {name: s, workload: " + wl + ", load: {concurrency: 1}}\n"
		_, err := Parse([]byte(data), "")
		require.Error(t, err, "Parse(%q)", data)
		assert.Equal(t, tc.want, err.Error(), "Parse(%q)", data)
	}
}

func TestDurations(t *testing.T) {
	wl := writeWorkload(t)
	cases := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "1h", want: time.Hour},
		{in: "59m30s", want: 59*time.Minute + 30*time.Second},
		{in: `"2m"`, want: 2 * time.Minute},
		{in: "0", want: 0},
		{in: "", want: 0},
		{in: "60", err: "want a duration like 500ms or 2m, got 60 (a bare number has no unit)"},
		{in: "1.5", err: "want a duration like 500ms or 2m, got 1.5"},
		{in: `"60"`, err: `want a duration like 500ms or 2m, got "60"`},
		{in: "fast", err: `want a duration like 500ms or 2m, got "fast"`},
		{in: "[1s]", err: "want a duration like 500ms or 2m, got a list"},
	}
	for _, tc := range cases {
		data := "scenarios:\n  - name: s\n    workload: " + wl + "\n    load: {concurrency: 1}\n    slo:\n      ttft: " + tc.in + "\n"
		c, err := Parse([]byte(data), "p.yaml")
		if tc.err != "" {
			require.Error(t, err, "ttft: %s", tc.in)
			assert.Equal(t, "p.yaml:6:13: scenarios[0].slo.ttft: "+tc.err, err.Error(), "ttft: %s", tc.in)
			continue
		}
		require.NoError(t, err, "ttft: %s", tc.in)
		assert.Equal(t, tc.want, c.Scenarios[0].SLO.TTFT, "ttft: %s", tc.in)
	}
}

func TestHash(t *testing.T) {
	a, err := LoadFile("testdata/good.yaml")
	require.NoError(t, err)
	h := a.Hash()
	assert.True(t, strings.HasPrefix(h, "sha256:") && len(h) == len("sha256:")+64, "Hash() = %q", h)

	// Layout, comments and stating a default do not change the hash.
	data, err := os.ReadFile("testdata/good.yaml")
	require.NoError(t, err)
	same := "# another comment\nseed: 1\n" + strings.ReplaceAll(string(data), "  model:", "  api: chat\n  model:")
	b, err := Parse([]byte(same), "testdata/other.yaml")
	require.NoError(t, err)
	assert.Equal(t, h, b.Hash())

	// Header values (credentials) are not hashed; their names are.
	b.Target.Headers = map[string]string{"Authorization": "Bearer rotated"}
	assert.Equal(t, h, b.Hash())
	b.Target.Headers = map[string]string{"X-Other": "Bearer token"}
	assert.NotEqual(t, h, b.Hash())
	assert.Equal(t, "Bearer token", a.Target.Headers["Authorization"], "Hash must not change the config")

	// What is measured does change it.
	b, err = Parse([]byte(strings.ReplaceAll(string(data), "concurrency: 8", "concurrency: 9")), "testdata/good.yaml")
	require.NoError(t, err)
	assert.NotEqual(t, h, b.Hash())
}

func TestProblemError(t *testing.T) {
	cases := []struct {
		p    Problem
		want string
	}{
		{Problem{File: "perfgate.yaml", Line: 14, Column: 11, Path: "scenarios[1].load.rate", Msg: "must be > 0, got -2"},
			"perfgate.yaml:14:11: scenarios[1].load.rate: must be > 0, got -2"},
		{Problem{File: "perfgate.yaml", Line: 3, Path: "seed", Msg: "m"}, "perfgate.yaml:3: seed: m"},
		{Problem{File: "perfgate.yaml", Path: "scenarios", Msg: "m"}, "perfgate.yaml: scenarios: m"},
		{Problem{Path: "scenarios", Msg: "m"}, "scenarios: m"},
		{Problem{Msg: "m"}, "m"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, tc.p.Error(), "%#v.Error()", tc.p)
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "nope.yaml"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrNotExist), "LoadFile(missing) = %v, want ErrNotExist", err)
}

func writeWorkload(t *testing.T) string {
	t.Helper()
	wl := filepath.Join(t.TempDir(), "w.jsonl")
	require.NoError(t, os.WriteFile(wl, []byte("{}\n"), 0o644))
	return wl
}

// Anchors, aliases, merge keys and top-level x- keys decode, and the keys an
// alias brings count as set (they are not defaulted over).
func TestAliasesAndMergeKeys(t *testing.T) {
	wl := writeWorkload(t)
	data := `x-load: &load {type: poisson, rate: 4}
x-slo: &slo {ttft: 1s}
scenarios:
  - name: a
    workload: ` + wl + `
    load: *load
    slo: *slo
  - name: b
    workload: ` + wl + `
    load: {<<: *load, max_in_flight: 32}
`
	c, err := Parse([]byte(data), "p.yaml")
	require.NoError(t, err)
	assert.Equal(t, Load{Type: LoadPoisson, Rate: 4}, c.Scenarios[0].Load)
	assert.Equal(t, time.Second, c.Scenarios[0].SLO.TTFT)
	assert.Equal(t, Load{Type: LoadPoisson, Rate: 4, MaxInFlight: 32}, c.Scenarios[1].Load)

	// x- keys are allowed at the top level only.
	_, err = Parse([]byte("scenarios:\n  - name: a\n    x-note: hi\n"), "p.yaml")
	require.Error(t, err)
	assert.Equal(t, `p.yaml:3:5: scenarios[0].x-note: unknown key "x-note" (known keys: capacity, cold_adapters, duration, fault, fresh_stack, gates, headroom, load, max_error_rate, name, requests, salt, slo, synth, workload)`, err.Error())
}

func TestValidateInCode(t *testing.T) {
	c, err := LoadFile("testdata/good.yaml")
	require.NoError(t, err)
	require.NoError(t, c.Validate())

	c.Repetitions = Repetitions{}       // as a flag override might
	c.Scenarios[2].Load.Concurrency = 3 // on a gamma load
	err = c.Validate()
	require.Error(t, err)
	assert.Equal(t, "testdata/good.yaml: repetitions: must be from 1 to 1000, got 0\n"+
		"testdata/good.yaml: scenarios[2].load.concurrency: only for closed loads, and this load is gamma", err.Error())

	c.Repetitions = Repetitions{Min: 2, Max: 2}
	c.Scenarios[2].Load.Concurrency = 0
	require.NoError(t, c.Validate())
	assert.Empty(t, c.Warnings, "whether 2 repetitions decide is internal/gate's to say")
}
