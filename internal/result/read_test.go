package result

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/safeio/safeiotest"
)

// The baselines committed at the repository's root were written by
// perfgate itself; every check of Validate must let them through.
func TestReadCommittedBaselines(t *testing.T) {
	files, err := filepath.Glob("../../baselines/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		r, err := Read(f)
		require.NoError(t, err, "Read(%s)", f)
		assert.NotEmpty(t, r.Scenarios[0].Repetitions, "Read(%s)", f)
	}
}

// A result aggregated and written by today's code reads back: failed
// requests, open-loop schedule stats, telemetry and quality included.
func TestWriteReadRoundTrip(t *testing.T) {
	a := NewAggregator(SLO{TTFT: 50}, true, 4)
	for i := int64(1); i <= 20; i++ {
		a.Add(rec(i*10, i, 10, 11))
	}
	a.Add(&Record{SentNS: 0, EndNS: 5 * ms, ErrorKind: "http", Error: "http 500"})
	rep := a.Summary(1)
	zero, one := 0.0, 1.0
	rep.Engine = &EngineTelemetry{Adapter: "vllm", Scrapes: 3, KVCachePeak: &one, PrefixCacheHitRate: &zero}
	rep.GPU = &GPUTelemetry{Source: "nvml", Samples: 2, MemoryPeakMiB: 1000, PowerMeanW: &one}
	rep.Cost = CostOf(&rep, Price{USDPerGPUHour: 2, GPUs: 1})
	r := &Result{Schema: Schema, Scenarios: []ScenarioResult{{
		Name: "s", Load: Load{Type: "poisson", Rate: 4}, Repetitions: []Repetition{rep},
		Quality: []SuiteResult{{Name: "q", Items: []ItemOutcome{{ID: "a", Score: 1, Pass: true}, {ID: "b", Error: "http 500"},
			{ID: "c", Error: "stream: reset", ErrorKind: "stream"}}}},
	}}}
	path := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, Write(path, r))
	got, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, rep.Sent, got.Scenarios[0].Repetitions[0].Sent)
	assert.Equal(t, r.Scenarios[0].Quality, got.Scenarios[0].Quality, "failed items keep their error and kind; one without a kind (an older result) still reads")
}

