package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/result/resulttest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func stats(base float64) result.Stats { return resulttest.Stats(base) }

func rep(i int, ttft float64) result.Repetition { return resulttest.Rep(i, ttft) }

func TestSummaryGolden(t *testing.T) {
	// The closed-loop scenario has prefill and decode throughput; the
	// open-loop one, like a result of a perfgate before them, has not.
	closed := []result.Repetition{rep(1, 30), rep(2, 34), rep(3, 31)}
	for i := range closed {
		closed[i].PrefillThroughput = new(9000 + 100*float64(i))
		closed[i].DecodeThroughput = new(71.5 - float64(i))
	}
	open := rep(1, 40)
	open.Failed, open.Completed = 3, 97
	open.Errors = map[string]int{"http": 2, "timeout": 1}
	open.UsageRefused, open.Retries = 2, 1
	open.Schedule = &result.ScheduleStats{OfferedRate: 8, ScheduledRate: 8, AchievedRate: 6.5, SendLag: stats(30), Achieved: false,
		TTFTFromSchedule: stats(70), E2EFromSchedule: stats(2530)}
	r := &result.Result{
		Schema: result.Schema,
		Identity: result.Identity{PerfgateVersion: "v0.1.0", Simulated: true,
			Target: result.Target{BaseURL: "http://127.0.0.1:8000", API: "chat", Model: "perfgate-sim-8b"},
			Server: result.Server{Engine: "perfgate-sim", Version: "v0.1.0\x1b[31m"}},
		Scenarios: []result.ScenarioResult{
			{Name: "chat-c8", Workload: "workloads/chat.jsonl", WorkloadHash: "sha256:0123456789abcdef0123",
				Load: result.Load{Type: config.LoadClosed, Concurrency: 8}, SLO: result.SLO{TTFT: 500},
				ColdStartMS: 3238.6,
				Warmup:      &result.Warmup{Method: "windows", Duration: 26.04, Requests: 412, Steady: true},
				Repetitions: closed},
			{Name: "bursty", Workload: "synth", WorkloadHash: "sha256:fedcba",
				Load:        result.Load{Type: config.LoadGamma, Rate: 8, Burstiness: 0.5, MaxInFlight: 16},
				Warmup:      &result.Warmup{Method: "mser5", Duration: 300, Requests: 1, Steady: false},
				Salt:        result.SaltOff,
				Repetitions: []result.Repetition{open}},
		},
	}
	var buf bytes.Buffer
	if err := Summary(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.golden", buf.Bytes())
	if bytes.Contains(buf.Bytes(), []byte("\x1b")) {
		t.Errorf("summary passes a terminal escape from the server through")
	}
}

// An A/B arm's summary names the arm and the round in its notes ("the
// candidate arm, round 3: ...", not "repetition 3", which reads as a
// run's), and counts its warm-ups over the rounds; Notes gives the other
// arm's notes, each led by its scenario.
func TestSummaryOfAnABArm(t *testing.T) {
	retried := rep(3, 30)
	retried.Retries = 1
	drain := result.Seconds(0.5)
	arm := func(name string) *result.Result {
		return &result.Result{Schema: result.Schema, AB: &result.ABArm{Arm: name, Mode: config.ABCoResident, First: []bool{true, false, true}},
			Scenarios: []result.ScenarioResult{{Name: "chat", Load: result.Load{Type: config.LoadClosed, Concurrency: 4},
				Warmup: &result.Warmup{Method: "windows", Duration: 20, Requests: 300, Steady: true, Drain: &drain},
				Warmups: []result.RoundWarmup{
					{Round: 1, Kind: result.WarmupFull, Warmup: &result.Warmup{Method: "windows", Duration: 20, Requests: 300, Steady: true, Drain: &drain}},
					{Round: 2, Kind: result.WarmupShort, Warmup: &result.Warmup{Method: result.WarmupShort, Duration: 5, Requests: 40, Drain: &drain}},
					{Round: 3, Kind: result.WarmupShort, Warmup: &result.Warmup{Method: result.WarmupShort, Duration: 5, Requests: 41, Drain: &drain}},
				},
				Repetitions: []result.Repetition{rep(1, 30), rep(2, 31), retried}}}}
	}
	var buf bytes.Buffer
	if err := Summary(&buf, arm("candidate")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"note: the candidate arm, round 3: 1 request sent again on a new connection",
		"3 warm-ups over the rounds: 1 full, 2 short; 31.5 s in all, drains included",
	} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}
	if bytes.Contains(buf.Bytes(), []byte("repetition 3:")) {
		t.Errorf("an A/B arm's note says repetition:\n%s", buf.String())
	}
	buf.Reset()
	Notes(&buf, arm("base"))
	if got, want := buf.String(), "note: chat, the base arm, round 3: 1 request sent again on a new connection, because the server had closed the reused one before answering (not errors; latency is the retry's)\n"; got != want {
		t.Errorf("Notes = %q, want %q", got, want)
	}
}

// A scenario whose repetitions kept subsets shows them side by side, each
// row the medians of the repetitions that had it; one that kept none
// shows no table.
func TestSummarySubsetTable(t *testing.T) {
	rep := func(index int, structGap int64) result.Repetition {
		a := result.NewAggregator(result.SLO{}, false, 0).WithSubsets(true, true)
		for k := range 20 {
			ms := int64(time.Millisecond)
			r := &result.Record{FirstTokenNS: 10 * ms, OutputTokens: 5, TokensFrom: "usage", Structured: k%2 == 0}
			gap := int64(4)
			if r.Structured {
				gap = structGap
			}
			r.EndNS = r.FirstTokenNS + 4*gap*ms
			if k%4 == 1 {
				r.Model = "sql-lora"
			}
			a.Add(r)
		}
		return a.Summary(index)
	}
	var buf bytes.Buffer
	require.NoError(t, subsetTable(&buf, []result.Repetition{rep(1, 6), rep(2, 8), rep(3, 10)}))
	golden(t, "summary-subsets.txt", buf.Bytes())

	buf.Reset()
	require.NoError(t, subsetTable(&buf, []result.Repetition{{Index: 1}}))
	assert.Empty(t, buf.String())
}
