package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEngineNeverWaitsForHandlers: a sequence whose handler never reads its
// notifications (a stuck client) does not hold up the step loop.
func TestEngineNeverWaitsForHandlers(t *testing.T) {
	cfg := testConfig()
	cfg.StepBase = 0 // zero-delay: the loop runs flat out
	e := newEngine(cfg, time.Now(), newMetrics(cfg))
	go e.run()
	defer func() {
		close(e.stop)
		<-e.done
	}()
	g := filler{}.generate(genRequest{MaxTokens: 5000})
	stuck := newSeq(3, nil, g, 5000)
	e.submit <- stuck // nobody ever reads stuck.notify
	live := newSeq(3, nil, g, 5000)
	e.submit <- live
	deadline := time.After(10 * time.Second)
	for !live.snapshot().ended {
		select {
		case <-live.notify:
		case <-deadline:
			t.Fatal("live sequence did not finish")
		}
	}
	require.Equal(t, 5000, live.snapshot().emitted)
	st := stuck.snapshot()
	require.True(t, st.ended, "the stuck sequence ran to its end too")
	require.Equal(t, 5000, st.emitted)
}

func TestFillerGeneration(t *testing.T) {
	a := filler{}.generate(genRequest{Prompt: "p", MaxTokens: 50, Seed: 3})
	b := filler{}.generate(genRequest{Prompt: "p", MaxTokens: 50, Seed: 3})
	c := filler{}.generate(genRequest{Prompt: "p", MaxTokens: 50, Seed: 4})
	require.Equal(t, 50, a.Len())
	require.Equal(t, "length", a.FinishReason())
	same, differ := true, false
	for i := range 50 {
		require.NotEmpty(t, a.Token(i))
		same = same && a.Token(i) == b.Token(i)
		differ = differ || a.Token(i) != c.Token(i)
	}
	require.True(t, same, "same seed and prompt, same text")
	require.True(t, differ, "another seed, other text")
	require.NotEqual(t, ' ', a.Token(0)[0], "the first token has no leading space")
	require.Equal(t, byte(' '), a.Token(1)[0], "later tokens are space-separated words")
}

func TestPrefixCacheLRU(t *testing.T) {
	words := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = prefix + string(rune('a'+i%26))
		}
		return out
	}
	x := blockHashes(words("x", 40)) // 2 blocks
	require.Len(t, x, 2)
	y := blockHashes(append(words("x", 16), words("y", 16)...))
	require.Equal(t, x[0], y[0], "same first block")
	require.NotEqual(t, x[1], y[1], "the second block's hash covers its prefix")

	c := newPrefixCache(2)
	require.Zero(t, c.lookup(x))
	c.insert(x)
	require.Equal(t, 2, c.lookup(x))
	require.Equal(t, 1, c.lookup(y))
	c.insert(y) // evicts x[1], the least recently used
	require.Equal(t, 1, c.lookup(x))
	require.Equal(t, 2, c.lookup(y))
}
