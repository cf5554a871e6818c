package ab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/session"
	"github.com/perfgate/perfgate/internal/stack"
	"github.com/perfgate/perfgate/internal/workload"
)

// textLog keeps the text of every request sent through the senders it
// builds (session.Options.Connect), by request id.
type textLog struct {
	mu    sync.Mutex
	texts map[string]string
}

// connect is session.Options.Connect: the real client, logged.
func (l *textLog) connect(ctx context.Context, cfg *config.Config) (session.Sender, error) {
	c, err := session.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &loggedSender{Sender: c, log: l}, nil
}

type loggedSender struct {
	session.Sender
	log *textLog
}

func (s *loggedSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	var parts []string
	for _, m := range req.Messages {
		parts = append(parts, m.Content)
	}
	s.log.mu.Lock()
	if s.log.texts == nil {
		s.log.texts = map[string]string{}
	}
	s.log.texts[id] = req.Prompt + strings.Join(parts, "\n")
	s.log.mu.Unlock()
	return s.Sender.Do(ctx, req, id)
}

// A request id names its run and what sent it: round r's warm-up
// (RUNID-roundR[-passP]-chat-r0-N) or measured repetition r
// (RUNID-chat-rR-N; r0 a perfgate run's warm-up).
var (
	warmupID   = regexp.MustCompile(`^(.*)-round(\d+)(?:-pass\d+)?-chat-r0-\d+$`)
	measuredID = regexp.MustCompile(`^(.*)-chat-r(\d+)-\d+$`)
)

// phases sorts the logged texts by run id and phase ("warm-up 2",
// "repetition 2"), each phase's texts sorted.
func (l *textLog) phases(t *testing.T) map[string]map[string][]string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]map[string][]string{}
	add := func(runID, phase, text string) {
		if out[runID] == nil {
			out[runID] = map[string][]string{}
		}
		out[runID][phase] = append(out[runID][phase], text)
	}
	for id, text := range l.texts {
		if m := warmupID.FindStringSubmatch(id); m != nil {
			add(m[1], "warm-up "+m[2], text)
		} else if m := measuredID.FindStringSubmatch(id); m != nil {
			add(m[1], "repetition "+m[2], text)
		} else if !strings.HasSuffix(id, "-ready") { // the readiness probe's one-token completion
			t.Errorf("request id %q is neither a warm-up's nor a repetition's", id)
		}
	}
	for _, ps := range out {
		for _, texts := range ps {
			slices.Sort(texts)
		}
	}
	return out
}

// Every warm-up of an A/B is salted for its arm and round: no warm-up
// sends a text that an earlier warm-up or repetition of its arm sent, nor
// one the other arm's warm-up of the round sent, so no prompt cache warms
// an arm. The repetitions are salted as before: round r sends the same
// texts on both arms, and the same as repetition r of a perfgate run of
// the config.
func TestRoundsSaltedApart(t *testing.T) {
	for _, mode := range []string{config.ABCoResident, config.ABSwap} {
		t.Run(mode, func(t *testing.T) {
			baseAddr, candAddr, plainAddr := freeAddr(t), freeAddr(t), freeAddr(t)
			st := newSimStarter()
			extra := "ab: {mode: " + mode + ", rounds: 3}\n"
			baseCfg, baseSc := armConfig(t, baseAddr, extra)
			candCfg, candSc := armConfig(t, candAddr, extra)
			texts := &textLog{}
			var log bytes.Buffer
			_, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{
				Session: session.Options{RunID: "t", StartStack: st.Start, Connect: texts.connect, Log: &log, Phases: run.NewPhases(&log, false)},
			})
			require.NoError(t, err, "log:\n%s", log.String())

			plainCfg, plainSc := armConfig(t, plainAddr, extra)
			_, err = session.Run(context.Background(), plainCfg, plainSc, session.Options{RunID: "plain", StartStack: st.Start, Connect: texts.connect})
			require.NoError(t, err)

			got := texts.phases(t)
			base, cand, plain := got["t-base"], got["t-candidate"], got["plain"]
			for _, arm := range []map[string][]string{base, cand} {
				for r := 1; r <= 3; r++ {
					assert.NotEmpty(t, arm["warm-up "+strconv.Itoa(r)], "round %d has no warm-up", r)
				}
			}
			for r := 1; r <= 3; r++ {
				rep := fmt.Sprintf("repetition %d", r)
				require.Len(t, plain[rep], 12, "the plain run's %s", rep)
				assert.Equal(t, plain[rep], base[rep], "the base arm's round %d sends what repetition %d of a run sends", r, r)
				assert.Equal(t, plain[rep], cand[rep], "the candidate arm's round %d sends what repetition %d of a run sends", r, r)
			}
			// Within an arm, every phase's texts are its own.
			for name, arm := range map[string]map[string][]string{"base": base, "candidate": cand} {
				seen := map[string]string{}
				for phase, list := range arm {
					for _, text := range list {
						if prev, dup := seen[text]; dup && prev != phase {
							t.Errorf("the %s arm sent one text in %s and %s: %q", name, prev, phase, text)
						}
						seen[text] = phase
					}
				}
			}
			// Across the arms, no warm-up sends another's text.
			for r := 1; r <= 3; r++ {
				phase := "warm-up " + strconv.Itoa(r)
				for _, text := range base[phase] {
					assert.NotContains(t, cand[phase], text, "both arms' %s sent it", phase)
				}
			}
		})
	}
}

