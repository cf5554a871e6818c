package run

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/route"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/workload"
)

// simReplicas are in-process simulators behind perfgate's router, one of
// which a fault closes (its streams end with an error, its port refuses)
// and starts again on the same port, ready after a cold start: what a
// process stack's replica killed and restarted does, with every
// simulator's truth kept.
type simReplicas struct {
	t      *testing.T
	cfg    sim.Config
	addrs  []string
	mu     sync.Mutex
	srvs   []*sim.Server
	truths []*truthBuffer // every simulator started, the restarted too
	repair chan repairDone
}

type repairDone struct {
	back time.Time
	err  error
}

func startSimReplicas(t *testing.T, cfg sim.Config, n int) *simReplicas {
	r := &simReplicas{t: t, cfg: cfg}
	for range n {
		srv := r.start("127.0.0.1:0", 0)
		r.srvs = append(r.srvs, srv)
		r.addrs = append(r.addrs, srv.URL()[len("http://"):])
	}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, s := range r.srvs {
			_ = s.Close()
		}
	})
	return r
}

func (r *simReplicas) start(addr string, coldStart time.Duration) *sim.Server {
	cfg := r.cfg
	cfg.ColdStart = coldStart
	truth := &truthBuffer{}
	cfg.Truth = truth
	srv, err := sim.Start(context.Background(), addr, cfg)
	require.NoError(r.t, err)
	r.mu.Lock()
	r.truths = append(r.truths, truth)
	r.mu.Unlock()
	return srv
}

func (r *simReplicas) healthy(ctx context.Context, i int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.addrs[i]+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health %d", resp.StatusCode)
	}
	return nil
}

// Inject closes the replica and starts it again at once, ready after
// coldStart.
func (r *simReplicas) inject(coldStart time.Duration) func(ctx context.Context, f config.Fault) error {
	return func(ctx context.Context, f config.Fault) error {
		i := f.ReplicaIndex(len(r.addrs))
		r.mu.Lock()
		old := r.srvs[i]
		r.mu.Unlock()
		if err := old.Close(); err != nil {
			return err
		}
		r.repair = make(chan repairDone, 1)
		go func() {
			srv := r.start(r.addrs[i], coldStart)
			r.mu.Lock()
			r.srvs[i] = srv
			r.mu.Unlock()
			for {
				if r.healthy(context.Background(), i) == nil {
					r.repair <- repairDone{back: time.Now()}
					return
				}
				time.Sleep(20 * time.Millisecond) // polling the replica, as perfgate's readiness does
			}
		}()
		return nil
	}
}

type simInjector struct {
	r         *simReplicas
	coldStart time.Duration
}

func (s simInjector) Inject(ctx context.Context, f config.Fault) error {
	return s.r.inject(s.coldStart)(ctx, f)
}

func (s simInjector) Repaired(ctx context.Context) (time.Time, bool, error) {
	select {
	case d := <-s.r.repair:
		return d.back, true, d.err
	case <-ctx.Done():
		return time.Time{}, false, ctx.Err()
	}
}

