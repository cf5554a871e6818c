package baseline

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
)

// stats is a latency distribution around base milliseconds.
func stats(base float64) result.Stats {
	return result.Stats{Count: 100, Mean: base, Min: base / 2, P50: base, P90: base * 1.5,
		P95: base * 1.7, P99: base * 2, P999: base * 2.5, Max: base * 3}
}

// rep is repetition i with TTFT p50 ttft (so p99 2·ttft), TPOT p50 14 ms
// and the given output throughput.
func rep(i int, ttft, throughput float64) result.Repetition {
	return result.Repetition{
		Index: i, Duration: 12.5, Sent: 100, Completed: 99, Failed: 1, ErrorRate: 0.01,
		Errors: map[string]int{"timeout": 1}, TokensFrom: "usage",
		PromptTokens: 30000, OutputTokens: 20000,
		RequestThroughput: 8, OutputThroughput: throughput, InputThroughput: 2400, Goodput: 7.5, GoodRequests: 94,
		Concurrency: 7.9, TTFT: stats(ttft), TPOT: stats(14), ITL: stats(13.5), E2E: stats(2500),
	}
}

// scenario is a scenario with one repetition per TTFT given.
func scenario(name string, ttfts ...float64) result.ScenarioResult {
	s := result.ScenarioResult{
		Name: name, Workload: "workloads/chat.jsonl", WorkloadHash: "sha256:0123456789abcdef",
		Load: result.Load{Type: config.LoadClosed, Concurrency: 8}, SLO: result.SLO{TTFT: 500},
	}
	for i, v := range ttfts {
		s.Repetitions = append(s.Repetitions, rep(i+1, v, 1600+10*float64(i)))
	}
	return s
}

func identity() result.Identity {
	return result.Identity{
		PerfgateVersion: "v0.1.0", ConfigHash: "sha256:cafe",
		Target: result.Target{BaseURL: "http://127.0.0.1:8000", API: "chat", Model: "llama-3-8b"},
		Server: result.Server{Engine: "vllm", Version: "0.6.3", Models: []string{"llama-3-8b"}},
		Stack:  result.Stack{Kind: "external"},
		Host:   result.Host{OS: "linux", Arch: "amd64", CPUs: 16, GoVersion: "go1.26"},
	}
}

var started = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func testResult(scenarios ...result.ScenarioResult) *result.Result {
	return &result.Result{Schema: result.Schema, Identity: identity(),
		StartedAt: started, FinishedAt: started.Add(10 * time.Minute), Scenarios: scenarios}
}

func TestPromoteLoadRoundTrip(t *testing.T) {
	store := Store{Dir: filepath.Join(t.TempDir(), "baselines")} // created by Promote
	r := testResult(scenario("chat-c8", 30, 31, 29), scenario("batch", 120, 118, 125, 121))
	paths, err := store.Promote(r, Meta{Commit: "0123456789abcdef0123", Date: started})
	require.NoError(t, err)
	assert.Equal(t, []string{store.Path("chat-c8"), store.Path("batch")}, paths)

	for i, name := range []string{"chat-c8", "batch"} {
		got, err := store.Load(name)
		require.NoError(t, err, name)
		want := *r
		want.Scenarios = r.Scenarios[i : i+1]
		assert.Equal(t, &want, got)
		for _, m := range Headline {
			wantValues, err := want.Scenarios[0].Values(m)
			require.NoError(t, err)
			gotValues, err := got.Scenarios[0].Values(m)
			require.NoError(t, err)
			assert.Equal(t, wantValues, gotValues, "%s %s", name, m)
		}
	}

	entries, err := store.History()
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.Equal(t, "chat-c8", entries[0].Scenario)
	assert.Equal(t, "0123456789abcdef0123", entries[0].Commit)
	assert.True(t, started.Equal(entries[0].Date))
	assert.Equal(t, r.Identity.Digest(), entries[0].Identity)
	assert.Equal(t, Summary{Median: 60, N: 3}, entries[0].Metrics["ttft.p99"])
	assert.Equal(t, "batch", entries[1].Scenario)
	assert.Equal(t, 4, entries[1].Repetitions)

	list, err := store.List()
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "batch", list[0].Scenarios[0].Name)
	assert.Equal(t, "chat-c8", list[1].Scenarios[0].Name)
}

