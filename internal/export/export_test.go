package export

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"

	"github.com/perfgate/perfgate/internal/stat"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixture is testdata/result.json: a real run against the simulator, two
// scenarios (closed and Poisson) of three repetitions, with engine
// telemetry and no GPU or cost.
func fixture(t *testing.T) *result.Result {
	t.Helper()
	r, err := result.Read(filepath.Join("testdata", "result.json"))
	require.NoError(t, err)
	return r
}

func write(t *testing.T, r *result.Result, f Format, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, r, f, o))
	return buf.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestGolden(t *testing.T) {
	r := fixture(t)
	for _, c := range []struct {
		file string
		f    Format
		o    Options
	}{
		{"result.bmf.json", BMF, Options{}},
		{"result.gab.json", GAB, Options{}},
		{"result.gab-bigger.json", GABBigger, Options{}},
		{"result.csv", CSV, Options{}},
		{"result.per-repetition.csv", CSV, Options{Per: PerRepetition}},
		{"result.vllm.jsonl", VLLM, Options{}},
	} {
		t.Run(c.file, func(t *testing.T) { golden(t, c.file, write(t, r, c.f, c.o)) })
	}
}

// schema compiles testdata/schema/name.
func schema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "schema", name))
	require.NoError(t, err)
	s, err := jsonschema.NewCompiler().Compile(path)
	require.NoError(t, err)
	return s
}

// validate checks one JSON document against s.
func validate(t *testing.T, s *jsonschema.Schema, doc []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	require.NoError(t, err, "%s", doc)
	assert.NoError(t, s.Validate(v), "%s", doc)
}

// bmfSlug is a Bencher slug: kebab case.
var bmfSlug = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// TestBMFSchema validates the bmf output with Bencher's own schema, and
// checks the limits Bencher's reference page gives for names and slugs.
func TestBMFSchema(t *testing.T) {
	s := schema(t, "bmf.schema.json")
	out := write(t, fixture(t), BMF, Options{})
	validate(t, s, out)

	var doc map[string]map[string]map[string]float64
	require.NoError(t, json.Unmarshal(out, &doc))
	assert.Len(t, doc, 2)
	for bench, measures := range doc {
		assert.LessOrEqual(t, utf8.RuneCountInString(bench), 1024, bench)
		assert.NotEmpty(t, measures, bench)
		for slug, v := range measures {
			assert.Regexp(t, bmfSlug, slug)
			assert.LessOrEqual(t, len(slug), bmfMaxSlug, slug)
			if lo, ok := v["lower_value"]; ok {
				assert.LessOrEqual(t, lo, v["value"], "%s %s", bench, slug)
				assert.GreaterOrEqual(t, v["upper_value"], v["value"], "%s %s", bench, slug)
			}
		}
	}
	// Every slug of the catalogue is valid, and no two metrics share one.
	seen := map[string]string{}
	for _, m := range measures(nil) {
		slug := measureSlug(m)
		assert.Regexp(t, bmfSlug, slug)
		assert.LessOrEqual(t, len(slug), bmfMaxSlug, slug)
		assert.Empty(t, seen[slug], "%s and %s share slug %s", seen[slug], m.Name, slug)
		seen[slug] = m.Name
	}

	c4 := doc["chat-c4"]
	assert.Contains(t, c4, "ttft-p99-ms")
	assert.Contains(t, c4, "ttft-p999-ms")
	assert.Contains(t, c4, "output-throughput-tok-s")
	assert.Contains(t, c4, "error-rate-pct")
	assert.Contains(t, c4, "kv-cache-peak-pct")
	assert.NotContains(t, c4, "gpu-power-w", "no GPU telemetry: left out, not zero")
	assert.NotContains(t, c4, "cost-per-mtok-usd-mtok", "no price: left out, not zero")
	assert.NotContains(t, c4, "cold-start-ms", "an external stack has no cold start")
}

// TestBMFValues checks that a measure's value is the median of the
// repetitions' values, and its bounds their extremes.
func TestBMFValues(t *testing.T) {
	r := fixture(t)
	var doc map[string]map[string]bmfMetric
	require.NoError(t, json.Unmarshal(write(t, r, BMF, Options{}), &doc))
	for _, s := range r.Scenarios {
		var p99 []float64
		for _, rep := range s.Repetitions {
			p99 = append(p99, rep.TTFT.P99)
		}
		got := doc[s.Name]["ttft-p99-ms"]
		assert.InDelta(t, stat.Median(p99), got.Value, 1e-9, s.Name)
		require.NotNil(t, got.Lower)
		assert.InDelta(t, min(p99[0], p99[1], p99[2]), *got.Lower, 1e-9, s.Name)
		assert.InDelta(t, max(p99[0], p99[1], p99[2]), *got.Upper, 1e-9, s.Name)
	}
}

