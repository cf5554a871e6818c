package result

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const ms = int64(time.Millisecond)

// rec builds a successful record sent at sent ms with a first token at
// sent+ttft ms, out tokens evenly spaced by gap ms.
func rec(sent, ttft, gap int64, out int) *Record {
	r := &Record{SentNS: sent * ms, ScheduledNS: sent * ms, FirstTokenNS: (sent + ttft) * ms,
		OutputTokens: out, PromptTokens: 10, TokensFrom: "usage"}
	r.EndNS = r.FirstTokenNS + int64(out-1)*gap*ms
	for range out - 1 {
		r.ITLUS = append(r.ITLUS, gap*1000)
	}
	return r
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestAggregatorSummary(t *testing.T) {
	a := NewAggregator(SLO{TTFT: 50}, false, 0)
	// 100 requests: TTFT 1..100 ms, 11 tokens 10 ms apart.
	for i := int64(1); i <= 100; i++ {
		a.Add(rec(0, i, 10, 11))
	}
	a.Add(&Record{SentNS: 0, EndNS: 5 * ms, ErrorKind: "http", Error: "http 500"})
	a.Add(&Record{SentNS: 0, EndNS: 5 * ms, ErrorKind: "timeout", Error: "timeout"})
	s := a.Summary(3)

	if s.Index != 3 || s.Sent != 102 || s.Completed != 100 || s.Failed != 2 {
		t.Errorf("counts = index %d sent %d completed %d failed %d, want 3 102 100 2", s.Index, s.Sent, s.Completed, s.Failed)
	}
	if s.Errors["http"] != 1 || s.Errors["timeout"] != 1 || !near(s.ErrorRate, 2.0/102, 1e-9) {
		t.Errorf("errors = %v rate %v", s.Errors, s.ErrorRate)
	}
	// HDR at 3 significant digits: within 0.1%.
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"TTFT p50", s.TTFT.P50, 50}, {"TTFT p99", s.TTFT.P99, 99}, {"TTFT max", s.TTFT.Max, 100},
		{"TTFT mean", s.TTFT.Mean, 50.5}, {"ITL p50", s.ITL.P50, 10}, {"TPOT p99", s.TPOT.P99, 10},
		{"E2E max", s.E2E.Max, 200},
	} {
		if !near(c.got, c.want, c.want*0.002) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.ITL.Count != 1000 || s.TTFT.Count != 100 {
		t.Errorf("ITL count %d TTFT count %d, want 1000 and 100", s.ITL.Count, s.TTFT.Count)
	}
	// Window: the last end, 100 + 10×10 = 200 ms.
	if !near(float64(s.Duration), 0.2, 1e-9) {
		t.Errorf("duration = %v s, want 0.2", s.Duration)
	}
	if !near(s.RequestThroughput, 500, 1e-6) || !near(s.OutputThroughput, 5500, 1e-6) || !near(s.InputThroughput, 5000, 1e-6) {
		t.Errorf("throughput req %v out %v in %v, want 500 5500 5000", s.RequestThroughput, s.OutputThroughput, s.InputThroughput)
	}
	// 50 requests met TTFT <= 50 ms.
	if s.GoodRequests != 50 || !near(s.Goodput, 250, 1e-6) {
		t.Errorf("good %d goodput %v, want 50 and 250", s.GoodRequests, s.Goodput)
	}
	if s.TokensFrom != "usage" {
		t.Errorf("tokens from %q, want usage", s.TokensFrom)
	}
	if s.Schedule != nil {
		t.Errorf("closed loop has schedule stats")
	}
	for _, h := range []string{HistTTFT, HistITL, HistTPOT, HistE2E} {
		if len(s.Histograms[h]) == 0 {
			t.Errorf("histogram %s not encoded", h)
		}
	}
}

