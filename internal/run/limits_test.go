package run

import (
	"errors"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/config"
)

func TestConnections(t *testing.T) {
	cfg := &config.Config{Scenarios: []config.Scenario{
		{Name: "c8", Load: config.Load{Type: config.LoadClosed, Concurrency: 8}},
		{Name: "capped", Load: config.Load{Type: config.LoadPoisson, Rate: 5, MaxInFlight: 300}},
		{Name: "c512", Load: config.Load{Type: config.LoadClosed, Concurrency: 512}},
	}}
	if n, s := Connections(cfg); n != 512 || s != "c512" {
		t.Errorf("Connections = %d, %q; want 512, c512", n, s)
	}
	cfg.Scenarios = cfg.Scenarios[:1]
	cfg.Scenarios = append(cfg.Scenarios, config.Scenario{Name: "open", Load: config.Load{Type: config.LoadGamma, Rate: 5, Burstiness: 0.5}})
	cfg.Quality = config.Quality{Suites: []string{"e.jsonl"}, Concurrency: 4}
	if n, s := Connections(cfg); n != openLoopPool+4 || s != "open" {
		t.Errorf("Connections(uncapped open loop, evals) = %d, %q; want %d, open", n, s, openLoopPool+4)
	}
}

// A sweep needs its largest concurrency, a search of users its max; a rate
// search is an open loop like any other.
func TestConnectionsOfSweepsAndSearches(t *testing.T) {
	for _, tt := range []struct {
		s    config.Scenario
		want int
		name string
	}{
		{config.Scenario{Name: "sw", Load: config.Load{Type: config.LoadClosed, Sweep: []float64{1, 4, 700}, SweepParam: config.SweepConcurrency}}, 700, "sw.concurrency-700"},
		{config.Scenario{Name: "users", Load: config.Load{Type: config.LoadClosed}, Capacity: &config.Capacity{Metric: config.CapacityConcurrency, Min: 1, Max: 900}}, 900, "users"},
		{config.Scenario{Name: "rate", Load: config.Load{Type: config.LoadPoisson, MaxInFlight: 40}, Capacity: &config.Capacity{Metric: config.CapacityRequestRate, Min: 1, Max: 900}}, 40, "rate"},
		{config.Scenario{Name: "open", Load: config.Load{Type: config.LoadPoisson}, Capacity: &config.Capacity{Metric: config.CapacityRequestRate, Min: 1, Max: 900}}, openLoopPool, "open"},
	} {
		cfg := &config.Config{Scenarios: []config.Scenario{tt.s}}
		if n, s := Connections(cfg); n != tt.want || s != tt.name {
			t.Errorf("Connections(%s) = %d, %q; want %d, %q", tt.s.Name, n, s, tt.want, tt.name)
		}
	}
}

func TestFileLimitEnsure(t *testing.T) {
	cfg := &config.Config{Scenarios: []config.Scenario{{Name: "c512", Load: config.Load{Type: config.LoadClosed, Concurrency: 512}}}}
	const need = 512 + filesReserve
	tests := []struct {
		name       string
		soft, hard uint64
		setErr     error
		wantSet    uint64 // the soft limit set; 0: none
		wantErr    bool
	}{
		{"enough", 1024, 1024, nil, 0, false},
		{"exactly enough", need, need, nil, 0, false},
		{"raised to what the run needs", 300, 1 << 20, nil, need, false},
		{"hard limit too low: ulimit -n 300", 300, 300, nil, 0, true},
		{"raise refused", 300, 4096, errors.New("operation not permitted"), need, true},
	}
	for _, tt := range tests {
		var set uint64
		l := FileLimit{
			Get: func() (uint64, uint64, error) { return tt.soft, tt.hard, nil },
			Set: func(soft, hard uint64) error {
				set = soft
				if hard != tt.hard {
					t.Errorf("%s: Set changed the hard limit to %d", tt.name, hard)
				}
				return tt.setErr
			},
		}
		err := l.Ensure(cfg)
		if set != tt.wantSet {
			t.Errorf("%s: set soft limit %d, want %d", tt.name, set, tt.wantSet)
		}
		if (err != nil) != tt.wantErr {
			t.Fatalf("%s: Ensure = %v, want error %v", tt.name, err, tt.wantErr)
		}
		if err == nil {
			continue
		}
		var fe *OpenFilesError
		if !errors.As(err, &fe) || fe.Need != need || fe.Connections != 512 || fe.Soft != tt.soft {
			t.Errorf("%s: Ensure = %#v", tt.name, err)
		}
		for _, want := range []string{"perfgate needs about 576 open files", "512 connections to the target for scenario c512", "only 300", "ulimit -n"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: message %q lacks %q", tt.name, err, want)
			}
		}
	}
	// A limit that cannot be read is not checked.
	if err := (FileLimit{Get: func() (uint64, uint64, error) { return 0, 0, errors.New("no") }}).Ensure(cfg); err != nil {
		t.Errorf("Ensure with an unreadable limit = %v, want nil", err)
	}
}
