package telemetry

// Fuzz targets over everything telemetry reads from a server or a command:
// the engine's metrics page, a window of two pages, nvidia-smi's CSV and a
// DCGM exporter's page. The real pages (testdata/*.prom and the llama.cpp
// capture) are seeds under testdata/fuzz/; the f.Add seeds are the shapes
// that crashed or fooled the parsers before.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/result"
)

// hostileSeeds are pages that crashed Prometheus's text parser or carried
// figures that cannot be true.
var hostileSeeds = []string{
	"{}",
	"{}\n",
	"# TYPE x gauge\n{}\n",
	"x 1\n{} 2\n",
	"{a=\"b\"} 1\n",
	"{\"vllm:num_requests_running\",model_name=\"m\"} 4\n",
	"# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc -0.5\n" +
		"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running +Inf\n" +
		"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting NaN\n",
	"# TYPE vllm:time_to_first_token_seconds histogram\n" +
		"vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} 40\n" +
		"vllm:time_to_first_token_seconds_bucket{le=\"0.2\"} 25\n" +
		"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} -3\n" +
		"vllm:time_to_first_token_seconds_sum -5\n" +
		"vllm:time_to_first_token_seconds_count NaN\n",
	"# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total 1e308\n" +
		"# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total -1e308\n",
}

// FuzzParsePage: ParsePage never panics, and a page it reads folds into a
// window whose summary can be written.
func FuzzParsePage(f *testing.F) {
	for _, s := range hostileSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePage(bytes.NewReader(data), t0)
		if err != nil {
			if p != nil {
				t.Fatalf("ParsePage = %v and an error %v", p, err)
			}
			checkMessage(t, data, err.Error())
			return
		}
		if p.Families == nil {
			t.Fatal("ParsePage read a page with no family map")
		}
		if a, ok := Detect(p); ok {
			w := NewEngineWindow(a)
			w.Add(p)
			w.Add(p)
			checkWindow(t, data, w, 10, true)
		}
	})
}

// FuzzEngineWindow: any two pages, read by every engine's adapter, give a
// summary with no NaN, infinite or negative figure (and no fraction above
// 1), whatever perfgate's own TTFT.
func FuzzEngineWindow(f *testing.F) {
	for i, s := range hostileSeeds {
		f.Add([]byte(s), []byte(hostileSeeds[(i+1)%len(hostileSeeds)]), 25.0)
	}
	counter := func(v string) []byte {
		return []byte("# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total " + v + "\n")
	}
	f.Add(counter("50"), counter("7"), 1.0) // a counter that went backwards: a restart
	f.Add(counter("1e300"), counter("-1e300"), math.Inf(1))
	f.Fuzz(func(t *testing.T, first, last []byte, clientTTFTMS float64) {
		p1, err1 := ParsePage(bytes.NewReader(first), t0)
		p2, err2 := ParsePage(bytes.NewReader(last), t0.Add(time.Second))
		if err1 != nil || err2 != nil {
			return
		}
		for _, a := range adapters {
			c := *a
			w := NewEngineWindow(&c)
			w.Add(p1)
			w.Add(p2)
			checkWindow(t, slices.Concat(first, last), w, clientTTFTMS, true)
		}
	})
}

// checkWindow checks w's summary and refusals.
func checkWindow(t *testing.T, input []byte, w *EngineWindow, clientTTFTMS float64, hasClientTTFT bool) {
	t.Helper()
	s := w.Summary(clientTTFTMS, hasClientTTFT)
	if err := checkEngineFigures(s); err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatalf("the summary cannot be written: %v", err)
	}
	for _, msg := range w.Refused() {
		checkMessage(t, input, msg)
	}
}

// checkMessage fails on a message with a formatting error ("%!v(MISSING)")
// that the input did not carry itself.
func checkMessage(t *testing.T, input []byte, msg string) {
	t.Helper()
	if strings.Contains(msg, "%!") && !bytes.Contains(input, []byte("%!")) {
		t.Fatalf("message %q has a formatting error", msg)
	}
}

