package export

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"

	"github.com/perfgate/perfgate/internal/textsafe"
)

// benchfmtGOMAXPROCS is the "-N" suffix WriteBenchfmt ends every benchmark
// name with. The Go benchmark format reads a trailing "-<digits>" of a name as
// GOMAXPROCS, so without it a scenario called "chat-16" would be read as
// scenario "chat" at GOMAXPROCS 16. With it the name parses as
// Scenario/name=chat-16 at GOMAXPROCS 1, which is constant, so rows still match
// across files.
const benchfmtGOMAXPROCS = "-1"

// benchfmtDigits is the significant digits WriteBenchfmt writes a value with:
// enough for any measurement, few enough that a millisecond value converted to
// seconds prints as 0.024225 and not as 0.024224999999999997.
const benchfmtDigits = 12

// WriteBenchfmt writes r in the Go benchmark format
// (golang.org/x/perf/benchfmt), so that `benchstat old.txt new.txt` compares
// two perfgate results.
//
// # Layout
//
// Each repetition of each scenario is one benchmark line, with iteration
// count 1 (a repetition is one sample, as in perfgate's own statistics):
//
//	BenchmarkScenario/name=chat-16-1 1 0.031 ttft-p50-sec ... 1600 output-throughput-tok/s ...
//
// The name is "Scenario/name=<scenario>" followed by benchfmtGOMAXPROCS
// ("-1"): the format reads a trailing "-<digits>" as GOMAXPROCS, and the
// explicit suffix keeps a scenario name such as "chat-16" whole (benchstat's
// /name key gives it back). Scenario names are letters, digits, '.', '_' and
// '-' (the config enforces it); any other character, which only a hand-edited
// file can hold, is written as '_'.
//
// A line carries every per-repetition metric of metric.AllWith(the
// result's percentiles) in catalogue order that the repetition measured
// (ttft-p99.99-sec beside the others where the config listed p99.99): the engine, GPU and cost metrics only
// when their source was available (a line without one is a missing sample,
// which benchstat handles, not a zero). Cold start is left out: it is
// measured once per stack start, not once per repetition, so it has no value
// per line, and repeating it on every line would fake a sample of n
// identical values; the terminal summary reports it.
//
// # Units
//
// Units are the metric's name ('.' between family and statistic and '_' made
// '-') followed by a unit suffix, so that each metric gets its own benchstat
// table and every unit is left unchanged by benchunit.Tidy (no "ns" or "MB"
// token, which benchstat would rescale), so values read back as written:
//
//   - latencies in seconds, "<family>-<stat>-sec" ("ttft-p99-sec",
//     "ttft-p99.9-sec", "e2e-mean-sec"): the values are converted from
//     milliseconds. benchstat scales decimal units by SI prefixes, so 0.031
//     prints as "31.00m" (ms) and 0.000450 as "450.0µ" (µs), which reads as
//     time the way Go's own "sec/op" does; in milliseconds it would print
//     nonsense like "1.234k" for 1.234 s;
//   - token throughputs in "<name>-tok/s" ("output-throughput-tok/s") and
//     request rates in "<name>-req/s" ("request-throughput-req/s",
//     "goodput-req/s"), per second as perfgate reports them ("1.600k");
//   - the error rate and the other shares (KV-cache usage, prefix-cache hit
//     rate, GPU utilisation) in percent, "error-rate-%": 3 for 3 %, which
//     benchstat prints as "3.000" rather than the "30.00m" a fraction would
//     give;
//   - counts in "<name>-count" ("preemptions-count");
//   - GPU memory in bytes, "gpu-memory-peak-B", converted from MiB: a "B"
//     unit is the one benchstat scales by powers of 1024, so 71234 MiB
//     prints as "69.56Gi"; in MiB it would print "71.23k";
//   - power in "gpu-power-W", energy in "energy-per-token-J/tok", energy
//     efficiency in "tokens-per-joule-tok/J" and prices in
//     "cost-per-mtok-$/Mtok" (US dollars per million tokens).
//
// Values are written with 12 significant digits.
//
// A "Unit <unit> better=lower|higher" line gives each written unit's
// direction from metric.Info, before the first benchmark line.
//
// # Configuration
//
// benchstat groups results into tables by their file configuration
// ("key: value" lines): results whose configuration differs are put in separate
// tables and never compared. So the configuration lines carry only the identity
// that must agree for a comparison to mean anything, and that a baseline and a
// candidate normally share: model, api, engine, simulated, gpu (model and
// count, "8x NVIDIA H100 80GB HBM3"), goos and goarch (empty values are left
// out; simulated is always written). Results that
// differ in one of them are shown apart, not silently compared (the point of
// perfgate's identity); `benchstat -ignore engine` compares two engines on
// purpose.
//
// The identity that normally differs between a baseline and a candidate (it is
// what the change is: perfgate-version, config-hash, engine-version, stack,
// image, image-id, command, cpu, gpu-driver, cuda, started-at) is written as "# key: value"
// comment lines at the top, which the format ignores: as configuration it would
// split every such comparison into separate tables.
//
// Text from the server or the result file is stripped of control characters and
// truncated, so no value can break a line.
func WriteBenchfmt(w io.Writer, r *result.Result) error {
	lines, written, err := benchmarkLines(r)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	id := r.Identity

	fmt.Fprintln(bw, "# perfgate result in the Go benchmark format: compare two with benchstat old.txt new.txt")
	comment := func(key, value string) {
		if v := configText(value); v != "" {
			fmt.Fprintf(bw, "# %s: %s\n", key, v)
		}
	}
	comment("perfgate-version", id.PerfgateVersion)
	comment("config-hash", id.ConfigHash)
	comment("engine-version", id.Server.Version)
	comment("stack", id.Stack.Kind)
	comment("image", id.Stack.Image)
	comment("image-id", id.Stack.ImageID)
	comment("command", strings.Join(id.Stack.Command, " "))
	comment("cpu", id.Host.CPUModel)
	comment("gpu-driver", gpuField(id.GPUs, func(g result.GPU) string { return g.Driver }))
	comment("cuda", gpuField(id.GPUs, func(g result.GPU) string { return g.CUDA }))
	if !r.StartedAt.IsZero() {
		comment("started-at", r.StartedAt.UTC().Format(time.RFC3339))
	}

	config := func(key, value string) {
		if v := configText(value); v != "" {
			fmt.Fprintf(bw, "%s: %s\n", key, v)
		}
	}
	config("model", id.Target.Model)
	config("api", id.Target.API)
	config("engine", id.Server.Engine)
	config("simulated", strconv.FormatBool(id.Simulated))
	config("gpu", result.DescribeGPUs(id.GPUs))
	config("goos", id.Host.OS)
	config("goarch", id.Host.Arch)

	if len(lines) > 0 {
		fmt.Fprintln(bw)
		for _, m := range written {
			fmt.Fprintf(bw, "Unit %s better=%s\n", benchfmtUnit(m), m.Better())
		}
		fmt.Fprintln(bw)
		for _, l := range lines {
			fmt.Fprintln(bw, l)
		}
	}
	return bw.Flush()
}

