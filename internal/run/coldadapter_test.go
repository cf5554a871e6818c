package run

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/workload"
)

// A cold_adapters scenario against the simulator: before each repetition
// every adapter is unloaded and loaded again, and the first request to
// each is the cold one: the records mark exactly the requests the
// simulator's truth says loaded their adapter, and the cold-adapter
// subset pays the load that the warm one does not.
func TestColdAdaptersAgainstSimulatorTruth(t *testing.T) {
	const load = 60 * time.Millisecond
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken, cfg.Jitter = time.Millisecond, 0, 0, 0
	cfg.Loras, cfg.MaxLoras, cfg.LoraLoad = []string{"sql", "chat"}, 2, load
	srv, c, truth := truthSim(t, cfg, 2)
	var reqs []workload.Request
	for i := range 12 {
		r := workload.Request{ID: fmt.Sprintf("r%d", i), Prompt: fmt.Sprintf("request %d", i), MaxTokens: 4}
		switch i % 3 {
		case 0:
			r.Model = "sql"
		case 1:
			r.Model = "chat"
		default:
			r.Model = cfg.Model // the base model, by its name: neither cold nor warm
		}
		reqs = append(reqs, r)
	}
	target := config.Target{Model: cfg.Model, Adapters: map[string]string{"sql": "/a/sql", "chat": "/a/chat"}}
	require.NoError(t, checkColdAdapters(reqs, target))
	reloads := 0
	m := &Measurement{Dispatcher: &Dispatcher{Sender: c}, Repetitions: config.Repetitions{Min: 2, Max: 2}, RunID: "cold",
		ReloadAdapters: func(ctx context.Context, s Scenario) ([]string, error) {
			reloads++
			names := []string{"chat", "sql"}
			for _, name := range names {
				if err := c.ReloadAdapter(ctx, name, target.Adapters[name]); err != nil {
					return nil, err
				}
			}
			return names, nil
		}}
	var recs []*result.Record
	m.OnRecord = func(r *result.Record) { recs = append(recs, r) }
	s := Scenario{Config: config.Scenario{Name: "lora", Load: config.Load{Type: config.LoadClosed, Concurrency: 2}, MaxErrorRate: 0.05, ColdAdapters: true},
		Requests: reqs}
	var reps []result.Repetition
	for rep := 1; rep <= 2; rep++ {
		sum, err := m.Repetition(t.Context(), s, rep, "lora")
		require.NoError(t, err)
		reps = append(reps, sum)
	}
	require.NoError(t, srv.Close())
	assert.Equal(t, 2, reloads)
	byID := truth.records(t)
	cold := map[int]int{}
	for _, r := range recs {
		tr := byID[r.RequestID]
		assert.Equal(t, tr.AdapterLoaded, r.ColdAdapter, "%s (%s, repetition %d): marked cold %v, the simulator loaded its adapter %v", r.ID, r.Model, r.Repetition, r.ColdAdapter, tr.AdapterLoaded)
		if r.ColdAdapter {
			cold[r.Repetition]++
		}
	}
	assert.Equal(t, map[int]int{1: 2, 2: 2}, cold, "one cold request per adapter per repetition")
	for _, sum := range reps {
		require.Contains(t, sum.Subsets, result.SubsetColdAdapter)
		require.Contains(t, sum.Subsets, result.SubsetWarmAdapter)
		assert.Equal(t, 2, sum.Subsets[result.SubsetColdAdapter].Sent)
		assert.Equal(t, 6, sum.Subsets[result.SubsetWarmAdapter].Sent, "the adapters' 8 requests but the 2 cold; not the base's")
		coldTTFT, warmTTFT := sum.Subsets[result.SubsetColdAdapter].TTFT, sum.Subsets[result.SubsetWarmAdapter].TTFT
		assert.GreaterOrEqual(t, coldTTFT.P50, float64(load.Milliseconds()), "a cold request waits for its load")
		assert.Less(t, warmTTFT.P50, coldTTFT.P50)
	}
}

// A cold_adapters workload must name an adapter target.adapters lists;
// other models it names (the base model by name, with target.model auto)
// are no error.
func TestCheckColdAdapters(t *testing.T) {
	target := config.Target{Model: "auto", Adapters: map[string]string{"sql": "/a/sql"}}
	assert.ErrorContains(t, checkColdAdapters([]workload.Request{{}, {}}, target), "names no model")
	assert.ErrorContains(t, checkColdAdapters([]workload.Request{{Model: "base"}, {Model: "chat"}}, target),
		"names no adapter that target.adapters lists (it names base, chat)")
	assert.NoError(t, checkColdAdapters([]workload.Request{{Model: "sql"}, {Model: "base"}, {}}, target))
}

// A repetition measures subsets only where its requests can have some:
// kinds with a structured request among them, models with two or more
// (a line without a model counts as the target's).
func TestSubsetsOf(t *testing.T) {
	js := workload.Request{ResponseFormat: []byte(`{"type":"json_object"}`)}
	for _, c := range []struct {
		name          string
		reqs          []workload.Request
		kinds, models bool
	}{
		{"plain", []workload.Request{{}, {}}, false, false},
		{"one structured", []workload.Request{{}, js}, true, false},
		{"the target by name", []workload.Request{{}, {Model: "base"}}, false, false},
		{"an adapter", []workload.Request{{}, {Model: "sql"}}, false, true},
	} {
		kinds, models := subsetsOf(c.reqs, "base")
		assert.Equal(t, c.kinds, kinds, c.name)
		assert.Equal(t, c.models, models, c.name)
	}
}