// A round warms an arm up fully after every start of its stack, and with a
// short re-warm where the stack stayed up since its last warm-up:
// co-resident from round 2; in swap mode the arm ABBA leaves running
// across a round's boundary. ab.rewarm: full warms up fully every round.
// Each arm's result keeps every round's warm-up, with its kind, and its
// first full one as Warmup.
func TestRewarmKinds(t *testing.T) {
	const F, S = result.WarmupFull, result.WarmupShort
	tests := []struct {
		name, extra string
		base, cand  []string
	}{
		{"co-resident, short", "ab: {rounds: 3}\n", []string{F, S, S}, []string{F, S, S}},
		{"co-resident, full", "ab: {rewarm: full, rounds: 3}\n", []string{F, F, F}, []string{F, F, F}},
		// AB BA AB BA: base starts in rounds 1, 2 (second), 4 (second); the
		// candidate in 1 and 3; each runs on into the next round otherwise.
		{"swap, short", "ab: {mode: swap, rounds: 4}\n", []string{F, F, S, F}, []string{F, S, F, S}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			baseAddr, candAddr := freeAddr(t), freeAddr(t)
			st := newSimStarter()
			baseCfg, baseSc := armConfig(t, baseAddr, tt.extra)
			candCfg, candSc := armConfig(t, candAddr, tt.extra)
			var log bytes.Buffer
			out, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{
				Session: session.Options{StartStack: st.Start, Log: &log, Phases: run.NewPhases(&log, false)},
			})
			require.NoError(t, err, "log:\n%s", log.String())
			for _, arm := range []struct {
				res  *result.Result
				want []string
			}{{out.Base, tt.base}, {out.Candidate, tt.cand}} {
				sc := arm.res.Scenarios[0]
				require.Len(t, sc.Warmups, len(arm.want), "%s: one warm-up a round", arm.res.AB.Arm)
				for i, w := range sc.Warmups {
					assert.Equal(t, i+1, w.Round)
					assert.Equal(t, arm.want[i], w.Kind, "%s round %d", arm.res.AB.Arm, i+1)
					require.NotNil(t, w.Warmup)
					if w.Kind == S {
						assert.Equal(t, result.WarmupShort, w.Warmup.Method)
						assert.LessOrEqual(t, len(w.Warmup.Windows), 1, "one window of load, not to steady state")
						assert.GreaterOrEqual(t, w.Warmup.Requests, 3, "every one of the 3 users sent")
						assert.NotNil(t, w.Warmup.Drain, "drained")
					} else {
						assert.True(t, w.Warmup.Steady, "%s round %d: a full warm-up to steady state", arm.res.AB.Arm, i+1)
					}
				}
				assert.Same(t, sc.Warmups[0].Warmup, sc.Warmup, "Warmup is the first full warm-up")
			}
			if slices.Contains(tt.cand, S) {
				assert.Contains(t, log.String(), "==> candidate: chat round 2: re-warming (one window of 100ms, not judged")
			}
		})
	}
}