func TestAggregatorTokensFrom(t *testing.T) {
	for _, tt := range []struct {
		from []string
		want string
	}{{[]string{"usage", "usage"}, "usage"}, {[]string{"chunks"}, "chunks"}, {[]string{"usage", "chunks"}, "mixed"}} {
		a := NewAggregator(SLO{}, false, 0)
		for _, f := range tt.from {
			r := rec(0, 5, 1, 3)
			r.TokensFrom = f
			a.Add(r)
		}
		if got := a.Summary(1).TokensFrom; got != tt.want {
			t.Errorf("tokens from %v = %q, want %q", tt.from, got, tt.want)
		}
	}
}

func TestAggregatorSchedule(t *testing.T) {
	// Scheduled every 10 ms; the first 90 sent on time, the last 10 sent 50 ms late.
	a := NewAggregator(SLO{}, true, 100)
	for i := int64(0); i < 100; i++ {
		r := rec(i*10, 5, 1, 2)
		if i >= 90 {
			r.SentNS += 50 * ms
			r.FirstTokenNS += 50 * ms
			r.EndNS += 50 * ms
		}
		a.Add(r)
	}
	s := a.Summary(1).Schedule
	if s == nil {
		t.Fatal("open loop has no schedule stats")
	}
	if !near(s.ScheduledRate, 100, 1e-6) || s.OfferedRate != 100 {
		t.Errorf("scheduled rate %v offered %v, want 100 and 100", s.ScheduledRate, s.OfferedRate)
	}
	if s.Achieved {
		t.Errorf("p99 send lag %v ms: want not achieved", s.SendLag.P99)
	}
	if !near(s.TTFTFromSchedule.Max, 55, 0.1) {
		t.Errorf("TTFT from schedule max = %v, want 55 (5 + 50 lag)", s.TTFTFromSchedule.Max)
	}
}

func TestTPOT(t *testing.T) {
	r := rec(0, 10, 5, 5) // 4 gaps of 5 ms after the first token
	if got, ok := TPOT(r); !ok || got != 5*time.Millisecond {
		t.Errorf("TPOT = %v, %v; want 5ms, true", got, ok)
	}
	if _, ok := TPOT(rec(0, 10, 5, 1)); ok {
		t.Errorf("TPOT defined for a single output token")
	}
}

func TestWriteRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	a := NewAggregator(SLO{}, false, 0)
	a.Add(rec(0, 5, 1, 3))
	in := &Result{Schema: Schema, Scenarios: []ScenarioResult{{Name: "s", Repetitions: []Repetition{a.Summary(1)}}}}
	if err := Write(p, in); err != nil {
		t.Fatal(err)
	}
	out, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Scenarios[0].Repetitions[0].TTFT, in.Scenarios[0].Repetitions[0].TTFT) {
		t.Errorf("round trip changed TTFT stats")
	}
	in.Schema = "perfgate/result/v0"
	if err := Write(p, in); err == nil {
		t.Errorf("Write wrote schema v0")
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p); err == nil {
		t.Errorf("Read accepted schema v0")
	}
}

// A figure that cannot be true is perfgate's own bug: Write refuses it
// rather than let it become a baseline, and leaves the file as it was.
func TestWriteRefusesImpossibleFigures(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	a := NewAggregator(SLO{}, false, 0)
	a.Add(rec(0, 5, 1, 3))
	rep := a.Summary(1)
	rep.OutputThroughput = -1.5e19
	in := &Result{Schema: Schema, Scenarios: []ScenarioResult{{Name: "s", Repetitions: []Repetition{rep}}}}
	err := Write(p, in)
	if err == nil || !strings.Contains(err.Error(), "output_throughput") || !strings.Contains(err.Error(), "cannot be true") {
		t.Errorf("Write(negative throughput) = %v", err)
	}
	if _, statErr := os.Stat(p); !os.IsNotExist(statErr) {
		t.Errorf("Write left a file behind: %v", statErr)
	}
}