// benchmarkLines renders every repetition's benchmark line, so that an error
// is found before anything is written, and lists the metrics some line has,
// in catalogue order.
func benchmarkLines(r *result.Result) (lines []string, written []metric.Info, err error) {
	metrics := benchfmtMetrics(r.PercentileNames())
	used := make([]bool, len(metrics))
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Name == "" {
			return nil, nil, fmt.Errorf("benchfmt: scenario %d has no name", i+1)
		}
		cols := make([][]float64, len(metrics))
		has := make([][]bool, len(metrics))
		for j, m := range metrics {
			vals, measured, err := s.RepetitionValues(m.Name)
			if err != nil {
				return nil, nil, fmt.Errorf("benchfmt: scenario %s: %w", s.Name, err)
			}
			if len(vals) != len(s.Repetitions) {
				return nil, nil, fmt.Errorf("benchfmt: scenario %s: %d values of %s for %d repetitions", s.Name, len(vals), m.Name, len(s.Repetitions))
			}
			cols[j], has[j] = vals, measured
		}
		name := benchfmtName(s.Name)
		for rep := range s.Repetitions {
			var b strings.Builder
			b.WriteString(name)
			b.WriteString(" 1")
			for j, m := range metrics {
				if !has[j][rep] {
					continue
				}
				used[j] = true
				b.WriteByte(' ')
				b.WriteString(strconv.FormatFloat(benchfmtValue(m, cols[j][rep]), 'g', benchfmtDigits, 64))
				b.WriteByte(' ')
				b.WriteString(benchfmtUnit(m))
			}
			lines = append(lines, b.String())
		}
	}
	for j, m := range metrics {
		if used[j] {
			written = append(written, m)
		}
	}
	return lines, written, nil
}

// benchfmtMetrics are the metrics WriteBenchfmt writes of a result that
// measured percentiles: the per-repetition ones, in catalogue order, with
// those percentiles of each latency family (a capacity search's samples
// are per repetition index across probes, not a repetition's own figure).
func benchfmtMetrics(percentiles []string) []metric.Info {
	var out []metric.Info
	for _, m := range metric.AllWith(percentiles) {
		if !m.PerStart && m.Group != metric.GroupCapacity {
			out = append(out, m)
		}
	}
	return out
}

// benchfmtName is the benchmark name WriteBenchfmt gives a scenario:
// "BenchmarkScenario/name=<scenario>-1" (see WriteBenchfmt).
func benchfmtName(scenario string) string {
	safe := strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, scenario)
	return "BenchmarkScenario/name=" + safe + benchfmtGOMAXPROCS
}

// benchfmtUnit is the benchfmt unit WriteBenchfmt writes metric m's values in
// (see WriteBenchfmt).
func benchfmtUnit(m metric.Info) string {
	base := strings.ReplaceAll(strings.Replace(m.Name, ".", "-", 1), "_", "-")
	switch m.Kind {
	case metric.Latency:
		return base + "-sec"
	case metric.TokenRate:
		return base + "-tok/s"
	case metric.RequestRate:
		return base + "-req/s"
	case metric.Fraction:
		return base + "-%"
	case metric.Memory:
		return base + "-B"
	}
	// count, W, J/tok, tok/J, $/Mtok: the catalogue's own unit, which has
	// no space and no token benchunit rescales ("ns", "MB").
	return base + "-" + m.Unit()
}

// benchfmtValue converts v, a value of metric m in its own unit (as
// ScenarioResult.Values gives it), to the unit of benchfmtUnit(m).
func benchfmtValue(m metric.Info, v float64) float64 {
	switch m.Kind {
	case metric.Latency:
		return v / 1000 // ms → s
	case metric.Fraction:
		return v * 100 // share → %
	case metric.Memory:
		return v * (1 << 20) // MiB → B
	default:
		return v
	}
}

// gpuField is the distinct non-empty values of one field of the GPUs, joined
// by ", ".
func gpuField(gpus []result.GPU, field func(result.GPU) string) string {
	var vals []string
	for _, g := range gpus {
		if v := strings.TrimSpace(field(g)); v != "" && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	return strings.Join(vals, ", ")
}

// configText makes untrusted text a configuration value: one line, no
// surrounding space (the format would drop it), at most 200 runes.
func configText(s string) string {
	return strings.TrimSpace(textsafe.Cut(s, 200))
}
