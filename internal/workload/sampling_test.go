package workload

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSampling(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	seed, yes, minTok := int64(7), true, 3
	tests := []struct {
		name string
		reqs []Request
		want map[string]string
	}{
		{"none set", []Request{{MaxTokens: 1}, {MaxTokens: 2}}, nil},
		{"one value each", []Request{{Temperature: f(0), TopP: f(1)}, {Temperature: f(0), TopP: f(1)}},
			map[string]string{"temperature": "0", "top_p": "1"}},
		{"values sorted by number, unset noted", []Request{{Temperature: f(0.7)}, {Temperature: f(0)}, {Temperature: f(10)}, {}},
			map[string]string{"temperature": "0, 0.7, 10, unset"}},
		{"seed, ignore_eos, min_tokens, response_format", []Request{{Seed: &seed, IgnoreEOS: &yes, MinTokens: &minTok, ResponseFormat: json.RawMessage(`{"type":"json_object"}`)}},
			map[string]string{"seed": "set", "ignore_eos": "true", "min_tokens": "3", "response_format": "set"}},
		{"many values are cut", []Request{{Temperature: f(1)}, {Temperature: f(2)}, {Temperature: f(3)}, {Temperature: f(4)}, {Temperature: f(5)}, {Temperature: f(6)}, {Temperature: f(7)}},
			map[string]string{"temperature": "1, 2, 3, 4, 5, … 2 more"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Sampling(tt.reqs))
		})
	}
}
