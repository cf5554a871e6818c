package workload

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
