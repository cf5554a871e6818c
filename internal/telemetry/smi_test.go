package telemetry

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/result"
)

func TestParseSMI(t *testing.T) {
	// Four GPUs as nvidia-smi prints them: power [N/A] on one board,
	// utilisation [N/A] on a MIG-enabled one, a total it cannot give.
	out := "0, NVIDIA H100 80GB HBM3, GPU-3c8ed1d4-24f5-4a55-3bb5-8b0ae3b4ff54, 74920, 81559, 87, 412.71, 550.54.15\n" +
		"1, NVIDIA H100 80GB HBM3, GPU-9e1a0c7b-5d2f-8a41-6c3e-1f0b2d4e6a8c, 479, 81559, 0, [N/A], 550.54.15\n" +
		"2, NVIDIA A100-SXM4-40GB, GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52, 4390, 40960, [N/A], 90.50, 550.54.15\n" +
		"3, NVIDIA A10G, [N/A], 10, [Not Supported], 5, [Not Supported], 550.54.15\n"
	rows, err := parseSMI([]byte(out))
	require.NoError(t, err)
	require.Len(t, rows, 4)

	want := []struct {
		index             int
		name, uuid        string
		used, total, util float64 // util NaN: unknown
		power             *float64
	}{
		{0, "NVIDIA H100 80GB HBM3", "GPU-3c8ed1d4-24f5-4a55-3bb5-8b0ae3b4ff54", 74920, 81559, 87, gpuWatts(412.71)},
		{1, "NVIDIA H100 80GB HBM3", "GPU-9e1a0c7b-5d2f-8a41-6c3e-1f0b2d4e6a8c", 479, 81559, 0, nil},
		{2, "NVIDIA A100-SXM4-40GB", "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52", 4390, 40960, math.NaN(), gpuWatts(90.5)},
		{3, "NVIDIA A10G", "", 10, 0, 5, nil},
	}
	for i, w := range want {
		r := rows[i]
		assert.Equal(t, w.index, r.Index, "row %d index", i)
		assert.Equal(t, w.name, r.name, "row %d name", i)
		assert.Equal(t, w.uuid, r.uuid, "row %d uuid", i)
		assert.Equal(t, "550.54.15", r.driver, "row %d driver", i)
		assert.Equal(t, w.used, r.MemoryUsedMiB, "row %d memory.used", i)
		assert.Equal(t, w.total, r.MemoryTotalMiB, "row %d memory.total", i)
		if math.IsNaN(w.util) {
			assert.True(t, math.IsNaN(r.UtilizationPct), "row %d utilization = %v, want NaN (unknown)", i, r.UtilizationPct)
		} else {
			assert.Equal(t, w.util, r.UtilizationPct, "row %d utilization", i)
		}
		assert.Equal(t, w.power, r.PowerW, "row %d power", i)
	}
}

func TestParseSMIErrors(t *testing.T) {
	good := "0, NVIDIA H100 80GB HBM3, GPU-1, 40000, 81559, 75, 300.12, 550.54.15\n"
	tests := []struct {
		name, out, wantErr string
	}{
		{"too few columns", good + "1, NVIDIA H100 80GB HBM3, GPU-2, 40000, 81559\n",
			`line 2: 5 columns, want 8 (index,name,uuid,memory.used,memory.total,utilization.gpu,power.draw,driver_version): "1, NVIDIA H100 80GB HBM3, GPU-2, 40000, 81559"`},
		{"too many columns", "0, a, b, 1, 2, 3, 4, 5, 6\n", "line 1: 9 columns, want 8"},
		{"not a number", good + good + "2, NVIDIA H100 80GB HBM3, GPU-3, 40000 MiB, 81559, 75, 300.12, 550.54.15\n",
			`line 3, column 4 (memory.used): "40000 MiB" is not a number`},
		{"power not a number", "0, NVIDIA H100 80GB HBM3, GPU-1, 40000, 81559, 75, 300.12 W, 550.54.15\n",
			`line 1, column 7 (power.draw): "300.12 W" is not a number`},
		{"memory in use missing", "0, NVIDIA H100 80GB HBM3, GPU-1, [N/A], 81559, 75, 300.12, 550.54.15\n",
			"line 1, column 4 (memory.used): nvidia-smi gave no figure ([N/A])"},
		{"index missing", "[N/A], NVIDIA H100 80GB HBM3, GPU-1, 1, 81559, 75, 300.12, 550.54.15\n",
			"line 1, column 1 (index): nvidia-smi gave no figure ([N/A])"},
		{"index not an index", "0.5, NVIDIA H100 80GB HBM3, GPU-1, 1, 81559, 75, 300.12, 550.54.15\n",
			`line 1, column 1 (index): "0.5" is not a GPU index`},
		{"nothing", "", "no GPU listed"},
		{"a message, not a table", "No devices were found\n", "line 1: 1 columns, want 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseSMI([]byte(tt.out))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tt.wantErr), "parseSMI() error = %q, want %q", err, tt.wantErr)
		})
	}
}