// End to end against two simulators behind perfgate's router: 30 requests
// a second are 15 for each replica, within one's 20; the second
// replica is killed 3 s in and is ready again 2 s later. The first alone
// cannot keep up, so TTFT climbs until the second is back and the queue
// drains. The errors perfgate counts are the requests no simulator
// answered, by the simulators' own truth, and the recovery it measures
// from its side is within 20% of the truth's: the last request that any
// simulator failed or served past the SLO, counted from the fault.
func TestReplicaLossMatchesTheSimulatorsTruth(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.MaxBatch, cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken, cfg.Jitter, cfg.PrefixCache = 4, 10*time.Millisecond, 0, 0, 0, false
	reps := startSimReplicas(t, cfg, 2)
	var members []route.Member
	for _, a := range reps.addrs {
		c, err := client.New(client.Options{BaseURL: "http://" + a, API: client.APIChat, Model: cfg.Model, MaxConns: 256})
		require.NoError(t, err)
		t.Cleanup(c.CloseIdleConnections)
		members = append(members, c)
	}
	pool, err := route.New(members, reps.healthy, 100*time.Millisecond)
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	var reqs []workload.Request
	for i := range 64 {
		r := workload.Request{ID: fmt.Sprintf("r%d", i), Prompt: fmt.Sprintf("Question %d: say something short.", i)}
		r.MaxTokens = 20
		reqs = append(reqs, r)
	}
	const slo = 500 * time.Millisecond
	at, coldStart := 3*time.Second, 2*time.Second
	sc := scenario("lost", config.Load{Type: config.LoadPoisson, Rate: 30, RecoveryWindow: time.Second}, reqs)
	sc.Config.SLO = config.SLO{TTFT: slo}
	sc.Config.Duration = 10 * time.Second
	sc.Config.MaxErrorRate = 0.5
	sc.Config.Fault = &config.Fault{Kill: config.FaultReplica, At: at}
	var sent []string
	m := &Measurement{Dispatcher: &Dispatcher{Sender: pool}, Repetitions: config.Repetitions{Min: 1, Max: 1}, Seed: 5, RunID: "lost",
		Injector: simInjector{r: reps, coldStart: coldStart}, Replicas: 2,
		OnRecord: func(r *result.Record) { sent = append(sent, r.RequestID) }}
	got, err := m.Measure(t.Context(), sc)
	require.NoError(t, err)
	require.Len(t, got, 1)
	f, rc := got[0].Fault, got[0].Recovery
	require.NotNil(t, f, "a fault scenario's repetition has its fault")
	require.NotNil(t, rc, "and its recovery")

	// The truth: every simulator's records, on one clock (each started
	// its own; the truth's arrivals are compared within one server).
	reps.mu.Lock()
	for _, s := range reps.srvs {
		require.NoError(t, s.Close())
	}
	truths := reps.truths
	reps.mu.Unlock()
	ok := map[string]bool{}
	var byServer []map[string]sim.TruthRecord
	for _, tb := range truths {
		recs := tb.records(t)
		byServer = append(byServer, recs)
		for id, r := range recs {
			if r.Error == "" && r.FirstTokenNS > 0 {
				ok[id] = true
			}
		}
	}
	truthErrors := 0
	for _, id := range sent {
		if !ok[id] {
			truthErrors++
		}
	}
	// The last request served past the SLO, on the first replica (which
	// served throughout, on its own clock from the repetition's first
	// arrival there).
	first := byServer[0]
	start := int64(math.MaxInt64)
	for _, r := range first {
		start = min(start, r.ArrivalNS)
	}
	var lastSlow int64 = -1
	for _, r := range first {
		if r.Error == "" && r.FirstTokenNS-r.ArrivalNS > int64(slo) {
			lastSlow = max(lastSlow, r.ArrivalNS-start)
		}
	}
	want := time.Duration(lastSlow - int64(at)).Seconds()
	var worst int64
	for _, r := range first {
		worst = max(worst, r.FirstTokenNS-r.ArrivalNS)
	}
	t.Logf("worst TTFT on the first replica %v over %d requests", time.Duration(worst), len(first))
	t.Logf("errors %d (truth %d) of %d; recovery %.2f s (truth %.2f s); killed at %.2f s, back at %.2f s; %.1f req/s before, %.1f during",
		f.Errors, truthErrors, len(sent), rc.Seconds, want, f.KilledS, *cmp.Or(f.BackS, new(-1.0)), *cmp.Or(f.BeforeRPS, new(-1.0)), *cmp.Or(f.DuringRPS, new(-1.0)))
	require.Greater(t, lastSlow, int64(at), "one replica must fall behind, or there is nothing to recover from")
	assert.Equal(t, truthErrors, f.Errors, "the requests no simulator answered are the fault's errors")
	assert.Positive(t, f.Errors, "the killed replica's requests in flight failed")
	assert.InDelta(t, at.Seconds(), f.KilledS, 0.5)
	require.NotNil(t, f.BackS, "the replica was back within the repetition")
	assert.InDelta(t, (at + coldStart).Seconds(), *f.BackS, 0.7, "back a cold start after the kill")
	assert.True(t, rc.Recovered)
	assert.InEpsilon(t, want, rc.Seconds, 0.20, "perfgate's recovery against the truth's")
	require.NotNil(t, f.BeforeRPS)
	require.NotNil(t, f.DuringRPS)
	assert.InDelta(t, 30, *f.BeforeRPS, 6, "before the fault, the load offered is served within the SLO")
	assert.Less(t, *f.DuringRPS, *f.BeforeRPS/2, "one replica alone falls behind: most requests sent while the other is down wait past the SLO")
}