// minimal is a valid result with one repetition, as a JSON object that the
// cases below change one field at a time.
func minimal(t *testing.T) map[string]any {
	t.Helper()
	r := Result{Schema: Schema, Scenarios: []ScenarioResult{{Name: "s", Repetitions: []Repetition{{
		Index: 1, Duration: 2, Sent: 10, Completed: 9, Failed: 1, Errors: map[string]int{"http": 1}, ErrorRate: 0.1,
		OutputTokens: 900, OutputThroughput: 450, RequestThroughput: 4.5, Goodput: 4,
		TTFT: Stats{Count: 9, Mean: 20, Min: 10, P50: 20, P90: 25, P95: 27, P99: 30, P999: 30, Max: 30},
	}}}}}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// withItem gives a minimal result's first scenario a suite of one item.
func withItem(m map[string]any, item map[string]any) {
	sc := m["scenarios"].([]any)[0].(map[string]any)
	sc["quality"] = []any{map[string]any{"name": "q", "path": "q.jsonl", "hash": "sha256:x", "mode": "separate",
		"interleaved": 0, "gates": []any{}, "items": []any{item}}}
}

// rep0 is the first repetition of a minimal result's first scenario.
func rep0(m map[string]any) map[string]any {
	return m["scenarios"].([]any)[0].(map[string]any)["repetitions"].([]any)[0].(map[string]any)
}

// A result file is untrusted: numbers that cannot be true are refused,
// naming the file and the field, and the error is ErrInvalid.
func TestReadRefusesImpossibleNumbers(t *testing.T) {
	cases := []struct {
		name   string
		change func(m map[string]any)
		raw    string // replaces the JSON entirely when set
		want   string
	}{
		{"negative sent", func(m map[string]any) { rep0(m)["sent"] = -10 }, "", "scenarios[0].repetitions[0].sent: want a count >= 0, got -10"},
		{"failed > sent", func(m map[string]any) { rep0(m)["failed"] = 50 }, "", "scenarios[0].repetitions[0].failed: 50 failed and 9 completed of 10 sent"},
		{"completed > sent", func(m map[string]any) { rep0(m)["completed"] = 11 }, "", "scenarios[0].repetitions[0].completed: 11 completed of 10 sent"},
		{"negative throughput", func(m map[string]any) { rep0(m)["output_throughput"] = -1.5e19 }, "", "scenarios[0].repetitions[0].output_throughput: want a finite number >= 0, got -1.5e+19"},
		{"negative latency", func(m map[string]any) { rep0(m)["ttft_ms"].(map[string]any)["p99"] = -3 }, "", "scenarios[0].repetitions[0].ttft_ms.p99: want a finite number >= 0, got -3"},
		{"error rate over 1", func(m map[string]any) { rep0(m)["error_rate"] = 2 }, "", "scenarios[0].repetitions[0].error_rate: want a fraction from 0 to 1, got 2"},
		{"negative tokens", func(m map[string]any) { rep0(m)["output_tokens"] = -1000 }, "", "scenarios[0].repetitions[0].output_tokens: want a count >= 0, got -1000"},
		{"errors past failed", func(m map[string]any) { rep0(m)["errors"] = map[string]any{"http": 7} }, "", "scenarios[0].repetitions[0].errors: 7 errors by kind for 1 failed requests"},
		{"infinite number", nil, `{"schema":"perfgate/result/v1","scenarios":[{"name":"s","repetitions":[{"output_throughput":1e400}]}]}`,
			"r.json:1:93: scenarios.repetitions.output_throughput: want a number in range, got 1e400"},
		{"string for a count", nil, "{\"schema\":\"perfgate/result/v1\",\n\"scenarios\":[{\"name\":\"s\",\"repetitions\":[{\"sent\":\"ten\"}]}]}",
			"r.json:2:49: scenarios.repetitions.sent: want an integer in range, got a string"},
		{"negative SLO", func(m map[string]any) {
			m["scenarios"].([]any)[0].(map[string]any)["slo"] = map[string]any{"ttft_ms": -250}
		}, "", "scenarios[0].slo.ttft_ms: want a finite number >= 0, got -250"},
		{"v1 SLO not in nanoseconds", nil, "{\"schema\":\"perfgate/result/v1\",\n\"scenarios\":[{\"name\":\"s\",\"slo\":{\"ttft\":\"250ms\"},\"repetitions\":[]}]}",
			"r.json:2:40: scenarios.slo.ttft: want an integer in range, got a string"},
		{"warm-up error kind not a word", func(m map[string]any) {
			m["scenarios"].([]any)[0].(map[string]any)["warmup"] = map[string]any{"method": "windows", "failed": 1, "errors": map[string]any{"http\n::error::pwned": 1}}
		}, "", `scenarios[0].warmup.errors: want error kinds that are lowercase words of at most 32 letters, digits and '_' (http, stream, timeout, ...), got "http\n::error::pwned"`},
		{"round warm-up of round 0", func(m map[string]any) {
			m["scenarios"].([]any)[0].(map[string]any)["warmups"] = []any{map[string]any{"round": 0, "kind": "full", "warmup": map[string]any{"method": "windows"}}}
		}, "", "scenarios[0].warmups[0].round: want a round >= 1, got 0"},
		{"round warm-up of no kind", func(m map[string]any) {
			m["scenarios"].([]any)[0].(map[string]any)["warmups"] = []any{map[string]any{"round": 2, "kind": "lukewarm", "warmup": map[string]any{"method": "short"}}}
		}, "", `scenarios[0].warmups[0].kind: want full or short, got "lukewarm"`},
		{"round warm-up without its record", func(m map[string]any) {
			m["scenarios"].([]any)[0].(map[string]any)["warmups"] = []any{map[string]any{"round": 1, "kind": "full"}}
		}, "", "scenarios[0].warmups[0].warmup: missing"},
		{"round warm-up's record checked", func(m map[string]any) {
			m["scenarios"].([]any)[0].(map[string]any)["warmups"] = []any{map[string]any{"round": 1, "kind": "short", "warmup": map[string]any{"method": "short", "requests": -3}}}
		}, "", "scenarios[0].warmups[0].warmup.requests: want a count >= 0, got -3"},
		{"ready replicas out of order", func(m map[string]any) {
			rep0(m)["replicas"] = []any{map[string]any{"at_s": 0, "ready": 2}, map[string]any{"at_s": 5, "ready": 1}, map[string]any{"at_s": 4, "ready": 2}}
		}, "", "scenarios[0].repetitions[0].replicas[2].at_s: 4, before the count before it (5): want them in time order"},
		{"negative ready replicas", func(m map[string]any) {
			rep0(m)["replicas"] = []any{map[string]any{"at_s": 0, "ready": -1}}
		}, "", "scenarios[0].repetitions[0].replicas[0].ready: want a count >= 0, got -1"},
		{"incomplete with negative rounds", func(m map[string]any) {
			m["incomplete"] = map[string]any{"reason": "interrupted", "rounds": -1}
		}, "", "incomplete.rounds: want a count >= 0, got -1"},
		{"failed item passes", func(m map[string]any) {
			withItem(m, map[string]any{"id": "a", "pass": true, "score": 1, "error": "http 500: boom", "error_kind": "http"})
		}, "", "scenarios[0].quality[0].items[0].pass: the item's request failed (http), so it cannot pass"},
		{"failed item scores", func(m map[string]any) {
			withItem(m, map[string]any{"id": "a", "score": 0.5, "error": "stream: reset"})
		}, "", "scenarios[0].quality[0].items[0].score: the item's request failed (error), so its score is 0, got 0.5"},
		{"error kind without error", func(m map[string]any) {
			withItem(m, map[string]any{"id": "a", "error_kind": "timeout"})
		}, "", `scenarios[0].quality[0].items[0].error: the item has error_kind "timeout" but no error: a failed item says why`},
		{"odd error kind", func(m map[string]any) {
			withItem(m, map[string]any{"id": "a", "error": "x", "error_kind": "HTTP 500"})
		}, "", `scenarios[0].quality[0].items[0].error_kind: want a lowercase word of at most 32 letters, digits and '_' (http, stream, timeout, unanswered, ...), got "HTTP 500"`},
		{"another schema", func(m map[string]any) { m["schema"] = "perfgate/result/v9" }, "", `r.json: schema: "perfgate/result/v9", want perfgate/result/v2 or an earlier version (perfgate/result/v1)`},
		{"no schema", nil, `{"scenarios":[]}`, "r.json: schema: missing: this is not a perfgate result file"},
		{"no scenarios", func(m map[string]any) { m["scenarios"] = []any{} }, "", "r.json: scenarios: no scenarios"},
		{"not JSON", nil, "{\"schema\": \"perfgate/result/v1\",\n  oops}", "r.json:2:3: invalid JSON: invalid character 'o' looking for beginning of object key string"},
		{"truncated", nil, `{"schema": "perfgate/result/v1", "scenarios": [`, "r.json:1:48: invalid JSON: unexpected end of JSON input"},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.raw)
			if tc.change != nil {
				m := minimal(t)
				tc.change(m)
				var err error
				data, err = json.Marshal(m)
				require.NoError(t, err)
			}
			path := filepath.Join(dir, "r.json")
			require.NoError(t, os.WriteFile(path, data, 0o644))
			r, err := Read(path)
			assert.Nil(t, r)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
			if !strings.Contains(tc.want, "r.json") {
				assert.Contains(t, err.Error(), path+": ", "the error names the file")
			}
			for _, goism := range []string{"Go struct", "Go value", "float64", "int64", "json: cannot", "%!", "<nil>"} {
				assert.NotContains(t, err.Error(), goism)
			}
		})
	}
}

