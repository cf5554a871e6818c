package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	set := []string{"concurrency", "rate", "max_tokens", "temperature"}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"concurency", "concurrency", true},
		{"Rate", "rate", true},
		{"temprature", "temperature", true},
		{"max_tokns", "max_tokens", true},
		{"speed", "", false},
		{string(make([]byte, 100)), "", false},
	}
	for _, tt := range tests {
		got, ok := Closest(tt.in, set)
		assert.Equal(t, tt.want, got, "Closest(%q)", tt.in)
		assert.Equal(t, tt.ok, ok, "Closest(%q)", tt.in)
	}
}

func TestEditDistance(t *testing.T) {
	assert.Equal(t, 0, editDistance("abc", "abc"))
	assert.Equal(t, 1, editDistance("abc", "abd"))
	assert.Equal(t, 3, editDistance("", "abc"))
	assert.Equal(t, 2, editDistance("ab", "ba"))
}
