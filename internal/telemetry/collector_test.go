package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// fakeGPU is a GPU source whose n-th sample draws powers[n] watts and that
// reports each sample on sampled.
type fakeGPU struct {
	mu      sync.Mutex
	n       int
	powers  []float64
	fail    bool
	sampled chan int
	closed  bool
}

func (f *fakeGPU) Kind() string     { return config.GPUNvidiaSMI }
func (f *fakeGPU) Describe() string { return "fake" }
func (f *fakeGPU) Close() error     { f.closed = true; return nil }
func (f *fakeGPU) Devices(context.Context) ([]result.GPU, error) {
	return []result.GPU{{Index: 0, Model: "Fake"}, {Index: 1, Model: "Fake"}}, nil
}

func (f *fakeGPU) Sample(context.Context) ([]GPUSample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.n
	f.n++
	defer func() { f.sampled <- n }()
	if f.fail {
		return nil, errors.New("driver went away")
	}
	p := f.powers[min(n, len(f.powers)-1)]
	return []GPUSample{{Index: 0, MemoryUsedMiB: 1000 + float64(n), MemoryTotalMiB: 80000, UtilizationPct: 50, PowerW: &p}}, nil
}

// countingPage serves a vLLM page whose waiting gauge is the scrape's number and
// whose preemption counter grows by 2 a scrape.
func countingPage(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting %d\n"+
			"# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total %d\n", k, 2*k)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

// manualTicks hands the collector tick channels that the test fires.
type manualTicks struct {
	mu    sync.Mutex
	chans []chan time.Time
}

func (m *manualTicks) make(time.Duration) (<-chan time.Time, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := make(chan time.Time)
	m.chans = append(m.chans, c)
	return c, func() {}
}

// A window samples each source at its start, at every tick and once more
// at its end, and folds the samples into the repetition.
func TestCollectorWindow(t *testing.T) {
	page, scrapes := countingPage(t)
	gpu := &fakeGPU{powers: []float64{100, 200, 300}, sampled: make(chan int, 10)}
	c, info, gpus := Open(t.Context(), Options{
		MetricsURL: page.URL + "/metrics", Interval: 500 * time.Millisecond,
		GPU: GPUOptions{Mode: config.GPUNVML, OpenNVML: func() (GPUSource, error) { return gpu, nil }},
	})
	require.True(t, info.Engine.Available(), info.Engine.Unavailable)
	assert.Equal(t, "vllm "+page.URL+"/metrics", info.Engine.Source)
	assert.Equal(t, "fake", info.GPU.Source)
	assert.Len(t, gpus, 2)
	assert.Equal(t, int64(1), scrapes.Load(), "Open reads the page once to learn its dialect")

	// A clock that moves one second per reading, so sample times are known.
	var clock atomic.Int64
	base := time.Unix(1000, 0)
	c.Now = func() time.Time { return base.Add(time.Duration(clock.Add(1)-1) * time.Second) }
	ticks := &manualTicks{}
	c.Ticks = ticks.make

	end := c.Begin(t.Context())
	require.Equal(t, 0, <-gpu.sampled, "a sample at the window's start")
	// Wait for both loops to hold their tickers, then tick the GPU loop once.
	require.Eventually(t, func() bool { ticks.mu.Lock(); defer ticks.mu.Unlock(); return len(ticks.chans) == 2 }, 5*time.Second, time.Millisecond)
	for _, ch := range ticks.chans {
		ch <- time.Time{}
	}
	require.Equal(t, 1, <-gpu.sampled)

	rep := &result.Repetition{Index: 1, Duration: 4, OutputTokens: 800, TTFT: result.Stats{Count: 10, Mean: 50}}
	end(rep)
	require.Equal(t, 2, <-gpu.sampled, "a last sample after the window's last response")

	require.NotNil(t, rep.Engine)
	assert.Equal(t, 3, rep.Engine.Scrapes, "start, one tick, end")
	require.NotNil(t, rep.Engine.WaitingPeak)
	assert.Equal(t, float64(scrapes.Load()), *rep.Engine.WaitingPeak, "the last scrape had the most waiting")
	require.NotNil(t, rep.Engine.Preemptions)
	assert.Equal(t, 4.0, *rep.Engine.Preemptions, "the counter grew by 2 a scrape over 3 scrapes")

	require.NotNil(t, rep.GPU)
	assert.Equal(t, 3, rep.GPU.Samples)
	assert.Equal(t, 1002.0, rep.GPU.MemoryPeakMiB)
	require.NotNil(t, rep.GPU.PowerMeanW)
	// Samples at 100, 200, 300 W, evenly spaced: trapezoid mean 200 W;
	// over the 4 s window, 800 J, 1 J a token.
	assert.InDelta(t, 200, *rep.GPU.PowerMeanW, 1e-9)
	assert.InDelta(t, 1.0, *rep.GPU.EnergyPerToken, 1e-9)

	require.NoError(t, c.Close())
	assert.True(t, gpu.closed)
}