// An SLO in milliseconds holds exactly the nanoseconds the config wrote: a
// TTFT of 4.1 ms (4.1 × 10⁶ is 4099999.9999999995 in floating point) meets
// an SLO of 4.1 ms, and a nanosecond more does not.
func TestAggregatorSLOIsExact(t *testing.T) {
	for _, tc := range []struct {
		ttftNS int64
		good   int
	}{{4_100_000, 1}, {4_100_001, 0}} {
		a := NewAggregator(SLO{TTFT: 4.1}, false, 0)
		r := &Record{SentNS: 0, FirstTokenNS: tc.ttftNS, EndNS: tc.ttftNS + ms, OutputTokens: 2, TokensFrom: "usage"}
		a.Add(r)
		if got := a.Summary(1).GoodRequests; got != tc.good {
			t.Errorf("GoodRequests with a TTFT of %d ns against an SLO of 4.1 ms = %d, want %d", tc.ttftNS, got, tc.good)
		}
	}
}

// Prefill and decode throughput are ratios of sums over the completed
// requests: prompt tokens over TTFT, output tokens after the first over the
// time after it. A failed request, and one with no first token, count in
// neither; one with a single token counts in prefill only.
func TestPrefillAndDecodeThroughput(t *testing.T) {
	ms := int64(time.Millisecond)
	a := NewAggregator(SLO{}, false, 0)
	// 100 prompt tokens, first token at 100 ms, 11 tokens ending at 300 ms.
	a.Add(&Record{PromptTokens: 100, OutputTokens: 11, SentNS: 0, FirstTokenNS: 100 * ms, EndNS: 300 * ms})
	// 300 prompt tokens, first token at 200 ms (after 100 ms), 21 tokens ending at 500 ms.
	a.Add(&Record{PromptTokens: 300, OutputTokens: 21, SentNS: 100 * ms, FirstTokenNS: 200 * ms, EndNS: 500 * ms})
	// One token only: prefill, no decode.
	a.Add(&Record{PromptTokens: 200, OutputTokens: 1, SentNS: 0, FirstTokenNS: 200 * ms, EndNS: 200 * ms})
	// Failed: neither.
	a.Add(&Record{PromptTokens: 999, OutputTokens: 0, SentNS: 0, EndNS: 50 * ms, Error: "boom", ErrorKind: "http"})
	rep := a.Summary(1)
	if rep.PrefillThroughput == nil || rep.DecodeThroughput == nil {
		t.Fatalf("PrefillThroughput %v, DecodeThroughput %v: want both set", rep.PrefillThroughput, rep.DecodeThroughput)
	}
	// (100+300+200) tokens over (0.1+0.1+0.2) s; (10+20) tokens over (0.2+0.3) s.
	if got, want := *rep.PrefillThroughput, 600/0.4; math.Abs(got-want) > 1e-9 {
		t.Errorf("PrefillThroughput = %v, want %v", got, want)
	}
	if got, want := *rep.DecodeThroughput, 30/0.5; math.Abs(got-want) > 1e-9 {
		t.Errorf("DecodeThroughput = %v, want %v", got, want)
	}

	empty := NewAggregator(SLO{}, false, 0)
	empty.Add(&Record{PromptTokens: 5, SentNS: 0, EndNS: ms, Error: "refused", ErrorKind: "connect"})
	if rep := empty.Summary(1); rep.PrefillThroughput != nil || rep.DecodeThroughput != nil {
		t.Errorf("with no completed request: PrefillThroughput %v, DecodeThroughput %v, want nil (not measured, not 0)", rep.PrefillThroughput, rep.DecodeThroughput)
	}
}

// BenchmarkAggregatorAdd is the cost of folding one record of 101 tokens:
// into the whole only, and with kind and model subsets measured too.
func BenchmarkAggregatorAdd(b *testing.B) {
	for _, c := range []struct {
		name          string
		kinds, models bool
	}{{"whole", false, false}, {"subsets", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			r := rec(0, 30, 10, 101)
			r.Model = "sql"
			a := NewAggregator(SLO{}, false, 0).WithSubsets(c.kinds, c.models)
			for range b.N {
				a.Add(r)
			}
		})
	}
}