func TestNvidiaSMIArgvAndErrors(t *testing.T) {
	var calls [][]string
	run := func(_ context.Context, argv []string) ([]byte, error) {
		calls = append(calls, argv)
		return []byte("0, NVIDIA H100 80GB HBM3, GPU-1, 40000 MiB, 81559, 75, 300.12, 550.54.15\n"), nil
	}
	src := NewNvidiaSMI(run, []string{"/opt/bin/nvidia-smi"}, "in container perfgate-1a2b")
	assert.Equal(t, "nvidia-smi", src.Kind())
	assert.Equal(t, "/opt/bin/nvidia-smi in container perfgate-1a2b", src.Describe())
	_, err := src.Sample(context.Background())
	require.EqualError(t, err, `/opt/bin/nvidia-smi in container perfgate-1a2b --query-gpu: line 1, column 4 (memory.used): "40000 MiB" is not a number`)
	assert.Equal(t, [][]string{{"/opt/bin/nvidia-smi",
		"--query-gpu=index,name,uuid,memory.used,memory.total,utilization.gpu,power.draw,driver_version",
		"--format=csv,noheader,nounits"}}, calls)

	failing := NewNvidiaSMI(func(context.Context, []string) ([]byte, error) {
		return nil, errors.New("exit status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
	}, nil, "")
	assert.Equal(t, "nvidia-smi", failing.Describe())
	_, err = failing.Devices(context.Background())
	require.EqualError(t, err, "nvidia-smi: exit status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
}

func TestNvidiaSMIDevicesWithoutReport(t *testing.T) {
	// -q is best effort: when it fails, the devices have no CUDA version.
	run := func(_ context.Context, argv []string) ([]byte, error) {
		if argv[len(argv)-1] == "-q" {
			return nil, errors.New("exit status 2: Invalid combination of input arguments.")
		}
		return []byte("0, NVIDIA L4, GPU-1, 1, 23034, 0, 16.21, 535.104.05\n"), nil
	}
	devices, err := NewNvidiaSMI(run, nil, "").Devices(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []result.GPU{{Index: 0, Model: "NVIDIA L4", UUID: "GPU-1", MemoryBytes: 23034 << 20, Driver: "535.104.05"}}, devices)
}

func TestSMICUDAVersion(t *testing.T) {
	tests := []struct{ name, out, want string }{
		{"real header", "\n==============NVSMI LOG==============\n\nTimestamp                                 : Thu Mar 14 09:26:53 2024\n" +
			"Driver Version                            : 550.54.15\nCUDA Version                              : 12.4\n", "12.4"},
		{"indented", "    CUDA Version                          : 12.2\n", "12.2"},
		{"vGPU guest", "CUDA Version                              : Not Found\n", ""},
		{"[N/A]", "CUDA Version : [N/A]\n", ""},
		{"absent", "Driver Version : 470.256.02\n", ""},
		{"only the first", "CUDA Version : 12.4\n    CUDA Version : 11.0\n", "12.4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := smiCUDAVersion([]byte(tt.out)); got != tt.want {
				t.Errorf("smiCUDAVersion() = %q, want %q", got, tt.want)
			}
		})
	}
}

// The fake nvidia-smi script, run here through LocalCommand as the real one
// would be.

func TestNvidiaSMIFakeScript(t *testing.T) {
	fake := fakeSMIPath(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "power")
	require.NoError(t, os.WriteFile(trace, []byte("100\n250.5\n[N/A]\n400\n"), 0o644))
	t.Setenv("FAKE_SMI_GPUS", "2")
	t.Setenv("FAKE_SMI_MEMORY_USED", "61234")
	t.Setenv("FAKE_SMI_POWER_TRACE", trace)
	t.Setenv("FAKE_SMI_STATE", filepath.Join(dir, "state"))

	src := NewNvidiaSMI(LocalCommand, []string{fake}, "")
	devices, err := src.Devices(context.Background())
	require.NoError(t, err)
	h100 := result.GPU{Model: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, Driver: "550.54.15", CUDA: "12.4"}
	gpu0, gpu1 := h100, h100
	gpu0.Index, gpu0.UUID = 0, "GPU-fake-0"
	gpu1.Index, gpu1.UUID = 1, "GPU-fake-1"
	assert.Equal(t, []result.GPU{gpu0, gpu1}, devices)

	// Devices took the trace's first figure; each Sample takes the next,
	// from the first again after the last.
	for i, want := range []*float64{gpuWatts(250.5), nil, gpuWatts(400), gpuWatts(100), gpuWatts(250.5)} {
		samples, err := src.Sample(context.Background())
		require.NoError(t, err)
		require.Len(t, samples, 2)
		for _, s := range samples {
			assert.Equal(t, want, s.PowerW, "sample %d, GPU %d", i, s.Index)
			assert.Equal(t, 61234.0, s.MemoryUsedMiB)
			assert.Equal(t, 81559.0, s.MemoryTotalMiB)
			assert.Equal(t, 75.0, s.UtilizationPct)
		}
	}
}

func TestSMILocalCommand(t *testing.T) {
	fake := fakeSMIPath(t)
	tests := []struct {
		name    string
		env     map[string]string
		argv    []string
		want    string
		wantErr string
	}{
		{name: "output", argv: []string{fake, "--query-gpu=index,power.draw", "--format=csv,noheader,nounits"},
			env: map[string]string{"FAKE_SMI_POWER": "[N/A]"}, want: "0, [N/A]\n"},
		{name: "unknown field: stderr's first line", argv: []string{fake, "--query-gpu=index,foo", "--format=csv,noheader,nounits"},
			wantErr: `exit status 2: Field "foo" is not a valid field to query.`},
		{name: "failure said on stdout", argv: []string{fake, "-q"},
			env:     map[string]string{"FAKE_SMI_FAIL": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."},
			wantErr: "exit status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."},
		{name: "not there", argv: []string{filepath.Join(t.TempDir(), "nvidia-smi")}, wantErr: "no such file or directory"},
		{name: "no command", wantErr: "no command to run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			out, err := LocalCommand(context.Background(), tt.argv)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
		})
	}
}

func TestSMILocalCommandCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := LocalCommand(ctx, []string{fakeSMIPath(t), "-q"})
	require.ErrorIs(t, err, context.Canceled)
}
