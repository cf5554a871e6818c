package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
)

// faultResult is a result of scenario chat-c16 at a steady rate whose
// second replica of two was killed 30 s into each repetition: back after
// back seconds (0: not within the repetition), recovered in seconds.
func faultResult(back []float64, seconds ...float64) *result.Result {
	var reps []result.Repetition
	for i, sec := range seconds {
		r := rep(i+1, 900)
		r.Failed = 40 + i
		r.Recovery = &result.Recovery{StepS: 30, WindowS: 5, Recovered: sec < 60, Seconds: sec, Breaches: int(10 * sec), BeforeP95MS: 95, PeakP95MS: 60 * sec}
		r.Fault = &result.Fault{Kill: "replica", Replica: 2, Replicas: 2, AtS: 30, KilledS: 30.001, Restarted: true,
			Errors: 40 + i, BeforeRPS: new(9.8), DuringRPS: new(6.1 + float64(i)/10)}
		if back[i] > 0 {
			r.Fault.BackS = new(30.001 + back[i])
		}
		reps = append(reps, r)
	}
	return &result.Result{Schema: result.Schema,
		Identity: result.Identity{PerfgateVersion: "v0.1.0", Simulated: true,
			Target: result.Target{BaseURL: "http://127.0.0.1:8001", API: "chat", Model: "m"}},
		Scenarios: []result.ScenarioResult{{Name: "chat-c16", Workload: "synth", WorkloadHash: "sha256:abc", Repetitions: reps,
			Load: result.Load{Type: "poisson", Rate: 10, RecoveryWindow: 5 * time.Second}, SLO: result.SLO{TTFT: 500}}}}
}

// The run summary names the fault in the scenario's title and adds its
// rows; a replica not back within a repetition is left out of its row.
func TestSummaryOfAFault(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, Summary(&buf, faultResult([]float64{12, 0, 14}, 20, 70, 22)))
	golden(t, "summary-fault.golden", buf.Bytes())
	out := buf.String()
	assert.Contains(t, out, "poisson 10 req/s · replica 2 of 2 killed at 30s")
	assert.Contains(t, out, "NOT RECOVERED in repetition 2")
	assert.Regexp(t, `errors from the fault on\s+41\s+40\s+42`, out)
	assert.Regexp(t, `replica back after \(s\)\s+13\.0\s+12\.0\s+14\.0`, out, "the median of the two back")
	assert.NotContains(t, out, "OVER THE SLO BEFORE", "TTFT p95 was 95 ms before the fault, within 500 ms")

	loaded := faultResult([]float64{12, 12}, 20, 20)
	loaded.Scenarios[0].Repetitions[1].Recovery.BeforeP95MS = 900
	buf.Reset()
	require.NoError(t, Summary(&buf, loaded))
	assert.Contains(t, buf.String(), "OVER THE SLO BEFORE THE FAULT in repetition 2: TTFT p95 was past slo.ttft (500 ms) already")
}

// The reports show a fault's recovery and its own figures in a fold named
// for it.
func TestReplicaLossReport(t *testing.T) {
	d, err := reportfile.New(passVerdict(), []*result.Result{faultResult([]float64{12, 13, 12}, 20, 21, 22)}, faultResult([]float64{30, 0, 31}, 40, 70, 41), nil)
	require.NoError(t, err)
	d.Key = "perfgate.yaml"
	var text, md bytes.Buffer
	require.NoError(t, emitText(&text, []*reportfile.Document{d}))
	require.NoError(t, emitMarkdown(&md, []*reportfile.Document{d}, MarkdownOptions{}))
	golden(t, "fault.txt", text.Bytes())
	golden(t, "fault.md", md.Bytes())
	assert.Contains(t, text.String(), "replica loss and recovery (median of repetitions)")
	assert.Equal(t, 1, strings.Count(md.String(), "<details><summary>Replica loss and recovery</summary>"))
	assert.Contains(t, md.String(), "TTFT p95 before the fault")
	htmlHas(t, renderHTML(t, d), "<h4>Replica loss and recovery</h4>")
}

// A kubernetes stack's run summary says what the cluster said of it.
func TestSummaryOfAKubernetesStack(t *testing.T) {
	r := faultResult([]float64{12}, 20)
	r.Scenarios[0].Repetitions[0].Fault = nil
	r.Identity.Stack = result.Stack{Kind: "kubernetes", Namespace: "perfgate-1a2b-1", Replicas: 2, PodStartsS: []float64{41, 63},
		GPUs: 2, GPUProducts: []string{"NVIDIA-H100-80GB-HBM3"}, Images: []string{"vllm/vllm-openai@sha256:abc"}}
	var buf bytes.Buffer
	require.NoError(t, Summary(&buf, r))
	assert.Contains(t, buf.String(), "kubernetes namespace perfgate-1a2b-1 · 2 pods ready (scheduled to ready: 41 s, 63 s) · 2 GPUs NVIDIA-H100-80GB-HBM3\n")
	assert.NotContains(t, buf.String(), "ready replicas", "no counts, no rows")

	// The ready pods over each repetition: an autoscaler's third pod,
	// then a pod lost.
	r = faultResult([]float64{12, 12}, 20, 20)
	r.Scenarios[0].Repetitions[0].Replicas = []result.ReadyReplicas{{AtS: 0, Ready: 2}, {AtS: 41, Ready: 3}}
	r.Scenarios[0].Repetitions[1].Replicas = []result.ReadyReplicas{{AtS: 0, Ready: 3}, {AtS: 30, Ready: 2}, {AtS: 42, Ready: 3}}
	buf.Reset()
	require.NoError(t, Summary(&buf, r))
	assert.Regexp(t, `ready replicas at start\s+\d\s+2\s+3\n`, buf.String())
	assert.Regexp(t, `ready replicas, fewest\s+2\s+2\s+2\n`, buf.String())
	assert.Regexp(t, `ready replicas, most\s+3\s+3\s+3\n`, buf.String())
}