// TestGABSchema validates both gab files with the schema derived from the
// action's source, and checks that each holds only its direction.
func TestGABSchema(t *testing.T) {
	s := schema(t, "gab.schema.json")
	r := fixture(t)
	names := map[string]bool{}
	for _, f := range []Format{GAB, GABBigger} {
		out := write(t, r, f, Options{})
		validate(t, s, out)
		var entries []gabEntry
		require.NoError(t, json.Unmarshal(out, &entries))
		for _, e := range entries {
			scenario, name, ok := strings.Cut(e.Name, "/")
			require.True(t, ok, e.Name)
			assert.Contains(t, []string{"chat-c4", "chat-poisson"}, scenario)
			m, err := metric.Lookup(name)
			require.NoError(t, err)
			assert.Equal(t, f == GABBigger, m.HigherIsBetter, "%s in %s", e.Name, f)
			assert.False(t, names[e.Name], "%s twice", e.Name)
			names[e.Name] = true
			assert.Contains(t, e.Extra, "median of 3")
			assert.Contains(t, e.Extra, "model perfgate-sim-8b")
		}
	}
	assert.True(t, names["chat-c4/ttft.p99"])
	assert.True(t, names["chat-c4/output_throughput"])
}

// TestGABRange checks the range: value ± range spans every repetition, and
// the action's parser reads it.
func TestGABRange(t *testing.T) {
	rangeRE := regexp.MustCompile(`(?P<prefix>(\+-|±)\s*)(?P<value>\d.+)`) // src/extractRangeInfo.ts
	for _, d := range []float64{5, 0.25, 17.696, 1e-7, 12345678} {
		got := "± " + gabRange(d)
		m := rangeRE.FindStringSubmatch(got)
		require.NotNil(t, m, got)
		v, err := strconv.ParseFloat(m[3], 64)
		require.NoError(t, err, got)
		assert.InDelta(t, d, v, 1e-12, got)
	}
	sum := summarise([]float64{10, 11, 15})
	assert.Equal(t, 4.0, sum.medianToExtremity)
}

// TestGABEmpty: the action throws on a file with no benchmark, so a result
// with no metric of a direction is an error, not an empty array.
func TestGABEmpty(t *testing.T) {
	r := fixture(t)
	for i := range r.Scenarios {
		r.Scenarios[i].Repetitions = nil
	}
	var buf bytes.Buffer
	err := Write(&buf, r, GAB, Options{})
	assert.ErrorContains(t, err, "no metric for which smaller is better")
	assert.Empty(t, buf.Bytes())
}

// TestCSVReadsBack parses both tables back with encoding/csv: the header,
// one row per measured metric, numbers that parse, units in their column.
func TestCSVReadsBack(t *testing.T) {
	r := fixture(t)
	rows, err := csv.NewReader(bytes.NewReader(write(t, r, CSV, Options{}))).ReadAll()
	require.NoError(t, err)
	require.Equal(t, csvSummaryHeader, rows[0])
	count := map[string]int{}
	for _, row := range rows[1:] {
		require.Len(t, row, len(csvSummaryHeader))
		count[row[0]]++
		m, err := metric.Lookup(row[1])
		require.NoError(t, err)
		assert.Equal(t, m.Title, row[2])
		assert.Equal(t, m.Better(), row[4])
		for _, cell := range row[5:10] {
			_, err := strconv.ParseFloat(cell, 64)
			assert.NoError(t, err, "%v", row)
		}
		if m.Kind == metric.Fraction {
			assert.Equal(t, "%", row[3])
		} else {
			assert.Equal(t, m.Unit(), row[3])
		}
		if row[0] == "chat-c4" && row[1] == "error_rate" {
			assert.Equal(t, []string{"3", "0", "0", "0", "0", "0"}, row[5:], "error rate in percent")
		}
	}
	for _, s := range r.Scenarios {
		want := 0
		for _, m := range measures(nil) {
			xs, err := samples(&s, m)
			require.NoError(t, err)
			if len(xs) > 0 {
				want++
			}
		}
		assert.Equal(t, want, count[s.Name], s.Name)
		assert.Greater(t, want, 30, s.Name)
	}

	rows, err = csv.NewReader(bytes.NewReader(write(t, r, CSV, Options{Per: PerRepetition}))).ReadAll()
	require.NoError(t, err)
	require.Equal(t, csvRepetitionHeader, rows[0])
	found := false
	for _, row := range rows[1:] {
		require.Len(t, row, len(csvRepetitionHeader))
		v, err := strconv.ParseFloat(row[6], 64)
		require.NoError(t, err, "%v", row)
		if row[0] == "chat-poisson" && row[1] == "2" && row[2] == "ttft.p99" {
			assert.Equal(t, r.Scenarios[1].Repetitions[1].TTFT.P99, v)
			found = true
		}
		assert.NotEqual(t, "cold_start", row[2])
	}
	assert.True(t, found, "chat-poisson repetition 2 has a ttft.p99 row")
}

