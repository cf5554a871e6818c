package telemetry

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

// serveDCGM serves page as a DCGM exporter's /metrics.
func serveDCGM(t *testing.T, status int, page string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func readGPUTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

func TestDCGMExporterPage(t *testing.T) {
	url := serveDCGM(t, http.StatusOK, readGPUTestdata(t, "dcgm-h100x2.prom"))
	src := NewDCGM(url, nil)
	t.Cleanup(func() { assert.NoError(t, src.Close()) })
	assert.Equal(t, "dcgm", src.Kind())
	assert.Equal(t, "dcgm "+url, src.Describe())

	devices, err := src.Devices(context.Background())
	require.NoError(t, err)
	// total = used + free + reserved = 81559 MiB on both boards.
	assert.Equal(t, []result.GPU{
		{Index: 0, Model: "NVIDIA H100 80GB HBM3", UUID: "GPU-3c8ed1d4-24f5-4a55-3bb5-8b0ae3b4ff54", MemoryBytes: 81559 << 20, Driver: "550.54.15"},
		{Index: 1, Model: "NVIDIA H100 80GB HBM3", UUID: "GPU-9e1a0c7b-5d2f-8a41-6c3e-1f0b2d4e6a8c", MemoryBytes: 81559 << 20, Driver: "550.54.15"},
	}, devices)

	samples, err := src.Sample(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []GPUSample{
		{Index: 0, MemoryUsedMiB: 74920, MemoryTotalMiB: 81559, UtilizationPct: 87, PowerW: gpuWatts(412.716)},
		{Index: 1, MemoryUsedMiB: 479, MemoryTotalMiB: 81559, UtilizationPct: 0, PowerW: gpuWatts(71.054)},
	}, samples)
}

// dcgmLine is a DCGM series for GPU 0 with the older exporter's labels (no
// driver), extra labels appended.
func dcgmLine(field, extra, value string) string {
	return field + `{gpu="0",UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52",device="nvidia0",modelName="NVIDIA A100-SXM4-40GB",Hostname="node-b"` + extra + `} ` + value + "\n"
}

func TestParseDCGM(t *testing.T) {
	tests := []struct {
		name       string
		page       string
		wantUsed   float64
		wantTotal  float64
		wantUtil   float64 // NaN: unknown
		wantPower  *float64
		wantDriver string
	}{{
		name: "no reserved field, no driver label",
		page: dcgmLine("DCGM_FI_DEV_FB_USED", "", "1000") + dcgmLine("DCGM_FI_DEV_FB_FREE", "", "39536") +
			dcgmLine("DCGM_FI_DEV_GPU_UTIL", "", "12") + dcgmLine("DCGM_FI_DEV_POWER_USAGE", "", "61.5"),
		wantUsed: 1000, wantTotal: 40536, wantUtil: 12, wantPower: gpuWatts(61.5),
	}, {
		name: "MIG instances: memory summed, utilisation unknown",
		page: dcgmLine("DCGM_FI_DEV_FB_USED", `,GPU_I_PROFILE="1g.5gb",GPU_I_ID="8",DCGM_FI_DRIVER_VERSION="520.56.06"`, "6") +
			dcgmLine("DCGM_FI_DEV_FB_USED", `,GPU_I_PROFILE="3g.20gb",GPU_I_ID="9",DCGM_FI_DRIVER_VERSION="520.56.06"`, "4384") +
			dcgmLine("DCGM_FI_DEV_FB_FREE", `,GPU_I_PROFILE="1g.5gb",GPU_I_ID="8"`, "4858") +
			dcgmLine("DCGM_FI_DEV_FB_FREE", `,GPU_I_PROFILE="3g.20gb",GPU_I_ID="9"`, "15552") +
			dcgmLine("DCGM_FI_DEV_POWER_USAGE", `,GPU_I_PROFILE="1g.5gb",GPU_I_ID="8"`, "90") +
			dcgmLine("DCGM_FI_DEV_POWER_USAGE", `,GPU_I_PROFILE="3g.20gb",GPU_I_ID="9"`, "90"),
		wantUsed: 4390, wantTotal: 4390 + 4858 + 15552, wantUtil: math.NaN(), wantPower: gpuWatts(90), wantDriver: "520.56.06",
	}, {
		name: "one GPU seen by two pods is counted once",
		page: dcgmLine("DCGM_FI_DEV_FB_USED", `,container="a",namespace="ml",pod="a-0"`, "2000") +
			dcgmLine("DCGM_FI_DEV_FB_USED", `,container="b",namespace="ml",pod="b-0"`, "2000"),
		wantUsed: 2000, wantUtil: math.NaN(),
	}, {
		name: "DCGM blanks are no value",
		page: dcgmLine("DCGM_FI_DEV_FB_USED", "", "1000") + dcgmLine("DCGM_FI_DEV_FB_FREE", "", "9223372036854775794") +
			dcgmLine("DCGM_FI_DEV_POWER_USAGE", "", "140737488355328"),
		wantUsed: 1000, wantUtil: math.NaN(),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gpus, err := parseDCGM([]byte(tt.page))
			require.NoError(t, err)
			require.Len(t, gpus, 1)
			g := gpus[0]
			assert.Equal(t, 0, g.sample.Index)
			assert.Equal(t, tt.wantUsed, g.sample.MemoryUsedMiB, "MemoryUsedMiB")
			assert.Equal(t, tt.wantTotal, g.sample.MemoryTotalMiB, "MemoryTotalMiB")
			if math.IsNaN(tt.wantUtil) {
				assert.True(t, math.IsNaN(g.sample.UtilizationPct), "UtilizationPct = %v, want NaN (unknown)", g.sample.UtilizationPct)
			} else {
				assert.Equal(t, tt.wantUtil, g.sample.UtilizationPct, "UtilizationPct")
			}
			assert.Equal(t, tt.wantPower, g.sample.PowerW, "PowerW")
			assert.Equal(t, "NVIDIA A100-SXM4-40GB", g.model)
			assert.Equal(t, tt.wantDriver, g.driver)
		})
	}
}

func TestDCGMErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		page    string
		wantErr string
	}{
		{"HTTP error", http.StatusServiceUnavailable, "", "HTTP 503 Service Unavailable"},
		{"no GPU series", http.StatusOK, "# HELP up x\n# TYPE up gauge\nup 1\n", "no GPU on the page (no DCGM_FI_DEV_FB_USED series labelled gpu"},
		{"a GPU without memory in use", http.StatusOK,
			dcgmLine("DCGM_FI_DEV_GPU_UTIL", "", "12"), "GPU 0 has no DCGM_FI_DEV_FB_USED on the page"},
		{"not a metrics page", http.StatusOK, "<html>oops</html>\n", "parse the page: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := serveDCGM(t, tt.status, tt.page)
			_, err := NewDCGM(url, nil).Sample(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), "dcgm "+url+": ")
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}