// The minimal result the cases start from is itself valid.
func TestValidateMinimal(t *testing.T) {
	b, err := json.Marshal(minimal(t))
	require.NoError(t, err)
	_, err = Decode(b, "r.json")
	assert.NoError(t, err)
}

// Read reads only regular files, at once, and at most MaxFileBytes.
func TestReadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	safeiotest.RefusesWhatIsNotAFile(t, "r.json", func(p string) error { _, err := Read(p); return err })
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxFileBytes+1)) // sparse: no disk used
	require.NoError(t, f.Close())
	_, err = Read(big)
	assert.EqualError(t, err, "read result: "+big+": the file is larger than 64 MiB, the most perfgate reads for a result")
	assert.True(t, errors.Is(err, ErrInvalid))
}

// A result that a run wrote although it did not finish reads, every
// round's warm-up with it, and CheckComplete refuses it (an ErrInvalid
// that says why and how many rounds it holds); a finished run's passes.
func TestCheckComplete(t *testing.T) {
	r := &Result{Schema: Schema, Scenarios: []ScenarioResult{{Name: "s",
		Warmups: []RoundWarmup{{Round: 1, Kind: WarmupFull, Warmup: &Warmup{Method: "windows", Steady: true}},
			{Round: 2, Kind: WarmupShort, Warmup: &Warmup{Method: WarmupShort, Requests: 3}}}}},
		Incomplete: &Incomplete{Reason: "interrupted: context canceled", Rounds: 1}}
	path := filepath.Join(t.TempDir(), "r.partial.json")
	require.NoError(t, Write(path, r))
	got, err := Read(path)
	require.NoError(t, err, "an incomplete result reads: it can be looked at")
	assert.Equal(t, r.Scenarios[0].Warmups, got.Scenarios[0].Warmups)
	err = got.CheckComplete()
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalid)
	var inc *IncompleteError
	require.True(t, errors.As(err, &inc))
	assert.Equal(t, "an incomplete result: the run stopped after 1 complete round (interrupted: context canceled); it holds what was measured before it stopped, which no comparison or baseline takes: measure again", err.Error())

	got.Incomplete = nil
	assert.NoError(t, got.CheckComplete())
}

// A scenario's seed reads back as written, 0 included; a result from
// before the seed was recorded reads it as unknown, nil, which a capacity
// gate does not pair.
func TestReadSeed(t *testing.T) {
	for _, tc := range []struct {
		name string
		seed any // nil: the key left out
		want *int64
	}{
		{"left out", nil, nil},
		{"0", 0, new(int64(0))},
		{"42", 42, new(int64(42))},
		{"negative", -7, new(int64(-7))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := minimal(t)
			sc := m["scenarios"].([]any)[0].(map[string]any)
			delete(sc, "seed")
			if tc.seed != nil {
				sc["seed"] = tc.seed
			}
			b, err := json.Marshal(m)
			require.NoError(t, err)
			r, err := Decode(b, "r.json")
			require.NoError(t, err)
			assert.Equal(t, tc.want, r.Scenarios[0].Seed)
		})
	}
}