func TestPromoteTwiceAppends(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	_, err := store.Promote(testResult(scenario("a", 30, 31, 32), scenario("b", 40, 41, 42)), Meta{Commit: "one"})
	require.NoError(t, err)
	_, err = store.Promote(testResult(scenario("a", 50, 51, 52), scenario("b", 60, 61, 62)), Meta{Commit: "two"})
	require.NoError(t, err)

	data, err := os.ReadFile(store.HistoryPath())
	require.NoError(t, err)
	assert.Equal(t, 4, strings.Count(string(data), "\n"))
	entries, err := store.History()
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Scenario+"@"+e.Commit)
	}
	assert.Equal(t, []string{"a@one", "b@one", "a@two", "b@two"}, got)

	latest, err := store.Load("a")
	require.NoError(t, err)
	assert.Equal(t, 102.0, latest.Scenarios[0].Repetitions[1].TTFT.P99)
}

func TestRecordAppendsHistoryOnly(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	_, err := store.Promote(testResult(scenario("a", 30, 31, 32)), Meta{Commit: "one"})
	require.NoError(t, err)
	require.NoError(t, store.Record(testResult(scenario("a", 50, 51, 52)), Meta{Commit: "nightly"}))

	entries, err := store.History()
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.Equal(t, "nightly", entries[1].Commit)
	assert.Equal(t, []string{KindPromotion, KindRecord}, []string{entries[0].Kind, entries[1].Kind}, "a promotion and a nightly record told apart")
	assert.Equal(t, 51.0, entries[1].Metrics["ttft.p50"].Median)
	base, err := store.Load("a")
	require.NoError(t, err)
	assert.Equal(t, 31.0, base.Scenarios[0].Repetitions[1].TTFT.P50, "the baseline is unchanged")

	bad := testResult(scenario("a", 1), scenario("a", 2))
	assert.ErrorContains(t, store.Record(bad, Meta{}), "record: scenarios[1].name: scenario a appears twice")
	bad.Schema = "other"
	assert.ErrorContains(t, store.Record(bad, Meta{}), `record: schema: "other", want perfgate/result/v2`)
	entries, err = store.History()
	require.NoError(t, err)
	assert.Len(t, entries, 2, "a refused result appends nothing")
}

// TestPromoteLeavesNoTemporaryFiles: only the baselines and the history are
// left in Dir, and every file is readable by others (a temporary file is
// created 0600).
func TestPromoteLeavesNoTemporaryFiles(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	for range 2 {
		_, err := store.Promote(testResult(scenario("a", 30, 31, 32), scenario("b", 40, 41, 42)), Meta{})
		require.NoError(t, err)
	}
	ents, err := os.ReadDir(store.Dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		info, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o644), info.Mode().Perm(), e.Name())
	}
	assert.Equal(t, []string{"a.json", "b.json", "history.jsonl"}, names)
}

// TestPromoteFailureKeepsOldBaseline: when a write fails, every old baseline
// is intact, no temporary file is left and the history is unchanged.
func TestPromoteFailureKeepsOldBaseline(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	old := testResult(scenario("a", 30, 31, 32), scenario("b", 40, 41, 42))
	_, err := store.Promote(old, Meta{Commit: "old"})
	require.NoError(t, err)
	before := snapshot(t, store.Dir)

	tests := []struct {
		name  string
		failN int // fail the n-th sync (1-based)
	}{
		{"first baseline", 1},
		{"second baseline", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			syncTemp = func(f *safeio.AtomicFile) error {
				calls++
				if calls == tt.failN {
					return errors.New("disk on fire")
				}
				return f.Sync()
			}
			t.Cleanup(func() { syncTemp = (*safeio.AtomicFile).Sync })
			_, err := store.Promote(testResult(scenario("a", 90, 91, 92), scenario("b", 99, 98, 97)), Meta{Commit: "new"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "disk on fire")
			assert.Equal(t, before, snapshot(t, store.Dir))
			got, err := store.Load("a")
			require.NoError(t, err)
			assert.Equal(t, 60.0, got.Scenarios[0].Repetitions[0].TTFT.P99)
		})
	}
}

