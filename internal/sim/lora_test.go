package sim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"encoding/json"
)

// loraChat sends a streaming chat request to model and reads it to the end.
func loraChat(t *testing.T, s *Server, id, model string) int {
	t.Helper()
	body := chatBody(4, 3, true)
	body["model"] = model
	resp := post(t, context.Background(), s.URL()+"/v1/chat/completions", id, body)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// With one adapter slot, each change of adapter loads it, and the load is
// paid by the request that caused it: the truth says which; the base
// model needs no slot; an adapter the sim does not serve is a 404.
func TestLoraLoadsOnChangeOfAdapter(t *testing.T) {
	cfg := testConfig()
	cfg.Loras, cfg.MaxLoras, cfg.LoraLoad = []string{"sql", "chat"}, 1, 40*time.Millisecond
	s := startSim(t, cfg)
	order := []string{"sql", "sql", "perfgate-sim-8b", "chat", "sql", "sql"}
	for i, m := range order {
		require.Equal(t, http.StatusOK, loraChat(t, s.Server, fmt.Sprintf("r%d", i), m))
	}
	require.Equal(t, http.StatusNotFound, loraChat(t, s.Server, "unknown", "summarise"))
	_, metrics := get(t, s.URL()+"/metrics")
	assert.Contains(t, string(metrics), `vllm:lora_requests_info{max_lora="1",running_lora_adapters="",waiting_lora_adapters=""}`)
	_, models := get(t, s.URL()+"/v1/models")
	assert.Contains(t, string(models), `"id":"chat"`)
	recs := s.records(t)

	wantLoaded := []bool{true, false, false, true, true, false}
	for i, m := range order {
		r := recs[fmt.Sprintf("r%d", i)]
		if m == "perfgate-sim-8b" {
			m = ""
		}
		assert.Equal(t, m, r.Adapter, "r%d", i)
		assert.Equal(t, wantLoaded[i], r.AdapterLoaded, "r%d (%s)", i, order[i])
		ttft := time.Duration(r.FirstTokenNS - r.ArrivalNS)
		if wantLoaded[i] {
			assert.GreaterOrEqual(t, ttft, cfg.LoraLoad, "r%d paid the load", i)
		}
	}
	assert.Contains(t, recs["unknown"].Error, "HTTP 404: The model `summarise` does not exist.")
}

// With one slot held by a running request, a request for another adapter
// waits for it to end, while one for the resident adapter or the base is
// admitted at once: the loaded adapter is never evicted from under a
// running request.
func TestLoraWaitsForASlot(t *testing.T) {
	cfg := testConfig()
	cfg.Loras, cfg.MaxLoras, cfg.LoraLoad = []string{"sql", "chat"}, 1, 0
	s := startSim(t, cfg)
	finish := holdSlot(t, s.Server, "sql")
	var wg sync.WaitGroup
	for _, m := range []string{"chat", "sql", "perfgate-sim-8b"} {
		wg.Go(func() { assert.Equal(t, http.StatusOK, loraChat(t, s.Server, "to-"+m, m)) })
	}
	wg.Wait()
	finish()
	recs := s.records(t)
	end := recs["long"].EndNS
	assert.Greater(t, recs["to-chat"].FirstTokenNS, end-int64(4*time.Millisecond), "chat waited for sql's request to end")
	assert.Less(t, recs["to-sql"].FirstTokenNS, end, "sql is resident: no wait")
	assert.Less(t, recs["to-perfgate-sim-8b"].FirstTokenNS, end, "the base needs no slot")
	assert.True(t, recs["to-chat"].AdapterLoaded)
	assert.False(t, recs["to-sql"].AdapterLoaded)
}

// Adapter names are checked: none twice, none the base's, no spaces.
func TestLoraConfigValidate(t *testing.T) {
	for _, c := range []struct {
		loras []string
		max   int
		want  string
	}{
		{[]string{"a", "a"}, 1, `"a" is named twice`},
		{[]string{"perfgate-sim-8b"}, 1, "is named twice (or is --model)"},
		{[]string{"a b"}, 1, "without spaces"},
		{[]string{"a"}, 0, "--max-loras: must be in [1,1024]"},
	} {
		cfg := DefaultConfig()
		cfg.Loras, cfg.MaxLoras = c.loras, c.max
		err := cfg.Validate()
		require.Error(t, err, strings.Join(c.loras, ","))
		assert.Contains(t, err.Error(), c.want)
	}
}

// vLLM's runtime endpoints: an unloaded adapter is a 404 until loaded
// again, and its first request after the load pays the load; unloading an
// adapter that is not served is a 404, loading one twice a 400.
func TestLoraRuntimeLoadAndUnload(t *testing.T) {
	cfg := testConfig()
	cfg.Loras, cfg.MaxLoras, cfg.LoraLoad = []string{"sql"}, 2, 30*time.Millisecond
	s := startSim(t, cfg)
	call := func(path, body string) (int, string) {
		resp := post(t, context.Background(), s.URL()+path, "", json.RawMessage(body))
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	require.Equal(t, http.StatusOK, loraChat(t, s.Server, "warm-1", "sql"))
	require.Equal(t, http.StatusOK, loraChat(t, s.Server, "warm-2", "sql"))
	code, _ := call("/v1/unload_lora_adapter", `{"lora_name":"sql"}`)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, http.StatusNotFound, loraChat(t, s.Server, "gone", "sql"), "unloaded: not served")
	code, msg := call("/v1/unload_lora_adapter", `{"lora_name":"sql"}`)
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, msg, "The lora adapter 'sql' cannot be found.")
	code, _ = call("/v1/load_lora_adapter", `{"lora_name":"sql","lora_path":"/adapters/sql"}`)
	require.Equal(t, http.StatusOK, code)
	code, msg = call("/v1/load_lora_adapter", `{"lora_name":"sql","lora_path":"/adapters/sql"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, msg, "already been loaded")
	code, _ = call("/v1/load_lora_adapter", `{"lora_name":"new"}`)
	assert.Equal(t, http.StatusBadRequest, code, "no path")
	require.Equal(t, http.StatusOK, loraChat(t, s.Server, "cold", "sql"))
	require.Equal(t, http.StatusOK, loraChat(t, s.Server, "warm-3", "sql"))
	recs := s.records(t)
	assert.True(t, recs["warm-1"].AdapterLoaded)
	assert.False(t, recs["warm-2"].AdapterLoaded)
	assert.True(t, recs["cold"].AdapterLoaded, "the first request after a reload loads the adapter again")
	assert.False(t, recs["warm-3"].AdapterLoaded)
}

// Unloading an adapter a request is still decoding with does not free
// its slot under it: with one slot, another adapter's request waits for
// that request to end, as with no unload.
func TestLoraUnloadKeepsABusySlot(t *testing.T) {
	cfg := testConfig()
	cfg.Loras, cfg.MaxLoras, cfg.LoraLoad = []string{"sql", "chat"}, 1, 0
	s := startSim(t, cfg)
	finish := holdSlot(t, s.Server, "sql")
	unload := post(t, context.Background(), s.URL()+"/v1/unload_lora_adapter", "", map[string]string{"lora_name": "sql"})
	require.Equal(t, http.StatusOK, unload.StatusCode)
	unload.Body.Close()
	assert.Equal(t, http.StatusOK, loraChat(t, s.Server, "to-chat", "chat"))
	finish()
	recs := s.records(t)
	assert.Greater(t, recs["to-chat"].FirstTokenNS, recs["long"].EndNS-int64(4*time.Millisecond),
		"chat waited for sql's running request although sql was unloaded")
}

// An item expecting parallel calls is refused: the simulator answers with
// one call, which the scorer would grade wrong against a truth of right.
func TestAnswersRefuseParallelCalls(t *testing.T) {
	_, err := ReadAnswers(strings.NewReader(`{"id":"p","prompt":"both","tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}],"scorer":"tool_call","expected":[{"name":"a","arguments":{}},{"name":"b","arguments":{}}]}`), "evals/p.jsonl")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "evals/p.jsonl:1")
	assert.Contains(t, err.Error(), "expects 2 calls in parallel")
}

// holdSlot starts request "long" to adapter, 400 tokens (400 steps of 2 ms:
// still running when the test's other requests end), and returns once its
// first chunk arrived: it is running and holds its adapter's slot. finish
// reads it to the end.
func holdSlot(t *testing.T, s *Server, adapter string) (finish func()) {
	t.Helper()
	long := chatBody(4, 400, true)
	long["model"] = adapter
	resp := post(t, context.Background(), s.URL()+"/v1/chat/completions", "long", long)
	buf := make([]byte, 1)
	_, err := resp.Body.Read(buf)
	require.NoError(t, err)
	return func() {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
