package telemetry

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"unicode/utf8"
)

// loraPage is a vLLM page whose LoRA gauge has an older state and the
// current one (the later timestamp), as vLLM exports both.
func loraPage(t *testing.T, at float64, running, waiting string) *Page {
	t.Helper()
	return parseText(t, fmt.Sprintf(`# HELP vllm:num_requests_running Number of requests in the model execution batch.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="base"} 3
# HELP vllm:lora_requests_info Running stats on lora requests.
# TYPE vllm:lora_requests_info gauge
vllm:lora_requests_info{max_lora="2",running_lora_adapters="",waiting_lora_adapters=""} 1.7e9
vllm:lora_requests_info{max_lora="2",running_lora_adapters=%q,waiting_lora_adapters=%q} %g
`, running, waiting, at))
}

// The window reads the latest state of each page: the most adapters
// running and waiting at once, the engine's max_loras and which ran.
func TestEngineWindowLoRA(t *testing.T) {
	w := window(t,
		loraPage(t, 1.7e9+1, "sql", ""),
		loraPage(t, 1.7e9+2, "sql,chat", "summ"),
		loraPage(t, 1.7e9+3, "chat", "sql,summ"))
	l := w.Summary(0, false).LoRA
	require.NotNil(t, l)
	require.NotNil(t, l.MaxLoras)
	assert.Equal(t, 2, *l.MaxLoras)
	assert.Equal(t, 2, l.RunningPeak)
	assert.Equal(t, 2, l.WaitingPeak)
	assert.Equal(t, []string{"sql", "chat"}, l.Adapters)

	none := window(t, parseText(t, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n"))
	assert.Nil(t, none.Summary(0, false).LoRA, "no gauge, no LoRA telemetry")
}

// What a server says of its adapters is bounded: names cut, at most 64
// kept, a max_lora that is no count ignored.
func TestEngineWindowLoRABounded(t *testing.T) {
	var names []string
	for i := range 100 {
		names = append(names, fmt.Sprintf("a%d", i))
	}
	long := strings.Repeat("é", 500) // 1000 bytes of two-byte runes: cut on a rune
	p := parseText(t, fmt.Sprintf(`# TYPE vllm:lora_requests_info gauge
vllm:lora_requests_info{max_lora="-3",running_lora_adapters=%q,waiting_lora_adapters=""} 5
`, strings.Join(append([]string{long}, names...), ",")))
	w := window(t, p)
	l := w.Summary(0, false).LoRA
	require.NotNil(t, l)
	assert.Nil(t, l.MaxLoras)
	assert.Len(t, l.Adapters, maxAdapterNames)
	assert.True(t, l.AdaptersCut)
	require.NotEmpty(t, l.Adapters)
	assert.Equal(t, strings.Repeat("é", maxAdapterName/2), l.Adapters[0], "the long name, cut to 256 bytes on a rune")
	for _, n := range l.Adapters {
		assert.LessOrEqual(t, len(n), maxAdapterName)
		assert.True(t, utf8.ValidString(n), n)
	}
}