// FuzzParseSMI: nvidia-smi's output never panics the parser, every GPU it
// reads has figures that can be true, and a window of them summarises to
// figures that can be written.
func FuzzParseSMI(f *testing.F) {
	for _, s := range []string{
		"0, NVIDIA H100 80GB HBM3, GPU-3c8ed1d4-24f5-4a55-3bb5-8b0ae3b4ff54, 74920, 81559, 87, 412.71, 550.54.15\n" +
			"1, NVIDIA H100 80GB HBM3, GPU-9e1a0c7b, 479, 81559, 0, [N/A], 550.54.15\n" +
			"2, NVIDIA A100-SXM4-40GB, GPU-604ac76c, 4390, 40960, [N/A], 90.50, 550.54.15\n" +
			"3, NVIDIA A10G, [N/A], 10, [Not Supported], 5, [Not Supported], 550.54.15\n",
		"0, NVIDIA H100 80GB HBM3, GPU-1, 40000, 81559, 75, 1e30, 550.54.15\n",
		"0, NVIDIA H100 80GB HBM3, GPU-1, -1, 81559, 150, -3, 550.54.15\n",
		"0, \"quoted, name\", GPU-1, 1, 2, 3, 4, 5\n",
		"Field \"foo\" is not a valid field to query.\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		rows, err := parseSMI(out)
		if err != nil {
			checkMessage(t, out, err.Error())
			return
		}
		var gpus []GPUSample
		for _, r := range rows {
			if err := checkGPUSample(r.GPUSample); err != nil {
				t.Fatalf("parseSMI accepted a GPU that cannot be: %v", err)
			}
			gpus = append(gpus, r.GPUSample)
		}
		checkGPUWindow(t, gpus)
	})
}

// FuzzParseDCGM: a DCGM exporter's page never panics the parser, every GPU
// it reads has figures that can be true, and a window of them summarises to
// figures that can be written.
func FuzzParseDCGM(f *testing.F) {
	for _, s := range append(slices.Clone(hostileSeeds),
		"DCGM_FI_DEV_FB_USED{gpu=\"0\"} 1000\nDCGM_FI_DEV_FB_FREE{gpu=\"0\"} 79000\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 1e30\n",
		"DCGM_FI_DEV_FB_USED{gpu=\"0\"} 1000\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 2147483632\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 140737488355328\n",
		"DCGM_FI_DEV_FB_USED{gpu=\"0\",GPU_I_ID=\"1\"} 10\nDCGM_FI_DEV_FB_USED{gpu=\"0\",GPU_I_ID=\"2\"} -20\n",
	) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		gs, err := parseDCGM(page)
		if err != nil {
			checkMessage(t, page, err.Error())
			return
		}
		var gpus []GPUSample
		for _, g := range gs {
			if err := checkGPUSample(g.sample); err != nil {
				t.Fatalf("parseDCGM accepted a GPU that cannot be: %v", err)
			}
			gpus = append(gpus, g.sample)
		}
		checkGPUWindow(t, gpus)
	})
}

// checkGPUWindow summarises a window of three samples of gpus and checks
// every figure can be written.
func checkGPUWindow(t *testing.T, gpus []GPUSample) {
	t.Helper()
	samples := []TimedSample{{0, gpus}, {time.Second, gpus}, {2 * time.Second, gpus}}
	s := SummariseGPU("nvidia-smi", time.Second, samples, 2*time.Second, 1000, nil)
	if err := checkGPUFigures(s); err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatalf("the GPU summary cannot be written: %v", err)
	}
}

// checkGPUFigures says which figure of g is NaN, infinite, negative, or a
// fraction above 1.
func checkGPUFigures(g *result.GPUTelemetry) error {
	if g == nil {
		return nil
	}
	var bad []string
	check := func(name string, v float64, most float64) {
		if !(v >= 0 && v <= most) {
			bad = append(bad, fmt.Sprintf("%s = %v", name, v))
		}
	}
	opt := func(name string, v *float64, most float64) {
		if v != nil {
			check(name, *v, most)
		}
	}
	big := math.MaxFloat64
	check("MemoryPeakMiB", g.MemoryPeakMiB, big)
	check("MemoryTotalMiB", g.MemoryTotalMiB, big)
	opt("UtilizationMean", g.UtilizationMean, 1)
	opt("PowerMeanW", g.PowerMeanW, big)
	opt("EnergyJ", g.EnergyJ, big)
	opt("EnergyPerToken", g.EnergyPerToken, big)
	opt("TokensPerJoule", g.TokensPerJoule, big)
	for _, w := range g.PerGPU {
		check(fmt.Sprintf("GPU %d MemoryPeakMiB", w.Index), w.MemoryPeakMiB, big)
		opt(fmt.Sprintf("GPU %d UtilizationMean", w.Index), w.UtilizationMean, 1)
		opt(fmt.Sprintf("GPU %d PowerMeanW", w.Index), w.PowerMeanW, big)
	}
	if len(bad) > 0 {
		return fmt.Errorf("GPU figures that cannot be written: %s", strings.Join(bad, ", "))
	}
	return nil
}
