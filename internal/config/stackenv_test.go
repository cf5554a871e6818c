package config

import (
	"slices"
	"testing"
)

func TestNeverPassedToStack(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"GITHUB_TOKEN", true},
		{"github_token", true},
		{"GH_TOKEN", true},
		{"GH_ENTERPRISE_TOKEN", true},
		{"INPUT_GITHUB-TOKEN", true},
		{"INPUT_CONFIG", true},
		{"ACTIONS_RUNTIME_TOKEN", true},
		{"ACTIONS_ID_TOKEN_REQUEST_TOKEN", true},
		{"ACTIONS_ID_TOKEN_REQUEST_URL", true},
		{"GITHUB_ENV", true},
		{"GITHUB_OUTPUT", true},
		{"GITHUB_STEP_SUMMARY", true},
		{"GITHUB_SHA", false}, // not a secret, nor a way into the runner
		{"HF_TOKEN", false},   // a secret, but the user's to give
		{"INPUTS", false},
		{"MY_GITHUB_TOKEN", false},
		{"PATH", false},
	}
	for _, tt := range tests {
		if got := NeverPassedToStack(tt.name); got != tt.want {
			t.Errorf("NeverPassedToStack(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestEnvRefs(t *testing.T) {
	tests := []struct {
		value string
		want  []string
	}{
		{"plain", nil},
		{"${A}", []string{"A"}},
		{"Bearer ${TOKEN}-${TOKEN} $B ${ not} ${9X} ${_ok1}", []string{"TOKEN", "TOKEN", "_ok1"}},
	}
	for _, tt := range tests {
		if got := EnvRefs(tt.value); !slices.Equal(got, tt.want) {
			t.Errorf("EnvRefs(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
	lookup := func(k string) (string, bool) { return map[string]string{"A": "1"}[k], k == "A" }
	got, missing := ExpandEnvRefs("${A}/${B}/$A", lookup)
	if got != "1//$A" || !slices.Equal(missing, []string{"B"}) {
		t.Errorf(`ExpandEnvRefs("${A}/${B}/$A") = %q, %q, want "1//$A", [B]`, got, missing)
	}
}