// snapshot is every file of dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(data)
	}
	return out
}

func TestPromoteDirIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "baselines")
	require.NoError(t, os.WriteFile(file, []byte("not a directory"), 0o644))
	_, err := Store{Dir: file}.Promote(testResult(scenario("a", 30, 31, 32)), Meta{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), file)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "not a directory", string(data))
}

func TestPromoteRefuses(t *testing.T) {
	wrongSchema := testResult(scenario("a", 30))
	wrongSchema.Schema = "perfgate/result/v0"
	tests := []struct {
		name string
		r    *result.Result
		want string
	}{
		{"no repetitions", testResult(scenario("a", 30), scenario("b")), "scenario b has no repetitions"},
		{"no scenarios", testResult(), "no scenarios"},
		{"path in name", testResult(scenario("../a", 30)), "cannot name a baseline file"},
		{"hidden name", testResult(scenario(".a", 30)), "cannot name a baseline file"},
		{"duplicate", testResult(scenario("a", 30), scenario("a", 31)), "scenario a appears twice"},
		{"schema", wrongSchema, `schema: "perfgate/result/v0", want perfgate/result/v2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "baselines")
			_, err := Store{Dir: dir}.Promote(tt.r, Meta{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NoDirExists(t, dir, "nothing is written")
		})
	}
}

func TestLoadMissing(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	_, err := store.Load("chat-c8")
	require.Error(t, err)
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	assert.Contains(t, err.Error(), "no baseline for scenario chat-c8")
	assert.Contains(t, err.Error(), "perfgate baseline promote RESULT")

	_, err = store.Load("../etc/passwd")
	assert.ErrorContains(t, err, "cannot name a baseline file")
}

func marshal(t *testing.T, r *result.Result) string {
	t.Helper()
	data, err := json.Marshal(r)
	require.NoError(t, err)
	return string(data)
}

func TestLoadCorrupt(t *testing.T) {
	valid := marshal(t, testResult(scenario("chat", 30, 31, 32)))
	wrongSchema := testResult(scenario("chat", 30, 31, 32))
	wrongSchema.Schema = "perfgate/result/v0"
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"empty file", "", "empty file"},
		{"truncated JSON", valid[:len(valid)/2], "unexpected end of JSON input"},
		{"not JSON", "schema: perfgate/result/v1\n", "invalid character"},
		{"wrong schema", marshal(t, wrongSchema), `schema: "perfgate/result/v0", want perfgate/result/v2 or an earlier version (perfgate/result/v1)`},
		{"another scenario", marshal(t, testResult(scenario("other", 30, 31))), "holds scenario other, not chat"},
		{"no repetitions", marshal(t, testResult(scenario("chat"))), "scenario chat has no repetitions"},
		{"no scenarios", marshal(t, testResult()), "no scenarios"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := Store{Dir: t.TempDir()}
			require.NoError(t, os.WriteFile(store.Path("chat"), []byte(tt.content), 0o644))
			_, err := store.Load("chat")
			require.Error(t, err)
			assert.Contains(t, err.Error(), store.Path("chat"), "the error names the file")
			assert.Contains(t, err.Error(), tt.want)
			assert.False(t, errors.Is(err, fs.ErrNotExist), "a corrupt baseline is not a missing one")

			_, err = store.List()
			require.Error(t, err)
			assert.Contains(t, err.Error(), store.Path("chat"))
		})
	}
}

func TestLoadKeepsTheNamedScenario(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	require.NoError(t, result.Write(store.Path("b"), testResult(scenario("a", 10), scenario("b", 20))))
	got, err := store.Load("b")
	require.NoError(t, err)
	require.Len(t, got.Scenarios, 1)
	assert.Equal(t, "b", got.Scenarios[0].Name)
}

func TestList(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	_, err := store.Promote(testResult(scenario("a-b", 30, 31, 32), scenario("a", 40, 41, 42)), Meta{})
	require.NoError(t, err)
	// Neither a temporary file, nor another file, nor a directory is a baseline.
	require.NoError(t, os.WriteFile(filepath.Join(store.Dir, ".a.json.tmp-123"), []byte("{"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(store.Dir, "README.md"), []byte("baselines"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(store.Dir, "old.json"), 0o755))

	list, err := store.List()
	require.NoError(t, err)
	var names []string
	for _, r := range list {
		names = append(names, r.Scenarios[0].Name)
	}
	assert.Equal(t, []string{"a", "a-b"}, names, "sorted by scenario")

	list, err = Store{Dir: filepath.Join(store.Dir, "missing")}.List()
	require.NoError(t, err)
	assert.Empty(t, list)
}

func TestHistory(t *testing.T) {
	line := `{"scenario":"a","date":"2025-03-01T12:00:00Z","identity":"sha256:00","repetitions":3,"metrics":{"ttft.p99":{"median":60,"n":3}}}`
	tests := []struct {
		name    string
		content string
		want    int
		err     string
	}{
		{"one line", line + "\n", 1, ""},
		{"no final newline", line + "\n" + line, 2, ""},
		{"blank lines", "\n" + line + "\n\n" + line + "\n", 2, ""},
		{"bad JSON", line + "\n{\"scenario\":\n", 0, "history.jsonl:2:13: invalid JSON: unexpected end of JSON input"},
		{"not an object", line + "\n" + line + "\n[1,2]\n", 0, "history.jsonl:3:1: want an object, got an array"},
		{"no scenario", `{"date":"2025-03-01T12:00:00Z"}` + "\n", 0, "history.jsonl:1: scenario: missing: every entry names its scenario"},
		{"bad date", `{"scenario":"a","date":"yesterday"}` + "\n", 0, `history.jsonl:1:1: want a time such as 2026-01-02T15:04:05Z, got "yesterday"`},
		{"count as a string", `{"scenario":"a","repetitions":"3"}` + "\n", 0, "history.jsonl:1:31: repetitions: want an integer in range, got a string"},
		{"negative median", `{"scenario":"a","metrics":{"ttft.p99":{"median":-60,"n":3}}}` + "\n", 0, "history.jsonl:1: metrics.ttft.p99.median: want a number >= 0, got -60"},
		{"median outside its interval", `{"scenario":"a","metrics":{"ttft.p99":{"median":60,"lo":70,"hi":80,"n":6}}}` + "\n", 0, "history.jsonl:1: metrics.ttft.p99: the interval [70, 80] does not hold the median 60"},
		{"byte-order mark", "\xef\xbb\xbf" + line + "\n", 1, ""},
		{"an entry from before kinds", strings.Replace(line, `"repetitions"`, `"kind":"record","repetitions"`, 1) + "\n" + line + "\n", 2, ""},
		{"a run that is no https link", `{"scenario":"a","run":"javascript:alert(1)"}` + "\n", 0, `history.jsonl:1: run: want the workflow run's https URL, got "javascript:alert(1)"`},
		{"an error rate over 1", `{"scenario":"a","metrics":{"error_rate":{"median":1e307,"n":3}}}` + "\n", 0, "history.jsonl:1: metrics.error_rate.median: want a share from 0 to 1, got 1e+307"},
		{"a negative pull request", `{"scenario":"a","pr":-4}` + "\n", 0, "history.jsonl:1: pr: want a pull request number, got -4"},
		{"unknown kind", `{"scenario":"a","kind":"nightly\n::error::x"}` + "\n", 0, `history.jsonl:1: kind: want promotion or record, got "nightly ::error::x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := Store{Dir: t.TempDir()}
			require.NoError(t, os.WriteFile(store.HistoryPath(), []byte(tt.content), 0o644))
			entries, err := store.History()
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), store.Dir+string(filepath.Separator)+tt.err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, entries, tt.want)
		})
	}

	entries, err := Store{Dir: t.TempDir()}.History()
	require.NoError(t, err)
	assert.Empty(t, entries, "a missing history is an empty one")
}

// TestHistoryAfterTornLine: a promotion after a torn line (no final newline)
// starts on a line of its own, so only the torn line is bad.
func TestHistoryAfterTornLine(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	require.NoError(t, os.WriteFile(store.HistoryPath(), []byte(`{"scenario":"a","da`), 0o644))
	_, err := store.Promote(testResult(scenario("a", 30, 31, 32)), Meta{})
	require.NoError(t, err)
	_, err = store.History()
	assert.ErrorContains(t, err, "history.jsonl:1:20: invalid JSON: unexpected end of JSON input")
	data, err := os.ReadFile(store.HistoryPath())
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 2)
	var e Entry
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &e))
	assert.Equal(t, "a", e.Scenario)
}

func TestNewEntry(t *testing.T) {
	t.Run("few repetitions: no interval", func(t *testing.T) {
		r := testResult(scenario("a", 30, 32, 31))
		e, err := NewEntry(r, &r.Scenarios[0], Meta{Commit: "abc"})
		require.NoError(t, err)
		assert.True(t, r.FinishedAt.Equal(e.Date), "a zero date is the result's finish time")
		assert.Equal(t, Headline, sortedKeys(e.Metrics))
		assert.Equal(t, Summary{Median: 62, N: 3}, e.Metrics["ttft.p99"])
		assert.Equal(t, Summary{Median: 0.01, N: 3}, e.Metrics["error_rate"])
		assert.Equal(t, Summary{Median: 1610, N: 3}, e.Metrics["output_throughput"])
		data, err := json.Marshal(e)
		require.NoError(t, err)
		assert.NotContains(t, string(data), `"lo"`)
		assert.Contains(t, string(data), `"engine":"vllm","engine_version":"0.6.3","model":"llama-3-8b"`)
	})
	t.Run("enough repetitions: interval", func(t *testing.T) {
		r := testResult(scenario("a", 30, 32, 31, 35, 29, 33, 34, 30))
		e, err := NewEntry(r, &r.Scenarios[0], Meta{Date: started})
		require.NoError(t, err)
		s := e.Metrics["ttft.p50"]
		require.NotNil(t, s.Lo)
		require.NotNil(t, s.Hi)
		assert.Equal(t, 31.5, s.Median)
		assert.LessOrEqual(t, *s.Lo, s.Median)
		assert.GreaterOrEqual(t, *s.Hi, s.Median)
		assert.Equal(t, 8, s.N)
		data, err := json.Marshal(e)
		require.NoError(t, err)
		var back Entry
		require.NoError(t, json.Unmarshal(data, &back))
		assert.Equal(t, *s.Lo, *back.Metrics["ttft.p50"].Lo)
	})
	t.Run("no repetitions", func(t *testing.T) {
		r := testResult(scenario("a"))
		_, err := NewEntry(r, &r.Scenarios[0], Meta{})
		assert.ErrorContains(t, err, "scenario a has no repetitions")
	})
}

func sortedKeys(m map[string]Summary) []string {
	var out []string
	for _, name := range Headline {
		if _, ok := m[name]; ok {
			out = append(out, name)
		}
	}
	if len(out) != len(m) {
		return nil
	}
	return out
}

// A history append whose sync fails (a full disk) is undone: history.jsonl
// is cut back to what it held, never left with part of a line.
func TestRecordFailureLeavesTheOldHistory(t *testing.T) {
	store := Store{Dir: t.TempDir()}
	require.NoError(t, store.Record(testResult(scenario("a", 30, 31, 32)), Meta{Commit: "one"}))
	before, err := os.ReadFile(store.HistoryPath())
	require.NoError(t, err)

	fsync = func(*os.File) error { return errors.New("no space left on device") }
	t.Cleanup(func() { fsync = (*os.File).Sync })
	err = store.Record(testResult(scenario("a", 50, 51, 52)), Meta{Commit: "two"})
	require.ErrorContains(t, err, "no space left on device")

	after, err := os.ReadFile(store.HistoryPath())
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "history.jsonl after a failed append")
}