// A failed repetition's window stops without touching anything; a source
// failing mid-run is reported once, and its samples skipped.
func TestCollectorFailures(t *testing.T) {
	gpu := &fakeGPU{powers: []float64{100}, sampled: make(chan int, 10), fail: true}
	c, info, _ := Open(t.Context(), Options{
		Interval: time.Second,
		GPU:      GPUOptions{Mode: config.GPUNVML, OpenNVML: func() (GPUSource, error) { return gpu, nil }},
	})
	assert.Equal(t, "off (telemetry.metrics: off)", info.Engine.Unavailable)
	var warnings []string
	c.Warn = func(msg string) { warnings = append(warnings, msg) }
	c.Ticks = (&manualTicks{}).make

	for range 2 {
		end := c.Begin(t.Context())
		<-gpu.sampled
		rep := &result.Repetition{Index: 1, Duration: 1, OutputTokens: 10}
		end(rep)
		<-gpu.sampled
		assert.Nil(t, rep.GPU, "no sample succeeded")
	}
	assert.Equal(t, []string{"GPU telemetry: driver went away (samples that fail are skipped)"}, warnings)

	end := c.Begin(t.Context())
	<-gpu.sampled
	end(nil) // a failed repetition: no last sample
	select {
	case n := <-gpu.sampled:
		t.Fatalf("sample %d taken for a discarded repetition", n)
	default:
	}
}

// With nothing to read, Begin costs nothing and leaves the repetition alone.
func TestCollectorInactive(t *testing.T) {
	c, info, gpus := Open(t.Context(), Options{GPU: GPUOptions{Mode: config.TelemetryOff}, Interval: time.Second})
	assert.False(t, c.Active())
	assert.NotEmpty(t, info.GPU.Unavailable)
	assert.Empty(t, gpus)
	rep := &result.Repetition{}
	c.Begin(context.Background())(rep)
	assert.Nil(t, rep.Engine)
	assert.Nil(t, rep.GPU)
}

// A page that answers but speaks no engine's names is unavailable, and says so.
func TestCollectorUnknownPage(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "# TYPE go_goroutines gauge\ngo_goroutines 12")
	}))
	defer s.Close()
	_, info, _ := Open(t.Context(), Options{MetricsURL: s.URL + "/metrics", GPU: GPUOptions{Mode: config.TelemetryOff}, Interval: time.Second})
	assert.Contains(t, info.Engine.Unavailable, "has no metric perfgate knows")
}

// telemetry.devices keeps only the GPUs that serve the model in the identity.
func TestSelectDevices(t *testing.T) {
	gpus := []result.GPU{{Index: 0, Model: "A"}, {Index: 1, Model: "B"}, {Index: 2, Model: "C"}}
	assert.Equal(t, gpus, selectDevices(gpus, nil))
	assert.Equal(t, []result.GPU{{Index: 0, Model: "A"}, {Index: 2, Model: "C"}}, selectDevices(gpus, []int{2, 0}))
	assert.Empty(t, selectDevices(gpus, []int{7}))
}
