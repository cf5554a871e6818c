package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/workload"
)

const docPath = "../../docs/config.md"

// yamlKeys lists the documented path of every yaml key of t, as docs/config.md
// writes them: target.base_url, scenarios[].load.rate. A struct type met a
// second time (synth.output has the keys of synth.input) is listed once, at
// its first path.
func yamlKeys(t reflect.Type, prefix string, seen map[reflect.Type]bool) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		path := prefix + name
		keys = append(keys, path)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Slice {
			ft, path = ft.Elem(), path+"[]"
		}
		if ft.Kind() == reflect.Struct && ft != durationType && !seen[ft] {
			seen[ft] = true
			keys = append(keys, yamlKeys(ft, path+".", seen)...)
		}
	}
	return keys
}

// Every key of the Config struct is documented, so the reference cannot fall
// behind the code.
func TestDocsListEveryKey(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	require.NoError(t, err)
	keys := yamlKeys(configType, "", map[reflect.Type]bool{})
	require.Greater(t, len(keys), 30, "yamlKeys found too few keys: %v", keys)
	for _, k := range keys {
		assert.True(t, strings.Contains(string(doc), "| `"+k+"` |"), "docs/config.md has no row for key %s", k)
	}
}

// The defaults the reference states are the ones defaults.go applies.
func TestDocsDefaults(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	require.NoError(t, err)
	d := Defaults()
	for key, want := range map[string]string{
		"target.base_url":                 d.Target.BaseURL,
		"target.api":                      d.Target.API,
		"target.model":                    d.Target.Model,
		"target.timeout":                  shortDuration(d.Target.Timeout),
		"repetitions":                     strconv.Itoa(d.Repetitions.Min),
		"compare.alpha":                   fmtFloat(d.Compare.Alpha),
		"compare.on_inconclusive":         d.Compare.OnInconclusive,
		"compare.baselines":               d.Compare.Baselines,
		"ab.mode":                         d.AB.Mode,
		"ab.rewarm":                       d.AB.Rewarm,
		"seed":                            strconv.FormatInt(d.Seed, 10),
		"salt":                            strconv.FormatBool(DefaultSalt),
		"scenarios[].load.type":           DefaultLoadType,
		"scenarios[].load.burstiness":     fmtFloat(DefaultBurstiness),
		"scenarios[].load.speedup":        fmtFloat(DefaultSpeedup),
		"scenarios[].load.concurrency":    "required",
		"scenarios[].max_error_rate":      fmtFloat(DefaultMaxErrorRate),
		"cooldown":                        "0",
		"percentiles":                     strings.Join(metric.DefaultPercentiles, ", "),
		"quality.mode":                    DefaultQualityMode,
		"quality.share":                   fmtFloat(DefaultQualityShare),
		"quality.concurrency":             strconv.Itoa(DefaultQualityConcurrency),
		"quality.gates":                   DefaultQualityGates["accuracy"],
		"stack.kind":                      d.Stack.Kind,
		"stack.engine":                    d.Stack.Engine,
		"stack.health_path":               d.Stack.HealthPath,
		"stack.ready_timeout":             shortDuration(d.Stack.ReadyTimeout),
		"stack.external_ready_timeout":    shortDuration(d.Stack.ExternalReadyTimeout),
		"stack.health_interval":           shortDuration(d.Stack.HealthInterval),
		"stack.health_failures":           strconv.Itoa(d.Stack.HealthFailures),
		"stack.stop_grace":                shortDuration(d.Stack.StopGrace),
		"stack.log":                       d.Stack.Log,
		"stack.docker.pull":               DefaultPull,
		"warmup.method":                   d.Warmup.Method,
		"warmup.window":                   shortDuration(d.Warmup.Window),
		"warmup.windows":                  strconv.Itoa(d.Warmup.Windows),
		"warmup.tolerance":                fmtFloat(d.Warmup.Tolerance),
		"warmup.min":                      "0",
		"warmup.max":                      shortDuration(d.Warmup.Max),
		"warmup.on_unsteady":              d.Warmup.OnUnsteady,
		"telemetry.metrics":               d.Telemetry.Metrics,
		"telemetry.interval":              shortDuration(d.Telemetry.Interval),
		"telemetry.gpu":                   d.Telemetry.GPU,
		"scenarios[].capacity.resolution": fmtFloat(DefaultCapacityResolution),
		"scenarios[].capacity.holds":      DefaultCapacityHolds,
		"scenarios[].capacity.confidence": fmtFloat(DefaultCapacityConfidence),
	} {
		row := docRow(string(doc), key)
		require.NotEmpty(t, row, "docs/config.md has no row for %s", key)
		cells := strings.Split(row, "|")
		require.GreaterOrEqual(t, len(cells), 5, "row %q", row)
		assert.Contains(t, cells[3], want, "docs/config.md: default of %s", key)
	}
}