// TestCSVInjection: a name a hand-edited or hostile file holds cannot make
// a spreadsheet cell a formula, nor break a row.
func TestCSVInjection(t *testing.T) {
	r := fixture(t)
	hostile := []string{"=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "\t=1", "a\nb,\"c\"\r\n=d"}
	base := r.Scenarios[0]
	r.Scenarios = nil
	for _, n := range hostile {
		s := base
		s.Name = n
		r.Scenarios = append(r.Scenarios, s)
	}
	for _, per := range []Per{PerScenario, PerRepetition} {
		rows, err := csv.NewReader(bytes.NewReader(write(t, r, CSV, Options{Per: per}))).ReadAll()
		require.NoError(t, err)
		for _, row := range rows[1:] {
			for _, cell := range row {
				if cell != "" && strings.ContainsRune("=+@\t\r", rune(cell[0])) {
					t.Errorf("cell %q would be a formula", cell)
				}
				if cell != "" && cell[0] == '-' {
					_, err := strconv.ParseFloat(cell, 64)
					assert.NoError(t, err, "a cell beginning with '-' is a number: %q", cell)
				}
				assert.NotContains(t, cell, "\n")
			}
		}
		assert.Equal(t, "'=HYPERLINK(\"http://x\",\"y\")", rows[1][0])
	}
}

// TestVLLMSchema validates every line against the key list read from
// vLLM's serve.py, and checks that values are the repetition's own.
func TestVLLMSchema(t *testing.T) {
	s := schema(t, "vllm-result.schema.json")
	r := fixture(t)
	out := write(t, r, VLLM, Options{})
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	var lines []map[string]any
	for sc.Scan() {
		validate(t, s, sc.Bytes())
		var obj map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &obj))
		lines = append(lines, obj)
	}
	require.NoError(t, sc.Err())
	require.Len(t, lines, 6, "one object per repetition")

	closed, poisson := lines[0], lines[4]
	rep := r.Scenarios[0].Repetitions[0]
	assert.Equal(t, "chat-c4", closed["perfgate_scenario"])
	assert.Equal(t, 1.0, closed["perfgate_repetition"])
	assert.Equal(t, "inf", closed["request_rate"])
	assert.Equal(t, 4.0, closed["max_concurrency"])
	assert.Equal(t, "openai-chat", closed["backend"])
	assert.Equal(t, float64(rep.Completed), closed["completed"])
	assert.Equal(t, float64(rep.OutputTokens), closed["total_output_tokens"])
	assert.InDelta(t, rep.TTFT.P99, closed["p99_ttft_ms"], 1e-9)
	assert.InDelta(t, rep.TTFT.P999, closed["p99.9_ttft_ms"], 1e-9)
	assert.InDelta(t, rep.TTFT.P50, closed["median_ttft_ms"], 1e-9)
	assert.InDelta(t, rep.E2E.Mean, closed["mean_e2el_ms"], 1e-9)
	assert.InDelta(t, rep.InputThroughput+rep.OutputThroughput, closed["total_token_throughput"], 1e-6)
	assert.InDelta(t, rep.Goodput, closed["request_goodput"], 1e-9, "the scenario has SLOs")
	assert.NotContains(t, closed, "std_ttft_ms", "perfgate keeps no standard deviation: left out, not zero")

	assert.Equal(t, "chat-poisson", poisson["perfgate_scenario"])
	assert.Equal(t, 2.0, poisson["perfgate_repetition"])
	assert.InDelta(t, r.Scenarios[1].Repetitions[1].Schedule.OfferedRate, poisson["request_rate"], 1e-9)
	assert.Nil(t, poisson["max_concurrency"])
	assert.Contains(t, poisson, "request_goodput")
	assert.Nil(t, poisson["request_goodput"], "no SLO: null, as vLLM writes it without --goodput")
}

// oddResult is a result whose values a fuzzer or a hand-edited file could
// hold: NaN and infinities, a repetition without telemetry, a latency
// distribution with no requests in it.
func oddResult(t *testing.T) *result.Result {
	t.Helper()
	r := fixture(t)
	s := &r.Scenarios[0]
	s.Repetitions[0].OutputThroughput = math.Inf(1)
	s.Repetitions[1].OutputThroughput = math.NaN()
	s.Repetitions[2].OutputThroughput = math.Inf(-1)
	s.Repetitions[0].TTFT.P99 = math.NaN()
	s.Repetitions[1].Engine = nil
	for i := range s.Repetitions {
		s.Repetitions[i].TPOT = result.Stats{}
	}
	nan := math.NaN()
	s.Repetitions[2].Engine.KVCachePeak = &nan
	return r
}

