package workload

import (
	"fmt"
	"strconv"
	"strings"
)

// SynthSpec describes a synthetic workload: how many requests, the distributions
// of input and output length, an optional shared prefix, and the seed. The same
// spec and seed always give the same requests.
type SynthSpec struct {
	// Requests is the number of requests to generate.
	Requests int `yaml:"requests" json:"requests"`
	// Input is the prompt length distribution, in words (roughly tokens).
	Input Dist `yaml:"input" json:"input"`
	// Output is the max_tokens distribution.
	Output Dist `yaml:"output" json:"output"`
	// Prefix optionally prepends shared prefixes (prefix-cache behaviour).
	Prefix *PrefixSpec `yaml:"prefix" json:"prefix,omitempty"`
	// API is "chat" (messages) or "completions" (prompt); default chat.
	API string `yaml:"api" json:"api,omitempty"`
	// Seed; 0 means take the run's seed.
	Seed int64 `yaml:"seed" json:"seed,omitempty"`
	// Models mixes models (LoRA adapters, say) by share: each request
	// names one, drawn by weight from its own seeded stream, so that the
	// lengths and texts are those of the same spec without it. Empty: no
	// request names a model (the target's is sent).
	Models []ModelShare `yaml:"models" json:"models,omitempty"`
}

// ModelShare is one model of a mix and its weight (the weights need not
// sum to 1: each is its share of their sum).
type ModelShare struct {
	Name   string  `yaml:"name" json:"name"`
	Weight float64 `yaml:"weight" json:"weight"`
}

// ParseModels reads a --models list: name:weight pairs, comma-separated
// ("sql-lora:0.6,chat-lora:0.3,base:0.1"); a name alone weighs 1.
func ParseModels(s string) ([]ModelShare, error) {
	var out []ModelShare
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, w, hasW := strings.Cut(part, ":")
		if hasW && strings.Contains(w, ":") {
			// A name may hold a colon (a path-like id); the weight is after the last.
			i := strings.LastIndex(part, ":")
			name, w = part[:i], part[i+1:]
		}
		m := ModelShare{Name: strings.TrimSpace(name), Weight: 1}
		if hasW {
			f, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil {
				return nil, fmt.Errorf("%q: the weight after ':' is not a number", part)
			}
			m.Weight = f
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no model in %q: want name:weight pairs, comma-separated", s)
	}
	return out, nil
}

// Dist is a length distribution. Type is one of fixed, uniform, normal,
// lognormal, empirical; the fields that apply depend on it.
type Dist struct {
	Type string `yaml:"type" json:"type"`
	// Value is the fixed length.
	Value int `yaml:"value" json:"value,omitempty"`
	// Min and Max bound uniform, and clamp every other type when set.
	Min int `yaml:"min" json:"min,omitempty"`
	Max int `yaml:"max" json:"max,omitempty"`
	// Mean and Stddev parametrise normal; for lognormal they are the mean and
	// standard deviation of the lengths themselves (not of their logarithm).
	Mean   float64 `yaml:"mean" json:"mean,omitempty"`
	Stddev float64 `yaml:"stddev" json:"stddev,omitempty"`
	// File holds one length per line, sampled uniformly (empirical).
	File string `yaml:"file" json:"file,omitempty"`
}

// PrefixSpec: Count distinct prefixes of Length words, and the share (0..1] of
// requests that start with one of them.
type PrefixSpec struct {
	Count  int     `yaml:"count" json:"count"`
	Length int     `yaml:"length" json:"length"`
	Rate   float64 `yaml:"rate" json:"rate"`
}