// The bounds the reference states are the ones validate applies: each row's
// type column names them.
func TestDocsBounds(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	require.NoError(t, err)
	n := func(i int) string { return strconv.Itoa(i) }
	for key, want := range map[string][]string{
		"repetitions":                      {"1", n(MaxRepetitions)},
		"repetitions.max":                  {n(MaxRepetitions)},
		"quality.concurrency":              {n(MaxConcurrency)},
		"cooldown":                         {"0", shortDur(MaxPause)},
		"target.timeout":                   {shortDur(MaxRequestTimeout)},
		"stack.ready_timeout":              {shortDur(MaxRunDuration)},
		"stack.external_ready_timeout":     {shortDur(MaxRunDuration)},
		"stack.health_interval":            {shortDur(MinHealthInterval), shortDur(MaxHealthInterval)},
		"stack.health_failures":            {n(MaxHealthFailures)},
		"stack.stop_grace":                 {shortDur(MaxPause)},
		"warmup.window":                    {shortDur(MinWarmupWindow), shortDur(MaxWarmupWindow)},
		"warmup.windows":                   {n(MaxWarmupWindows)},
		"warmup.min":                       {shortDur(MaxRunDuration)},
		"warmup.max":                       {shortDur(MaxRunDuration)},
		"telemetry.interval":               {shortDur(MinTelemetryInterval), shortDur(MaxTelemetryInterval)},
		"scenarios[].name":                 {n(MaxNameLength)},
		"scenarios[].requests":             {n(MaxRequests)},
		"scenarios[].duration":             {shortDur(MaxRunDuration)},
		"scenarios[].load.concurrency":     {n(MaxConcurrency)},
		"scenarios[].load.rate":            {fmtFloat(MinRate), fmtFloat(MaxRate)},
		"scenarios[].load.burstiness":      {fmtFloat(MinBurstiness), fmtFloat(MaxBurstiness)},
		"scenarios[].load.max_in_flight":   {n(MaxConcurrency)},
		"scenarios[].load.speedup":         {fmtFloat(MinSpeedup), fmtFloat(MaxSpeedup)},
		"scenarios[].slo.ttft":             {shortDur(MaxRequestTimeout)},
		"scenarios[].slo.tpot":             {shortDur(MaxRequestTimeout)},
		"scenarios[].slo.e2e":              {shortDur(MaxRequestTimeout)},
		"scenarios[].synth.requests":       {n(workload.MaxSynthRequests)},
		"scenarios[].synth.input.value":    {n(workload.MaxLength)},
		"scenarios[].synth.prefix.count":   {n(workload.MaxPrefixes)},
		"cost.usd_per_gpu_hour":            {fmtFloat(MaxUSDPerGPUHour)},
		"cost.gpus":                        {n(MaxGPUs)},
		"scenarios[].capacity.probes":      {"2", n(MaxCapacityProbes)},
		"scenarios[].capacity.repetitions": {"1", n(MaxRepetitions)},
		"scenarios[].capacity.min":         {fmtFloat(MinRate), fmtFloat(MaxRate), n(MaxConcurrency)},
		"scenarios[].capacity.slo":         {shortDur(MaxRequestTimeout)},
	} {
		row := docRow(string(doc), key)
		require.NotEmpty(t, row, "docs/config.md has no row for %s", key)
		cells := strings.Split(row, "|")
		require.GreaterOrEqual(t, len(cells), 5, "row %q", row)
		for _, w := range want {
			assert.Contains(t, cells[2], w, "docs/config.md: bounds of %s", key)
		}
	}
}

// Every perfgate.yaml example in the docs (a yaml block with scenarios) is a
// valid config, with no warnings.
func TestDocsExamplesParse(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	require.Contains(t, files, docPath)
	checked := 0
	for _, file := range files {
		doc, err := os.ReadFile(file)
		require.NoError(t, err)
		blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
		for i, b := range blocks {
			if !strings.Contains(b[1], "scenarios:") {
				continue // a fragment, not a whole config
			}
			checked++
			dir := t.TempDir()
			for _, m := range regexp.MustCompile(`(?m)^\s*workload: (\S+)`).FindAllStringSubmatch(b[1], -1) {
				p := filepath.Join(dir, m[1])
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o644))
			}
			for _, m := range regexp.MustCompile(`manifests: \[([^\]]+)\]`).FindAllStringSubmatch(b[1], -1) {
				for _, name := range strings.Split(m[1], ",") {
					p := filepath.Join(dir, strings.Trim(strings.TrimSpace(name), `"`))
					require.NoError(t, os.MkdirAll(p, 0o755)) // a directory of manifests
				}
			}
			c, err := Parse([]byte(b[1]), filepath.Join(dir, "perfgate.yaml"))
			require.NoError(t, err, "%s example %d", file, i+1)
			assert.Empty(t, c.Warnings, "%s example %d", file, i+1)
		}
	}
	assert.GreaterOrEqual(t, checked, 2)
}

func docRow(doc, key string) string {
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "| `"+key+"` |") {
			return line
		}
	}
	return ""
}

// shortDuration writes 5m rather than 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