// TestOddValues: NaN and ±Inf are never written (not valid JSON), a metric
// not measured is left out rather than written as zero, and a repetition
// without a figure leaves the others' figures whole.
func TestOddValues(t *testing.T) {
	r := oddResult(t)
	for _, f := range Formats() {
		out := write(t, r, f, Options{})
		lower := strings.ToLower(string(out))
		assert.NotContains(t, lower, "nan", f)
		assert.NotContains(t, lower, "inf,", f)
		if f == VLLM {
			for line := range bytes.Lines(out) {
				assert.True(t, json.Valid(line), "%s: %s", f, line)
			}
		} else if f != CSV {
			assert.True(t, json.Valid(out), "%s: %s", f, out)
		}
	}

	var doc map[string]map[string]bmfMetric
	require.NoError(t, json.Unmarshal(write(t, r, BMF, Options{}), &doc))
	c4 := doc["chat-c4"]
	assert.NotContains(t, c4, "output-throughput-tok-s", "no finite value in any repetition")
	assert.NotContains(t, c4, "tpot-p99-ms", "no request had a TPOT: left out, not zero")
	assert.Contains(t, c4, "ttft-p99-ms", "two repetitions still have a TTFT p99")
	assert.Contains(t, c4, "kv-cache-peak-pct", "repetition 1 has engine telemetry")

	rows, err := csv.NewReader(bytes.NewReader(write(t, r, CSV, Options{}))).ReadAll()
	require.NoError(t, err)
	for _, row := range rows[1:] {
		switch {
		case row[0] == "chat-c4" && row[1] == "ttft.p99":
			assert.Equal(t, "2", row[5], "n counts the repetitions with a value")
		case row[0] == "chat-c4" && row[1] == "kv_cache_peak":
			assert.Equal(t, "1", row[5])
			assert.Empty(t, row[10], "no standard deviation of one value")
		}
	}

	// (vLLM always writes output_throughput; a value that cannot be
	// written is still left out, so this line would fail its schema.)
	first, _, _ := bytes.Cut(write(t, r, VLLM, Options{}), []byte("\n"))
	var obj map[string]any
	require.NoError(t, json.Unmarshal(first, &obj))
	assert.NotContains(t, obj, "output_throughput")
	assert.NotContains(t, obj, "p99_ttft_ms")
	assert.NotContains(t, obj, "mean_tpot_ms")
}

// TestScenarioNames: every format refuses a result whose scenarios it
// could not tell apart.
func TestScenarioNames(t *testing.T) {
	r := fixture(t)
	r.Scenarios[1].Name = r.Scenarios[0].Name
	for _, f := range Formats() {
		assert.ErrorContains(t, Write(&bytes.Buffer{}, r, f, Options{}), `two scenarios are named "chat-c4"`, f)
	}
	r.Scenarios[1].Name = ""
	assert.ErrorContains(t, Write(&bytes.Buffer{}, r, BMF, Options{}), "scenario 2 has no name")
	assert.ErrorContains(t, Write(&bytes.Buffer{}, fixture(t), "xml", Options{}), `unknown export format "xml"`)
}

// FuzzOddValues writes every format for a result with values a fuzzer
// picks: no panic, no NaN or infinity written, the JSON formats stay
// valid JSON, and no csv cell begins a formula, leading whitespace or not.
func FuzzOddValues(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, "chat")
	f.Add(math.NaN(), math.Inf(1), math.Copysign(0, -1), "=x")
	f.Add(1e308, -1e308, 5e-324, "a\x00\u202e")
	f.Add(math.MaxFloat64, math.MaxFloat64, 1.0, "\t=HYPERLINK(\"http://x\",\"y\")")
	base, err := result.Read(filepath.Join("testdata", "result.json"))
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, a, b, c float64, name string) {
		r := *base
		s := base.Scenarios[0]
		s.Name = name
		s.Repetitions = append([]result.Repetition(nil), s.Repetitions...)
		s.Repetitions[0].TTFT.P99, s.Repetitions[1].OutputThroughput, s.Repetitions[2].ErrorRate = a, b, c
		s.Repetitions[2].OutputThroughput = a
		s.Repetitions[0].Duration = result.Seconds(b)
		r.Scenarios = []result.ScenarioResult{s}
		for _, format := range Formats() {
			var buf bytes.Buffer
			err := Write(&buf, &r, format, Options{})
			if err != nil {
				continue
			}
			if lower := strings.ToLower(name); !strings.Contains(lower, "nan") && !strings.Contains(lower, "inf") {
				checkNoOddNumbers(t, format, buf.Bytes())
			}
			if format == CSV {
				rows, err := csv.NewReader(&buf).ReadAll()
				assert.NoError(t, err)
				for _, row := range rows {
					for _, cell := range row {
						csvCellIsSafe(t, cell)
					}
				}
			}
		}
	})
}