// An A/B that is interrupted, or fails, after some rounds returns its error
// and what it measured: each arm's result so far, marked incomplete with
// the reason and the rounds both arms completed, with no verdict; both
// stacks stopped.
func TestInterruptedKeepsWhatWasMeasured(t *testing.T) {
	tests := []struct {
		name string
		// stop is called at the first measured record of the candidate's
		// round 2 (in ABBA order, the candidate measures first in it).
		stop func(cancel context.CancelFunc, st *simStarter, baseAddr string)
		code int
		want string
	}{
		{"interrupted", func(cancel context.CancelFunc, _ *simStarter, _ string) { cancel() }, exit.RunFailed, "interrupted"},
		{"the idle base stack crashed", func(_ context.CancelFunc, st *simStarter, baseAddr string) { go st.Running(baseAddr).Crash() },
			exit.RunFailed, "the base stack"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			baseAddr, candAddr := freeAddr(t), freeAddr(t)
			st := newSimStarter()
			long := `
scenarios:
  - name: chat
    synth: {requests: 100000, input: {type: fixed, value: 16}, output: {type: fixed, value: 12}}
    load: {type: closed, concurrency: 2}
    duration: 1s
`
			baseCfg, baseSc := armConfig(t, baseAddr, long)
			candCfg, candSc := armConfig(t, candAddr, long)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var once sync.Once
			out, err := Run(ctx, baseCfg, candCfg, baseSc, candSc, Options{
				Session: session.Options{RunID: "t", StartStack: st.Start,
					OnRecord: func(r *result.Record) {
						if strings.HasPrefix(r.RequestID, "t-candidate-") && r.Repetition == 2 {
							once.Do(func() { tt.stop(cancel, st, baseAddr) })
						}
					}},
			})
			require.Error(t, err)
			assert.Equal(t, tt.code, exit.Code(err), "err: %v", err)
			assert.Contains(t, err.Error(), tt.want)
			require.NotNil(t, out, "what was measured comes back with the error")
			assert.Nil(t, out.Verdict)
			for _, res := range []*result.Result{out.Base, out.Candidate} {
				require.NotNil(t, res)
				require.NotNil(t, res.Incomplete, "%s arm", res.AB.Arm)
				assert.Equal(t, 1, res.Incomplete.Rounds, "round 1 was complete on both arms")
				assert.Contains(t, res.Incomplete.Reason, tt.want)
				assert.NotContains(t, res.Incomplete.Reason, "\n")
				var inc *result.IncompleteError
				assert.True(t, errors.As(res.CheckComplete(), &inc))
				require.Len(t, res.Scenarios, 1)
				assert.Len(t, res.Scenarios[0].Repetitions, 1, "%s arm: round 1's repetition, not the one cut short", res.AB.Arm)
				assert.NoError(t, res.Validate(), "a partial result is a valid result file")
			}
			assert.Len(t, out.Candidate.Scenarios[0].Warmups, 2, "the candidate's round-2 re-warm is kept")
			for _, addr := range []string{baseAddr, candAddr} {
				assert.True(t, st.Running(addr).Stopped(), "the stack at %s is still running", addr)
			}
			var crash *stack.CrashError
			assert.Equal(t, tt.name != "interrupted", errors.As(err, &crash))
		})
	}
}

// cancelAt is a progress log that cancels the A/B the first time a phase
// line containing marker is written.
type cancelAt struct {
	marker string
	cancel context.CancelFunc
	mu     sync.Mutex
	buf    bytes.Buffer
}

func (w *cancelAt) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.cancel()
	}
	return len(p), nil
}

// An A/B that fails before it measured anything, not even a warm-up, has
// nothing to keep: a co-resident stack that cannot start beside the
// other, or an interrupt during the first warm-up.
func TestNothingMeasuredNothingKept(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		baseAddr, candAddr := freeAddr(t), freeAddr(t)
		st := newSimStarter()
		st.Refuse(candAddr, errors.New("CUDA out of memory"))
		baseCfg, baseSc := armConfig(t, baseAddr, "")
		candCfg, candSc := armConfig(t, candAddr, "")
		out, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{Session: session.Options{StartStack: st.Start}})
		require.Error(t, err)
		assert.Nil(t, out)
	})
	t.Run("interrupted in the first warm-up", func(t *testing.T) {
		baseAddr, candAddr := freeAddr(t), freeAddr(t)
		st := newSimStarter()
		baseCfg, baseSc := armConfig(t, baseAddr, "")
		candCfg, candSc := armConfig(t, candAddr, "")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		log := &cancelAt{marker: "==> base: chat round 1: warming up", cancel: cancel}
		out, err := Run(ctx, baseCfg, candCfg, baseSc, candSc, Options{Session: session.Options{StartStack: st.Start, Phases: run.NewPhases(log, false)}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "interrupted")
		assert.Nil(t, out)
	})
}

// ab.rewarm, given in code, must be one of its two values.
func TestRewarmRefused(t *testing.T) {
	addr, other := freeAddr(t), freeAddr(t)
	baseCfg, baseSc := armConfig(t, addr, "")
	candCfg, candSc := armConfig(t, other, "")
	_, err := Run(context.Background(), baseCfg, candCfg, baseSc, candSc, Options{Rewarm: "lukewarm"})
	require.Error(t, err)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.Equal(t, `rewarm: want short or full, got "lukewarm"`, err.Error())
}
